#!/usr/bin/env python3
"""Write the seed corpus of the model fuzzer (tests/fuzz/corpus-model/).

A seed is a program for fuzz_model.c: byte 0 the mode (% 4: 0/1 plain, 2 threads, 3 a
fault plan fault_plans[b0 // 4 % 5]; bit 7 turns offload on with flags b0 >> 4), byte 1
the fault count / offload budget, byte 2 the deterministic schedule seed; then steps
(opcode % 20 and its argument bytes, see step() in fuzz_model.c: input encoding 3; the
seeds use opcodes below 16 only, which encodings 2 and 3 read alike). Seeds are valid
programs that pass on a correct runtime; they reach every step with useful arguments.
Inputs that found bugs are kept apart in tests/fuzz/findings/.
Rerun after changing the step table: python3 tests/fuzz/make_model_seeds.py"""
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus-model")
F32, F16, BF16, F64, I8, U8, I32, I64, BOOL = range(9)
S1, S7, S3x5, S5x3, S16, S64, S300x129, S256, S512x256, S0D, SEMPTY, S5x7 = range(12)
FILL, ADD, MUL, SCALE, RELU, CAST, MATMUL, SUM = range(8)


def slot_byte(slot, flag):        # slot = byte % 6, flag = bit 7
    return next(b for b in range(256) if b % 6 == slot and (b >= 0x80) == flag)


def new(slot, dtype, shape, data=True, seed=0):
    return [0, slot_byte(slot, not data), dtype, shape + 12 * seed]


def stream_axis(stream, axis):    # op_step: stream = sb % 3, axis = sb // 4 % 3 - 1
    return next(b for b in range(256) if b % 3 == stream and b // 4 % 3 == axis + 1)


def op(k, out, a=0, b=0, stream=0, value=1, half=False, fresh=True, axis=0):
    kb = k + 8 * ((value + 8) % 16) + (0x80 if half else 0)
    return [2, kb, slot_byte(out, fresh), a, b, stream_axis(stream, axis)]


def read(slot):
    return [5, slot]


def reads():
    return sum((read(i) for i in range(6)), [])


def offl(kind, slot, stream=0):   # 0 set_offloadable, 2 evict, 3 prefetch, 4 pin, 5 tamper
    return [8, kind, next(b for b in range(256) if b % 6 == slot and b // 8 % 3 == stream)]


SYNC, RESET = [10], [11, 1]


def elementwise(dt):
    return ([0, 0, 1] + new(0, dt, S3x5) + new(1, dt, S3x5, seed=1)
            + op(ADD, 2, 0, 1) + op(MUL, 3, 0, 1, stream=1) + op(SCALE, 4, 0, value=-3, half=True)
            + op(RELU, 5, 4, stream=2) + reads() + op(CAST, 5, 0, 2 if dt != BOOL else 0)
            + op(ADD, 0, 0, 1, fresh=False) + reads())


seeds = {"elementwise_%d" % dt: elementwise(dt) for dt in range(9)}
seeds["cast_all"] = ([0, 0, 2] + new(0, F32, S16) + sum(
    (new(1, dt, S16, data=False) + op(CAST, 1, 0, 1, fresh=False) + read(1) for dt in range(9)), []))
for dt in (F32, F16, BF16, F64):
    seeds["matmul_sum_%d" % dt] = ([0, 0, 3] + new(0, dt, S3x5) + new(1, dt, S5x3, seed=2)
                                   + op(MATMUL, 2, 0, 1) + op(SUM, 3, 0, axis=-1)
                                   + op(SUM, 4, 0, axis=0, stream=1) + op(SUM, 5, 1, axis=1)
                                   + reads() + new(0, dt, S64) + new(1, dt, S64, seed=3)
                                   + op(MATMUL, 2, 0, 1, stream=2) + read(2))
seeds["sum_ints"] = ([0, 0, 4] + new(0, I8, S300x129) + op(SUM, 1, 0, axis=0) + new(2, BOOL, S16)
                     + op(SUM, 3, 2, axis=-1) + new(4, I64, S5x7) + op(SUM, 5, 4, axis=1) + reads())
# integer add/mul wrap (int8 products of products overflow), float16 overflow to inf,
# inf * 0 = NaN, NaN cast to an integer (0)
seeds["int_wrap"] = ([0, 0, 15] + new(0, I8, S16) + op(MUL, 1, 0, 0) + op(MUL, 2, 1, 1)
                     + op(ADD, 3, 2, 2) + new(4, U8, S16) + op(MUL, 5, 4, 4) + reads())
seeds["f16_inf_nan"] = ([0, 0, 16] + new(0, F16, S16) + op(MUL, 1, 0, 0) + op(MUL, 2, 1, 1)
                        + op(MUL, 3, 2, 2) + op(FILL, 4, fresh=False) * 0 + new(4, F16, S16)
                        + op(FILL, 4, fresh=False, value=0) + op(MUL, 5, 3, 4) + reads()
                        + new(0, I32, S16, data=False) + op(CAST, 0, 5, 0, fresh=False) + read(0))
seeds["streams"] = ([0, 0, 5] + new(0, F32, S256) + op(FILL, 0, fresh=False, stream=1, value=3)
                    + op(SCALE, 1, 0, stream=2, value=2) + op(ADD, 0, 0, 1, stream=0, fresh=False)
                    + [11, 2 + 4 * 1, 11, 0, 15, 0] + op(RELU, 2, 0, stream=1) + SYNC + reads())
# offload: a 2 MiB budget over 512x256 float32 tensors, host tier (and disk), explicit
# evictions and prefetches, each tensor made offloadable once its writes were synchronized
big = sum((new(i, F32, S512x256, seed=i) + offl(0, i) for i in range(4)), [])
seeds["offload_host"] = ([0x80, 0, 6] + big + op(ADD, 4, 0, 1) + offl(0, 4) + op(SCALE, 5, 2, value=3)
                         + offl(2, 0) + offl(3, 0, stream=1) + op(MUL, 3, 0, 1, fresh=False, stream=1)
                         + SYNC + reads())
seeds["offload_disk"] = ([0xC0, 4, 7] + big + op(ADD, 4, 0, 1) + SYNC + offl(0, 4) + offl(2, 4)
                         + offl(2, 1) + reads() + offl(4, 2) + reads())
# a tier file changed behind the runtime's back: the read-back must be the data or
# HWRT_ERROR_IO (issue 15 case 6; fails before the fix: kept with the findings)
findings = {"15.6-tampered-disk-tier": [0xC0, 4, 7] + big + op(ADD, 4, 0, 1) + SYNC + offl(0, 4)
            + offl(2, 4) + offl(2, 1) + offl(5, 0) + reads() + offl(4, 2) + reads()}
seeds["offload_pinned_auto"] = ([0xB0, 1, 8] + big + [8, 3, 0] * 0 + op(FILL, 0, fresh=False, value=5)
                                + SYNC + reads() + reads())
# faults: a kernel fault, a copy fault, an allocation fault; reset and re-issue
seeds["fault_kernel_reset"] = ([3, 2, 9] + new(0, F32, S64) + new(1, F32, S64, seed=1)
                               + op(FILL, 0, fresh=False, value=2) + op(FILL, 1, fresh=False, value=4)
                               + op(ADD, 2, 0, 1) + SYNC + RESET + reads())
seeds["fault_copy_reset"] = ([7, 3, 10] + new(0, F16, S16) + new(1, F16, S16, seed=1) + read(0)
                             + read(1) + RESET + reads() + op(ADD, 2, 0, 1) + reads())
seeds["fault_alloc"] = ([15, 2, 11] + new(0, F32, S64) + new(1, F32, S64) + new(2, F32, S64)
                        + op(ADD, 3, 0, 2) + reads())
# shutdown with live tensors and streams (not offloadable), then a new session
seeds["shutdown_live"] = ([0, 0, 12] + new(0, F32, S64) + op(SCALE, 1, 0, stream=1, value=2)
                          + [13, 0] + new(0, I32, S7) + op(ADD, 1, 0, 0) + reads())
seeds["hostfn_streams"] = ([0, 0, 13] + new(0, U8, S16) + [11, 0, 11, 4, 11, 8, 11, 2 + 8]
                           + [15, 0, 15, 1] + op(MUL, 1, 0, 0, stream=2) + [12, 0] + reads())
seeds["invalid_ops"] = ([0, 0, 14] + new(0, F32, S3x5) + new(1, F16, S5x3) + new(2, BOOL, S3x5)
                        + op(ADD, 0, 0, 1, fresh=False) + op(MATMUL, 3, 0, 1) + op(MATMUL, 0, 0, 0, fresh=False)
                        + op(ADD, 2, 2, 2, fresh=False) + op(SUM, 1, 0, axis=1, fresh=False) + reads())

os.makedirs(OUT, exist_ok=True)
for name, prog in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes(b & 0xff for b in prog))
FINDINGS = os.path.join(os.path.dirname(OUT), "findings")
os.makedirs(FINDINGS, exist_ok=True)
for name, prog in findings.items():
    with open(os.path.join(FINDINGS, name), "wb") as f:
        f.write(bytes(b & 0xff for b in prog))
print("wrote %d seeds to %s, %d to %s" % (len(seeds), OUT, len(findings), FINDINGS))

#!/usr/bin/env python3
"""Write the committed seed corpus of the API fuzzer (tests/fuzz/corpus/).

A seed is a program for fuzz_api.c: byte 0 selects a fault plan (b % 8 == 7 arms
fault_plans[b // 8]), then each step is an opcode byte (op % 34) and its arguments.
Structured seeds reach every opcode with valid arguments; random ones add noise.
Rerun after changing the opcode table: python3 tests/fuzz/make_seeds.py"""
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
SLOT = lambda i: 5 + 8 * i          # pick_ptr: an exact device slot pointer
STREAM = lambda i: 4 + 8 * i        # pick_stream: a live stream slot
EVENT = lambda i: 3 + 8 * i         # pick_event: a live event slot
TENSOR = lambda i: 3 + 8 * i        # pick_tensor: a live tensor slot
HOST, PINNED = 1, 2


def size(n):                         # pick_size: 1 + u16 % 65536
    n -= 1
    return [4, n & 0xff, n >> 8]


def malloc(slot, n):
    return [1, slot] + size(n)


def h2d(slot, blocking=True, data=0):
    # dst slot, src host, kind H2D (no 0x80: n = min(room)), 64 data bytes, stream if async
    return [4 if blocking else 5, SLOT(slot), HOST, 1] + [data] * 64 + ([] if blocking else [STREAM(0)])


def d2h(slot, blocking=True):
    return [4 if blocking else 5, PINNED, SLOT(slot), 2] + ([] if blocking else [STREAM(1)])


def tensor(slot, dtype=0, ndim=2, shape=(4, 4, 0, 0), empty=1):
    return [16, slot, dtype, ndim, 0] + list(shape) + [empty]


def op(kind, out, a, b, stream, value_index=40):
    return [18, TENSOR(out), TENSOR(a), TENSOR(b), stream, kind + 8 * value_index]


seeds = {
    "memory": [0] + malloc(0, 4096) + h2d(0, data=7) + d2h(0) + malloc(1, 100) + [27]
              + [3, SLOT(0), 1] + [27],
    "streams_events": [0, 7, 0, 0, 7, 1, 0, 11, 0, 0, 11, 1, 0] + malloc(0, 8192)
                      + h2d(0, blocking=False, data=3) + [12, EVENT(0), STREAM(0)]
                      + [13, STREAM(1), EVENT(0)] + d2h(0, blocking=False)
                      + [9, STREAM(1), 14, 1, EVENT(0), 14, 2, EVENT(0), EVENT(0), 27],
    "tensors": [0] + tensor(0) + tensor(1) + tensor(2) + op(0, 0, 0, 0, 0) + op(0, 1, 1, 1, 0, 33)
               + op(1, 2, 0, 1, 0) + op(3, 2, 2, 2, 0) + op(4, 2, 2, 2, 0) + [27]
               + [20, TENSOR(2), 1] + [27],
    "matmul_sum": [0] + tensor(0, shape=(3, 5, 0, 0)) + tensor(1, shape=(5, 2, 0, 0))
                  + tensor(2, shape=(3, 2, 0, 0)) + op(0, 0, 0, 0, 0) + op(0, 1, 1, 1, 0)
                  + op(6, 2, 0, 1, 0) + tensor(3, ndim=1, shape=(3, 0, 0, 0))
                  + op(7, 3, 2, 2, 0, 1) + [27],
    "dtypes_cast": [0] + tensor(0, dtype=1) + tensor(1, dtype=7) + tensor(2, dtype=8)
                   + op(0, 0, 0, 0, 0) + op(5, 1, 0, 0, 0) + op(5, 2, 1, 1, 0) + [27],
    "config": [0, 22, 0, 4, ord("1"), ord("G"), ord("B"), 0, 1, 22, 8, 2, ord("o"), ord("n"), 1, 1,
               22, 11, 1, ord("x"), 1, 0, 22, 3, 3, ord("1"), ord("."), ord("5"), 1, 1,
               29, 7, ord("f"), ord("l"), ord("o"), ord("a"), ord("t"), ord("1"), ord("6"), 1],
    "dlpack": [0] + tensor(0) + op(0, 0, 0, 0, 0) + [26, TENSOR(0), 1, 1, 1, 1, 1, 2, 2, 0] + [27],
    "hostfn_reset_shutdown": [0, 7, 0, 0, 25, STREAM(0), 1, 25, 0, 1, 24, 0, 23]
                             + malloc(2, 300) + [33] + malloc(0, 64) + h2d(0) + [27],
    "kernel_fault": [7] + tensor(0) + op(0, 0, 0, 0, 0) + op(0, 0, 0, 0, 0) + op(0, 0, 0, 0, 0)
                    + [23, 24, 0] + op(0, 0, 0, 0, 0) + [27],
    "copy_fault": [15] + malloc(0, 4096) + h2d(0) + h2d(0) + [24, 0] + h2d(0, data=9) + [27],
    "alloc_fault": [23] + malloc(0, 4096) + malloc(1, 4096) + malloc(2, 4096) + malloc(3, 1) + [27],
    "two_devices": [0, 0, 1] + malloc(0, 2048) + [7, 0, 0] + h2d(0) + [0, 0] + malloc(1, 2048)
                   + [5, SLOT(1), SLOT(0), 3, STREAM(0)] + [27],
    "offload": [0, 31, 1 | 4 | 8 | 16, 2, 4, 4, 4] + tensor(0, shape=(64, 64, 0, 0))
               + tensor(1, shape=(64, 64, 0, 0)) + [32, TENSOR(0), 8, 32, TENSOR(1), 8]
               + op(0, 0, 0, 0, 0) + op(0, 1, 1, 1, 0, 35) + [32, TENSOR(0), 2, 27]
               + [32, TENSOR(1), 2, 32, TENSOR(0), 1, STREAM(0), 32, 0, 3, 32, TENSOR(0), 4]
               + op(3, 1, 0, 0, 0) + [27, 32, 0, 5],
    "bad_handles": [0, 9, 1, 9, 2, 10, 3, 12, 1, 1, 13, 2, 2, 14, 0, 1, 15, 0, 2, 21, 1, 0,
                    18, 1, 2, 0, 1, 0, 3, 0, 0, 6, 1, 0, 0],
}

os.makedirs(OUT, exist_ok=True)
for name, prog in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes(b & 0xff for b in prog))
rng = random.Random(20261129)
for i in range(12):
    n = rng.randrange(64, 600)
    with open(os.path.join(OUT, "random_%02d" % i), "wb") as f:
        f.write(bytes(rng.randrange(256) for _ in range(n)))
print("wrote %d seeds to %s" % (len(seeds) + 12, OUT))

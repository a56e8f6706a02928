#!/usr/bin/env python3
"""Allocation trace of transformer training steps (GPT-style decoder, bf16 activations,
fp32 master weights and Adam states), in hwrt-bench pool's CSV format:

    action,id,size,stream      (action alloc|free, size in bytes, stream an index)

What is allocated follows what a framework's autograd does:
  setup     fp32 master weights, bf16 compute weights, Adam m and v (persistent)
  forward   per layer: saved inputs, layer-norm statistics, fused QKV output, flash-
            attention output and logsumexp, projection output, MLP fc1 and GELU outputs,
            dropout masks (kept for backward); temporaries freed as soon as consumed
  backward  layers in reverse: gradient temporaries of each op, weight gradients
            (allocated on the first micro-batch, accumulated afterwards), the layer's
            saved activations freed once its backward is done
  optimizer per parameter: Adam's temporaries; gradients freed after the step
Gradient all-reduce buckets go to stream 1 (a communication stream) and are freed there.
Micro-batches of a step may differ in sequence length (packed data), so activation sizes
vary from one micro-batch to the next.

usage: gen_trace_transformer.py [--layers N] [--hidden H] [--seq S] [--batch B]
                                [--steps N] [--micro N] [--seed N] > trace.csv
"""
import argparse
import random
import sys

from trace_writer import Trace


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=50304)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--micro", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    t = Trace(sys.stdout)
    H, L, V, NH = a.hidden, a.layers, a.vocab, a.heads
    bf16, fp32 = 2, 4
    params = {"embed": V * H}
    for l in range(L):
        params.update({f"l{l}.ln1.w": H, f"l{l}.ln1.b": H, f"l{l}.qkv.w": 3 * H * H,
                       f"l{l}.qkv.b": 3 * H, f"l{l}.proj.w": H * H, f"l{l}.proj.b": H,
                       f"l{l}.ln2.w": H, f"l{l}.ln2.b": H, f"l{l}.fc1.w": 4 * H * H,
                       f"l{l}.fc1.b": 4 * H, f"l{l}.fc2.w": 4 * H * H, f"l{l}.fc2.b": H})
    params.update({"lnf.w": H, "lnf.b": H})
    for p, n in params.items():                      # setup: persistent state
        t.named(f"master.{p}", n * fp32)
        t.named(f"w.{p}", n * bf16)
        t.named(f"adam_m.{p}", n * fp32)
        t.named(f"adam_v.{p}", n * fp32)
    t.named("cublas_workspace", 32 << 20)
    uid = [0]

    def tmp(tag, size, stream=0):
        uid[0] += 1
        return t.named(f"{tag}#{uid[0]}", size, stream)

    for step in range(a.steps):
        grads = {}
        for mb in range(a.micro):
            S = a.seq if rnd.random() < 0.5 else rnd.choice([a.seq // 2, 3 * a.seq // 4, a.seq])
            B = a.batch
            tok = B * S
            x = tmp("tokens", tok * 8)
            h = tmp("embed_out", tok * H * bf16)
            saved = []
            for l in range(L):                        # forward
                act = {}
                act["in"] = h
                act["ln1_stats"] = tmp("ln1_stats", tok * 2 * fp32)
                act["ln1_out"] = tmp("ln1_out", tok * H * bf16)
                act["qkv"] = tmp("qkv", tok * 3 * H * bf16)
                act["attn"] = tmp("attn_out", tok * H * bf16)
                act["lse"] = tmp("attn_lse", B * NH * S * fp32)
                act["attn_mask"] = tmp("attn_dropout_mask", tok * H)
                proj = tmp("proj_out", tok * H * bf16)
                res = tmp("resid1", tok * H * bf16)
                t.free(proj)
                act["res1"] = res
                act["ln2_stats"] = tmp("ln2_stats", tok * 2 * fp32)
                act["ln2_out"] = tmp("ln2_out", tok * H * bf16)
                act["fc1"] = tmp("fc1_out", tok * 4 * H * bf16)
                act["gelu"] = tmp("gelu_out", tok * 4 * H * bf16)
                fc2 = tmp("fc2_out", tok * H * bf16)
                act["mlp_mask"] = tmp("mlp_dropout_mask", tok * H)
                h = tmp("resid2", tok * H * bf16)
                t.free(fc2)
                saved.append(act)
            lnf = tmp("lnf_out", tok * H * bf16)
            logits = tmp("logits", tok * V * bf16)
            loss = tmp("loss", 4)
            lgrad = tmp("logits_grad", tok * V * bf16)
            t.free(logits)
            g = tmp("lnf_in_grad", tok * H * bf16)
            t.free(lgrad)
            t.free(lnf)
            t.free(loss)
            t.free(h)
            for l in reversed(range(L)):               # backward
                act = saved[l]
                for pn in ("fc2.w", "fc2.b", "fc1.w", "fc1.b", "ln2.w", "ln2.b", "proj.w",
                           "proj.b", "qkv.w", "qkv.b", "ln1.w", "ln1.b"):
                    p = f"l{l}.{pn}"
                    if p not in grads:
                        grads[p] = t.named(f"grad.{p}", params[p] * fp32)
                    else:                              # accumulate: a bf16 temp, then add
                        gt = tmp("wgrad_tmp", params[p] * bf16)
                        t.free(gt)
                gm = tmp("gelu_grad", tok * 4 * H * bf16)
                gf = tmp("fc1_grad", tok * 4 * H * bf16)
                t.free(gm)
                g2 = tmp("ln2_in_grad", tok * H * bf16)
                t.free(gf)
                ga = tmp("attn_grad", tok * H * bf16)
                gq = tmp("qkv_grad", tok * 3 * H * bf16)
                t.free(ga)
                g1 = tmp("ln1_in_grad", tok * H * bf16)
                t.free(gq)
                t.free(g)
                t.free(g2)
                g = g1
                for k in ("ln1_stats", "ln1_out", "qkv", "attn", "lse", "attn_mask", "res1",
                          "ln2_stats", "ln2_out", "fc1", "gelu", "mlp_mask", "in"):
                    t.free(act[k])
                if mb == a.micro - 1 and l % 4 == 0:   # a gradient bucket, all-reduced
                    bucket = tmp("allreduce_bucket", 25 << 20, stream=1)
                    t.free(bucket, stream=1)
            for p in ("embed", "lnf.w", "lnf.b"):
                if p not in grads:
                    grads[p] = t.named(f"grad.{p}", params[p] * fp32)
            t.free(g)
            t.free(x)
        norm = tmp("grad_norm", 4)                     # optimizer step
        for p, n in params.items():
            u = tmp("adam_update", n * fp32)
            d = tmp("adam_denom", n * fp32)
            t.free(d)
            t.free(u)
        t.free(norm)
        for p in list(grads):
            t.free(grads.pop(p))
    for name in list(t.live):                          # teardown
        t.free(name)
    print(f"# {t.n} events", file=sys.stderr)


if __name__ == "__main__":
    main()

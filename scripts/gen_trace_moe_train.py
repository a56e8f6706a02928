#!/usr/bin/env python3
"""Allocation trace of mixture-of-experts training (dropless top-k routing), written apart
from the other generators and after the pool's policy was tuned, to check the pool on a
training workload whose activation sizes change every micro-batch, in hwrt-bench pool's
CSV format (header action,id,size,stream).

  parameters  bf16 weights per layer: attention (4 H x H), router (H x E), E experts of
              3 H x F (gate, up, down); fp32 master weights, Adam m and v; all allocated
              once at start and kept
  routing     per micro-batch and layer, each of T tokens picks k experts; expert loads
              come from a Dirichlet draw (--skew: smaller is more imbalanced), so every
              expert's buffers have a new size at every layer and micro-batch (dropless:
              no capacity factor, no padding)
  forward     per layer: saved activations (norm input, q/k/v, attention output, router
              logits and indices, per-expert input, gate/up output and activation), a
              flash-attention workspace and the token permutation as temporaries; with
              --recompute only the layer input is kept and the rest is rebuilt in backward
  backward    layers in reverse: gradient temporaries sized like the activations, freed
              as it goes; parameter gradients (bf16) allocated at the first micro-batch and
              accumulated; gradient buckets of --bucket-mb copied out on the comm stream
              (stream 1) for the all-reduce and freed there
  step        after --micro micro-batches: optimizer temporaries per parameter chunk
              (multi-tensor apply of --chunk-mb), gradients set to None (freed)

usage: gen_trace_moe_train.py [--layers N] [--experts E] [--top-k K] [--seed N] > trace.csv
"""
import argparse
import random
import sys

from trace_writer import Trace



def dirichlet_counts(rng, tokens, k, experts, skew):
    w = [rng.gammavariate(skew, 1.0) for _ in range(experts)]
    tot = sum(w)
    assign = tokens * k
    counts = [int(assign * x / tot) for x in w]
    for i in range(assign - sum(counts)):
        counts[i % experts] += 1
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=1536)
    ap.add_argument("--ffn", type=int, default=4096, help="expert FFN width")
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--vary-seq", action="store_true",
                    help="packed batches: the micro-batch's token count varies (0.5-1x)")
    ap.add_argument("--micro", type=int, default=4, help="micro-batches per step")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--skew", type=float, default=2.0, help="Dirichlet concentration of the routing")
    ap.add_argument("--recompute", action="store_true")
    ap.add_argument("--bucket-mb", type=float, default=25.0)
    ap.add_argument("--chunk-mb", type=float, default=64.0)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    H, F, E, K = a.hidden, a.ffn, a.experts, a.top_k
    tr = Trace(sys.stdout)
    bf, f32 = 2, 4

    params = []  # (tag, elements)
    params.append(("embed", a.vocab * H))
    for l in range(a.layers):
        params.append((f"attn{l}", 4 * H * H))
        params.append((f"router{l}", H * E))
        for e in range(E):
            params.append((f"exp{l}.{e}", 3 * H * F))
    params.append(("head", a.vocab * H))
    for tag, n in params:
        tr.alloc(f"w.{tag}", n * bf)
        tr.alloc(f"master.{tag}", n * f32)
        tr.alloc(f"adam_m.{tag}", n * f32)
        tr.alloc(f"adam_v.{tag}", n * f32)

    for step in range(a.steps):
        grads = {}
        for mb in range(a.micro):
            T = a.batch * a.seq
            if a.vary_seq:
                T = int(T * rng.uniform(0.5, 1.0))
            x = tr.alloc("x.embed", T * H * bf)
            saved = []  # per layer: list of names
            routes = []
            inp = x
            for l in range(a.layers):
                counts = dirichlet_counts(rng, T, K, E, a.skew)
                routes.append(counts)
                keep = [inp]
                norm = tr.alloc(f"norm{l}", T * H * bf)
                qkv = tr.alloc(f"qkv{l}", 3 * T * H * bf)
                ws = tr.alloc(f"flash_ws{l}", a.batch * a.heads * a.seq * f32)
                att = tr.alloc(f"attn_out{l}", T * H * bf)
                tr.free(ws)
                logits = tr.alloc(f"router_logits{l}", T * E * f32)
                idx = tr.alloc(f"route_idx{l}", T * K * 8)
                perm = tr.alloc(f"permute{l}", T * K * H * bf)
                exp_in, exp_mid = [], []
                for e, n in enumerate(counts):
                    if n == 0:
                        continue
                    xi = tr.alloc(f"exp_in{l}.{e}", n * H * bf)
                    gu = tr.alloc(f"gate_up{l}.{e}", 2 * n * F * bf)
                    act = tr.alloc(f"act{l}.{e}", n * F * bf)
                    out = tr.alloc(f"exp_out{l}.{e}", n * H * bf)
                    exp_in.append(xi)
                    exp_mid += [gu, act]
                    exp_mid.append(out)
                tr.free(perm)
                y = tr.alloc(f"layer_out{l}", T * H * bf)
                for o in exp_mid[2::3]:
                    tr.free(o)
                exp_mid = [n for i, n in enumerate(exp_mid) if i % 3 != 2]
                if a.recompute:
                    for n in [norm, qkv, att, logits] + exp_in + exp_mid:
                        tr.free(n)
                    keep += [idx]
                else:
                    keep += [norm, qkv, att, logits, idx] + exp_in + exp_mid
                saved.append(keep)
                inp = y
            hl = tr.alloc("head_logits", T * a.vocab * f32)
            loss_ws = tr.alloc("loss_ws", T * 4 * f32)
            tr.free(loss_ws)
            g = tr.alloc("grad_logits", T * a.vocab * f32)
            tr.free(hl)
            gh = tr.alloc("grad_x", T * H * bf)
            tr.free(g)
            if "head" not in grads:
                grads["head"] = tr.alloc("grad.head", a.vocab * H * bf)
            tr.free(inp)
            pending = 0.0
            buckets = []
            for l in reversed(range(a.layers)):
                counts = routes[l]
                rec = []
                if a.recompute:
                    rec.append(tr.alloc(f"re_norm{l}", T * H * bf))
                    rec.append(tr.alloc(f"re_qkv{l}", 3 * T * H * bf))
                    rec.append(tr.alloc(f"re_att{l}", T * H * bf))
                    for e, n in enumerate(counts):
                        if n:
                            rec.append(tr.alloc(f"re_in{l}.{e}", n * H * bf))
                            rec.append(tr.alloc(f"re_gu{l}.{e}", 2 * n * F * bf))
                            rec.append(tr.alloc(f"re_act{l}.{e}", n * F * bf))
                gperm = tr.alloc(f"grad_perm{l}", T * K * H * bf)
                for e, n in enumerate(counts):
                    if n == 0:
                        continue
                    gmid = tr.alloc(f"grad_mid{l}.{e}", 2 * n * F * bf)
                    gin = tr.alloc(f"grad_in{l}.{e}", n * H * bf)
                    key = f"exp{l}.{e}"
                    if key not in grads:
                        grads[key] = tr.alloc(f"grad.{key}", 3 * H * F * bf)
                    tr.free(gmid)
                    tr.free(gin)
                tr.free(gperm)
                gatt = tr.alloc(f"grad_att{l}", 3 * T * H * bf)
                fws = tr.alloc(f"flash_bwd_ws{l}", a.batch * a.heads * a.seq * f32 * 2)
                tr.free(fws)
                for key in (f"attn{l}", f"router{l}"):
                    if key not in grads:
                        n = 4 * H * H if key.startswith("attn") else H * E
                        grads[key] = tr.alloc(f"grad.{key}", n * bf)
                tr.free(gatt)
                ngx = tr.alloc("grad_x", T * H * bf)
                tr.free(gh)
                gh = ngx
                for n in rec:
                    tr.free(n)
                for n in saved[l][1:]:
                    tr.free(n)
                tr.free(saved[l][0])
                if mb == a.micro - 1:
                    # gradient buckets leave for the all-reduce on the comm stream
                    pending += (4 * H * H + H * E + E * 3 * H * F) * bf / 2**20
                    while pending >= a.bucket_mb:
                        buckets.append(tr.alloc("allreduce_bucket", a.bucket_mb * 2**20, 1))
                        pending -= a.bucket_mb
                        if len(buckets) > 2:
                            tr.free(buckets.pop(0), 1)
            tr.free(gh)
            if "embed" not in grads:
                grads["embed"] = tr.alloc("grad.embed", a.vocab * H * bf)
            for b in buckets:
                tr.free(b, 1)
        # optimizer: multi-tensor apply over chunks, then set_to_none
        chunk = a.chunk_mb * 2**20
        for tag, n in params:
            left = n * f32
            while left > 0:
                c = min(left, chunk)
                t1 = tr.alloc("adam_tmp", c)
                t2 = tr.alloc("adam_tmp2", c)
                tr.free(t2)
                tr.free(t1)
                left -= c
        for key in list(grads):
            tr.free(grads.pop(key))


if __name__ == "__main__":
    main()

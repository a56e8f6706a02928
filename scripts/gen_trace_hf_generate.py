#!/usr/bin/env python3
"""Allocation trace of a server calling a Hugging Face-style `generate()` batch after
batch, written apart from the other generators and after the pool's policy was tuned,
in hwrt-bench pool's CSV format (header action,id,size,stream).

  batches     --calls generate() calls, one after the other; each has a batch size drawn
              from 1..--max-batch and prompts padded to the longest of the batch (lengths
              lognormal around --prompt-median), and generates --out-min..--out-max tokens
  KV cache    the dynamic cache of eager code: every layer's K and V grow by one token per
              decode step by concatenation (allocate the longer, free the shorter), so the
              cache sizes change by a few KiB thousands of times
  prefill     per layer: q/k/v projections, eager attention scores and probabilities
              (batch x heads x P x P, fp16, or fp32 with --fp32-scores), the MLP's
              intermediate, the layer output
  decode      per step and layer: one token's projections, scores against the whole cache,
              MLP; logits (fp32, batch x vocab) and the sampling's sort workspace per step
  streams     everything on stream 0; with --copy-stream the logits of each step are copied
              out through a pinned staging buffer recorded on stream 1

usage: gen_trace_hf_generate.py [--calls N] [--max-batch B] [--seed N] > trace.csv
"""
import argparse
import math
import random
import sys

from trace_writer import Trace



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=5632)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--calls", type=int, default=12)
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--prompt-median", type=float, default=300.0)
    ap.add_argument("--prompt-sigma", type=float, default=0.8)
    ap.add_argument("--max-prompt", type=int, default=2048)
    ap.add_argument("--out-min", type=int, default=32)
    ap.add_argument("--out-max", type=int, default=256)
    ap.add_argument("--fp32-scores", action="store_true")
    ap.add_argument("--copy-stream", action="store_true")
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    L, H, F, V = a.layers, a.hidden, a.ffn, a.vocab
    hd = H // a.heads
    kvd = a.kv_heads * hd
    fp = 2
    sc = 4 if a.fp32_scores else 2
    tr = Trace(sys.stdout)
    tr.alloc("embed", V * H * fp)
    for l in range(L):
        tr.alloc(f"w_attn{l}", (2 * H * H + 2 * H * kvd) * fp)
        tr.alloc(f"w_mlp{l}", 3 * H * F * fp)
    tr.alloc("lm_head", V * H * fp)

    for call in range(a.calls):
        B = rng.randint(1, a.max_batch)
        lens = [min(max(int(math.exp(rng.gauss(math.log(a.prompt_median), a.prompt_sigma))), 1),
                    a.max_prompt) for _ in range(B)]
        P = max(lens)  # padded to the longest prompt of the batch
        N = rng.randint(a.out_min, a.out_max)
        ids = tr.alloc("input_ids", B * P * 8)
        mask = tr.alloc("attn_mask", B * P * 8)
        x = tr.alloc("hidden", B * P * H * fp)
        K, Vc = [], []
        for l in range(L):
            n = tr.alloc("norm", B * P * H * fp)
            q = tr.alloc("q", B * P * H * fp)
            k = tr.alloc("k_cache", B * P * kvd * fp)
            v = tr.alloc("v_cache", B * P * kvd * fp)
            s = tr.alloc("scores", B * a.heads * P * P * sc)
            p = tr.alloc("probs", B * a.heads * P * P * sc)
            tr.free(s)
            o = tr.alloc("attn_out", B * P * H * fp)
            tr.free(p)
            tr.free(q)
            tr.free(n)
            y = tr.alloc("hidden", B * P * H * fp)
            tr.free(o)
            n2 = tr.alloc("norm", B * P * H * fp)
            g = tr.alloc("gate_up", 2 * B * P * F * fp)
            act = tr.alloc("act", B * P * F * fp)
            tr.free(g)
            m = tr.alloc("mlp_out", B * P * H * fp)
            tr.free(act)
            tr.free(n2)
            tr.free(x)
            x = tr.alloc("hidden", B * P * H * fp)
            tr.free(m)
            tr.free(y)
            K.append(k)
            Vc.append(v)
        logits = tr.alloc("logits", B * P * V * 4)
        tr.free(x)
        tr.free(logits)
        out = tr.alloc("generated", B * (P + N) * 8)
        for t in range(N):
            S = P + t + 1
            x = tr.alloc("hidden_tok", B * H * fp)
            for l in range(L):
                n = tr.alloc("norm_tok", B * H * fp)
                q = tr.alloc("q_tok", B * H * fp)
                kt = tr.alloc("k_tok", B * kvd * fp)
                vt = tr.alloc("v_tok", B * kvd * fp)
                nk = tr.alloc("k_cache", B * S * kvd * fp)
                tr.free(K[l])
                K[l] = nk
                nv = tr.alloc("v_cache", B * S * kvd * fp)
                tr.free(Vc[l])
                Vc[l] = nv
                tr.free(kt)
                tr.free(vt)
                s = tr.alloc("scores_tok", B * a.heads * S * sc)
                o = tr.alloc("attn_tok", B * H * fp)
                tr.free(s)
                tr.free(q)
                tr.free(n)
                g = tr.alloc("gate_up_tok", 2 * B * F * fp)
                m = tr.alloc("mlp_tok", B * H * fp)
                tr.free(g)
                tr.free(o)
                tr.free(x)
                x = m
            lg = tr.alloc("logits_tok", B * V * 4)
            srt = tr.alloc("sort_ws", B * V * 8)
            tr.free(srt)
            if a.copy_stream:
                st = tr.alloc("staging", B * V * 4, 1)
                tr.free(st)
            tr.free(lg)
            tr.free(x)
        for h in K + Vc:
            tr.free(h)
        tr.free(out)
        tr.free(mask)
        tr.free(ids)


if __name__ == "__main__":
    main()

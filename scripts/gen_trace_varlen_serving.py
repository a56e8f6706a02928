#!/usr/bin/env python3
"""Allocation trace of LLM serving with variable prompt lengths, written apart from
gen_trace_llm_serving.py to check the pool against a workload shaped differently, in
hwrt-bench pool's CSV format (header action,id,size,stream).

  prompts   lengths drawn from a lognormal distribution (median --prompt-median tokens,
            spread --prompt-sigma), clipped to --max-prompt: every length occurs, not a
            few buckets; outputs geometric with mean --out-mean tokens
  KV cache  one K and one V buffer per request and layer, sized exactly for prompt +
            generated tokens and reallocated (allocate bigger, copy, free) whenever the
            sequence outgrows it by a growth factor --kv-growth (1.25: 25% headroom)
  prefill   chunked: at most --chunk tokens per step across the waiting requests, run on
            one of --streams compute streams (round robin), with per-layer temporaries
            sized by the chunk's token count and an attention workspace sized by the
            longest sequence in it
  decode    the running batch (<= --max-batch) on stream 0; logits in fp32
  sampling  top-p scratch on the last stream, freed there
Runs until every request has finished.

usage: gen_trace_varlen_serving.py [--requests N] [--streams S] [--seed N] > trace.csv
"""
import argparse
import math
import random
import sys

from trace_writer import Trace


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=3072)
    ap.add_argument("--kv-dim", type=int, default=1024, help="K (or V) width per token")
    ap.add_argument("--vocab", type=int, default=128256)
    ap.add_argument("--requests", type=int, default=120)
    ap.add_argument("--max-batch", type=int, default=32)
    ap.add_argument("--chunk", type=int, default=2048, help="prefill token budget per step")
    ap.add_argument("--streams", type=int, default=3, help="compute streams for prefill")
    ap.add_argument("--prompt-median", type=float, default=700.0)
    ap.add_argument("--prompt-sigma", type=float, default=1.0)
    ap.add_argument("--max-prompt", type=int, default=8192)
    ap.add_argument("--out-mean", type=float, default=250.0)
    ap.add_argument("--kv-growth", type=float, default=1.25)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    t = Trace(sys.stdout)
    H, L, V, KV = a.hidden, a.layers, a.vocab, a.kv_dim
    bf16, fp32 = 2, 4
    F = int(H * 3.5) // 128 * 128
    for l in range(L):
        for n, sz in (("qkv", H * (H + 2 * KV)), ("o", H * H), ("up", 2 * H * F), ("down", F * H),
                      ("n1", H), ("n2", H)):
            t.alloc(f"w{l}.{n}", sz * bf16)
    t.alloc("embed", V * H * bf16)
    t.alloc("head", V * H * bf16)
    sample_stream = a.streams                         # one more stream for sampling

    waiting = []
    for r in range(a.requests):
        p = int(min(a.max_prompt, max(4, rnd.lognormvariate(math.log(a.prompt_median), a.prompt_sigma))))
        o = max(1, int(rnd.expovariate(1.0 / a.out_mean)))
        waiting.append({"id": r, "prompt": p, "out": o, "done": 0, "pre": 0, "cap": 0, "kv": [],
                        "arrive": rnd.randrange(0, a.requests * 6)})
    waiting.sort(key=lambda q: q["arrive"])
    running, step, rr = [], 0, 0

    def ensure_kv(req, tokens, stream):
        if tokens <= req["cap"]:
            return
        cap = max(tokens, int(req["cap"] * a.kv_growth) + 1)
        new = [t.alloc(f"kv{req['id']}.{l}{kv}", cap * KV * bf16, stream)
               for l in range(L) for kv in "kv"]
        for old in req["kv"]:
            t.free(old, stream)
        req["kv"], req["cap"] = new, cap

    while waiting or running:
        # admit arrived requests while the batch has room
        prefill = [q for q in running if q["pre"] < q["prompt"]]
        while waiting and waiting[0]["arrive"] <= step and len(running) < a.max_batch:
            running.append(waiting.pop(0))
            prefill.append(running[-1])
        # chunked prefill: a token budget shared by the requests still prefilling
        budget, chunk = a.chunk, []
        for q in prefill:
            if budget <= 0:
                break
            n = min(budget, q["prompt"] - q["pre"])
            chunk.append((q, n))
            budget -= n
        if chunk:
            s = 1 + rr % a.streams if a.streams > 0 else 0
            rr += 1
            T = sum(n for _, n in chunk)
            longest = max(q["pre"] + n for q, n in chunk)
            ids = t.alloc("ids", T * 8, s)
            for q, n in chunk:
                ensure_kv(q, q["pre"] + n, s)
            x = t.alloc("pf_x", T * H * bf16, s)
            for l in range(L):
                qkv = t.alloc("pf_qkv", T * (H + 2 * KV) * bf16, s)
                ws = t.alloc("pf_attn_ws", len(chunk) * longest * 16 * fp32, s)
                att = t.alloc("pf_att", T * H * bf16, s)
                t.free(ws)
                t.free(qkv)
                up = t.alloc("pf_up", T * 2 * F * bf16, s)
                y = t.alloc("pf_y", T * H * bf16, s)
                t.free(up)
                t.free(att)
                t.free(x)
                x = y
            last = t.alloc("pf_logits", len(chunk) * V * fp32, s)
            t.free(last)
            t.free(x)
            t.free(ids)
            for q, n in chunk:
                q["pre"] += n
        # decode every request whose prompt is done
        dec = [q for q in running if q["pre"] >= q["prompt"]]
        if dec:
            B = len(dec)
            for q in dec:
                ensure_kv(q, q["prompt"] + q["done"] + 1, 0)
            x = t.alloc("dc_x", B * H * bf16)
            for l in range(L):
                qkv = t.alloc("dc_qkv", B * (H + 2 * KV) * bf16)
                att = t.alloc("dc_att", B * H * bf16)
                t.free(qkv)
                up = t.alloc("dc_up", B * 2 * F * bf16)
                y = t.alloc("dc_y", B * H * bf16)
                t.free(up)
                t.free(att)
                t.free(x)
                x = y
            logits = t.alloc("dc_logits", B * V * fp32)
            scratch = t.alloc("topp_scratch", B * V * (fp32 + 4), sample_stream)
            t.free(logits, sample_stream)
            t.free(scratch)
            t.free(x)
            for q in dec:
                q["done"] += 1
                if q["done"] >= q["out"]:
                    for b in q["kv"]:
                        t.free(b)
                    running.remove(q)
        step += 1
    for name in list(t.live):
        t.free(name)
    print(f"# {t.n} events", file=sys.stderr)


if __name__ == "__main__":
    main()

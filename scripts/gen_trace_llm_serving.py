#!/usr/bin/env python3
"""Allocation trace of LLM serving (continuous batching, decoder-only model, bf16), in
hwrt-bench pool's CSV format (header action,id,size,stream).

  setup    the weights (per layer QKV, output, MLP up/down, norms), loaded once
  arrivals requests arrive at random with random prompt and output lengths; the batch
           holds up to --max-batch requests, so the batch size varies step by step
  prefill  a new request's prompt runs alone: activations sized by its prompt length
  KV cache per request and per layer a K and a V buffer that GROWS: when a sequence
           outgrows its capacity the buffer is reallocated with --kv-chunk more tokens
           (allocate bigger, copy, free the old one), as frameworks without paged
           attention do; finished requests free their whole cache
  decode   one step for the whole batch: per layer QKV, attention, MLP temporaries sized
           by the current batch size, then logits and sampling
Host-to-device input copies use a staging buffer on stream 1.

Prompt lengths (--prompts): "buckets" (default) 64..2048 plus up to 63, "uniform" any
length in 16..4096, "lognormal" median 512 with a long tail up to 8192.

usage: gen_trace_llm_serving.py [--requests N] [--max-batch B] [--prompts D] [--seed N] > trace.csv
"""
import argparse
import random
import sys

from trace_writer import Trace


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--requests", type=int, default=96)
    ap.add_argument("--max-batch", type=int, default=24)
    ap.add_argument("--kv-chunk", type=int, default=256)
    ap.add_argument("--prompts", choices=("buckets", "uniform", "lognormal"), default="buckets")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    t = Trace(sys.stdout, sep="#")
    H, L, V = a.hidden, a.layers, a.vocab
    bf16 = 2
    kv_tok = a.kv_heads * a.head_dim * bf16            # bytes per token, K or V, per layer
    F = int(H * 8 / 3) // 256 * 256                   # SwiGLU width
    for l in range(L):
        for n, sz in (("wqkv", H * (H + 2 * a.kv_heads * a.head_dim)), ("wo", H * H),
                      ("w_gate_up", 2 * H * F), ("w_down", F * H), ("norm1", H), ("norm2", H)):
            t.alloc(f"l{l}.{n}", sz * bf16)
    t.alloc("embed", V * H * bf16)
    t.alloc("lm_head", V * H * bf16)
    t.alloc("final_norm", H * bf16)

    pending = []
    for r in range(a.requests):
        if a.prompts == "uniform":
            prompt = rnd.randrange(16, 4097)
        elif a.prompts == "lognormal":
            prompt = int(min(8192, max(8, rnd.lognormvariate(6.24, 0.9))))
        else:
            prompt = rnd.choice([64, 128, 256, 512, 1024, 2048]) + rnd.randrange(64)
        pending.append({"id": r, "prompt": prompt,
                        "out": rnd.randrange(16, 600), "arrive": rnd.randrange(0, a.requests * 12)})
    pending.sort(key=lambda q: q["arrive"])
    active = []
    step = 0

    def grow(req, tokens):
        need = -(-tokens // a.kv_chunk) * a.kv_chunk
        if need <= req["cap"]:
            return
        for l in range(L):
            for kv in ("k", "v"):
                new = t.alloc(f"r{req['id']}.l{l}.{kv}", need * kv_tok)
                old = req["kv"].get((l, kv))
                if old:
                    t.free(old)                        # after the copy into the new buffer
                req["kv"][(l, kv)] = new
        req["cap"] = need

    while pending or active:
        while pending and pending[0]["arrive"] <= step and len(active) < a.max_batch:
            req = pending.pop(0)                      # prefill, alone
            req.update(cap=0, kv={}, done=0)
            P = req["prompt"]
            stage = t.alloc("h2d_staging", P * 8, stream=1)
            ids = t.alloc("input_ids", P * 8)
            t.free(stage)
            grow(req, P)
            x = t.alloc("prefill_hidden", P * H * bf16)
            for l in range(L):
                qkv = t.alloc("prefill_qkv", P * (H + 2 * a.kv_heads * a.head_dim) * bf16)
                att = t.alloc("prefill_attn", P * H * bf16)
                t.free(qkv)
                gu = t.alloc("prefill_gate_up", P * 2 * F * bf16)
                act = t.alloc("prefill_act", P * F * bf16)
                t.free(gu)
                y = t.alloc("prefill_mlp_out", P * H * bf16)
                t.free(act)
                t.free(att)
                t.free(x)
                x = y
            logits = t.alloc("prefill_logits", V * 4)
            t.free(x)
            t.free(logits)
            t.free(ids)
            active.append(req)
        if not active:
            step += 1
            continue
        B = len(active)                               # decode step for the batch
        for req in active:
            grow(req, req["prompt"] + req["done"] + 1)
        x = t.alloc("decode_hidden", B * H * bf16)
        for l in range(L):
            qkv = t.alloc("decode_qkv", B * (H + 2 * a.kv_heads * a.head_dim) * bf16)
            att = t.alloc("decode_attn", B * H * bf16)
            t.free(qkv)
            gu = t.alloc("decode_gate_up", B * 2 * F * bf16)
            y = t.alloc("decode_mlp_out", B * H * bf16)
            t.free(gu)
            t.free(att)
            t.free(x)
            x = y
        logits = t.alloc("decode_logits", B * V * 4)
        probs = t.alloc("decode_probs", B * V * 4)
        t.free(logits)
        toks = t.alloc("decode_tokens", B * 8)
        t.free(probs)
        t.free(toks)
        t.free(x)
        for req in list(active):
            req["done"] += 1
            if req["done"] >= req["out"]:
                for buf in req["kv"].values():
                    t.free(buf)
                active.remove(req)
        step += 1
    for name in list(t.live):
        t.free(name)
    print(f"# {t.n} events", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Lower bound of an offloaded step of hwrt-bench offload's workloads, x max(compute,
transfer) (docs/offload.md, "Bounds and figures").

Model: the weights are used in a fixed cyclic order and every one crosses the link each
step; an op's compute time is proportional to its weight's bytes, and the link is
calibrated so that moving all weights takes as long as computing with them (transfer ==
compute per weight, as the bench sets it); one link, copies in use order; a weight's copy
goes into a device block that holds it and starts once the block's previous weight's op
is done. The blocks are the device's fixed slots (what the pool can place beside the
activations), or, with --budget, any bytes within a budget (memory as a byte count, as no
pool of pages and blocks can give it). With slots, every assignment of weights to slots
of one step (of one block of the stack where that is too many) is tried, and the
rotation that takes the block freed first, for the smallest steady-state step.

    offload_bound.py D:BLOCKS --slots 2.25,1.75,1.75     (MiB)
    offload_bound.py D:BLOCKS --budget 7                 (MiB for weights)
    offload_bound.py --mlp 32 --slots 1,1,1,1,1,1,1,1
"""
import argparse
import itertools
import sys


def transformer(d, blocks):
    """The weights' sizes in MiB: D x 3D, 3D x D, D x 4D, 4D x D per block (float32)."""
    return [d * d * k * 4 / 2**20 for k in (3, 3, 4, 4)] * blocks


def step_slots(sizes, slots, assign, steps=6):
    """The last step's time for a fixed assignment of weights to slots (None: does not fit)."""
    link = comp = 0.0
    free = [0.0] * len(slots)
    last = 0.0
    for _ in range(steps):
        t0 = comp
        for i, s in enumerate(sizes):
            k = assign[i]
            if slots[k] + 1e-9 < s:
                return None
            link = max(link, free[k]) + s          # the copy: link free and block free
            comp = max(comp, link) + s             # the op: after the copy and the op before
            free[k] = comp
        last = comp - t0
    return last


def step_greedy(sizes, slots, steps=6):
    """The last step's time when each copy takes the block that frees first among those
    that hold it (a rotation of any period)."""
    link = comp = 0.0
    free = [0.0] * len(slots)
    last = 0.0
    for _ in range(steps):
        t0 = comp
        for s in sizes:
            fits = [k for k in range(len(slots)) if slots[k] + 1e-9 >= s]
            if not fits:
                return None
            k = min(fits, key=lambda j: free[j])
            link = max(link, free[k]) + s
            comp = max(comp, link) + s
            free[k] = comp
        last = comp - t0
    return last


def step_budget(sizes, budget, steps=6):
    """The last step's time with memory a byte budget: a copy starts once the link is free
    and the bytes of weights whose ops are not done leave room for it."""
    link = comp = 0.0
    live = []                                      # (bytes, time its op is done)
    last = 0.0
    for _ in range(steps):
        t0 = comp
        for s in sizes:
            if s > budget + 1e-9:
                return None
            times = sorted({link} | {t for _, t in live if t > link})
            start = next(t for t in times
                         if sum(b for b, e in live if e > t) + s <= budget + 1e-9)
            link = start + s
            comp = max(comp, link) + s
            live = [(b, e) for b, e in live if e > start] + [(s, comp)]
        last = comp - t0
    return last


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("shape", nargs="?", help="D:BLOCKS of the transformer stack")
    ap.add_argument("--mlp", type=int, metavar="L", help="an L-layer MLP of 1 MiB weights")
    ap.add_argument("--slots", help="comma-separated block sizes in MiB")
    ap.add_argument("--budget", type=float, help="MiB for weights (byte-fungible memory)")
    a = ap.parse_args()
    if a.mlp:
        sizes = [1.0] * a.mlp
    elif a.shape:
        d, b = (int(x) for x in a.shape.split(":"))
        sizes = transformer(d, b)
    else:
        ap.error("give D:BLOCKS or --mlp L")
    if (a.slots is None) == (a.budget is None):
        ap.error("give one of --slots or --budget")
    total = sum(sizes)
    if a.budget is not None:
        t = step_budget(sizes, a.budget)
    else:
        slots = [float(x) for x in a.slots.split(",")]
        # a periodic assignment of one step; the tries grow as len(slots) ** len(sizes),
        # so long orders take one block of the stack (a repeating pattern)
        period = len(sizes) if len(slots) ** len(sizes) <= 2e5 else 4
        best = step_greedy(sizes, slots)
        for pat in itertools.product(range(len(slots)), repeat=period):
            assign = [pat[i % period] for i in range(len(sizes))]
            t = step_slots(sizes, slots, assign)
            if t is not None and (best is None or t < best):
                best = t
        t = best
    if t is None:
        print("a weight fits no block", file=sys.stderr)
        return 1
    print("%.3f x max(compute, transfer) (weights %.2f MiB)" % (t / total, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The default kernel against the roofline goal on random shapes, not the panel's: the panel's goal must hold on
shapes nobody listed.

    python benchmarks/roofline_random.py [--shapes 28] [--seed 0] [--target trn1|trn2|both] [--misses]

Shapes are drawn per seed: batch 1-4, channels from masks (1) and images (3, 4) to UNet widths (1280), source
sides 4..256, ratios around 2, 1.5, 4/3, 3, 4 up and 0.7, 0.5, 1/3 down (each side jittered by 10%), every machine
dtype class. Per shape: the kernel auto picks, its modelled time, the goal (1.5 x roofline_us + the floor of one
load then one store, as in roofline_panel.py), their ratio, and the best exact candidate's modelled time (so a miss
reads as "selection picked wrong" or "no kernel is fast enough"). Every time is modelled by machine/cost.py.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import resize_kernels as rk
from roofline_panel import floor_us

CHANNELS = (1, 3, 4, 8, 32, 64, 96, 128, 256, 320, 640, 1280)
RATIOS = (2.0, 1.5, 4 / 3, 3.0, 4.0, 0.7, 0.5, 1 / 3)
DTYPES = ("float32", "bfloat16", "float16", "uint8")
CANDIDATES = ("rows", "sourcerows", "rowreuse", "batched", "strided", "twopass")


def shapes(count: int, seed: int):
    """``count`` (NHWC in, NHWC out, dtype) drawn from ``seed``, outputs capped at 64 MiB (the sweeps' scale)."""
    rng, out = random.Random(seed), []
    while len(out) < count:
        n, c, dtype = rng.choice((1, 1, 2, 4)), rng.choice(CHANNELS), rng.choice(DTYPES)
        h, w, ratio = rng.randint(4, 256), rng.randint(4, 256), rng.choice(RATIOS)
        oh, ow = (max(1, round(s * ratio * rng.uniform(0.9, 1.1))) for s in (h, w))
        if n * oh * ow * c * 4 <= 64 << 20:
            out.append(((n, h, w, c), (n, oh, ow, c), dtype))
    return out


def best_candidate(i, o, dtype, target):
    best = None
    for k in CANDIDATES:
        try:
            t = rk.cost(i, o, kernel=k, dtype=dtype, target=target).modelled_us
        except Exception:  # a kernel that refuses the shape (strided: integer ratios; budgets)
            continue
        if best is None or t < best[1]:
            best = (k, t)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=int, default=28)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", choices=["trn1", "trn2", "both"], default="both")
    parser.add_argument("--misses", action="store_true", help="print only the shapes that miss the goal")
    args = parser.parse_args()
    targets = ["trn1", "trn2"] if args.target == "both" else [args.target]
    t0, met, total, worst = time.perf_counter(), 0, 0, 0.0
    print("| target | NHWC in -> out, dtype | auto picks | modelled us | goal us | modelled / goal | "
          "best candidate us | goal met |")
    print("|---|---|---|---|---|---|---|---|")
    drawn = shapes(args.shapes, args.seed)
    for target in targets:
        for n, (i, o, dtype) in enumerate(drawn, 1):
            print(f"[{target} {n}/{len(drawn)}]", file=sys.stderr, end="\r", flush=True)
            auto = rk.cost(i, o, dtype=dtype, target=target)
            goal = 1.5 * auto.roofline_us + floor_us(target)
            ratio, ok = auto.modelled_us / goal, auto.modelled_us <= goal
            met, total, worst = met + ok, total + 1, max(worst, ratio)
            if args.misses and ok:
                continue
            best = best_candidate(i, o, dtype, target)
            picked = rk.trace_resize(i, o[1:3], dtype).selection.label
            print(f"| {target} | {'x'.join(map(str, i))} -> {o[1]}x{o[2]} {dtype} | {picked} | "
                  f"{auto.modelled_us:,.1f} | {goal:,.1f} | {ratio:.2f} | {best[0]} {best[1]:,.1f} | "
                  f"{'yes' if ok else 'NO'} |", flush=True)
    print(f"\n{met} of {total} random shapes meet the goal, worst {worst:.2f}x the goal (modelled; seed {args.seed}, "
          f"{time.perf_counter() - t0:.0f} s)")
    return 0 if met == total else 1


if __name__ == "__main__":
    sys.exit(main())

"""The default kernel against the DMA roofline on the panel of shape classes, on the calibrated cost model.

    python benchmarks/roofline_panel.py [--target trn1|trn2|both] [--candidates]

Per shape: the kernel "auto" picks, its modelled time, ``roofline_us`` (the bytes
a resize must move, each needed source pixel once and the output once, at peak
DMA bandwidth), the floor no kernel beats on a tiny shape (the launch, then one
load and one store, each paying the DMA latency), the goal (1.5 x roofline +
floor), the public sample kernel's modelled time, and whether the goal is met.
``--candidates`` also prints every exact kernel's modelled time. Every time is
modelled by machine/cost.py, not measured.
"""

from __future__ import annotations

import argparse
import sys
import time

import resize_kernels as rk
from resize_kernels.machine.cost import target_params

#: (what, NHWC in, NHWC out, dtype)
PANEL = [
    ("SD2 decoder, CFG batch 2", (2, 30, 20, 1280), (2, 59, 38, 1280), "bfloat16"),
    ("SD2 decoder, CFG batch 2", (2, 15, 10, 1280), (2, 30, 20, 1280), "bfloat16"),
    ("SD2 decoder, CFG batch 2", (2, 59, 39, 640), (2, 117, 78, 640), "bfloat16"),
    ("the sample's shape", (10, 30, 20, 1280), (10, 59, 38, 1280), "float32"),
    ("the sample's shape", (1, 30, 20, 1280), (1, 59, 38, 1280), "float16"),
    ("large map 2x", (1, 512, 512, 64), (1, 1024, 1024, 64), "float32"),
    ("3x down", (8, 192, 192, 256), (8, 64, 64, 256), "float32"),
    ("0.7x down", (4, 100, 100, 128), (4, 70, 70, 128), "float16"),
    ("odd ratio", (2, 37, 53, 96), (2, 101, 97, 96), "float32"),
    ("tall, narrow", (1, 300, 4, 64), (1, 1000, 7, 64), "float32"),
    ("mask", (1, 512, 512, 1), (1, 1024, 768, 1), "float32"),
    ("RGB image", (1, 256, 256, 3), (1, 511, 383, 3), "uint8"),
    ("RGBA images", (4, 224, 224, 4), (4, 448, 336, 4), "uint8"),
]
CANDIDATES = ("rows", "sourcerows", "rowreuse", "batched", "strided", "twopass", "exact")


def floor_us(target: str) -> float:
    """The launch, then one load followed by one store, each paying the DMA completion latency (modelled)."""
    p = target_params(target)
    return p.launch_us + 2 * p.dma_latency_us


def row(what, in_shape, out_shape, dtype, target, candidates: bool) -> tuple[str, bool]:
    auto = rk.cost(in_shape, out_shape, dtype=dtype, target=target)
    public = rk.cost(in_shape, out_shape, kernel="public", dtype=dtype, target=target)
    goal = 1.5 * auto.roofline_us + floor_us(target)
    ok = auto.modelled_us <= goal
    shape = f"{'x'.join(map(str, in_shape))} -> {out_shape[1]}x{out_shape[2]}"
    picked = rk.trace_resize(in_shape, out_shape[1:3], dtype).selection.label
    line = (f"| {what} | {shape} {dtype} | {picked} | {auto.modelled_us:,.1f} | "
            f"{auto.roofline_us:,.1f} | {goal:,.1f} | {auto.modelled_us / goal:.2f} | {auto.efficiency:.0%} | "
            f"{public.modelled_us:,.1f} | {public.modelled_us / auto.modelled_us:.1f}x | {'yes' if ok else 'NO'} |")
    if candidates:
        times = []
        for k in CANDIDATES:
            try:
                times.append(f"{k} {rk.cost(in_shape, out_shape, kernel=k, dtype=dtype, target=target).modelled_us:,.1f}")
            except Exception as e:  # a kernel that refuses the shape (strided: integer ratios only)
                times.append(f"{k} -")
        line += "\n|  | " + ", ".join(times) + " | | | | | | | | | |"
    return line, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=["trn1", "trn2", "both"], default="both")
    parser.add_argument("--candidates", action="store_true", help="also every exact kernel's modelled time")
    args = parser.parse_args()
    targets = ["trn1", "trn2"] if args.target == "both" else [args.target]
    t0, met, total = time.perf_counter(), 0, 0
    for target in targets:
        print(f"\n{target} (modelled; goal = 1.5 x roofline + {floor_us(target):.1f} us floor)\n")
        print("| shape class | NHWC in -> out, dtype | auto picks | modelled us | roofline us | goal us | "
              "modelled / goal | efficiency | public sample us | public / auto | goal met |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for n, (what, i, o, dt) in enumerate(PANEL, 1):
            print(f"[{target} {n}/{len(PANEL)}]", file=sys.stderr, end="\r", flush=True)
            line, ok = row(what, i, o, dt, target, args.candidates)
            print(line, flush=True)
            met, total = met + ok, total + 1
    print(f"\n{met} of {total} rows meet the goal (modelled; {time.perf_counter() - t0:.0f} s)")
    return 0 if met == total else 1


if __name__ == "__main__":
    sys.exit(main())

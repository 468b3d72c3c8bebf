"""The default kernel against the roofline goal on random shapes, not the panel's: the panel's goal must hold on
shapes nobody listed.

    python benchmarks/roofline_random.py [--shapes 40] [--seed 0] [--target trn1|trn2|both] [--misses]
                                         [--candidates] [--grad] [--plot FILE]

Shapes are drawn per seed as issue 41 draws them: batch 1-8, channels 1-1536 (log-uniform: masks and images as
often as UNet widths), sides 2-1024, an independent ratio per axis from 1/4 to 4 (log-uniform), every dtype class;
input and output together at most 64 MiB (the sweeps' scale; larger draws are drawn again). Per shape: the kernel
auto picks, its modelled time, the goal (1.5 x roofline_us + the floor of one load then one store, as in
roofline_panel.py), their ratio, and with ``--candidates`` the best exact candidate's modelled time (so a miss reads as
"selection picked wrong" or "no kernel is fast enough"; it traces every kernel, minutes on large shapes), and the
DMA bound / goal: a lower bound on any kernel from the DMA laws alone (above 1, no kernel meets the goal on the model). ``--grad`` adds the gradient of each floating-point shape against its own
goal (2 x its roofline, dy read once and dx written once, + the floor). Then the distribution: how many meet the
goal, how many are within 1.5x of it, the geometric mean and the worst of modelled / goal, a text histogram, and
with ``--plot`` the histogram as a picture. Every time is modelled by machine/cost.py.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time

import numpy as np

import resize_kernels as rk
from resize_kernels import api
from resize_kernels.machine.cost import program_cost, target_params
from roofline_panel import floor_us

DTYPES = ("float32", "bfloat16", "float16", "uint8", "int8", "uint16", "int16", "int32")
GRAD_DTYPES = ("float32", "bfloat16", "float16")
CANDIDATES = ("rows", "sourcerows", "rowreuse", "batched", "strided", "twopass")
CAP_BYTES = 64 << 20
BINS = (0.5, 0.75, 0.9, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0)


def itemsize(dtype: str) -> int:
    return 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize


def shapes(count: int, seed: int):
    """``count`` (NHWC in, NHWC out, dtype) drawn from ``seed``, input and output together at most CAP_BYTES."""
    rng, out = random.Random(seed), []
    while len(out) < count:
        n, dtype = rng.randint(1, 8), rng.choice(DTYPES)
        c = max(1, round(math.exp(rng.uniform(0.0, math.log(1536)))))
        h, w = rng.randint(2, 1024), rng.randint(2, 1024)
        oh, ow = (max(1, round(s * math.exp(rng.uniform(math.log(0.25), math.log(4.0))))) for s in (h, w))
        if n * (h * w + oh * ow) * c * itemsize(dtype) <= CAP_BYTES:
            out.append(((n, h, w, c), (n, oh, ow, c), dtype))
    return out


def read_ns(columns: np.ndarray, pixel_bytes: int, params) -> float:
    """Least DMA-engine time (ns) to read one source row's ``columns`` (sorted, distinct) under D2: descriptors of
    contiguous runs, each ``max(descriptor_ns, bytes / bandwidth)``; a run may span unneeded columns (DP over runs)."""
    starts = np.flatnonzero(np.diff(columns, prepend=-2) != 1)
    first, last = columns[starts], columns[np.append(starts[1:], columns.size) - 1]
    best = [0.0]
    for j in range(first.size):
        cost, i = math.inf, j
        while i >= 0:
            span = (last[j] - first[i] + 1) * pixel_bytes / params.dma_engine_gbps
            cost = min(cost, best[i] + max(params.descriptor_ns, span))
            if span >= cost:  # an earlier start only widens the span
                break
            i -= 1
        best.append(cost)
    return best[-1]


def dma_bound_us(i, o, dtype, target) -> float:
    """A lower bound on any kernel's modelled time, from the DMA laws alone: the floor, plus every needed source row
    read at the fewest descriptors (or whole, rows back to back) and the output written once, spread over every
    engine. Where it exceeds the goal, no kernel meets the goal on the model."""
    from resize_kernels import semantics
    params, (n, h, w, c), b = target_params(target), i, itemsize(dtype)
    rows = np.unique(semantics.axis_index(h, o[1], semantics.COMPILER, 0)).size
    columns = np.unique(semantics.axis_index(w, o[2], semantics.COMPILER, 1))
    whole_row = w * c * b / params.dma_engine_gbps
    read = n * min(rows * min(read_ns(columns, c * b, params), whole_row), h * whole_row)
    write = math.prod(o) * b / params.dma_engine_gbps
    return floor_us(target) + (read + write) / params.dma_engines / 1e3


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


def grad_ratio(i, o, dtype, target) -> tuple[str, float, float]:
    """(kernel auto picks, modelled us, modelled / goal) of the gradient of resizing ``i`` to ``o``."""
    program = api.trace_resize_grad(o, i[1:3], dtype)
    roofline = (math.prod(o) + math.prod(i)) * itemsize(dtype) / (target_params(target).peak_dma_gbps * 1e3)
    us = program_cost(program, target).modelled_us
    return program.selection.kernel, us, us / (2 * roofline + floor_us(target))


def summary(what: str, ratios: list[float], bounds: list[float] | None = None) -> str:
    """Counts, geometric mean, worst and a text histogram of modelled / goal; with ``bounds`` (the DMA bound / goal
    per shape), how many misses no kernel can meet on the model."""
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    lines = [f"{what}: {sum(r <= 1 for r in ratios)} of {len(ratios)} meet the goal, "
             f"{sum(r <= 1.5 for r in ratios)} within 1.5x of it; modelled / goal geometric mean {geomean:.2f}, "
             f"worst {max(ratios):.2f} (modelled)"]
    if bounds is not None:
        misses = [b for r, b in zip(ratios, bounds) if r > 1]
        lines.append(f"  of the {len(misses)} misses, {sum(b > 1 for b in misses)} have a DMA bound above the goal "
                     f"(no kernel meets it on the model); {sum(b > 1 for b in bounds)} of all {len(bounds)} shapes do")
    edges = (0.0, *BINS, math.inf)
    for lo, hi in zip(edges, edges[1:]):
        k = sum(lo < r <= hi for r in ratios)
        lines.append(f"  {lo:4.2f} .. {hi:4.2f}  {'#' * k}{' ' if k else ''}{k}")
    return "\n".join(lines)


def plot(path: str, series: dict[str, list[float]]) -> None:
    """The histograms of modelled / goal, one panel per series, the goal marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    kinds = [k for k in ("forward", "gradient") if any(what.startswith(k) for what in series)]
    targets = sorted({what.split(", ")[1] for what in series})
    fig, axes = plt.subplots(len(kinds), len(targets), figsize=(5 * len(targets), 3.2 * len(kinds)), squeeze=False)
    edges = np.geomspace(0.25, max(8.0, max(max(r) for r in series.values()) * 1.05), 28)
    for what, ratios in series.items():
        kind, target = what.split(", ")
        ax = axes[kinds.index(kind)][targets.index(target)]
        ax.hist(ratios, bins=edges, color="#4c72b0")
        ax.axvline(1.0, color="#c44e52", linestyle="--", label="goal")
        ax.axvline(1.5, color="#dd8452", linestyle=":", label="1.5x the goal")
        ax.set_xscale("log")
        ax.set_xlabel("modelled / goal")
        ax.set_title(f"{what}: {sum(r <= 1 for r in ratios)} of {len(ratios)} meet the goal (modelled)", fontsize=9)
        ax.set_ylabel("shapes")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", choices=["trn1", "trn2", "both"], default="both")
    parser.add_argument("--misses", action="store_true", help="print only the shapes that miss the goal")
    parser.add_argument("--candidates", action="store_true", help="also every exact kernel's best time (slow)")
    parser.add_argument("--grad", action="store_true", help="also the gradient of the floating-point shapes")
    parser.add_argument("--plot", metavar="FILE", help="write the histograms of modelled / goal as a PNG")
    args = parser.parse_args()
    if args.shapes < 1:
        parser.error(f"--shapes requires at least 1 shape, got {args.shapes}")
    targets = ["trn1", "trn2"] if args.target == "both" else [args.target]
    t0, series, bounds = time.perf_counter(), {}, {}
    print("| target | NHWC in -> out, dtype | auto picks | modelled us | goal us | modelled / goal | "
          "best candidate us | DMA bound / goal | goal met |" + (" gradient: auto picks, us, modelled / goal |" if args.grad else ""))
    print("|---|---|---|---|---|---|---|---|---|" + ("---|" if args.grad else ""))
    drawn = shapes(args.shapes, args.seed)
    for target in targets:
        forward, grad = series.setdefault(f"forward, {target}", []), []
        bound = bounds.setdefault(f"forward, {target}", [])
        for n, (i, o, dtype) in enumerate(drawn, 1):
            print(f"[{target} {n}/{len(drawn)}]", file=sys.stderr, end="\r", flush=True)
            auto = rk.cost(i, o, dtype=dtype, target=target)
            goal = 1.5 * auto.roofline_us + floor_us(target)
            ratio = auto.modelled_us / goal
            forward.append(ratio)
            bound.append(dma_bound_us(i, o, dtype, target) / goal)
            g = grad_ratio(i, o, dtype, target) if args.grad and dtype in GRAD_DTYPES else None
            if g is not None:
                grad.append(g[2])
            if args.misses and ratio <= 1 and (g is None or g[2] <= 1):
                continue
            best = best_candidate(i, o, dtype, target) if args.candidates else None
            picked = rk.trace_resize(i, o[1:3], dtype).selection.label
            line = (f"| {target} | {'x'.join(map(str, i))} -> {o[1]}x{o[2]} {dtype} | {picked} | "
                    f"{auto.modelled_us:,.1f} | {goal:,.1f} | {ratio:.2f} | {'-' if best is None else f'{best[0]} {best[1]:,.1f}'} | {bound[-1]:.2f} | "
                    f"{'yes' if ratio <= 1 else 'NO'} |")
            if args.grad:
                line += f" {g[0]}, {g[1]:,.1f}, {g[2]:.2f} |" if g is not None else " - |"
            print(line, flush=True)
        if grad:
            series[f"gradient, {target}"] = grad
    print(f"\nseed {args.seed}, {len(drawn)} shapes, {time.perf_counter() - t0:.0f} s")
    for what, ratios in series.items():
        print(summary(what, ratios, bounds.get(what)))
    if args.plot:
        plot(args.plot, series)
        print(f"wrote {args.plot}")
    return 0 if all(r <= 1 for ratios in series.values() for r in ratios) else 1


if __name__ == "__main__":
    sys.exit(main())

"""How the tool's own time grows with the output: trace, selection, costing and simulation from 1x to 64x the SD2
output (issue 42, goal 4: every step linear, none superlinear).

The SD2 upsample (10x30x20x1280 -> 59x38 float32) with its height and width scaled in turn by 2 (in and out
alike, so the ratio holds) until the output is 64x. Per size: instructions of the default's Program, selection
(tracing and costing its candidates, the plan cache off), one trace of the chosen kernel, program_cost of it on
trn1 (its per-Program facts not kept from an earlier costing), its first simulated run and a cached run, each in
ms and per output MB. Before the first run, the output's bytes of fresh memory are touched and timed apart
("first touch", the machine's: a VM that backs fresh pages lazily charges it to whichever step allocates first).
Then, per step, the slope of log(time) against log(output bytes) over the sizes: 1 is linear; a step is flagged
past 1.15 (not the first touch, which is the machine's).

    python benchmarks/bench_growth.py [--max 64] [--repeat N]
"""

import argparse
import math
import os
import sys
import time

os.environ["RESIZE_KERNELS_PLAN_CACHE"] = "0"  # selection's own time, every size

import numpy as np  # noqa: E402

from resize_kernels import select  # noqa: E402
from resize_kernels.kernels import FORWARD, record  # noqa: E402
from resize_kernels.machine import cost  # noqa: E402
from resize_kernels.machine.cost import program_cost  # noqa: E402
from resize_kernels.machine.simulator import Executable  # noqa: E402
from resize_kernels.nki import TensorSpec, trace  # noqa: E402

N, H, W, C, OH, OW = 10, 30, 20, 1280, 59, 38
SLOPE_LIMIT = 1.15


def best_of(repeat, fn):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t)
    return min(times), value


def measure(a: int, b: int, repeat: int) -> dict:
    in_shape, out_shape = (N, H * a, W * b, C), (N, OH * a, OW * b, C)
    selection_s, program = best_of(repeat, lambda: select.program(FORWARD, None, in_shape, out_shape, "float32"))
    chosen = record(FORWARD, program.selection.kernel)
    trace_s, _ = best_of(repeat, lambda: trace(chosen.function, TensorSpec(in_shape, np.dtype("float32")),
                                               out_shape=out_shape, **chosen.call_args(program.selection.setting,
                                                                                       None)))
    cost_s, _ = best_of(repeat, lambda: (cost._FACTS.clear(), program_cost(program, "trn1")))  # facts not kept
    x = np.random.default_rng(0).standard_normal(in_shape, dtype=np.float32)
    touch_s, _ = best_of(1, lambda: np.ones(math.prod(out_shape), np.float32))  # see the docstring
    executable = Executable(program)
    first_s, _ = best_of(1, lambda: executable.run([x]))
    for _ in range(2):  # the third run on is the cached one (prepared for repetition)
        executable.run([x])
    cached_s, _ = best_of(repeat, lambda: executable.run([x]))
    return {"out MB": math.prod(out_shape) * 4 / 1e6, "instructions": len(program.instructions),
            "kernel": program.selection.label, "selection": selection_s, "trace": trace_s, "cost": cost_s,
            "first touch": touch_s, "first run": first_s, "cached run": cached_s}


def slope(xs, ys) -> float:
    lx, ly = np.log(xs), np.log(ys)
    return float(np.polyfit(lx, ly, 1)[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=64, choices=[2, 4, 8, 16, 32, 64],
                        help="the largest output, in SD2 outputs (default 64: 7.3 GB float32)")
    parser.add_argument("--repeat", type=int, default=2, help="best of N for each step but the first run")
    args = parser.parse_args()
    steps = ("selection", "trace", "cost", "first touch", "first run", "cached run")
    rows, a, b = [], 1, 1
    print(f"| output x SD2 | NHWC out | output MB | instructions | kernel | "
          + " | ".join(f"{s} ms" for s in steps) + " |")
    print("|---" * (5 + len(steps)) + "|")
    while a * b <= args.max:
        r = measure(a, b, args.repeat)
        rows.append(r)
        print(f"| {a * b} | {N}x{OH * a}x{OW * b}x{C} | {r['out MB']:,.0f} | {r['instructions']:,} | {r['kernel']} | "
              + " | ".join(f"{r[s] * 1e3:,.1f}" for s in steps) + " |", flush=True)
        a, b = (a * 2, b) if a == b else (a, b * 2)
    mb = [r["out MB"] for r in rows]
    print("\nper output MB (ms/MB) at the smallest and the largest size, and the slope of log time / log size:")
    flagged = []
    for s in steps:
        k = slope(mb, [r[s] for r in rows])
        superlinear = k > SLOPE_LIMIT and s != "first touch"
        if superlinear:
            flagged.append(s)
        print(f"  {s:11s} {rows[0][s] * 1e3 / mb[0]:8.3f} -> {rows[-1][s] * 1e3 / mb[-1]:8.3f} ms/MB, slope {k:.2f}"
              f"{'  SUPERLINEAR' if superlinear else ''}")
    print("every step grows at most linearly" if not flagged else f"superlinear: {', '.join(flagged)}")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())

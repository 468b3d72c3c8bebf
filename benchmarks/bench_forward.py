"""Forward resize simulated against peers in one run: the SD2 upsample and a large 2x map, float32, then the panel.

Shapes: the SD2 inpainting upsample (10x30x20x1280 -> 59x38) and 1x512x512x64 ->
1024x1024. For each: trace time, simulate time of a cached rk.resize_nearest
call, torch's F.interpolate(mode="nearest") on the channels_last view with one
thread, a fill of an output-sized buffer, and the ratios. Then the roofline
panel's shapes (benchmarks/roofline_panel.py), each in its dtype (``--all-dtypes``: in
each dtype torch's nearest takes): simulate and torch, and their ratio. Times are
medians of --repeat runs. Goals: simulate / torch at most 1.0x on SD2 and 3x on the
large map; on every panel shape at most 1.0x (issue 42).

    python benchmarks/bench_forward.py [--only sd2|large|panel] [--all-dtypes] [--kernel NAME] [--repeat N]
"""

import argparse
import os
import time

os.environ["RESIZE_KERNELS_PLAN_CACHE"] = "0"  # the trace column includes selection (bench_first_call.py: the cache)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from timing import median_time

import resize_kernels as rk
from resize_kernels import api

SHAPES = [("SD2 upsample", (10, 30, 20, 1280), (59, 38), 1.0), ("large map", (1, 512, 512, 64), (1024, 1024), 3.0)]
#: simulate / torch on the panel's shapes at most (issue 42: every shape, in every dtype torch's nearest takes)
PANEL_GOAL = 1.0
#: the dtypes torch's channels_last nearest takes (integers other than uint8 are "not implemented")
TORCH_DTYPES = ("float32", "bfloat16", "float16", "uint8")




def bench(what, in_shape, out_hw, goal, kernel, repeat):
    x = np.random.default_rng(0).standard_normal(in_shape, dtype=np.float32)
    out_shape = (in_shape[0], *out_hw, in_shape[3])
    api._program.cache_clear()
    api.executable.cache_clear()
    t0 = time.perf_counter()
    program = rk.trace_resize(in_shape, out_hw, kernel=kernel)
    trace_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    rk.resize_nearest(x, out_hw, kernel=kernel)  # prepares and caches the Executable
    first_s = time.perf_counter() - t0

    sim_s = median_time(lambda: rk.resize_nearest(x, out_hw, kernel=kernel), repeat)
    xt = torch.from_numpy(x).permute(0, 3, 1, 2)  # NCHW view of NHWC memory: channels_last
    assert xt.is_contiguous(memory_format=torch.channels_last)
    torch_s = median_time(lambda: torch.nn.functional.interpolate(xt, size=out_hw, mode="nearest"), repeat)
    fill_s = median_time(lambda: np.full(out_shape, 1.0, np.float32), repeat)

    mb = np.prod(out_shape) * 4 / 1e6
    print(f"{what} {list(in_shape)} -> {list(out_shape)} float32 ({mb:.1f} MB out), kernel {kernel or 'default'!r} "
          f"({program.name}), {len(program.instructions)} instructions, median of {repeat}")
    print(f"  trace                                  {trace_s * 1e3:8.1f} ms")
    print(f"  first call (prepare + run)             {first_s * 1e3:8.1f} ms")
    print(f"  cached rk.resize_nearest (simulate)    {sim_s * 1e3:8.1f} ms")
    print(f"  torch F.interpolate, channels_last, 1T {torch_s * 1e3:8.1f} ms")
    print(f"  fill of the output buffer (np.full)    {fill_s * 1e3:8.1f} ms")
    goal_text = f"  (default kernel's goal <= {goal:g}x)" if kernel is None else ""
    print(f"  ratio simulate / torch                 {sim_s / torch_s:8.2f}x{goal_text}")
    print(f"  ratio simulate / fill                  {sim_s / fill_s:8.2f}x")
    print(f"  ratio torch / fill                     {torch_s / fill_s:8.2f}x")


def as_torch(x: np.ndarray) -> torch.Tensor:
    """The NCHW channels_last view of an NHWC array, bfloat16 (ml_dtypes) included."""
    if x.dtype.name == "bfloat16":
        return torch.from_numpy(x.view(np.uint16)).view(torch.bfloat16).permute(0, 3, 1, 2)
    return torch.from_numpy(x).permute(0, 3, 1, 2)


def bench_panel(kernel, repeat, all_dtypes: bool = False):
    """Simulate and torch on each panel shape, in its dtype (``all_dtypes``: in each of TORCH_DTYPES)."""
    from roofline_panel import PANEL
    print(f"\nthe roofline panel's shapes, kernel {kernel or 'default'!r}, median of {repeat} "
          f"(goal: simulate / torch at most {PANEL_GOAL:g}x)")
    print(f"  {'shape class':26s} {'NHWC in -> out, dtype':42s} {'simulate ms':>11s} {'torch ms':>9s} {'ratio':>6s}")
    worst = 0.0
    rows = [(what, i, o, d) for what, i, o, own in PANEL for d in (TORCH_DTYPES if all_dtypes else (own,))]
    for what, in_shape, out_shape, dtype in rows:
        dt = np.dtype(rk.machine.dtypes.as_dtype(dtype))
        x = (np.random.default_rng(0).integers(0, 255, in_shape) if dt.kind == "u"
             else np.random.default_rng(0).standard_normal(in_shape)).astype(dt)
        out_hw = out_shape[1:3]
        rk.resize_nearest(x, out_hw, kernel=kernel)  # trace and prepare once
        sim_s = median_time(lambda: rk.resize_nearest(x, out_hw, kernel=kernel), repeat)
        xt = as_torch(x)
        torch_s = median_time(lambda: torch.nn.functional.interpolate(xt, size=out_hw, mode="nearest"), repeat)
        worst = max(worst, sim_s / torch_s)
        shape = f"{'x'.join(map(str, in_shape))} -> {out_hw[0]}x{out_hw[1]} {dtype}"
        print(f"  {what:26s} {shape:42s} {sim_s * 1e3:11.2f} {torch_s * 1e3:9.2f} {sim_s / torch_s:5.2f}x")
    print(f"  worst ratio simulate / torch: {worst:.2f}x (goal at most {PANEL_GOAL:g}x)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kernel", default=None, help="forward kernel variant (default: the default, 'auto')")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--only", choices=["sd2", "large", "panel"], help="run one part only")
    parser.add_argument("--all-dtypes", action="store_true",
                        help=f"the panel in each dtype torch's nearest takes ({', '.join(TORCH_DTYPES)})")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for what, in_shape, out_hw, goal in SHAPES:
        if args.only is None or args.only == ("sd2" if what.startswith("SD2") else "large"):
            bench(what, in_shape, out_hw, goal, args.kernel, args.repeat)
    if args.only in (None, "panel"):
        bench_panel(args.kernel, args.repeat, args.all_dtypes)


if __name__ == "__main__":
    main()

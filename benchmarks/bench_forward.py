"""Forward resize on the SD2 inpainting upsample (10x30x20x1280 -> 59x38 float32), against peers in one run.

Prints trace time, simulate time of a cached rk.resize_nearest call, torch's
F.interpolate(mode="nearest") on the channels_last view with one thread, a fill
of an output-sized buffer, and the ratios. Times are medians of --repeat runs.
"""

import argparse
import statistics
import time

import numpy as np
import torch

import resize_kernels as rk
from resize_kernels import api


def median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kernel", default="seed")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--batch", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)

    in_shape, out_hw = (args.batch, 30, 20, 1280), (59, 38)
    x = np.random.default_rng(0).standard_normal(in_shape, dtype=np.float32)
    out_shape = (args.batch, *out_hw, 1280)

    api._program.cache_clear()
    api.resize_executable.cache_clear()
    t0 = time.perf_counter()
    program = rk.trace_resize(in_shape, out_hw, kernel=args.kernel)
    trace_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    rk.resize_nearest(x, out_hw, kernel=args.kernel)  # prepares and caches the Executable
    first_s = time.perf_counter() - t0

    sim_s = median_time(lambda: rk.resize_nearest(x, out_hw, kernel=args.kernel), args.repeat)
    xt = torch.from_numpy(x).permute(0, 3, 1, 2)  # NCHW view of NHWC memory: channels_last
    assert xt.is_contiguous(memory_format=torch.channels_last)
    torch_s = median_time(lambda: torch.nn.functional.interpolate(xt, size=out_hw, mode="nearest"), args.repeat)
    fill_s = median_time(lambda: np.full(out_shape, 1.0, np.float32), args.repeat)

    mb = np.prod(out_shape) * 4 / 1e6
    print(f"SD2 upsample {list(in_shape)} -> {list(out_shape)} float32 ({mb:.1f} MB out), kernel {args.kernel!r}, "
          f"{len(program.instructions)} instructions, median of {args.repeat}")
    print(f"  trace                                  {trace_s * 1e3:8.1f} ms")
    print(f"  first call (prepare + run)             {first_s * 1e3:8.1f} ms")
    print(f"  cached rk.resize_nearest (simulate)    {sim_s * 1e3:8.1f} ms")
    print(f"  torch F.interpolate, channels_last, 1T {torch_s * 1e3:8.1f} ms")
    print(f"  fill of the output buffer (np.full)    {fill_s * 1e3:8.1f} ms")
    print(f"  ratio simulate / torch                 {sim_s / torch_s:8.2f}x")
    print(f"  ratio simulate / fill                  {sim_s / fill_s:8.2f}x")
    print(f"  ratio torch / fill                     {torch_s / fill_s:8.2f}x")


if __name__ == "__main__":
    main()

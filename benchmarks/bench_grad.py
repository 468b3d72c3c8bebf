"""Gradient of the SD2 inpainting upsample (dy 10x59x38x1280 -> dx 10x30x20x1280 float32), against torch, one run.

Prints trace time, simulate time of a cached rk.resize_nearest_grad call, torch
autograd of F.interpolate(mode="nearest") on channels_last tensors with one
thread (the backward alone, via torch.autograd.grad on a recorded forward), and
the ratio. Times are medians of --repeat runs. Both results are checked equal.
"""

import argparse
import time

import numpy as np
import torch
from timing import median_time

import resize_kernels as rk
from resize_kernels import api




def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--batch", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)

    in_hw, dy_shape = (30, 20), (args.batch, 59, 38, 1280)
    dy = np.random.default_rng(0).standard_normal(dy_shape, dtype=np.float32)

    api._program.cache_clear()
    api.executable.cache_clear()
    t0 = time.perf_counter()
    program = api.trace_resize_grad(dy_shape, in_hw)
    trace_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    dx = rk.resize_nearest_grad(dy, in_hw)  # prepares and caches the Executable
    first_s = time.perf_counter() - t0
    sim_s = median_time(lambda: rk.resize_nearest_grad(dy, in_hw), args.repeat)

    n, c = dy_shape[0], dy_shape[3]
    x = torch.zeros(n, c, *in_hw).to(memory_format=torch.channels_last).requires_grad_()
    g = torch.from_numpy(dy).permute(0, 3, 1, 2)  # NCHW view of NHWC memory: channels_last
    y = torch.nn.functional.interpolate(x, size=dy_shape[1:3], mode="nearest")
    grad = lambda: torch.autograd.grad(y, x, g, retain_graph=True)[0]  # noqa: E731
    torch_s = median_time(grad, args.repeat)
    same = np.array_equal(grad().permute(0, 2, 3, 1).numpy(), dx)

    mb = np.prod(dy_shape) * 4 / 1e6
    print(f"SD2 gradient dy {list(dy_shape)} -> dx {[n, *in_hw, c]} float32 ({mb:.1f} MB in), kernel 'general', "
          f"{len(program.instructions)} instructions, median of {args.repeat}")
    print(f"  trace                                   {trace_s * 1e3:8.1f} ms")
    print(f"  first call (prepare + run)              {first_s * 1e3:8.1f} ms")
    print(f"  cached rk.resize_nearest_grad (simulate){sim_s * 1e3:8.1f} ms")
    print(f"  torch autograd of F.interpolate, cl, 1T {torch_s * 1e3:8.1f} ms")
    print(f"  ratio simulate / torch                  {sim_s / torch_s:8.2f}x")
    print(f"  results bit-identical                   {same}")


if __name__ == "__main__":
    main()

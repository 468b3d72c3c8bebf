"""The gradient kernels against the gradient's DMA roofline on the SD2 shapes, on the calibrated cost model.

    python benchmarks/grad_panel.py

Per SD2 decoder shape (bfloat16, batch 2) and target: the roofline (dy read once
and dx written once at peak DMA bandwidth), the kernel "auto" picks (its
selection, as the Program records it), and each kernel's modelled time with its
ratio to the roofline; the goal is 2 x roofline
plus the floor of roofline_panel.py (the launch, a load and a store). Every time is
modelled by machine/cost.py, not measured.
"""

from __future__ import annotations

import math

from resize_kernels import api
from resize_kernels.machine.cost import program_cost, target_params

from roofline_panel import floor_us

#: (dy NHWC, dx height and width)
SHAPES = [((2, 59, 38, 1280), (30, 20)), ((2, 30, 20, 1280), (15, 10)), ((2, 117, 78, 640), (59, 39))]
DTYPE, ITEM = "bfloat16", 2
KERNELS = ("general", "padded", "rows")


def main() -> None:
    print("| dy -> dx | target | roofline us | goal us | auto picks | " + " | ".join(f"{k} us" for k in KERNELS)
          + " | goal met |")
    print("|---|---|---|---|---|" + "---|" * len(KERNELS) + "---|")
    met = total = 0
    for dy_shape, in_hw in SHAPES:
        n, _, _, c = dy_shape
        dx_shape = (n, *in_hw, c)
        pick = api.trace_resize_grad(dy_shape, in_hw, DTYPE).selection.kernel
        for target in ("trn1", "trn2"):
            roofline = (math.prod(dy_shape) + math.prod(dx_shape)) * ITEM / (target_params(target).peak_dma_gbps * 1e3)
            goal = 2 * roofline + floor_us(target)
            times = {k: program_cost(api.trace_resize_grad(dy_shape, in_hw, DTYPE, k), target).modelled_us
                     for k in KERNELS}
            ok = times[pick] <= goal
            met, total = met + ok, total + 1
            print(f"| {'x'.join(map(str, dy_shape))} -> {in_hw[0]}x{in_hw[1]} | {target} | {roofline:,.1f} | "
                  f"{goal:,.1f} | {pick} | " + " | ".join(f"{times[k]:,.1f} ({times[k] / roofline:.1f}x)"
                                                          for k in KERNELS) + f" | {'yes' if ok else 'NO'} |")
    print(f"\n{met} of {total} rows meet the goal (modelled)")


if __name__ == "__main__":
    main()

"""The gradient kernels against the gradient's DMA roofline on the SD2 shapes, on the calibrated cost model.

    python benchmarks/grad_panel.py

Per SD2 decoder shape (bfloat16, batch 2) and target: the roofline (dy read once
and dx written once at peak DMA bandwidth), the kernel "auto" picks, and each
kernel's modelled time with its ratio to the roofline; the goal is 2 x roofline
plus the floor of roofline_panel.py (the launch, a load and a store). Every time is
modelled by machine/cost.py, not measured.
"""

from __future__ import annotations

import math

from resize_kernels import api
from resize_kernels.kernels.grad_rows import grad_rows_applies, grad_rows_is_short
from resize_kernels.kernels.plan import plan_resize
from resize_kernels.machine.cost import program_cost, target_params

from roofline_panel import floor_us

#: (dy NHWC, dx height and width)
SHAPES = [((2, 59, 38, 1280), (30, 20)), ((2, 30, 20, 1280), (15, 10)), ((2, 117, 78, 640), (59, 39))]
DTYPE, ITEM = "bfloat16", 2


def main() -> None:
    print("| dy -> dx | target | roofline us | goal us | auto picks | general us | rows us | goal met |")
    print("|---|---|---|---|---|---|---|---|")
    met = total = 0
    for dy_shape, in_hw in SHAPES:
        n, _, _, c = dy_shape
        dx_shape = (n, *in_hw, c)
        plan = plan_resize(dx_shape, dy_shape)
        pick = "rows" if grad_rows_applies(plan, ITEM) and grad_rows_is_short(plan, ITEM) else "general"
        for target in ("trn1", "trn2"):
            roofline = (math.prod(dy_shape) + math.prod(dx_shape)) * ITEM / (target_params(target).peak_dma_gbps * 1e3)
            goal = 2 * roofline + floor_us(target)
            times = {k: program_cost(api.trace_resize_grad(dy_shape, in_hw, DTYPE, k), target).modelled_us
                     for k in ("general", "rows")}
            ok = times[pick] <= goal
            met, total = met + ok, total + 1
            print(f"| {'x'.join(map(str, dy_shape))} -> {in_hw[0]}x{in_hw[1]} | {target} | {roofline:,.1f} | "
                  f"{goal:,.1f} | {pick} | {times['general']:,.1f} ({times['general'] / roofline:.1f}x) | "
                  f"{times['rows']:,.1f} ({times['rows'] / roofline:.1f}x) | {'yes' if ok else 'NO'} |")
    print(f"\n{met} of {total} rows meet the goal (modelled)")


if __name__ == "__main__":
    main()

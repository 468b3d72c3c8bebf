"""resize_nearest_auto_kernel: the best exact forward kernel for each shape, chosen when the kernel is traced."""

from __future__ import annotations

from .. import contract
from .batched import batched_dma_count, resize_nearest_batched_kernel
from .plan import plan_resize
from .rowreuse import ROW_REUSE_MAX_DMAS, resize_nearest_row_reuse_kernel, row_reuse_dma_count
from .strided import resize_nearest_strided_kernel
from .twopass import resize_nearest_two_pass_kernel

# ROW_REUSE_MAX_DMAS (defined in rowreuse.py, which plans for it once): "rowreuse" is taken while it needs at most
# that many DMAs; beyond it "twopass" takes over.

# When the height shrinks (out_h <= in_h) no output row repeats a source row, so reusing rows saves nothing and
# "rowreuse" only keeps its cost: one gather per group of equally spaced source rows and one store per group, with
# only the output's columns on partitions. "batched" then wins whenever it needs fewer DMAs: on the modelled grid of
# benchmarks/dispatch_grid.py it was faster on all 49 such shapes (up to 18x: 1x255x3x1 -> 99x1), and on none of
# the 39 upsampling shapes where it also needed fewer DMAs. A rule on trace-free counts, until the calibrated cost
# model (issue 13) can choose by modelled time.

_KERNELS = {"strided": resize_nearest_strided_kernel, "rowreuse": resize_nearest_row_reuse_kernel,
            "batched": resize_nearest_batched_kernel, "twopass": resize_nearest_two_pass_kernel}


def forward_kernel_for(in_shape, out_shape, itemsize: int = 4) -> str:
    """The variant name "auto" picks for NHWC ``in_shape`` -> ``out_shape`` and an element size in bytes.

    "strided" when both axes are integer ratios (no index graph, no gather:
    strided loads and broadcast stores); else "rowreuse" (one small index
    graph, one gather per group of source rows, broadcast stores) while it
    needs at most ROW_REUSE_MAX_DMAS DMAs, unless the height shrinks and
    "batched" (one gather and one store per tile of 128 pixels) needs fewer
    DMAs; else "twopass" (a column gather and a row gather through a scratch
    tensor, for maps so irregular that reusing rows would take too many
    stores). All are exact for every shape they accept, and the choice bounds
    tracing for every shape.
    """
    in_shape, out_shape = contract.resize_shapes("forward_kernel_for", in_shape, out_shape)
    return _variant_for(in_shape, out_shape, itemsize)


def _variant_for(in_shape: tuple, out_shape: tuple, itemsize: int) -> str:
    """``forward_kernel_for`` on shapes the contract has already checked (the auto kernel checks them itself)."""
    plan = plan_resize(in_shape, out_shape)
    if plan.integer_ratios:
        return "strided"
    if out_shape[1] <= in_shape[1]:
        batched = batched_dma_count(plan, itemsize)
        if batched < ROW_REUSE_MAX_DMAS and row_reuse_dma_count(plan, itemsize, limit=batched) > batched:
            return "batched"  # counting rowreuse's DMAs stops as soon as they pass batched's
    if row_reuse_dma_count(plan, itemsize, limit=ROW_REUSE_MAX_DMAS) <= ROW_REUSE_MAX_DMAS:
        return "rowreuse"
    return "twopass"


def resize_nearest_auto_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize by the best exact kernel for the shape (see ``forward_kernel_for``).

    Layouts, dtypes and constraints: those of the chosen kernel (NHWC in and out
    in HBM, any machine dtype, the resize contract). The choice is made at
    trace time, so the Program is the chosen kernel's, under this kernel's name.
    """
    in_shape, checked_out = contract.resize_shapes("resize_nearest_auto_kernel", data_tensor.shape, out_shape)
    variant = _variant_for(in_shape, checked_out, data_tensor.dtype.itemsize)
    return _KERNELS[variant](data_tensor, out_shape)

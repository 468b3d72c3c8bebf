"""resize_nearest_auto_kernel: the best exact forward kernel for each shape, chosen when the kernel is traced."""

from __future__ import annotations

from .. import contract
from .plan import plan_resize
from .rowreuse import ROW_REUSE_MAX_DMAS, resize_nearest_row_reuse_kernel, row_reuse_dma_count
from .strided import resize_nearest_strided_kernel
from .twopass import resize_nearest_two_pass_kernel

# ROW_REUSE_MAX_DMAS (defined in rowreuse.py, which plans for it once): "rowreuse" is taken while it needs at most
# that many DMAs; beyond it "twopass" takes over.

_KERNELS = {"strided": resize_nearest_strided_kernel, "rowreuse": resize_nearest_row_reuse_kernel,
            "twopass": resize_nearest_two_pass_kernel}


def forward_kernel_for(in_shape, out_shape, itemsize: int = 4) -> str:
    """The variant name "auto" picks for NHWC ``in_shape`` -> ``out_shape`` and an element size in bytes.

    "strided" when both axes are integer ratios (no index graph, no gather:
    strided loads and broadcast stores); else "rowreuse" (one small index
    graph, one gather per group of source rows, broadcast stores) while it
    needs at most ROW_REUSE_MAX_DMAS DMAs; else "twopass" (a column gather and a
    row gather through a scratch tensor, for maps so irregular that reusing
    rows would take too many stores). All are exact for every shape they accept,
    and the choice bounds tracing for every shape.
    """
    in_shape, out_shape = contract.resize_shapes("forward_kernel_for", in_shape, out_shape)
    return _variant_for(in_shape, out_shape, itemsize)


def _variant_for(in_shape: tuple, out_shape: tuple, itemsize: int) -> str:
    """``forward_kernel_for`` on shapes the contract has already checked (the auto kernel checks them itself)."""
    plan = plan_resize(in_shape, out_shape)
    if plan.integer_ratios:
        return "strided"
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

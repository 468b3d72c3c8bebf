"""resize_nearest_auto_kernel: the best exact forward kernel for each shape, chosen when the kernel is traced."""

from __future__ import annotations

from .. import contract
from .plan import plan_resize
from .rowreuse import resize_nearest_row_reuse_kernel
from .strided import resize_nearest_strided_kernel


def forward_kernel_for(in_shape, out_shape) -> str:
    """The variant name "auto" picks for NHWC ``in_shape`` -> ``out_shape``.

    "strided" when both axes are integer ratios (no index graph, no gather:
    strided loads and broadcast stores), else "rowreuse" (one small index graph,
    one gather per group of source rows, broadcast stores). Both are exact for
    every shape they accept.
    """
    in_shape, out_shape = contract.resize_shapes("forward_kernel_for", in_shape, out_shape)
    return "strided" if plan_resize(in_shape, out_shape).integer_ratios else "rowreuse"


def resize_nearest_auto_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize by the best exact kernel for the shape (see ``forward_kernel_for``).

    Layouts, dtypes and constraints: those of the chosen kernel (NHWC in and out
    in HBM, any machine dtype, the resize contract). The choice is made at
    trace time, so the Program is the chosen kernel's, under this kernel's name.
    """
    contract.resize_shapes("resize_nearest_auto_kernel", data_tensor.shape, out_shape)
    if forward_kernel_for(data_tensor.shape, out_shape) == "strided":
        return resize_nearest_strided_kernel(data_tensor, out_shape)
    return resize_nearest_row_reuse_kernel(data_tensor, out_shape)

"""Kernel functions, by variant name. They know nothing of HLO."""

from .exact import resize_nearest_exact_kernel
from .resize import resize_nearest_fixed_dma_kernel
from . import vision
from .grad import resize_nearest_grad_kernel

#: Forward resize kernels selectable by name (``kernel=`` in the API).
FORWARD_KERNELS = {"exact": resize_nearest_exact_kernel, "seed": resize_nearest_fixed_dma_kernel,
                   "public": vision.resize_nearest_fixed_dma_kernel}
#: The variant used when none is named: exact for every accepted shape.
DEFAULT_FORWARD = "exact"

#: Gradient kernels selectable by name; "general" handles every ratio (integer or not, up or down).
GRAD_KERNELS = {"general": resize_nearest_grad_kernel}

__all__ = ["FORWARD_KERNELS", "DEFAULT_FORWARD", "resize_nearest_exact_kernel", "resize_nearest_fixed_dma_kernel"]
__all__ += ["GRAD_KERNELS", "resize_nearest_grad_kernel"]

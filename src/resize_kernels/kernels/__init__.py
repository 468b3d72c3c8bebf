"""Kernel functions, by variant name. They know nothing of HLO."""

from .resize import resize_nearest_fixed_dma_kernel

#: Forward resize kernels selectable by name (``kernel=`` in the API).
FORWARD_KERNELS = {"seed": resize_nearest_fixed_dma_kernel}
#: The variant used when none is named. The seed's until a corrected kernel exists.
DEFAULT_FORWARD = "seed"

__all__ = ["FORWARD_KERNELS", "DEFAULT_FORWARD", "resize_nearest_fixed_dma_kernel"]

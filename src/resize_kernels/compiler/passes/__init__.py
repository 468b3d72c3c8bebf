"""HLO-to-HLO passes, each a small function ``pass(module) -> None`` that rewrites in place or raises."""

from .canonicalize_resize_grad import (
                                       RESIZE_NEAREST_GRAD,
                                       average_pool_resize_grad,
                                       block_factors,
                                       canonicalize_resize_grad,
                                       lower_resize_nearest_grad,
)
from .inline_calls import inline_calls
from .lower_resize import KERNEL_OPCODE, lower_resize_nearest
from .validate_resize import ValidationError, validate_resize, validate_resize_extended

__all__ = ["KERNEL_OPCODE", "RESIZE_NEAREST_GRAD", "ValidationError", "average_pool_resize_grad", "block_factors",
           "canonicalize_resize_grad", "inline_calls", "lower_resize_nearest", "lower_resize_nearest_grad",
           "validate_resize", "validate_resize_extended"]

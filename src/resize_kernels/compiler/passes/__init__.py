"""HLO-to-HLO passes, each a small function ``pass(module) -> None`` that rewrites in place or raises."""

from .lower_resize import KERNEL_OPCODE, lower_resize_nearest
from .validate_resize import ValidationError, validate_resize

__all__ = ["KERNEL_OPCODE", "ValidationError", "lower_resize_nearest", "validate_resize"]

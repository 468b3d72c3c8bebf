"""HLO-to-HLO passes, each a small function ``pass(module) -> None`` that rewrites in place or raises.

The compiler's (``pipeline.PASSES``) lower resize custom-calls; the StableHLO
ones (``frontend.STABLEHLO_TO_HLO``) convert a module parsed from StableHLO
to the HLO XLA makes of it."""

from .assign_layouts import assign_layouts
from .canonicalize_resize_grad import (
                                       RESIZE_NEAREST_GRAD,
                                       average_pool_resize_grad,
                                       block_factors,
                                       canonicalize_resize_grad,
                                       lower_resize_nearest_grad,
)
from .canonicalize_shape_ops import canonicalize_shape_ops
from .cse_constants import cse_constants
from .expand_iota import expand_iota
from .expand_splat_constants import expand_splat_constants
from .hlo_dce import hlo_dce
from .inline_calls import inline_calls
from .legalize_broadcast_in_dim import legalize_broadcast_in_dim
from .lower_resize import KERNEL_OPCODE, lower_resize_nearest
from .move_constants_right import move_constants_right
from .name_instructions import name_instructions
from .post_order import post_order
from .sink_constants import sink_constants
from .validate_resize import ValidationError, validate_resize, validate_resize_extended

__all__ = ["KERNEL_OPCODE", "RESIZE_NEAREST_GRAD", "ValidationError", "assign_layouts", "average_pool_resize_grad",
           "block_factors", "canonicalize_resize_grad", "canonicalize_shape_ops", "cse_constants", "expand_iota",
           "expand_splat_constants", "hlo_dce", "inline_calls", "legalize_broadcast_in_dim", "lower_resize_nearest",
           "lower_resize_nearest_grad", "move_constants_right", "name_instructions", "post_order", "sink_constants",
           "validate_resize", "validate_resize_extended"]

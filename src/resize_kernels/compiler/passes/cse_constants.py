"""Equal constants of a computation are one, as MLIR keeps the constants of a block unique (XLA's CSE, for them).

On a module parsed from StableHLO, after ``canonicalize_shape_ops``: a
constant equal to one before it in the same computation (same element type,
dimensions and bits, and both a ``Splat`` or both a ``Literal``, as MLIR's
attributes differ) is no instruction: its users use the first. A region's
stand-in for a constant of its function is no constant yet and stays
(``sink_constants`` copies it in later). Equal bits, not values: NaNs and
-0.0 are told apart, as MLIR tells them. One pass in parse order
(``parse_order.rewrite``, which also updates the stand-ins' operands), the
constants looked up by their bytes: linear.
"""

from __future__ import annotations

import numpy as np

from ..hlo import HloInstruction, HloModule, Literal, Splat
from .parse_order import Make, rewrite


def cse_constants(module: HloModule) -> None:
    """Pass: replace each constant by the first equal one of its computation."""
    first: dict[tuple, HloInstruction] = {}

    def visit(inst: HloInstruction, make: Make) -> HloInstruction | None:
        if inst.opcode != "constant" or not isinstance(inst.payload, (Literal, Splat)):
            return None
        key = (id(inst.parent), inst.shape.element_type, inst.shape.dims, isinstance(inst.payload, Splat),
               np.ascontiguousarray(inst.payload.value).tobytes())
        return first.setdefault(key, inst)

    rewrite(module, visit)

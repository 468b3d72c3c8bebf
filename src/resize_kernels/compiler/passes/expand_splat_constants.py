"""A splat constant as XLA exports it: a scalar constant and a broadcast, or for one element its literal.

On a module parsed from StableHLO, after ``cse_constants`` (which tells
splats and other constants apart): a constant whose value is a ``Splat``
(one value for every element, however many) becomes a scalar constant of that
value and a broadcast of it (``dimensions={}``), which costs one element; a
splat of one element becomes the constant of its ``Literal``. What a region
uses of it, its stand-in, then follows the broadcast.
"""

from __future__ import annotations

import math

from ..hlo import HloInstruction, HloModule, IntList, Literal, Shape, Splat
from .parse_order import Make, rewrite


def expand_splat_constants(module: HloModule) -> None:
    """Pass: make each splat constant a scalar constant and a broadcast, or the literal of its one element."""
    rewrite(module, _expand)


def _expand(inst: HloInstruction, make: Make) -> HloInstruction | None:
    if inst.opcode != "constant" or not isinstance(inst.payload, Splat):
        return None
    shape, value = inst.shape, inst.payload.value
    if math.prod(shape.dims) == 1:
        inst.payload = Literal(shape, value.reshape(shape.dims))
        return None
    scalar = Shape(shape.element_type, ())
    constant = make("constant", scalar, payload=Literal(scalar, value))
    return make("broadcast", shape, [constant], {"dimensions": IntList()})

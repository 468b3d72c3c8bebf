"""StableHLO's broadcast_in_dim as XLA converts it to HLO broadcasts: dimensions in order, no size-1 expansion.

On a module parsed from StableHLO, after ``canonicalize_shape_ops``, every
``broadcast`` is a broadcast_in_dim: its dimensions may be out of order, and
it may expand a size-1 operand dimension, which an HLO broadcast does neither.
As XLA's conversion does: dimensions out of order transpose the operand first
(so that they are in order); then XlaBuilder's BroadcastInDim, a broadcast
that leaves the expanded dimensions at size 1, a reshape that drops them and
a broadcast that expands them. A broadcast already in HLO's form stays.
"""

from __future__ import annotations

from ..hlo import HloInstruction, HloModule, IntList, Shape
from .parse_order import Make, rewrite


def legalize_broadcast_in_dim(module: HloModule) -> None:
    """Pass: make each broadcast an HLO broadcast, after a transpose of its operand and before a reshape and a
    broadcast where needed."""
    rewrite(module, _legalize)


def _legalize(inst: HloInstruction, make: Make) -> HloInstruction | None:
    if inst.opcode != "broadcast":
        return None
    source, dims, result = inst.operands[0], list(inst.dimensions), inst.shape
    if dims != sorted(dims):  # transpose the operand so that the dimensions it maps to are in order
        order = sorted(range(len(dims)), key=lambda axis: dims[axis])
        operand = source.shape
        source = make("transpose", Shape(operand.element_type, tuple(operand.dims[axis] for axis in order)),
                      [source], {"dimensions": IntList(order)})
        dims = sorted(dims)
    in_dims = list(result.dims)
    for axis, dim in enumerate(dims):
        in_dims[dim] = source.shape.dims[axis]
    if source is inst.operands[0] and tuple(in_dims) == result.dims:
        return None
    made = make("broadcast", Shape(result.element_type, tuple(in_dims)), [source], {"dimensions": IntList(dims)})
    if tuple(in_dims) != result.dims:  # XlaBuilder's broadcast / reshape / broadcast for expanded size-1 dimensions
        kept = [i for i in range(result.rank) if in_dims[i] == result.dims[i]]
        made = make("reshape", Shape(result.element_type, tuple(in_dims[i] for i in kept)), [made])
        made = make("broadcast", result, [made], {"dimensions": IntList(kept)})
    return made

"""MLIR's folds and canonical forms of the StableHLO shape ops, which XLA applies before converting to HLO.

On a module parsed from StableHLO (hlo.stablehlo: one instruction per op),
where a ``broadcast`` is StableHLO's broadcast_in_dim (dimensions in any
order, size-1 dimensions expanded) and a constant may be a ``Splat``:

* a ``convert`` to the same element type, a ``reshape`` to the same
  dimensions, an identity ``transpose`` or ``broadcast`` is no instruction:
  its users use its operand;
* a transpose of a transpose is one transpose (the permutations composed), a
  reshape of a reshape one reshape, a broadcast of a broadcast one broadcast;
* a transpose that moves only size-1 dimensions is a reshape; a broadcast that
  only adds size-1 dimensions is a reshape, and one that only permutes them a
  transpose;
* a reshape, transpose or broadcast of a splat constant is a splat constant
  (of a constant a region uses too: a stand-in has its value).

These feed each other (a broadcast that is a transpose may fold into the
transpose before it), so they are one pass, in parse order
(``parse_order.rewrite``): each op is folded once its operands are. What the
pass makes has no layout; HLO's broadcast forms come later
(``legalize_broadcast_in_dim``). Not mirrored: constant folding beyond
splats, and the rare rewrites that depend on the order in which MLIR visits
ops.

``Folder`` answers, by the same rules, what a value becomes while the module
is still being parsed: hlo.stablehlo decides two errors by it (a region may
use a value of its function that becomes a constant; an elementwise op's
operands are checked with constants moved right), as XLA folds before it
converts.
"""

from __future__ import annotations

import math

import numpy as np

from ..hlo import HloInstruction, HloModule, IntList, Shape, Splat
from ..hlo.stablehlo import CapturedValue
from .parse_order import Make, rewrite


def canonicalize_shape_ops(module: HloModule) -> None:
    """Pass: fold each convert, reshape, transpose and broadcast (StableHLO's broadcast_in_dim) as MLIR does."""
    rewrite(module, _fold)


def _fold(inst: HloInstruction, make: Make) -> HloInstruction | None:
    operands = inst.operands
    if inst.opcode == "convert" and inst.shape.element_type == operands[0].shape.element_type:
        return operands[0]
    if inst.opcode == "reshape":
        return _reshape(operands[0], inst.shape, make, inst)
    if inst.opcode == "transpose":
        return _transpose(operands[0], list(inst.dimensions), inst.shape, make, inst)
    if inst.opcode == "broadcast":
        return _broadcast_in_dim(operands[0], list(inst.dimensions), inst.shape, make, inst)
    return None


class Folder:
    """``folder(value)``: what canonicalize_shape_ops makes of `value` (an instruction being parsed), folded on
    copies (nothing parsed changes), each value once: the work stays linear however often it is asked."""

    def __init__(self):
        self.folded: dict[HloInstruction, HloInstruction] = {}

    def __call__(self, value: HloInstruction) -> HloInstruction:
        chain, inst = [], value
        while inst not in self.folded:
            chain.append(inst)
            if not _folds(inst):
                break
            inst = inst.operands[0]
        for inst in reversed(chain):
            self.folded[inst] = self._fold(inst)
        return self.folded[value]

    def _fold(self, inst: HloInstruction) -> HloInstruction:
        """`inst` folded, its operand folded already (what the rules look at of anything else is the thing)."""
        if not _folds(inst):
            return inst
        copy = HloInstruction(inst.name, inst.opcode, inst.shape, [self.folded[inst.operands[0]]], inst.attributes,
                              payload=inst.payload)
        if inst.opcode == "constant":  # a region's stand-in, its value folded
            return copy
        value = _fold(copy, _scratch)
        return copy if value is None else value


def _scratch(opcode: str, shape: Shape, operands=(), attributes=None, payload=None) -> HloInstruction:
    return HloInstruction("folded", opcode, shape, operands, attributes, payload=payload)


def _folds(inst: HloInstruction) -> bool:
    """Whether the rules look into `inst`: a convert, reshape, transpose, broadcast or region's stand-in."""
    return inst.opcode in ("convert", "reshape", "transpose", "broadcast") or (
        inst.opcode == "constant" and isinstance(inst.payload, CapturedValue))


def splat_value(inst: HloInstruction) -> np.ndarray | None:
    """The one value of a splat constant (or of a region's stand-in for one), None for anything else."""
    while inst.opcode == "constant" and isinstance(inst.payload, CapturedValue):
        inst = inst.operands[0]
    if inst.opcode == "constant" and isinstance(inst.payload, Splat):
        return inst.payload.value
    return None


def _reshape(value: HloInstruction, result: Shape, make: Make, inst: HloInstruction) -> HloInstruction:
    """A reshape of `value`: of a splat a splat, of a reshape a reshape of its operand, to the same dimensions
    nothing (`inst` itself when it is that reshape)."""
    splat = splat_value(value)
    if splat is not None:
        return make("constant", result, payload=Splat(result, splat))
    if value.opcode == "reshape":
        value = value.operands[0]
    if value.shape.dims == result.dims:
        return value
    if inst.opcode == "reshape" and inst.operands[0] is value:
        return inst
    return make("reshape", result, [value])


def _transpose(value: HloInstruction, perm: list[int], result: Shape, make: Make,
               inst: HloInstruction) -> HloInstruction:
    """A transpose of `value`: of a splat a splat, of a transpose one of the composed permutation, the identity
    nothing, one that moves only size-1 dimensions a reshape."""
    splat = splat_value(value)
    if splat is not None:
        return make("constant", result, payload=Splat(result, splat))
    if value.opcode == "transpose":
        value, perm = value.operands[0], [value.dimensions[p] for p in perm]
    if perm == list(range(len(perm))):
        return value
    moved = [p for p in perm if value.shape.dims[p] != 1]
    if moved == sorted(moved):
        return _reshape(value, result, make, inst)
    if inst.opcode == "transpose" and inst.operands[0] is value and list(inst.dimensions) == perm:
        return inst
    return make("transpose", result, [value], {"dimensions": IntList(perm)})


def _broadcast_in_dim(value: HloInstruction, dims: list[int], result: Shape, make: Make,
                      inst: HloInstruction) -> HloInstruction:
    """A broadcast_in_dim of `value`: of a splat a splat, of a broadcast_in_dim one of the composed dimensions,
    the identity nothing; a reshape when it only adds size-1 dimensions, a transpose when it only permutes."""
    splat = splat_value(value)
    if splat is not None:
        return make("constant", result, payload=Splat(result, splat))
    if value.opcode == "broadcast":
        value, dims = value.operands[0], [dims[d] for d in value.dimensions]
    operand = value.shape
    same_count = math.prod(result.dims) == math.prod(operand.dims)
    if result.dims == operand.dims and dims == list(range(operand.rank)):
        return value
    if same_count and dims == sorted(dims):
        return _reshape(value, result, make, inst)
    if same_count and operand.rank == result.rank:
        perm = [0] * len(dims)
        for axis, dim in enumerate(dims):
            perm[dim] = axis
        return _transpose(value, perm, result, make, inst)
    if inst.opcode == "broadcast" and inst.operands[0] is value and list(inst.dimensions) == dims:
        return inst
    return make("broadcast", result, [value], {"dimensions": IntList(dims)})

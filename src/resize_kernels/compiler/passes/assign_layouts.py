"""XLA's layouts for a module converted from StableHLO, and its entry_computation_layout.

StableHLO's types have no layouts; XLA's conversion gives every array one,
and so does this pass, in each computation's order (operands first):

* a parameter, constant, broadcast, reshape, iota, slice, pad, concatenate,
  reduce, reduce-window or call: the default, major to minor
  (``{3,2,1,0}``; a scalar has none);
* a transpose: its operand's, permuted, so that the transpose is a bitcast;
* an elementwise op, a convert: its first operand's; a clamp its operand's
  (the second), a select its predicate's (the default for a scalar one);
* a custom-call: its ``result_layouts``, as parsed, else the default;
* a tuple or get-tuple-element: its elements' or its element's.

Then the module's ``entry_computation_layout`` is the entry's parameters and
root, as XLA prints it: ``{(f32[2,3]{1,0})->f32[3,2]{0,1}}``.
"""

from __future__ import annotations

from ..hlo import HloInstruction, HloModule, Literal, Shape, TupleShape
from ..hlo.stablehlo import ELEMENTWISE_OPCODES


def assign_layouts(module: HloModule) -> None:
    """Pass: give every instruction XLA's layout, then set the module's entry_computation_layout."""
    for comp in module.computations:
        for inst in comp.instructions:
            inst.shape = _layout(inst)
            if isinstance(inst.payload, Literal) and inst.payload.shape != inst.shape:
                inst.payload = Literal(inst.shape, inst.payload.value)
    entry = module.entry
    params = ", ".join(str(inst.shape) for inst in entry.parameters)
    module.attributes["entry_computation_layout"] = f"{{({params})->{entry.root.shape}}}"


def _layout(inst: HloInstruction) -> Shape | TupleShape:
    shape, opcode, operands = inst.shape, inst.opcode, inst.operands
    if opcode == "transpose":
        layout = operands[0].shape.layout
        inverse = {source: out for out, source in enumerate(inst.dimensions)}
        return _with(shape, None if layout is None else [inverse[d] for d in layout])
    if opcode in ELEMENTWISE_OPCODES or opcode == "convert":
        return _with(shape, operands[0].shape.layout)
    if opcode == "clamp":
        return _with(shape, operands[1].shape.layout)
    if opcode == "select" and operands[0].shape.rank:
        return _with(shape, operands[0].shape.layout)
    if opcode == "custom-call":
        return default_layout(shape, keep=True)
    if opcode == "tuple":
        return TupleShape([operand.shape for operand in operands])
    if opcode == "get-tuple-element":
        return operands[0].shape.elements[inst.tuple_index]
    return default_layout(shape)


def default_layout(shape: Shape | TupleShape, keep: bool = False) -> Shape | TupleShape:
    """`shape` with XLA's default layout (major to minor: {rank-1, ..., 0}; scalars and tokens have none);
    ``keep``: an array's layout, when it has one, stays."""
    if isinstance(shape, TupleShape):
        return TupleShape([default_layout(element, keep) for element in shape.elements])
    if keep and shape.layout is not None:
        return shape
    rank = shape.rank if shape.element_type != "token" else 0
    return _with(shape, range(rank - 1, -1, -1) if rank else None)


def _with(shape: Shape, layout) -> Shape:
    return Shape(shape.element_type, shape.dims, None if layout is None else tuple(layout))

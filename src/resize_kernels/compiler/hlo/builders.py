"""Building HLO as objects, with typed attribute values: no stage writes HLO text to be parsed again."""

from __future__ import annotations

from .attributes import Literal, String
from .ir import HloComputation, HloInstruction, HloModule
from .shape import Shape, TupleShape


def parameter(name: str, number: int, shape: Shape | TupleShape) -> HloInstruction:
    """``name = shape parameter(number)``"""
    return HloInstruction(name, "parameter", shape, [], payload=number)


def constant(name: str, shape: Shape | TupleShape, value, attributes: dict | None = None) -> HloInstruction:
    """``name = shape constant(value)``; ``value`` is anything numpy makes an array of ``shape`` from."""
    return HloInstruction(name, "constant", shape, [], attributes, payload=Literal(shape, value))


def custom_call_module(target: str, operand_shape: Shape, result_shape: Shape, backend_config: str, *,
                       name: str = "custom_call", operand: str = "x", result: str = "y") -> HloModule:
    """A module ``name`` whose ENTRY ``main`` takes one parameter ``operand`` and whose ROOT ``result`` is
    ``custom-call(operand), custom_call_target="<target>", backend_config="<backend_config>"``."""
    x = parameter(operand, 0, operand_shape)
    call = HloInstruction(result, "custom-call", result_shape, [x],
                          {"custom_call_target": String(target), "backend_config": String(backend_config)})
    return HloModule(name, [HloComputation("main", [x, call], is_entry=True, root=call)])

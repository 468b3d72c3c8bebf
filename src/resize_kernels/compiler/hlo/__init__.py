"""XLA HLO text: parse (both dump styles), inspect and rewrite, build with typed attribute values, print back."""

from .attributes import IntList, Literal, String, Window
from .builders import constant, custom_call_module, parameter
from .ir import HloComputation, HloInstruction, HloModule, Result
from .lexer import HloParseError
from .parser import parse_hlo_module
from .printer import print_hlo_module
from .shape import Shape, TupleShape

__all__ = [
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "HloParseError",
    "IntList",
    "Literal",
    "Result",
    "Shape",
    "String",
    "TupleShape",
    "Window",
    "constant",
    "custom_call_module",
    "parameter",
    "parse_hlo_module",
    "print_hlo_module",
]

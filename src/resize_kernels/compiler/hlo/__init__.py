"""XLA HLO: parse (HLO text of both dump styles, HloModuleProto bytes; StableHLO text op for op, which
``compiler.frontend`` then converts), inspect and rewrite, build with typed attribute values, print back as text."""

from .attributes import IntList, Literal, String, Window
from .formats import module_format
from .builders import constant, custom_call_module, parameter
from .ir import HloComputation, HloInstruction, HloModule, Result
from .lexer import HloParseError
from .literals import Splat
from .parser import parse_hlo_module
from .printer import print_hlo_module
from .shape import Shape, TupleShape
from .stablehlo import StableHloParseError, UnsupportedOpError, parse_stablehlo_ops

__all__ = [
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "HloParseError",
    "IntList",
    "Literal",
    "Result",
    "Shape",
    "Splat",
    "StableHloParseError",
    "String",
    "TupleShape",
    "UnsupportedOpError",
    "Window",
    "constant",
    "custom_call_module",
    "parameter",
    "module_format",
    "parse_hlo_module",
    "parse_stablehlo_ops",
    "print_hlo_module",
]

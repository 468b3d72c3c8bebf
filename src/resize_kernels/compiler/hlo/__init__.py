"""XLA HLO: parse (HLO text of both dump styles, StableHLO text, HloModuleProto bytes), inspect and rewrite, build with
typed attribute values, print back as text."""

from .attributes import IntList, Literal, String, Window
from .formats import module_format, parse_module
from .builders import constant, custom_call_module, parameter
from .ir import HloComputation, HloInstruction, HloModule, Result
from .lexer import HloParseError
from .parser import parse_hlo_module
from .printer import print_hlo_module
from .shape import Shape, TupleShape
from .stablehlo import StableHloParseError, UnsupportedOpError, parse_stablehlo

__all__ = [
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "HloParseError",
    "IntList",
    "Literal",
    "Result",
    "Shape",
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
    "parse_module",
    "parse_stablehlo",
    "print_hlo_module",
]

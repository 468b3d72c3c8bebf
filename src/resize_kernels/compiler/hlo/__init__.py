"""XLA HLO text: parse (both dump styles), inspect and rewrite, print back."""

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
    "Result",
    "Shape",
    "TupleShape",
    "parse_hlo_module",
    "print_hlo_module",
]

"""Recursive-descent parser for XLA's HLO text format.

Accepts both dump styles: old torch_xla dumps (``%name``, operand shapes
spelled out, computation signatures, metadata) and current XLA / JAX dumps
(bare names, operands by name only, called computations before ENTRY).
Attribute values are checked only for balance and kept as raw text; the
instruction accessors parse them on demand with the ``parse_*`` value parsers
below. Nesting of tuple shapes, literals and brace groups is bounded by an
explicit depth counter (MAX_DEPTH), so no input reaches Python's recursion
limit. Every malformed input raises HloParseError.
"""

from __future__ import annotations

import math
import re
import struct
from contextlib import contextmanager
from typing import NoReturn

import numpy as np

from .ir import HloComputation, HloInstruction, HloModule
from .lexer import EOF, FLOAT, INT, NAME, PUNCT, STRING, WORD, HloParseError, Lexer, Token
from .shape import ELEMENT_TYPES, Shape, TupleShape, compatible

__all__ = ["HloParseError", "MAX_DEPTH", "parse_hlo_module", "parse_int", "parse_int_list",
           "parse_literal", "parse_name", "parse_string", "parse_window"]

MAX_DEPTH = 64
_OPENERS = {"{": "}", "[": "]", "(": ")"}
_CLOSERS = frozenset(_OPENERS.values())
# Attributes whose values name computations (checked to exist after parsing).
COMPUTATION_ATTRIBUTES = frozenset({
    "to_apply", "calls", "condition", "body", "select", "scatter",
    "true_computation", "false_computation", "branch_computations", "called_computations",
})
_STACK_FRAME_SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_WINDOW_FIELDS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")
_MAX_INT_DIGITS = 20  # enough for any 64-bit value; keeps int() away from huge strings
_ELIDED = "{...}"  # how XLA prints a constant whose values it left out


def parse_hlo_module(text: str) -> HloModule:
    """Parse HLO module text (either dump style) into an HloModule; HloParseError if malformed."""
    if not isinstance(text, str):
        raise TypeError(f"parse_hlo_module takes str, got {type(text).__name__}")
    return _Parser(text).module()


def parse_int(text: str) -> int:
    """An integer attribute value, e.g. ``index=1``."""
    return _Parser(text).whole(lambda p: p.int_value("an integer"))


def parse_int_list(text: str) -> tuple[int, ...]:
    """A braced integer list, e.g. ``dimensions={0,3,2,1}``."""
    return _Parser(text).whole(_Parser.int_list)


def parse_name(text: str) -> str:
    """A name, with or without '%', e.g. ``to_apply=%add.1``."""
    return _Parser(text).whole(lambda p: p.expect_kind(NAME, "a name").value)


def parse_string(text: str) -> str:
    """The unescaped value of a quoted string, e.g. ``backend_config="\\"00\\""`` gives '"00"'."""
    return _Parser(text).whole(lambda p: p.expect_kind(STRING, "a quoted string").value)


def parse_window(text: str) -> dict:
    """A window spec ``{size=2x2 stride=2x2 pad=0_0x1_1 ...}`` with defaults filled in."""
    return _Parser(text).whole(_Parser.window)


def parse_literal(text: str, shape: Shape | TupleShape) -> np.ndarray | tuple:
    """A constant's literal as a numpy array of `shape` (a tuple of arrays for a tuple shape)."""
    return _to_numpy(_Parser(text).whole(lambda p: p.literal(shape)), shape)


def _to_numpy(values, shape: Shape | TupleShape) -> np.ndarray | tuple:
    if isinstance(shape, TupleShape):
        return tuple(_to_numpy(v, s) for v, s in zip(values, shape.elements))
    if values is _ELIDED:
        raise ValueError("the literal was elided ('{...}') when the HLO was printed")
    dtype = shape.numpy_dtype
    with np.errstate(over="ignore", invalid="ignore"):
        if shape.kind == "float":
            array = np.array(values, dtype=np.float64).astype(dtype)
        elif shape.kind == "complex":
            array = np.array(values, dtype=np.complex128).astype(dtype)
        else:
            array = np.array(values, dtype=dtype)
    return array.reshape(shape.dims)


def _int_range(element_type: str) -> tuple[int, int]:
    bits = int(element_type[1:])
    if element_type.startswith("s"):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _nan(negative: bool, payload: int | None) -> float:
    """A float64 NaN with the given sign and (optionally) mantissa payload, as XLA writes nan(0x..)."""
    bits = 0x7FF8000000000000 if payload is None else 0x7FF0000000000000 | payload
    return struct.unpack("<d", struct.pack("<Q", bits | (1 << 63 if negative else 0)))[0]


class _Parser:
    """Token cursor plus one method per grammar rule."""

    def __init__(self, text: str):
        self.lexer = Lexer(text)
        self.tokens = self.lexer.tokenize()
        self.pos = 0
        self.depth = 0
        self.references: list[Token] = []  # computation names used by attributes
        self.computation_tokens: dict[str, Token] = {}
        self.entry_token: Token | None = None

    # ----- cursor -----------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.tokens[self.pos]
        if token.kind != EOF:
            self.pos += 1
        return token

    def at(self, punct: str, ahead: int = 0) -> bool:
        token = self.peek(ahead)
        return token.kind == PUNCT and token.text == punct

    def at_keyword(self, word: str, ahead: int = 0) -> bool:
        token = self.peek(ahead)
        return token.kind == NAME and token.text == word

    def at_opener(self) -> bool:
        token = self.peek()
        return token.kind == PUNCT and token.text in _OPENERS

    def eat(self, punct: str) -> bool:
        if self.at(punct):
            self.advance()
            return True
        return False

    def expect(self, punct: str, expected: str | None = None) -> Token:
        if not self.at(punct):
            self.fail(self.peek(), expected or repr(punct))
        return self.advance()

    def expect_kind(self, kind: str, expected: str) -> Token:
        if self.peek().kind != kind:
            self.fail(self.peek(), expected)
        return self.advance()

    def expect_keyword(self, word: str) -> Token:
        if not self.at_keyword(word):
            self.fail(self.peek(), repr(word))
        return self.advance()

    def fail(self, token: Token, expected: str, got: str | None = None) -> NoReturn:
        raise self.lexer.error(token.start, expected, got or token.describe())

    def where(self, token: Token) -> str:
        return f"line {token.line}, column {token.column}"

    @contextmanager
    def nested(self, token: Token):
        """One level of nesting (tuple shape, literal brace, ...) opened at `token`, at most MAX_DEPTH deep."""
        if self.depth >= MAX_DEPTH:
            self.fail(token, f"at most {MAX_DEPTH} levels of nesting", "deeper nesting")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def raw(self, start: int, end: int) -> str:
        """Tokens start..end as canonical text: names without '%', one space where the source had blanks."""
        parts = []
        for index in range(start, end):
            token = self.tokens[index]
            if index > start and token.start > self.tokens[index - 1].end:
                parts.append(" ")
            parts.append(token.value if token.kind == NAME else token.text)
        return "".join(parts)

    def whole(self, rule):
        """Apply `rule` to the whole text (a standalone attribute value); nothing may follow."""
        value = rule(self)
        if self.peek().kind != EOF:
            self.fail(self.peek(), "end of the value")
        return value

    def int_value(self, expected: str, minimum: int | None = None) -> int:
        token = self.peek()
        if token.kind != INT or len(token.text.lstrip("-")) > _MAX_INT_DIGITS:
            self.fail(token, expected)
        value = int(token.text)
        if minimum is not None and value < minimum:
            self.fail(token, expected)
        self.advance()
        return value

    # ----- module structure -------------------------------------------------

    def module(self) -> HloModule:
        """'HloModule' name (',' attribute)* [stack frame index] computation+"""
        self.expect_keyword("HloModule")
        name = self.expect_kind(NAME, "a module name").value
        attributes = self.attributes()
        stack_frame_index = self.stack_frame_index()
        computations = [self.computation()]
        while self.peek().kind != EOF:
            computations.append(self.computation())
        for token in self.references:
            if token.value not in self.computation_tokens:
                known = ", ".join(self.computation_tokens)
                self.fail(token, f"the name of a computation in this module ({known})")
        if self.entry_token is None:
            self.fail(self.peek(), "an ENTRY computation")
        return HloModule(name, computations, attributes, stack_frame_index=stack_frame_index)

    def stack_frame_index(self) -> dict[str, list[tuple[int, str]]] | None:
        """The optional FileNames / FunctionNames / FileLocations / StackFrames sections, kept raw."""
        if not self.at_keyword(_STACK_FRAME_SECTIONS[0]):
            return None
        index = {}
        for section in _STACK_FRAME_SECTIONS:
            self.expect_keyword(section)
            entries = []
            while self.peek().kind == INT:
                number = self.int_value("an entry number")
                start = self.pos
                if section in ("FileNames", "FunctionNames"):
                    self.expect_kind(STRING, "a quoted name")
                elif self.at("{"):
                    self.group()
                else:
                    self.fail(self.peek(), "'{' starting the entry's fields")
                entries.append((number, self.raw(start, self.pos)))
            index[section] = entries
        return index

    def computation(self) -> HloComputation:
        """['ENTRY'] name [signature] '{' instruction+ '}' (',' attribute)*"""
        entry = self.advance() if self.at_keyword("ENTRY") else None
        name_token = self.expect_kind(NAME, "a computation name")
        name = name_token.value
        if name in self.computation_tokens:
            self.fail(name_token, "a new computation name",
                      f"{name!r} (already defined at {self.where(self.computation_tokens[name])})")
        self.computation_tokens[name] = name_token
        signature = self.signature() if self.at("(") else None
        instructions, root = self.instruction_list()
        attributes = self.attributes()
        if signature is not None and not compatible(signature[1], root.shape):
            self.fail(signature[0], f"the result shape of root {root.name} ({root.shape})", str(signature[1]))
        if entry is not None:
            if self.entry_token is not None:
                self.fail(entry, f"one ENTRY computation (the first is at {self.where(self.entry_token)})",
                          "a second ENTRY")
            self.entry_token = entry
        return HloComputation(name, instructions, is_entry=entry is not None, root=root, attributes=attributes)

    def signature(self) -> tuple[Token, Shape | TupleShape]:
        """'(' [name ':' shape (',' name ':' shape)*] ')' '->' shape; returns the result shape and its token."""
        self.advance()
        if not self.at(")"):
            while True:
                self.expect_kind(NAME, "a parameter name")
                self.expect(":", "':' after the parameter name")
                self.shape()
                if not self.eat(","):
                    break
        self.expect(")", "',' or ')' in the parameter list")
        self.expect("->", "'->' before the result shape")
        token = self.peek()
        return token, self.shape()

    def instruction_list(self) -> tuple[list[HloInstruction], HloInstruction]:
        """'{' instruction+ '}'; returns the instructions and the root (ROOT-marked, else the last)."""
        self.expect("{", "'{' starting the instruction list")
        scope: dict[str, tuple[HloInstruction, Token]] = {}
        parameter_tokens: dict[int, Token] = {}
        instructions, root, root_token = [], None, None
        while not self.at("}"):
            if self.peek().kind == EOF:
                self.fail(self.peek(), "an instruction or '}'")
            marker = self.advance() if self.at_keyword("ROOT") else None
            inst = self.instruction(scope, parameter_tokens)
            if marker is not None:
                if root_token is not None:
                    self.fail(marker, f"one ROOT per computation (the first is at {self.where(root_token)})",
                              "a second ROOT")
                root, root_token = inst, marker
            instructions.append(inst)
        if not instructions:
            self.fail(self.peek(), "an instruction")
        self.advance()
        for number, token in parameter_tokens.items():
            if number >= len(parameter_tokens):
                self.fail(token, f"parameter numbers 0..{len(parameter_tokens) - 1}, one per parameter")
        return instructions, root or instructions[-1]

    def instruction(self, scope: dict, parameter_tokens: dict[int, Token]) -> HloInstruction:
        """name '=' shape opcode '(' operands ')' (',' attribute)*"""
        name_token = self.expect_kind(NAME, "an instruction name")
        name = name_token.value
        if name in scope:
            self.fail(name_token, "a new instruction name",
                      f"{name!r} (already defined at {self.where(scope[name][1])})")
        self.expect("=", "'=' after the instruction name")
        shape = self.shape()
        opcode = self.peek()
        if opcode.kind != NAME or opcode.text != opcode.value:
            self.fail(opcode, "an opcode")
        self.advance()
        self.expect("(", "'(' after the opcode")
        operands, payload = [], None
        if opcode.value == "parameter":
            token = self.peek()
            number = self.int_value("a parameter number", minimum=0)
            if number in parameter_tokens:
                self.fail(token, "a parameter number not used before in this computation",
                          f"{number} (already used at {self.where(parameter_tokens[number])})")
            parameter_tokens[number] = token
            payload = str(number)
        elif opcode.value == "constant":
            start = self.pos
            self.literal(shape)
            payload = self.raw(start, self.pos)
        elif not self.at(")"):
            operands.append(self.operand(scope))
            while self.eat(","):
                operands.append(self.operand(scope))
        self.expect(")", "',' or ')' after the operands")
        attributes = self.attributes()
        inst = HloInstruction(name, opcode.value, shape, operands, attributes, payload=payload)
        scope[name] = (inst, name_token)
        return inst

    def operand(self, scope: dict) -> HloInstruction:
        """[shape] name -- old dumps spell out the operand's shape, which must then match."""
        shape_token = self.peek()
        declared = None
        if self.at("(") or (shape_token.kind == NAME and self.at("[", 1)):
            declared = self.shape()
        token = self.expect_kind(NAME, "an operand name")
        if token.value not in scope:
            self.fail(token, "the name of an instruction defined earlier in this computation")
        inst = scope[token.value][0]
        if declared is not None and not compatible(declared, inst.shape):
            self.fail(shape_token, f"the shape of {inst.name} ({inst.shape})", str(declared))
        return inst

    def attributes(self) -> dict[str, str]:
        """(',' name '=' value)*, values kept as raw text; computation references recorded for checking."""
        attributes = {}
        while self.eat(","):
            key = self.expect_kind(NAME, "an attribute name")
            if key.value in attributes:
                self.fail(key, "each attribute at most once", f"a second {key.value}=")
            self.expect("=", f"'=' after {key.value}")
            start = self.pos
            self.attribute_value()
            if key.value in COMPUTATION_ATTRIBUTES:
                self.computation_references(start, self.pos)
            attributes[key.value] = self.raw(start, self.pos)
        return attributes

    def attribute_value(self) -> None:
        """A string, word or balanced group, followed by any groups (e.g. a shape ``f32[2]{0}``)."""
        token = self.peek()
        if token.kind in (NAME, INT, FLOAT, WORD, STRING):
            self.advance()
        elif self.at_opener():
            self.group()
        else:
            self.fail(token, "an attribute value")
        while self.at_opener():
            self.group()

    def computation_references(self, start: int, end: int) -> None:
        """A value such as ``%add.1`` or ``{%a, %b}``: record each name, reject anything else."""
        for token in self.tokens[start:end]:
            if token.kind == NAME:
                self.references.append(token)
            elif not (token.kind == PUNCT and token.text in "{},"):
                self.fail(token, "a computation name")

    def group(self) -> None:
        """Skip one balanced (), [] or {} group of arbitrary tokens; iterative, nesting bounded."""
        openers: list[Token] = []
        while True:
            token = self.advance()
            if token.kind == PUNCT and token.text in _OPENERS:
                if self.depth >= MAX_DEPTH:
                    self.fail(token, f"at most {MAX_DEPTH} levels of nesting", "deeper nesting")
                self.depth += 1
                openers.append(token)
            elif openers and (token.kind == EOF or (token.kind == PUNCT and token.text in _CLOSERS)):
                closer = _OPENERS[openers[-1].text]
                if token.text != closer:
                    self.fail(token, f"{closer!r} closing {openers[-1].text!r} at {self.where(openers[-1])}")
                self.depth -= 1
                openers.pop()
            if not openers:
                return

    # ----- shapes -----------------------------------------------------------

    def shape(self) -> Shape | TupleShape:
        """element_type '[' dims ']' [layout] | '(' [shape (',' shape)*] ')'"""
        token = self.peek()
        if self.at("("):
            with self.nested(token):
                self.advance()
                elements = []
                if not self.at(")"):
                    elements.append(self.shape())
                    while self.eat(","):
                        elements.append(self.shape())
                self.expect(")", "',' or ')' in the tuple shape")
            return TupleShape(elements)
        if token.kind != NAME or token.text not in ELEMENT_TYPES:
            self.fail(token, "a shape (an element type such as f32, or '(' for a tuple)")
        self.advance()
        self.expect("[", "'[' after the element type")
        dims = []
        if not self.at("]"):
            dims.append(self.int_value("a dimension size", minimum=0))
            while self.eat(","):
                dims.append(self.int_value("a dimension size", minimum=0))
        self.expect("]", "',' or ']' in the dimensions")
        layout, suffix = None, None
        # A '{' is a layout only if it looks like one: after a signature's result
        # shape, '{' opens the instruction list instead.
        if self.at("{") and (self.peek(1).kind == INT or self.at(":", 1) or self.at("}", 1)):
            layout, suffix = self.layout(len(dims))
        return Shape(token.text, tuple(dims), layout, suffix)

    def layout(self, rank: int) -> tuple[tuple[int, ...], str | None]:
        """'{' minor_to_major [':' tiling and memory space, kept raw] '}'"""
        start = self.pos
        opener = self.advance()
        minor_to_major = []
        if self.peek().kind == INT:
            minor_to_major.append(self.int_value("a dimension number", minimum=0))
            while self.eat(","):
                minor_to_major.append(self.int_value("a dimension number", minimum=0))
        suffix = None
        if self.eat(":"):
            suffix_start = self.pos
            while not self.at("}"):
                token = self.peek()
                if token.kind == EOF or (token.kind == PUNCT and token.text in _CLOSERS):
                    self.fail(token, "'}' closing the layout")
                if self.at_opener():
                    self.group()
                else:
                    self.advance()
            if self.pos == suffix_start:
                self.fail(self.peek(), "layout details (such as T(8,128)) after ':'")
            suffix = self.raw(suffix_start, self.pos)
        self.expect("}", "',' or '}' in the layout")
        if sorted(minor_to_major) != list(range(rank)):
            self.fail(opener, f"a layout listing each of the {rank} dimensions once", self.raw(start, self.pos))
        return tuple(minor_to_major), suffix

    # ----- attribute values -------------------------------------------------

    def int_list(self) -> tuple[int, ...]:
        """'{' [int (',' int)*] '}'"""
        self.expect("{", "'{' starting a list of integers")
        values = []
        if not self.at("}"):
            values.append(self.int_value("an integer"))
            while self.eat(","):
                values.append(self.int_value("an integer"))
        self.expect("}", "',' or '}' in the list")
        return tuple(values)

    def window(self) -> dict:
        """'{' (field '=' AxBx..)* '}' with size required; the other fields default per dimension."""
        self.expect("{", "'{' starting a window")
        fields: dict[str, tuple] = {}
        tokens: dict[str, Token] = {}
        while not self.at("}"):
            key = self.expect_kind(NAME, f"a window field ({', '.join(_WINDOW_FIELDS)}) or '}}'")
            if key.value not in _WINDOW_FIELDS or key.value in fields:
                self.fail(key, f"a window field not given before ({', '.join(_WINDOW_FIELDS)})")
            self.expect("=", f"'=' after {key.value}")
            tokens[key.value] = key
            fields[key.value] = self.window_field(key.value)
        closer = self.expect("}")
        if "size" not in fields:
            self.fail(closer, "a size= field in the window")
        rank = len(fields["size"])
        for field, values in fields.items():
            if len(values) != rank:
                self.fail(tokens[field], f"{rank} entries in {field}=, as in size=", str(len(values)))
        window = {
            "size": fields["size"],
            "stride": fields.get("stride", (1,) * rank),
            "pad": list(fields.get("pad", ((0, 0),) * rank)),
            "lhs_dilate": fields.get("lhs_dilate", (1,) * rank),
            "rhs_dilate": fields.get("rhs_dilate", (1,) * rank),
        }
        if "rhs_reversal" in fields:
            window["rhs_reversal"] = tuple(bool(v) for v in fields["rhs_reversal"])
        return window

    def window_field(self, field: str) -> tuple:
        """``2x2`` (or ``0_0x1_1`` for pad): one entry per window dimension."""
        token = self.peek()
        pattern, expected = {
            "pad": (r"-?\d{1,18}_-?\d{1,18}", "pads lo_hi per dimension, e.g. 0_0x1_1"),
            "size": (r"\d{1,18}", "sizes per dimension, e.g. 2x2"),
            "rhs_reversal": (r"[01]", "0 or 1 per dimension, e.g. 0x1"),
        }.get(field, (r"0*[1-9]\d{0,17}", f"positive {field} per dimension, e.g. 2x2"))
        parts = token.text.split("x")
        if token.kind not in (INT, WORD) or not all(re.fullmatch(pattern, part) for part in parts):
            self.fail(token, expected)
        self.advance()
        if field == "pad":
            return tuple(tuple(int(v) for v in part.split("_")) for part in parts)
        return tuple(int(part) for part in parts)

    # ----- literals ---------------------------------------------------------

    def literal(self, shape: Shape | TupleShape):
        """A constant's literal for `shape`: flat element values (a list per tuple element), or _ELIDED."""
        token = self.peek()
        if isinstance(shape, TupleShape):
            count = len(shape.elements)
            with self.nested(token):
                self.expect("(", "'(' starting a tuple literal")
                values = []
                for index, element in enumerate(shape.elements):
                    if index:
                        self.expect(",", f"',' ({count} tuple elements)")
                    values.append(self.literal(element))
                self.expect(")", f"')' after {count} tuple elements")
            return values
        if shape.kind == "token":
            self.fail(token, f"a shape with values ({shape.element_type} has no literal)")
        if shape.rank == 0:
            return [self.scalar(shape)]
        if self.at("{") and self.peek(1).text == "..." and self.at("}", 2):
            self.pos += 3
            return _ELIDED
        values: list = []
        self.array(shape, 0, values)
        return values

    def array(self, shape: Shape, axis: int, out: list) -> None:
        """'{' element (',' element)* '}' for dimension `axis`, exactly dims[axis] elements."""
        size = shape.dims[axis]
        with self.nested(self.peek()):
            self.expect("{", f"'{{' starting dimension {axis} of the literal")
            for index in range(size):
                if self.at("}"):
                    self.fail(self.peek(), f"{size} elements along dimension {axis}", f"'}}' after {index}")
                if index:
                    self.expect(",", f"',' ({size} elements along dimension {axis})")
                if axis + 1 == shape.rank:
                    out.append(self.scalar(shape))
                else:
                    self.array(shape, axis + 1, out)
            self.expect("}", f"'}}' after {size} elements along dimension {axis}")

    def scalar(self, shape: Shape):
        """One element value: true/false, an integer in range, a float (inf, nan), or (re, im)."""
        token = self.peek()
        kind = shape.kind
        if kind == "complex":
            with self.nested(token):
                self.expect("(", "'(' starting a complex value (re, im)")
                real = self.real_value()
                self.expect(",", "',' between the real and imaginary parts")
                imag = self.real_value()
                self.expect(")", "')' closing the complex value")
            return complex(real, imag)
        if kind == "float":
            return self.real_value()
        self.advance()
        if kind == "pred":
            if token.text in ("true", "false", "1", "0") and token.kind in (NAME, INT):
                return token.text in ("true", "1")
            self.fail(token, "true or false")
        low, high = _int_range(shape.element_type)
        if token.kind != INT or len(token.text.lstrip("-")) > _MAX_INT_DIGITS or not low <= int(token.text) <= high:
            self.fail(token, f"an integer in [{low}, {high}] for {shape.element_type}")
        return int(token.text)

    def real_value(self) -> float:
        """A float: a number, inf, -inf, nan, -nan, or nan(0x<payload>)."""
        token = self.advance()
        if token.kind in (INT, FLOAT):
            return float(token.text)
        if token.kind in (NAME, WORD) and token.text in ("inf", "-inf"):
            return -math.inf if token.text.startswith("-") else math.inf
        if token.kind in (NAME, WORD) and token.text in ("nan", "-nan"):
            payload = None
            if self.at("("):
                self.advance()
                digits = self.peek()
                if not re.fullmatch(r"0x[0-9a-fA-F]{1,13}", digits.text) or not 0 < int(digits.text, 16) < 1 << 52:
                    self.fail(digits, "a NaN payload 0x1..0xfffffffffffff")
                payload = int(self.advance().text, 16)
                self.expect(")", "')' after the NaN payload")
            return _nan(token.text.startswith("-"), payload)
        self.fail(token, "a number, inf or nan")

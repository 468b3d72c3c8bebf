"""StableHLO (MLIR) text, as JAX and torch_xla print it, parsed into an HloModule of one instruction per op.

``jax.jit(f).lower(x).as_text()`` prints a ``module`` of ``func.func``
functions whose ops are StableHLO's (``stablehlo.transpose``,
``stablehlo.custom_call @ResizeNearest``, a generic
``"stablehlo.reduce_window"`` with a region ...). Both ways MLIR prints a
module are read: the pretty form and the generic one (``"stablehlo.add"(%0,
%1) : (...) -> ...``), with or without ``loc(...)``. This module only parses:
XLA rewrites the module as it converts it to HLO (JAX's
``as_text(dialect="hlo")`` shows the result), and so do the passes of
``compiler.frontend.STABLEHLO_TO_HLO``, after which everything is shared with
HLO text and protos (``compiler.frontend.parse_stablehlo`` runs both).

What the parsed module holds, the ops as written:

* Each ``func.func`` is a computation named after its symbol (``@main``,
  the ENTRY, is ``main``), each region (the body of a reduce-window or
  reduce) one named ``region_<k>``, its block arguments parameters and its
  ``stablehlo.return`` value the root; computations are in text order, a
  function after the regions it holds. A return of several values is a
  tuple ROOT; an op of several results a tuple-shaped instruction marked
  ``results=<n>`` and a get-tuple-element per result (all of them, used or
  not); ``call``'s ``to_apply`` names the called function's computation.
* Every op is one instruction, of its HLO opcode (SUPPORTED_OPS), operands as
  written, shapes as declared, without layouts (a custom-call's
  ``result_layouts`` are in its shape, its ``operand_layouts`` become
  ``operand_layout_constraints``). ``broadcast_in_dim`` is a ``broadcast``
  whose ``dimensions`` keep StableHLO's meaning: in any order, and a size-1
  operand dimension may expand. A constant's value is a ``Literal``, or a
  ``Splat`` when it is one value for all elements (written once, or all
  elements equal: MLIR keeps those as a splat). A region that uses a value of
  an enclosing function holds a ``constant`` whose operand is that value and
  whose payload, a ``CapturedValue``, names it (``constant(%cst)``): XLA sinks
  the constants a region uses into it once the module is canonicalized
  (``passes.sink_constants``).
* Names are made here, deterministically: ``<opcode>.<n>`` (``transpose.1``),
  ``Arg_<i>.<n>`` for parameters, ``region_<k>`` for regions. ``\\22`` and
  the other MLIR string escapes are decoded (``backend_config = "\\2200\\22"``
  is ``"00"``).

Not parsed (an error names the op and its line): ops outside SUPPORTED_OPS
(control flow, dot_general, gather, chlo.* ...), dynamic or unranked shapes,
functions of more than one block, regions that use a value of an enclosing
function that does not become an HLO constant, ``dense_resource`` constants
and complex ones. What a value becomes is what MLIR folds it into, which the
caller's ``fold`` tells (``parse_stablehlo_ops``): that error, and which
operand an elementwise op of two element types is blamed for (XLA checks
after moving a constant operand right), depend on it. No library is used:
jaxlib converts
(``jax._src.lib.xla_client._xla.mlir.mlir_module_to_xla_computation``), but
JAX is not a dependency of resize-kernels.

Every malformed input raises StableHloParseError (an HloParseError) with the
1-based line and column and what was expected there; an unsupported op raises
UnsupportedOpError (one too). Work is linear in the text: tokens are lexed on
demand, long runs (a constant's elements, a skipped attribute, a list of
integers) are taken by regular expressions and numpy, nesting (regions,
attribute values, tuple types) is bounded by MAX_DEPTH, and texts beyond
MAX_TEXT_CHARS are refused up front, as the HLO text parser does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...errors import InvalidTypeError, ResourceError
from ...intmath import ceil_div
from .attributes import IntList, Literal, String, Window
from .cursor import MAX_DEPTH, Cursor
from .ir import HloComputation, HloInstruction, HloModule
from .lexer import EOF, FLOAT, INT, NAME, PUNCT, STRING, HloParseError, Lexer, Token
from .literals import Splat, int_range, narrow
from .parser import MAX_TEXT_CHARS
from .shape import ELEMENT_TYPES, MAX_RANK, Shape, TupleShape, compatible

__all__ = ["COMMUTATIVE_OPCODES", "ELEMENTWISE_OPCODES", "MAX_TEXT_CHARS", "CapturedValue", "StableHloParseError",
           "SUPPORTED_OPS", "UnsupportedOpError", "parse_stablehlo_ops"]


class StableHloParseError(HloParseError):
    """Malformed StableHLO text: line and column (1-based), what was expected there and what was found."""

    def __init__(self, line: int, column: int, expected: str, got: str, source_line: str = ""):
        super().__init__(line, column, expected, got, source_line)
        self.args = (self.args[0].replace("HLO parse error", "StableHLO parse error", 1),)


class UnsupportedOpError(StableHloParseError):
    """A well-formed op this converter does not map to HLO; the message names it, its line and the supported ops."""

    def __init__(self, line: int, column: int, op: str, source_line: str = ""):
        super().__init__(line, column, "a supported StableHLO op", op, source_line)
        self.op = op
        self.args = (f"StableHLO op {op} at line {line}, column {column} is not supported; supported: "
                     f"{_SUPPORTED_TEXT}",)


def parse_stablehlo_ops(text: str, fold: Callable[[HloInstruction], HloInstruction] | None = None) -> HloModule:
    """Parse StableHLO (MLIR) text, pretty or generic form, into an HloModule of one instruction per op (see the
    module docstring); StableHloParseError if malformed.

    ``fold(value)``: what a value parsed so far becomes once canonicalized (None: the value as written). Two
    errors depend on it, as XLA folds before it converts: a region may use a value of its function that becomes
    a constant, and an elementwise op's operand types are checked with a constant operand moved right.
    ``frontend.parse_stablehlo``, which then converts the module to HLO as XLA does, passes
    ``passes.canonicalize_shape_ops.Folder()``; the type and size errors below name that function.
    """
    if not isinstance(text, str):
        raise InvalidTypeError(f"parse_stablehlo takes str, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise ResourceError(f"parse_stablehlo requires StableHLO text of at most {MAX_TEXT_CHARS:,} characters, got "
                            f"{len(text):,}; split the module")
    return _Parser(text, fold or (lambda value: value)).file()


class CapturedValue:
    """The payload of a constant standing, in a region, for a value of an enclosing function: it prints as that
    value's name (``constant(%cst)``), and ``error()`` is the error if it does not become a constant."""

    def __init__(self, token: Token):
        self.token = token

    def __str__(self) -> str:
        return self.token.text

    def error(self) -> StableHloParseError:
        """The error at the use if the value is no constant (the parser raises it when ``fold`` tells so)."""
        return self.token.lexer.error(self.token.start, _CAPTURE_EXPECTED, self.token.describe())


# ----- tokens -------------------------------------------------------------------------------------

VALUE = "value"  # %0, %arg0, %0#1
SYMBOL = "symbol"  # @main (value: main); @"quoted" (value: quoted)
BLOCK = "block"  # ^bb0
HASH = "hash"  # #loc1, #stablehlo
BANG = "bang"  # !stablehlo.token
HEX = "hex"  # 0x7FC00000
WORD = "word"  # anything else word-like: 2x3xf32 outside a type

_BLANKS = re.compile(r"(?:[ \t\r\n\f\v]+|//[^\n]*){0,256}")
# Blanks and comments (at most 256 runs a match: "more" asks for another), then one token, its kind the group.
_TOKEN = re.compile(
    r"(?:[ \t\r\n\f\v]+|//[^\n]*){0,256}(?:"
    r"(?P<value>%[A-Za-z0-9_$.\-]+(?:#[0-9]{1,9})?)"
    r"|(?P<symbol>@[A-Za-z_$.][A-Za-z0-9_$.\-]*)"
    r"|(?P<symstr>@\")"
    r"|(?P<block>\^[A-Za-z0-9_$.\-]+)"
    r"|(?P<hash>#[A-Za-z_][A-Za-z0-9_$.\-]*)"
    r"|(?P<bang>![A-Za-z_][A-Za-z0-9_$.\-]*)"
    r"|(?P<hex>0x[0-9A-Fa-f]+(?![A-Za-z0-9_$.]))"
    r"|(?P<int>-?[0-9]+(?![A-Za-z0-9_$.]))"
    r"|(?P<float>-?[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?(?![A-Za-z0-9_$.]))"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_$.]*)"
    r"|(?P<word>[A-Za-z0-9_$.]+)"
    r"|(?P<string>\")"
    r"|(?P<punct>->|\{-\#|\#-\}|[()\[\]{}<>,:=*?+\-|])"
    r"|(?P<eof>\Z)"
    r"|(?P<more>[ \t\r\n\f\v]|//)"
    r"|(?P<other>[\s\S]))")
_KINDS = {"value": VALUE, "symbol": SYMBOL, "block": BLOCK, "hash": HASH, "bang": BANG, "hex": HEX, "int": INT,
          "float": FLOAT, "name": NAME, "word": WORD, "punct": PUNCT, "eof": EOF}
# A string's body up to its end or the first bad escape (at most 256 escapes a match; string_end goes on).
_STRING_BODY = re.compile(r'[^"\\\n]*(?:\\(?:[nt"\\]|[0-9A-Fa-f]{2})[^"\\\n]*){0,256}')
_ESCAPE = re.compile(r'\\(?:[nt"\\]|[0-9A-Fa-f]{2})')
_ESCAPE_SPLIT = re.compile(rb'\\([nt"\\]|[0-9A-Fa-f]{2})')  # checked valid by string_end
_ESCAPED = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\"}


class _Lexer(Lexer):
    """MLIR's tokens, one at a time (on demand), in time linear in the text; errors as StableHloParseError."""

    def error(self, offset: int, expected: str, got: str) -> StableHloParseError:
        line, column = self.position(offset)
        start = offset - column + 1
        end = self.text.find("\n", start)
        source_line = self.text[start : end if end >= 0 else len(self.text)].rstrip("\r")
        return StableHloParseError(line, column, expected, got, source_line)

    def blanks_end(self, offset: int) -> int:
        """Where blanks and // comments starting at `offset` end."""
        while (end := _BLANKS.match(self.text, offset).end()) > offset:
            offset = end
        return offset

    def token(self, offset: int) -> Token:
        match = _TOKEN.match(self.text, offset)
        while match.lastgroup == "more":
            match = _TOKEN.match(self.text, match.start("more"))
        kind = match.lastgroup
        start = match.start(kind)
        text = match.group(kind)
        if kind == "string":
            end, value = self.string(start)
            return Token(STRING, self.text[start:end], value, start, end, self)
        if kind == "symstr":
            end, value = self.string(start + 1)
            return Token(SYMBOL, self.text[start:end], value, start, end, self)
        if kind == "other":
            raise self.error(start, "a token", f"character {text!r}")
        value = text[1:] if kind in ("value", "symbol") else text
        return Token(_KINDS[kind], text, value, start, match.end(), self)

    def string_end(self, start: int) -> int:
        """The end of the quoted string at `start` (MLIR escapes: \\n \\t \\" \\\\ and two hex digits)."""
        text = self.text
        end = _STRING_BODY.match(text, start + 1).end()
        while _ESCAPE.match(text, end):
            end = _STRING_BODY.match(text, end).end()
        if end < len(text) and text[end] == '"':
            return end + 1
        if end < len(text) and text[end] == "\\":
            escape = text[end + 1 : end + 3]
            raise self.error(end, 'a string escape (\\n \\t \\" \\\\ or two hex digits such as \\22)',
                             repr("\\" + escape) if escape else "end of input")
        raise self.error(start, 'a closing " for this string', "end of input" if end >= len(text) else "end of line")

    def string(self, start: int) -> tuple[int, str]:
        end = self.string_end(start)
        body = self.text[start + 1 : end - 1]
        if "\\" not in body:
            return end, body
        parts = _ESCAPE_SPLIT.split(body.encode("utf-8", errors="surrogatepass"))
        parts[1::2] = [_ESCAPED.get(escape) or bytes.fromhex(escape.decode("ascii")) for escape in parts[1::2]]
        return end, b"".join(parts).decode("utf-8", errors="replace")


# ----- types and attribute values -----------------------------------------------------------------

#: MLIR element types -> HLO element types.
ELEMENT_TYPE_NAMES: dict[str, str] = {
    "i1": "pred", "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64", "index": "s64",
    **{f"i{bits}": f"s{bits}" for bits in (2, 4, 8, 16, 32, 64)},
    **{f"si{bits}": f"s{bits}" for bits in (2, 4, 8, 16, 32, 64)},
    **{f"ui{bits}": f"u{bits}" for bits in (2, 4, 8, 16, 32, 64)},
    "f8E5M2": "f8e5m2", "f8E4M3FN": "f8e4m3fn", "f8E4M3B11FNUZ": "f8e4m3b11fnuz", "f8E5M2FNUZ": "f8e5m2fnuz",
    "f8E4M3FNUZ": "f8e4m3fnuz", "f8E4M3": "f8e4m3", "f8E3M4": "f8e3m4", "f4E2M1FN": "f4e2m1fn",
    "f8E8M0FNU": "f8e8m0fnu", "complex<f32>": "c64", "complex<f64>": "c128",
}
_TENSOR = re.compile(r"tensor<(?P<dims>(?:[0-9]{1,19}x){0,%d})(?P<elem>complex<f(?:32|64)>|[A-Za-z][A-Za-z0-9]*)>" % MAX_RANK)
_DIMS = re.compile(r"(?:[0-9]{1,19}x){0,%d}" % MAX_RANK)
_MAX_DIM = 1 << 62


@dataclass(frozen=True)
class _Dense:
    """``dense<...> : type`` as written: its content (kept as text until a rule needs its values) and type."""

    content: str
    offset: int  # source offset of the content
    type: Shape | TupleShape
    token: Token  # the 'dense' keyword


@dataclass(frozen=True)
class _Enum:
    """``#stablehlo<comparison_direction GT>``: the enum's words."""

    words: tuple[str, ...]


@dataclass(frozen=True)
class _Symbol:
    name: str


@dataclass(frozen=True)
class _FunctionType:
    inputs: tuple
    results: tuple


@dataclass(frozen=True)
class _Opaque:
    """An attribute value this converter does not read, kept as its source text."""

    text: str


@dataclass
class _Op:
    """One operation as parsed, pretty or generic: operands, attributes (by their generic names), regions, types."""

    name: str
    token: Token
    operands: list = field(default_factory=list)  # (HloInstruction, Token)
    attrs: dict = field(default_factory=dict)
    attr_tokens: dict = field(default_factory=dict)
    attr_ends: dict = field(default_factory=dict)  # source offset where each attribute's value ends
    regions: list = field(default_factory=list)  # _Body
    operand_types: list | None = None
    result_types: list = field(default_factory=list)
    type_token: Token | None = None  # the result type, for errors about it


@dataclass
class _Body:
    """A finished region: its computation (not yet in a module), parameters' types and the root's."""

    computation: HloComputation
    params: list
    result_types: list
    token: Token


class _Scope:
    """A block being parsed: its instructions in creation order and the SSA values it defines."""

    def __init__(self, parent: _Scope | None):
        self.parent = parent
        self.instructions: list[HloInstruction] = []
        self.values: dict[str, tuple[list[HloInstruction], Token]] = {}
        self.captured: dict[HloInstruction, HloInstruction] = {}  # a value of an enclosing block -> its stand-in here

    def find(self, name: str):
        scope = self
        while scope is not None:
            if name in scope.values:
                return scope, scope.values[name]
            scope = scope.parent
        return None, None


_UNARY = {
    "abs": "abs", "cbrt": "cbrt", "ceil": "ceil", "cosine": "cosine", "count_leading_zeros": "clz",
    "exponential": "exponential", "exponential_minus_one": "exponential-minus-one", "floor": "floor",
    "is_finite": "is-finite", "log": "log", "log_plus_one": "log-plus-one", "logistic": "logistic",
    "negate": "negate", "not": "not", "popcnt": "popcnt", "round_nearest_afz": "round-nearest-afz",
    "round_nearest_even": "round-nearest-even", "rsqrt": "rsqrt", "sign": "sign", "sine": "sine",
    "sqrt": "sqrt", "tan": "tan", "tanh": "tanh",
}
_BINARY = {
    "add": "add", "and": "and", "atan2": "atan2", "divide": "divide", "maximum": "maximum", "minimum": "minimum",
    "multiply": "multiply", "or": "or", "power": "power", "remainder": "remainder", "shift_left": "shift-left",
    "shift_right_arithmetic": "shift-right-arithmetic", "shift_right_logical": "shift-right-logical",
    "subtract": "subtract", "xor": "xor",
}
#: The attributes the converter reads (any other is skipped, balanced).
_READ = frozenset({
    "api_version", "backend_config", "base_dilations", "broadcast_dimensions", "call_target_name", "callee",
    "compare_type", "comparison_direction", "dimension", "dimensions", "edge_padding_high", "edge_padding_low",
    "function_type", "has_side_effect", "index", "interior_padding", "iota_dimension", "limit_indices",
    "operand_layouts", "padding", "permutation", "result_layouts", "start_indices", "strides", "sym_name", "value",
    "window_dilations", "window_dimensions", "window_strides"})
#: HLO opcodes of the elementwise ops parsed here (a result of its operands' shape, element by element).
ELEMENTWISE_OPCODES = frozenset({*_UNARY.values(), *_BINARY.values(), "compare"})
#: The commutative ones, whose constant operand MLIR moves right.
COMMUTATIVE_OPCODES = frozenset({"add", "multiply", "maximum", "minimum", "and", "or", "xor"})
_OTHER_OPS = ("broadcast_in_dim", "clamp", "compare", "concatenate", "constant", "convert", "custom_call",
              "get_tuple_element", "iota", "pad", "reduce", "reduce_window", "reshape", "return", "select", "slice",
              "transpose", "tuple")
#: The ops this converter maps to HLO (besides module, func.func, func.call and func.return).
SUPPORTED_OPS = tuple(sorted(f"stablehlo.{op}" for op in (*_UNARY, *_BINARY, *_OTHER_OPS))) + (
    "func.call", "func.return")
_SUPPORTED = frozenset(SUPPORTED_OPS)
_SUPPORTED_TEXT = "func.call, func.return and stablehlo.{" + ", ".join(
    op.split(".", 1)[1] for op in SUPPORTED_OPS if op.startswith("stablehlo.")) + "}"
_PRETTY_ALIASES = {"return": "func.return", "call": "func.call"}
_CAPTURE_EXPECTED = "a value defined in this region or a constant (a region's computation sees only its parameters)"
_DIRECTIONS = ("EQ", "NE", "GE", "GT", "LE", "LT")
_COMPARE_TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "NOTYPE")
_API_VERSIONS = {0: "API_VERSION_UNSPECIFIED", 1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                 3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}
_SKIP_PLAIN = re.compile(r'[^\[\](){}<>",\-/]+')
_SKIP_NESTED = re.compile(r'[^\[\](){}<>"\-/]+')
_OPENERS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_PLAIN_INT_LIST = re.compile(r"\[[0-9, \t\r\n\-]*\](?<=[0-9\s\[]\])")  # checked item by item by int()
_FLOAT_CHARS = re.compile(r"[^0-9a-fA-FxX.eE+\-\s\[\],]")
_SEPARATOR = re.compile(r"[\[\],]")
_NOT_SEPARATOR = re.compile(r"[^\[\],]+")
_NOT_HEX = re.compile(r"[^0-9A-Fa-f]")
_DENSE_STOP = re.compile(r'[<>"{}()]')
_HEX_ITEM = re.compile(r"0x[0-9A-Fa-f]{1,32}")
_INT_ITEM = re.compile(r"-?[0-9]{1,20}")
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_IDENTIFIER_CHAR = re.compile(r"[^A-Za-z0-9_.\-]")
_STRING_OR_BLANKS = re.compile(r'("(?:[^"\\\n]|\\.)*")|\s+')
_MAX_CONSTANT_RANK = 32  # numpy's arrays have at most 32 (numpy 1) or 64 dimensions
_MAX_LIST = 1 << 16  # entries of an integer-list attribute (a layout, window dims ...)


class _Parser(Cursor):
    """The cursor plus one method per rule; ops are converted to HLO instructions as they are read."""

    def __init__(self, text: str, fold: Callable[[HloInstruction], HloInstruction]):
        super().__init__(text)
        self.lexer = _Lexer(text)
        self.fold = fold
        self.counters: dict[str, int] = {}
        self.computation_names: set[str] = set()
        # function name -> (its name token, parameter types, result types, its computations, itself last)
        self.functions: dict[str, tuple[Token, list, list, list[HloComputation]]] = {}
        self.function_order: list[str] = []
        self.calls: list[tuple[Token, str, list, list]] = []  # (token, callee, argument types, result types)
        self.pending: list[HloComputation] = []  # computations finished since the current function began
        self.scope: _Scope | None = None
        self.regions = 0  # regions made so far (region_<k>)
        self.types: dict[str, Shape] = {}  # tensor types by their text, made once
        self.result_token: Token | None = None  # the first result type of the last function type

    # ----- helpers -------------------------------------------------------------------------------

    def at_kind(self, kind: str, ahead: int = 0) -> bool:
        return self.peek(ahead).kind == kind

    def fail_unsupported(self, token: Token, op: str):
        line, column = self.lexer.position(token.start)
        start = token.start - column + 1
        end = self.text.find("\n", start)
        raise UnsupportedOpError(line, column, op, self.text[start : end if end >= 0 else len(self.text)])

    def name(self, base: str) -> str:
        number = self.counters.get(base, 0) + 1
        self.counters[base] = number
        return f"{base}.{number}"

    def computation_name(self, base: str) -> str:
        base = _IDENTIFIER_CHAR.sub("_", base) or "function"
        if not re.match(r"[A-Za-z_]", base):
            base = "_" + base
        name, number = base, 0
        while name in self.computation_names:
            number += 1
            name = f"{base}.{number}"
        self.computation_names.add(name)
        return name

    def emit(self, opcode: str, shape, operands=(), attributes=None, payload=None, base: str | None = None):
        inst = HloInstruction(self.name(base or opcode), opcode, shape, list(operands), attributes, payload=payload)
        self.scope.instructions.append(inst)
        return inst

    def skip_loc(self) -> None:
        """An optional ``loc(...)`` trailer."""
        if self.at_keyword("loc") and self.at("(", 1):
            self.advance()
            self.skip_balanced(stop_at_comma=False)

    def skip_balanced(self, stop_at_comma: bool = True) -> str:
        """Skip one value of balanced brackets (strings and ``->`` taken into account) up to a ',' (when
        `stop_at_comma`) or a closer at depth 0, or, when the value starts with an opener, to its closer.
        Returns the skipped text."""
        text = self.text
        start = pos = self.peek().start
        stack: list[int] = []
        while True:
            plain = (_SKIP_NESTED if stack else _SKIP_PLAIN).match(text, pos)
            if plain:
                pos = plain.end()
            char = text[pos : pos + 1]
            if not char:
                if stack:
                    opener = stack[-1]
                    line, column = self.lexer.position(opener)
                    self.fail_at(pos, f"{_OPENERS[text[opener]]!r} closing {text[opener]!r} at line {line}, "
                                      f"column {column}", "end of input")
                break
            if char in _OPENERS:
                if self.depth + len(stack) >= MAX_DEPTH:
                    self.fail_at(pos, f"at most {MAX_DEPTH} levels of nesting", "deeper nesting")
                stack.append(pos)
                pos += 1
            elif char in ")]}>":
                if not stack:
                    break
                opener = stack[-1]
                if _OPENERS[text[opener]] != char:
                    line, column = self.lexer.position(opener)
                    self.fail_at(pos, f"{_OPENERS[text[opener]]!r} closing {text[opener]!r} at line {line}, "
                                      f"column {column}", repr(char))
                stack.pop()
                pos += 1
                if not stack and not stop_at_comma:
                    break
            elif char == ",":
                if not stack and stop_at_comma:
                    break
                pos += 1
            elif char == '"':
                pos = self.lexer.string_end(pos)
            elif char == "-":
                pos += 2 if text.startswith("->", pos) else 1
            elif text.startswith("//", pos):
                end = text.find("\n", pos)
                pos = len(text) if end < 0 else end
            else:
                pos += 1
        if pos == start:
            self.fail(self.peek(), "an attribute value")
        self.seek(pos)
        return text[start:pos].strip()

    # ----- file, module, functions -------------------------------------------------------------

    def file(self) -> HloModule:
        """alias-definitions (module | top-level functions) alias-definitions [file metadata]"""
        self.aliases()
        module_name = "module"
        if self.at_keyword("module"):
            module_name = self.module()
        elif self.at_kind(STRING) and self.peek().value == "builtin.module":
            module_name = self.generic_module()
        else:
            if not (self.at_keyword("func.func") or self.at_kind(STRING)):
                self.fail(self.peek(), "'module' or 'func.func'")
            while not self.at_kind(EOF) and (self.at_keyword("func.func") or self.at_kind(STRING)):
                self.module_item()
        self.aliases()
        if not self.at_kind(EOF):
            self.fail(self.peek(), "end of input (one module)")
        return self.build_module(module_name)

    def aliases(self) -> None:
        """``#name = value`` and ``!name = type`` definitions, and ``{-# ... #-}`` file metadata: skipped."""
        while True:
            token = self.peek()
            if token.kind in (HASH, BANG) and self.at("=", 1):
                self.advance()
                self.advance()
                self.skip_value()
            elif self.at("{-#"):
                self.advance()
                end = self.text.find("#-}", token.end)
                if end < 0:
                    self.fail(token, "'#-}' closing this file metadata", "end of input")
                self.seek(end + 3)
            else:
                return

    def skip_value(self) -> None:
        """One value: a token and any bracket groups after it (``loc("x")``, ``#foo<...>``)."""
        token = self.peek()
        if token.kind in (NAME, HASH, BANG, STRING, INT, FLOAT, HEX, WORD, SYMBOL):
            self.advance()
        elif not (token.kind == PUNCT and token.text in _OPENERS):
            self.fail(token, "a value")
        while self.peek().kind == PUNCT and self.peek().text in _OPENERS:
            self.skip_balanced(stop_at_comma=False)

    def module(self) -> str:
        """'module' [@name] ['attributes' dict] '{' items '}' [loc]"""
        self.advance()
        name = self.advance().value if self.at_kind(SYMBOL) else "module"
        if self.at_keyword("attributes"):
            self.advance()
            self.attr_dict()
        opener = self.expect("{", "'{' starting the module body")
        with self.nested(opener):
            while not self.at("}"):
                if self.at_kind(EOF):
                    self.fail(self.peek(), "'}' closing the module")
                self.module_item()
            self.advance()
        self.skip_loc()
        return name

    def generic_module(self) -> str:
        """'"builtin.module"' '(' ')' [<{props}>] '(' '{' items '}' ')' [dict] ':' '(' ')' '->' '(' ')' [loc]"""
        self.advance()
        self.expect("(", "'(' after the op name")
        self.expect(")", "')': a module takes no operands")
        props = self.properties()
        self.expect("(", "'(' starting the module's region")
        opener = self.expect("{", "'{' starting the module body")
        with self.nested(opener):
            while not self.at("}"):
                if self.at_kind(EOF):
                    self.fail(self.peek(), "'}' closing the module")
                self.module_item()
            self.advance()
        self.expect(")", "')' after the module's region")
        if self.at("{"):
            props.update(self.attr_dict())
        self.expect(":", "':' before the op's type")
        self.function_type()
        self.skip_loc()
        name = props.get("sym_name")
        return name if isinstance(name, str) else "module"

    def module_item(self) -> None:
        token = self.peek()
        if self.at_keyword("func.func"):
            self.function()
        elif token.kind == STRING and token.value == "func.func":
            self.generic_function()
        elif token.kind == STRING:
            self.fail_unsupported(token, token.value)
        elif token.kind == NAME:
            self.fail_unsupported(token, token.text)
        else:
            self.fail(token, "'func.func' or '}'")

    def function(self) -> None:
        """'func.func' [visibility] @name '(' args ')' ['->' results] ['attributes' dict] '{' ops '}' [loc]"""
        self.advance()
        if self.at_kind(NAME) and self.peek().text in ("public", "private", "nested"):
            self.advance()
        name_token = self.expect_kind(SYMBOL, "the function's name, such as @main")
        self.begin_function(name_token)
        self.expect("(", "'(' starting the function's arguments")
        params = []
        if not self.at(")"):
            while True:
                value = self.expect_kind(VALUE, "an argument such as %arg0")
                self.expect(":", "':' after the argument name")
                params.append((value, self.type()))
                if self.at("{"):
                    self.attr_dict()
                self.skip_loc()
                if not self.eat(","):
                    break
        self.expect(")", "',' or ')' in the function's arguments")
        results = []
        if self.eat("->"):
            if self.at("("):
                opener = self.advance()
                with self.nested(opener):
                    if not self.at(")"):
                        while True:
                            results.append(self.type())
                            if self.at("{"):
                                self.attr_dict()
                            if not self.eat(","):
                                break
                    self.expect(")", "',' or ')' in the function's results")
            else:
                results.append(self.type())
        if self.at_keyword("attributes"):
            self.advance()
            self.attr_dict()
        if not self.at("{"):
            self.fail(self.peek(), "'{' starting the function body (external functions are not supported)")
        body = self.region(params, terminator="func.return", label_allowed=False, function=True)
        self.skip_loc()
        self.end_function(name_token, body, results)

    def generic_function(self) -> None:
        """'"func.func"' '(' ')' <{function_type, sym_name ...}> '(' region ')' [dict] ':' '(' ')' '->' '(' ')'"""
        token = self.advance()
        self.expect("(", "'(' after the op name")
        self.expect(")", "')': a function takes no operands")
        props = self.properties()
        self.begin_function(token)
        self.expect("(", "'(' starting the function's region")
        body = self.region(None, terminator="func.return", function=True)
        self.expect(")", "')' after the function's region")
        if self.at("{"):
            props.update(self.attr_dict())
        self.expect(":", "':' before the op's type")
        self.function_type()
        self.skip_loc()
        name, function_type = props.get("sym_name"), props.get("function_type")
        if not isinstance(name, str) or not isinstance(function_type, _FunctionType):
            self.fail(token, "a function with sym_name and function_type attributes")
        if not _same_types(function_type.inputs, body.params):
            self.fail(body.token, f"block arguments of the types in function_type "
                                  f"({_types_text(function_type.inputs)})", _types_text(body.params))
        name_token = Token(SYMBOL, "@" + name, name, token.start, token.end, self.lexer)
        self.end_function(name_token, body, list(function_type.results))

    def begin_function(self, token: Token) -> None:
        if self.scope is not None:
            self.fail(token, "a function at module level, not inside another")
        self.pending = []

    def end_function(self, name_token: Token, body: _Body, results: list) -> None:
        name = name_token.value
        if name in self.functions:
            self.fail(name_token, "a new function name", f"@{name} (already defined at "
                                                          f"{self.where(self.functions[name][0])})")
        if not _same_types(results, body.result_types):
            self.fail(body.token, f"a return of the function's result types ({_types_text(results)})",
                      _types_text(body.result_types))
        comp = body.computation
        comp.name = self.computation_name("main" if name == "main" else name)
        self.functions[name] = (name_token, body.params, results, [*self.pending, comp])
        self.function_order.append(name)
        self.pending = []

    def build_module(self, module_name: str) -> HloModule:
        if "main" not in self.functions:
            self.fail(self.peek(), "a function named @main (the entry computation)")
        for token, callee, arguments, results in self.calls:
            if callee not in self.functions:
                known = ", ".join("@" + name for name in self.functions)
                self.fail(token, f"the name of a function in this module ({known})", "@" + callee)
            _, params, callee_results, _ = self.functions[callee]
            if not _same_types(params, arguments) or not _same_types(callee_results, results):
                self.fail(token, f"a call of @{callee}'s type ({_types_text(params)}) -> "
                                 f"({_types_text(callee_results)})",
                          f"({_types_text(arguments)}) -> ({_types_text(results)})")
        # Every function in text order, each after the regions it holds; a call names its callee's computation.
        names = {name: self.functions[name][3][-1].name for name in self.functions}
        computations = [comp for name in self.function_order for comp in self.functions[name][3]]
        for comp in computations:
            for inst in comp.instructions:
                if inst.opcode == "call":
                    inst.attributes["to_apply"] = names[inst.attributes["to_apply"].name]
        self.functions["main"][3][-1].is_entry = True
        try:
            return HloModule(_identifier(module_name), computations)
        except ValueError as error:  # not expected: names are made unique here
            self.fail(self.peek(), "a module that can be built", str(error))

    # ----- regions and ops ---------------------------------------------------------------------

    def region(self, params: list | None, terminator: str, label_allowed: bool = True,
               function: bool = False) -> _Body:
        """'{' [^label ['(' args ')'] ':'] op* terminator '}' as a computation; `params` given (a pretty
        function's arguments) or from the block label."""
        opener = self.expect("{", "'{' starting a region")
        with self.nested(opener):
            parent = self.scope
            self.scope = scope = _Scope(parent)
            try:
                if self.at_kind(BLOCK):
                    label = self.advance()
                    if not label_allowed and params:
                        self.fail(label, "the function's operations (its arguments are in its signature)")
                    block_params = []
                    if self.eat("("):
                        if not self.at(")"):
                            while True:
                                value = self.expect_kind(VALUE, "a block argument such as %arg0")
                                self.expect(":", "':' after the block argument")
                                block_params.append((value, self.type()))
                                self.skip_loc()
                                if not self.eat(","):
                                    break
                        self.expect(")", "',' or ')' in the block arguments")
                    self.expect(":", "':' after the block label")
                    params = params if params else block_params
                params = params or []
                arguments = []
                for number, (value, shape) in enumerate(params):
                    inst = self.emit("parameter", shape, payload=number, base=f"Arg_{number}")
                    self.define([(value, value.value, 1)], [inst])
                    arguments.append(shape)
                root, results, end = None, None, None
                while not self.at("}"):
                    token = self.peek()
                    if token.kind == EOF:
                        self.fail(token, "'}' closing the region")
                    if token.kind == BLOCK:
                        self.fail(token, "a region of one block (branches are not supported)")
                    if root is not None:
                        self.fail(token, f"'}}' after {terminator}")
                    returned = self.operation(terminator)
                    if returned is not None:
                        root, results, end = returned
                if root is None:
                    self.fail(self.peek(), f"a {terminator} op ending the region")
                self.advance()
            finally:
                self.scope = parent
        name = "function" if function else self.region_name()  # end_function names a function's computation
        try:
            comp = HloComputation(name, scope.instructions, root=root)
        except ValueError as error:  # not expected: names are made unique here
            self.fail(end, "a computation that can be built", str(error))
        return _Body(comp, arguments, results, end)

    def region_name(self) -> str:
        name = self.computation_name(f"region_{self.regions}")
        self.regions += 1
        return name

    def operation(self, terminator: str):
        """[results '='] (generic-op | pretty-op) [loc]; returns (root, result types, token) for a terminator."""
        results = []
        if self.at_kind(VALUE):
            while True:
                value = self.expect_kind(VALUE, "a result name such as %0")
                if "#" in value.text:
                    self.fail(value, "a result name without '#'")
                count = 1
                if self.eat(":"):
                    count = self.int_value("a number of results", minimum=1)
                results.append((value, value.value, count))
                if not self.eat(","):
                    break
            self.expect("=", "'=' after the result names")
        token = self.peek()
        if token.kind == STRING:
            op = self.generic_op()
        elif token.kind == NAME:
            name = _PRETTY_ALIASES.get(token.text, token.text)
            if name not in _SUPPORTED:
                self.fail_unsupported(token, token.text)
            self.advance()
            op = _Op(name, token)
            getattr(self, "pretty_" + name.split(".", 1)[1].replace(".", "_"), self.pretty_other)(op)
        else:
            self.fail(token, "an operation such as stablehlo.add")
        self.skip_loc()
        if op.name in ("func.return", "stablehlo.return"):
            if results:
                self.fail(results[0][0], f"no results for {op.name}")
            if op.name != terminator:
                self.fail(op.token, terminator, op.name)
            return self.terminator(op)
        self.check_operand_types(op)
        values = self.convert(op)
        self.define(results, values, op)
        return None

    def define(self, results: list, values: list, op: _Op | None = None) -> None:
        total = sum(count for _, _, count in results)
        if total != len(values):
            token = results[0][0] if results else op.token
            self.fail(token, f"{len(values)} result name(s), as {op.name if op else 'the op'} has "
                             f"{len(values)} result(s)", f"{total}")
        done = 0
        for token, name, count in results:
            _, found = self.scope.find(name)
            if found is not None:
                self.fail(token, "a new value name", f"%{name} (already defined at {self.where(found[1])})")
            self.scope.values[name] = (values[done : done + count], token)
            done += count

    def operand(self) -> tuple[HloInstruction, Token]:
        token = self.expect_kind(VALUE, "an operand such as %0")
        name, _, number = token.value.partition("#")
        scope, found = self.scope.find(name)
        if found is None:
            self.fail(token, "a value defined earlier")
        values = found[0]
        if number:
            index = int(number)
            if index >= len(values):
                self.fail(token, f"a result number below {len(values)} for %{name}")
        elif len(values) != 1:
            self.fail(token, f"one of %{name}'s {len(values)} results, such as %{name}#0")
        else:
            index = 0
        value = values[index]
        if scope is not self.scope:
            value = self.capture(value, token)
        return value, token

    def capture(self, value: HloInstruction, token: Token) -> HloInstruction:
        """A value of an enclosing block used in a region: a constant of this region stands for it (its first use
        makes it), to be a copy once the module is converted (``passes.sink_constants``). It must become an HLO
        constant (``fold``; a splat of several elements becomes a broadcast), or it is an error."""
        folded = self.fold(value)
        if folded.opcode != "constant" or isinstance(folded.payload, Splat) and math.prod(folded.shape.dims) != 1:
            self.fail(token, _CAPTURE_EXPECTED)
        stand_in = self.scope.captured.get(value)
        if stand_in is None:
            stand_in = self.emit("constant", value.shape, [value], payload=CapturedValue(token))
            self.scope.captured[value] = stand_in
        return stand_in

    def operands(self, op: _Op, closer: str | None = None) -> None:
        """A comma-separated list of operands (possibly empty before `closer`)."""
        if closer is not None and self.at(closer):
            return
        op.operands.append(self.operand())
        while self.at(",") and self.at_kind(VALUE, 1):
            self.advance()
            op.operands.append(self.operand())

    def generic_op(self) -> _Op:
        """'"name"' '(' operands ')' [<{props}>] ['(' regions ')'] [dict] ':' function-type"""
        token = self.advance()
        name = token.value
        if name not in _SUPPORTED:
            self.fail_unsupported(token, name)
        op = _Op(name, token)
        self.expect("(", "'(' starting the operands")
        self.operands(op, ")")
        self.expect(")", "',' or ')' after the operands")
        if self.at("["):
            self.fail(self.peek(), "no successors (branches are not supported)")
        op.attrs.update(self.properties(op))
        if self.at("("):
            opener = self.advance()
            with self.nested(opener):
                while True:
                    op.regions.append(self.region(None, terminator="stablehlo.return"))
                    if not self.eat(","):
                        break
                self.expect(")", "',' or ')' after the regions")
        if self.at("{"):
            op.attrs.update(self.attr_dict(op))
        self.expect(":", "':' before the op's type")
        function_type = self.function_type()
        op.type_token = self.result_token
        op.operand_types, op.result_types = list(function_type.inputs), list(function_type.results)
        return op

    def properties(self, op: _Op | None = None) -> dict:
        """An optional ``<{...}>``."""
        if not self.at("<"):
            return {}
        self.advance()
        props = self.attr_dict(op)
        self.expect(">", "'>' closing the properties")
        return props

    def terminator(self, op: _Op):
        """A return: its operands become the root (a tuple of them unless there is exactly one)."""
        values = [value for value, _ in op.operands]
        if op.operand_types is not None:
            self.check_operand_types(op)
        if len(values) == 1:
            root = values[0]
        else:
            root = self.emit("tuple", TupleShape([v.shape for v in values]), values)
        return root, [_declared(v.shape) for v in values], op.token

    def check_operand_types(self, op: _Op) -> None:
        if op.operand_types is None:
            return
        if len(op.operand_types) != len(op.operands):
            self.fail(op.type_token, f"{len(op.operands)} operand type(s), one per operand",
                      str(len(op.operand_types)))
        for (value, token), declared in zip(op.operands, op.operand_types):
            if not compatible(declared, value.shape):
                self.fail(token, f"a value of type {_type_text(declared)}, as the op's type says",
                          f"{token.text} of type {_type_text(value.shape)}")

    # ----- the pretty forms ---------------------------------------------------------------------

    def types_after_colon(self, op: _Op) -> tuple[list | None, list]:
        """':' (function-type | type (',' type)*): (operand types or None, other types)."""
        self.expect(":", "':' before the op's type")
        if self.at("("):
            function_type = self.function_type()
            op.type_token = self.result_token
            return list(function_type.inputs), list(function_type.results)
        op.type_token = self.peek()
        types = [self.type()]
        while self.at(",") and not self.at_kind(VALUE, 1):
            self.advance()
            op.type_token = self.peek()
            types.append(self.type())
        return None, types

    def same_type(self, op: _Op, count: int) -> None:
        """``: T`` (operands and result all T) or a function type."""
        inputs, types = self.types_after_colon(op)
        if inputs is None:
            if len(types) != 1:
                self.fail(op.type_token, "one type (of the operands and the result) or a function type",
                          f"{len(types)} types")
            inputs = types * count
        op.operand_types, op.result_types = inputs, types

    def function_result(self, op: _Op) -> None:
        """``: (T, ...) -> R`` only."""
        self.expect(":", "':' before the op's type")
        if not self.at("("):
            self.fail(self.peek(), "a function type such as (tensor<2xf32>) -> tensor<2xf32>")
        function_type = self.function_type()
        op.type_token = self.result_token
        op.operand_types, op.result_types = list(function_type.inputs), list(function_type.results)

    def optional_attr_dict(self, op: _Op) -> None:
        if self.at("{"):
            op.attrs.update(self.attr_dict(op))

    def keyword_attr(self, op: _Op, keyword: str, key: str, rule) -> None:
        """keyword '=' value, stored under the generic attribute name `key`."""
        self.expect_keyword(keyword)
        self.expect("=", f"'=' after {keyword}")
        op.attr_tokens[key] = self.peek()
        op.attrs[key] = rule()

    def pretty_other(self, op: _Op) -> None:
        """Unary and binary elementwise ops: operands [dict] ':' type."""
        short = op.name.split(".", 1)[1]
        count = 2 if short in _BINARY else 1
        op.operands.append(self.operand())
        for _ in range(count - 1):
            self.expect(",", "',' between the operands")
            op.operands.append(self.operand())
        self.optional_attr_dict(op)
        self.same_type(op, count)

    def pretty_convert(self, op: _Op) -> None:
        self.pretty_other(op)

    def pretty_reshape(self, op: _Op) -> None:
        self.pretty_other(op)

    def pretty_transpose(self, op: _Op) -> None:
        self.operand_and_dims(op, "permutation")

    def pretty_broadcast_in_dim(self, op: _Op) -> None:
        self.operand_and_dims(op, "broadcast_dimensions")

    def operand_and_dims(self, op: _Op, attribute: str) -> None:
        """``%x, dims = [...] {attrs} : (type) -> type``: the dims are the op's ``attribute``."""
        op.operands.append(self.operand())
        self.expect(",", "',' after the operand")
        self.keyword_attr(op, "dims", attribute, self.int_list)
        self.optional_attr_dict(op)
        self.function_result(op)

    def pretty_constant(self, op: _Op) -> None:
        self.optional_attr_dict(op)
        op.attr_tokens["value"] = self.peek()
        value = self.attr_value()
        if not isinstance(value, _Dense):
            self.fail(op.attr_tokens["value"], "a dense<...> : tensor<...> value (dense_resource and other "
                                               "forms are not supported)")
        op.attrs["value"] = value
        op.operand_types, op.result_types = [], [value.type]

    def pretty_custom_call(self, op: _Op) -> None:
        target = self.expect_kind(SYMBOL, "the call target, such as @ResizeNearest")
        op.attrs["call_target_name"], op.attr_tokens["call_target_name"] = target.value, target
        self.expect("(", "'(' starting the operands")
        self.operands(op, ")")
        self.expect(")", "',' or ')' after the operands")
        self.optional_attr_dict(op)
        self.function_result(op)

    def pretty_compare(self, op: _Op) -> None:
        direction = self.expect_kind(NAME, f"a comparison direction ({', '.join(_DIRECTIONS)})")
        op.attrs["comparison_direction"], op.attr_tokens["comparison_direction"] = _Enum((direction.text,)), direction
        for _ in range(2):
            self.expect(",", "',' before the operand")
            op.operands.append(self.operand())
        if self.eat(","):
            kind = self.expect_kind(NAME, f"a comparison type ({', '.join(_COMPARE_TYPES)})")
            op.attrs["compare_type"], op.attr_tokens["compare_type"] = _Enum((kind.text,)), kind
        self.optional_attr_dict(op)
        self.function_result(op)

    def pretty_select(self, op: _Op) -> None:
        for index in range(3):
            if index:
                self.expect(",", "',' between the operands")
            op.operands.append(self.operand())
        self.optional_attr_dict(op)
        inputs, types = self.types_after_colon(op)
        if inputs is None:
            if len(types) != 2:
                self.fail(op.type_token, "the predicate's type and the result's (or a function type)",
                          f"{len(types)} types")
            inputs, types = [types[0], types[1], types[1]], [types[1]]
        op.operand_types, op.result_types = inputs, types

    def pretty_clamp(self, op: _Op) -> None:
        for index in range(3):
            if index:
                self.expect(",", "',' between the operands")
            op.operands.append(self.operand())
        self.optional_attr_dict(op)
        self.same_type(op, 3)

    def pretty_concatenate(self, op: _Op) -> None:
        op.operands.append(self.operand())
        while self.eat(","):
            if self.at_kind(VALUE):
                op.operands.append(self.operand())
            else:
                self.keyword_attr(op, "dim", "dimension", lambda: self.int_value("a dimension number", 0))
                break
        if "dimension" not in op.attrs:
            self.fail(self.peek(), "', dim = N' after the operands")
        self.optional_attr_dict(op)
        self.function_result(op)

    def pretty_slice(self, op: _Op) -> None:
        op.operands.append(self.operand())
        opener = self.expect("[", "'[' starting the slice ranges such as [0:2, 1:3]")
        op.attr_tokens["start_indices"] = opener
        starts, limits, strides = [], [], []
        if not self.at("]"):
            while True:
                starts.append(self.int_value("a start index", 0))
                self.expect(":", "':' after the start index")
                limits.append(self.int_value("a limit index", 0))
                strides.append(self.int_value("a stride", 1) if self.eat(":") else 1)
                if not self.eat(","):
                    break
        self.expect("]", "',' or ']' in the slice ranges")
        op.attrs.update(start_indices=tuple(starts), limit_indices=tuple(limits), strides=tuple(strides))
        op.attr_tokens.update(limit_indices=opener, strides=opener)
        self.optional_attr_dict(op)
        self.function_result(op)

    def pretty_iota(self, op: _Op) -> None:
        self.keyword_attr(op, "dim", "iota_dimension", lambda: self.int_value("a dimension number", 0))
        self.optional_attr_dict(op)
        self.expect(":", "':' before the result type")
        op.type_token = self.peek()
        op.operand_types, op.result_types = [], [self.type()]

    def pretty_pad(self, op: _Op) -> None:
        op.operands.append(self.operand())
        self.expect(",", "',' between the operands")
        op.operands.append(self.operand())
        for keyword, key in (("low", "edge_padding_low"), ("high", "edge_padding_high"),
                             ("interior", "interior_padding")):
            self.expect(",", f"', {keyword} = [...]'")
            self.keyword_attr(op, keyword, key, self.int_list)
        self.optional_attr_dict(op)
        self.function_result(op)

    def pretty_tuple(self, op: _Op) -> None:
        if self.at_kind(VALUE):
            self.operands(op)
        self.optional_attr_dict(op)
        self.expect(":", "':' before the tuple type")
        op.type_token = self.peek()
        op.operand_types, op.result_types = None, [self.type()]

    def pretty_get_tuple_element(self, op: _Op) -> None:
        op.operands.append(self.operand())
        op.attr_tokens["index"] = self.expect("[", "'[' before the element index")
        op.attrs["index"] = self.int_value("an element index", 0)
        self.expect("]", "']' after the element index")
        self.optional_attr_dict(op)
        self.function_result(op)

    def pretty_return(self, op: _Op) -> None:
        """return / func.return / stablehlo.return: [operands ':' types]"""
        if self.at_kind(VALUE):
            self.operands(op)
            self.optional_attr_dict(op)
            self.expect(":", "':' before the returned values' types")
            op.type_token = self.peek()
            types = [self.type()]
            while self.eat(","):
                types.append(self.type())
            op.operand_types = types
        else:
            self.optional_attr_dict(op)
            op.operand_types = []

    def pretty_reduce_window(self, op: _Op) -> None:
        self.fail(op.token, 'the generic form "stablehlo.reduce_window"(...) (the op has no other)')

    def pretty_call(self, op: _Op) -> None:
        """call @callee '(' operands ')' [dict] ':' function-type"""
        callee = self.expect_kind(SYMBOL, "the called function, such as @relu")
        op.attrs["callee"], op.attr_tokens["callee"] = _Symbol(callee.value), callee
        self.expect("(", "'(' starting the operands")
        self.operands(op, ")")
        self.expect(")", "',' or ')' after the operands")
        self.optional_attr_dict(op)
        self.function_result(op)

    def pretty_reduce(self, op: _Op) -> None:
        """'(' %x 'init:' %c ')' (',' '(' ... ')')* ('applies' op | ) 'across' 'dimensions' '=' list [dict] ':'
        function-type ['reducer' '(' args ')' ... region]"""
        inputs, inits = [], []
        while True:
            self.expect("(", "'(' starting an input of the reduce, such as (%0 init: %1)")
            inputs.append(self.operand())
            self.expect_keyword("init")
            self.expect(":", "':' after init")
            inits.append(self.operand())
            self.expect(")", "')' after the init value")
            if not self.eat(","):
                break
        op.operands = inputs + inits
        body_op = None
        if self.at_keyword("applies"):
            self.advance()
            body_op = self.expect_kind(NAME, "the reducing op, such as stablehlo.add")
            if body_op.text.split(".", 1)[-1] not in _BINARY or not body_op.text.startswith("stablehlo."):
                self.fail_unsupported(body_op, body_op.text)
        self.expect_keyword("across")
        self.keyword_attr(op, "dimensions", "dimensions", self.int_list)
        self.optional_attr_dict(op)
        self.function_result(op)
        if body_op is not None:
            op.regions.append(self.applied_region(body_op, [_declared(v.shape) for v, _ in inits]))
            return
        self.expect_keyword("reducer")
        params, seconds = [], []
        for _ in inputs:
            self.expect("(", "'(' starting a pair of reducer arguments")
            for group in (params, seconds):
                value = self.expect_kind(VALUE, "a reducer argument such as %arg1")
                self.expect(":", "':' after the argument")
                group.append((value, self.type()))
                self.skip_loc()
                if group is params:
                    self.expect(",", "',' between the pair of arguments")
            self.expect(")", "')' after the pair of arguments")
        if not self.at("{"):
            self.fail(self.peek(), "'{' starting the reducer body")
        op.regions.append(self.region(params + seconds, terminator="stablehlo.return", label_allowed=False))

    def applied_region(self, body_op: Token, scalars: list) -> _Body:
        """The region of ``applies stablehlo.add``: (a0.., b0..) -> op(a_i, b_i), a tuple of them if several."""
        parent = self.scope
        self.scope = _Scope(parent)
        try:
            params = [self.emit("parameter", shape, payload=number, base=f"Arg_{number}")
                      for number, shape in enumerate(scalars * 2)]
            count = len(scalars)
            opcode = _BINARY[body_op.text.split(".", 1)[1]]
            values = [self.emit(opcode, params[i].shape, [params[i], params[i + count]]) for i in range(count)]
            root = values[0] if count == 1 else self.emit("tuple", TupleShape([v.shape for v in values]), values)
            instructions = self.scope.instructions
        finally:
            self.scope = parent
        name = self.region_name()
        return _Body(HloComputation(name, instructions, root=root), scalars * 2, list(scalars), body_op)

    # ----- types ----------------------------------------------------------------------------------

    def type(self):
        """tensor<dims x element> | tuple<types> | !stablehlo.token"""
        token = self.peek()
        if token.kind == NAME and token.text == "tensor":
            match = _TENSOR.match(self.text, token.start)
            if match is None:
                self.tensor_error(token)
            cached = self.types.get(match.group())
            if cached is not None:
                self.seek(match.end())
                return cached
            element = ELEMENT_TYPE_NAMES.get(match.group("elem"))
            if element not in ELEMENT_TYPES:
                self.fail_at(match.start("elem"), "an element type such as f32, bf16, f16, i32, ui8 or i1",
                             repr(match.group("elem")))
            dims = tuple(int(d) for d in match.group("dims").split("x")[:-1])
            if any(d >= _MAX_DIM for d in dims):
                self.fail_at(match.start("dims"), "dimension sizes below 2**62", match.group("dims"))
            self.seek(match.end())
            shape = self.types[match.group()] = Shape(element, dims)
            return shape
        if token.kind == NAME and token.text == "tuple":
            with self.nested(token):
                self.advance()
                self.expect("<", "'<' after tuple")
                elements = []
                if not self.at(">"):
                    while True:
                        elements.append(self.type())
                        if not self.eat(","):
                            break
                self.expect(">", "',' or '>' in the tuple type")
            return TupleShape(elements)
        if token.kind == BANG and token.text == "!stablehlo.token":
            self.advance()
            return Shape("token", ())
        self.fail(token, "a type such as tensor<2x3xf32>")

    def tensor_error(self, token: Token):
        pos = token.start + len("tensor")
        if not self.text.startswith("<", pos):
            self.fail_at(pos, "'<' after tensor", repr(self.text[pos : pos + 1]) if pos < len(self.text) else
                         "end of input")
        dims = _DIMS.match(self.text, pos + 1)
        at = dims.end()
        rest = self.text[at : at + 1]
        if rest in ("?", "*"):
            self.fail_at(at, "a static dimension size (dynamic and unranked shapes are not supported)", repr(rest))
        if rest.isdigit():
            self.fail_at(at, f"'x' after the dimension size (at most {MAX_RANK} dimensions of at most 19 digits)",
                         repr(self.text[at : at + 24]))
        elem = re.compile(r"complex<f(?:32|64)>|[A-Za-z][A-Za-z0-9]*").match(self.text, at)
        if elem is None:
            self.fail_at(at, "dimension sizes and an element type, such as 2x3xf32",
                         repr(rest) if rest else "end of input")
        end = elem.end()
        got = self.text[end : end + 1]
        if got == ",":
            self.fail_at(end, "'>' (tensor encodings are not supported)", "','")
        self.fail_at(end, "'>' closing the tensor type", repr(got) if got else "end of input")

    def function_type(self) -> _FunctionType:
        """'(' [type (',' type)*] ')' '->' (type | '(' [type (',' type)*] ')')"""
        opener = self.expect("(", "a function type such as (tensor<2xf32>) -> tensor<2xf32>")
        with self.nested(opener):
            inputs = []
            if not self.at(")"):
                while True:
                    inputs.append(self.type())
                    if not self.eat(","):
                        break
            self.expect(")", "',' or ')' in the function type's inputs")
            self.expect("->", "'->' in the function type")
            self.result_token = self.peek()
            results = []
            if self.at("("):
                self.advance()
                if not self.at(")"):
                    while True:
                        results.append(self.type())
                        if not self.eat(","):
                            break
                self.expect(")", "',' or ')' in the function type's results")
            else:
                results.append(self.type())
        return _FunctionType(tuple(inputs), tuple(results))

    # ----- attribute values -----------------------------------------------------------------------

    def attr_dict(self, op: _Op | None = None) -> dict:
        """'{' [key ['=' value] (',' key ['=' value])*] '}'"""
        opener = self.expect("{", "'{' starting an attribute dictionary")
        attrs = {}
        with self.nested(opener):
            if not self.at("}"):
                while True:
                    key = self.peek()
                    if key.kind not in (NAME, STRING):
                        self.fail(key, "an attribute name")
                    self.advance()
                    if key.value in attrs:
                        self.fail(key, "each attribute at most once", f"a second {key.value}")
                    if self.eat("="):
                        if op is not None:
                            op.attr_tokens[key.value] = self.peek()
                        attrs[key.value] = self.attr_value() if key.value in _READ else _Opaque(self.skip_balanced())
                        if op is not None:
                            op.attr_ends[key.value] = self.last_end
                    else:
                        attrs[key.value] = True  # a unit attribute
                    if not self.eat(","):
                        break
            self.expect("}", "',' or '}' in the attribute dictionary")
        return attrs

    def attr_value(self):
        """An attribute value: the forms the converter reads are parsed, anything else skipped (balanced)."""
        token = self.peek()
        kind, text = token.kind, token.text
        if kind in (INT, FLOAT, HEX) or kind == NAME and text in ("true", "false"):
            self.advance()
            value = {"true": True, "false": False}.get(text) if kind == NAME else (
                int(text, 16) if kind == HEX else int(text) if kind == INT else float(text))
            if self.eat(":"):
                self.skip_type()
            return value
        if kind == STRING:
            self.advance()
            if self.eat(":"):
                self.skip_type()
            return token.value
        if kind == PUNCT and text == "[":
            values = self.plain_int_list()
            if values is not None:
                return values
            with self.nested(token):
                self.advance()
                items = []
                if not self.at("]"):
                    while True:
                        items.append(self.attr_value())
                        if not self.eat(","):
                            break
                self.expect("]", "',' or ']' in the list")
            return items
        if kind == PUNCT and text == "{":
            return self.attr_dict()
        if kind == PUNCT and text == "(":
            return self.function_type()
        if kind == NAME and text == "array" and self.at("<", 1):
            return self.array_attr()
        if kind == NAME and text == "dense" and self.at("<", 1):
            return self.dense_attr()
        if kind == SYMBOL and not self.text.startswith("::", token.end):
            self.advance()
            return _Symbol(token.value)
        if kind == HASH and token.text == "#stablehlo" and self.at("<", 1):
            start = self.peek().start
            self.advance()
            self.advance()
            words = []
            while self.at_kind(NAME):
                words.append(self.advance().text)
            if words and self.eat(">"):
                return _Enum(tuple(words))
            self.seek(start)
        return _Opaque(self.skip_balanced())

    def plain_int_list(self) -> list[int] | None:
        """A '[' list of plain integers ']' in one match, or None (nothing consumed: the token rules read it)."""
        plain = _PLAIN_INT_LIST.match(self.text, self.peek().start)
        if plain is None:
            return None
        inside = plain.group()[1:-1]
        try:
            values = [int(item) for item in inside.split(",")] if inside.strip() else []
        except ValueError:  # "1 2", "1,,2", a huge number: the token rules say where
            return None
        if any(len(item.strip().lstrip("-")) > 20 for item in inside.split(",")):
            return None
        self.seek(plain.end())
        return values

    def skip_type(self) -> None:
        """The type after ``value :`` (``i32``, ``tensor<...>``, ``!foo<...>``)."""
        token = self.peek()
        if token.kind not in (NAME, BANG, WORD):
            self.fail(token, "a type")
        self.advance()
        if self.at("<"):
            self.skip_balanced(stop_at_comma=False)

    def array_attr(self) -> tuple:
        """'array' '<' type [':' item (',' item)*] '>' with integer or boolean items."""
        self.advance()
        self.advance()
        self.expect_kind(NAME, "an element type such as i64")
        if not self.eat(":"):
            self.expect(">", "'>' or ':' in the array")
            return ()
        start = self.last_end
        end = self.text.find(">", start)
        end = len(self.text) if end < 0 else end
        items = self.text[start:end].split(",")
        values = []
        pos = start
        for item in items:
            word = item.strip()
            if word in ("true", "false"):
                values.append(int(word == "true"))
            elif _INT_ITEM.fullmatch(word):
                values.append(int(word))
            else:
                at = self.lexer.blanks_end(pos)
                self.fail_at(at, "an integer or true/false, then ',' or '>'",
                             repr(self.text[at : at + 12]) if at < len(self.text) else "end of input")
            pos += len(item) + 1
        self.seek(end + 1)
        return tuple(values)

    def dense_attr(self) -> _Dense:
        """'dense' '<' (elements | "0x..." hex) '>' ':' tensor-type"""
        token = self.advance()
        opener = self.advance()
        if self.at_kind(STRING):
            content_token = self.advance()
            content, offset = '"' + content_token.value + '"', content_token.start
        else:
            offset = opener.end
            stop = _DENSE_STOP.search(self.text, offset)
            end = stop.start() if stop else len(self.text)
            if end == len(self.text) or self.text[end] != ">":
                self.fail_at(end, "values, then '>' closing dense<...>",
                             repr(self.text[end]) if end < len(self.text) else "end of input")
            content = self.text[offset:end]
            self.seek(end)
        self.expect(">", "'>' closing dense<...>")
        self.expect(":", "':' and the type after dense<...>")
        return _Dense(content, offset, self.type(), token)

    def int_list(self) -> tuple[int, ...]:
        """'[' [int (',' int)*] ']'"""
        if self.at("["):
            values = self.plain_int_list()
            if values is not None:
                return tuple(values)
        self.expect("[", "'[' starting a list of integers")
        values = []
        if not self.at("]"):
            while True:
                values.append(self.int_value("an integer"))
                if not self.eat(","):
                    break
        self.expect("]", "',' or ']' in the list")
        return tuple(values)

    def ints(self, op: _Op, key: str, default=None) -> tuple[int, ...]:
        """Attribute `key` of `op` as a tuple of integers: array<i64: ...>, dense<[...]>, [..] or (from a pretty
        form) a tuple."""
        value = op.attrs.get(key)
        token = op.attr_tokens.get(key, op.token)
        if value is None:
            if default is None:
                self.fail(op.token, f"a {key} attribute for {op.name}")
            return default
        if isinstance(value, tuple):
            return value
        if isinstance(value, _Dense):
            array = self.small_ints(value, token)
            if array.ndim != 1:
                self.fail(token, f"a list of integers for {key}", f"a {array.ndim}-D array")
            return tuple(int(v) for v in array)
        if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return tuple(value)
        self.fail(token, f"a list of integers for {key} (array<i64: ...>)")

    def small_ints(self, dense: _Dense, token: Token) -> np.ndarray:
        """The integers of a small ``dense<...>`` attribute (a layout, a padding) as an int64 array of its type."""
        if not isinstance(dense.type, Shape) or dense.type.rank > 2 or math.prod(dense.type.dims) > _MAX_LIST:
            self.fail(token, f"an integer array of at most {_MAX_LIST} entries", _type_text(dense.type))
        array, splat = self.dense_values(dense, Shape("s64", dense.type.dims))
        return np.broadcast_to(array, dense.type.dims) if splat else array

    def int_attr(self, op: _Op, key: str, default: int | None = None) -> int:
        value = op.attrs.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(op.attr_tokens.get(key, op.token), f"an integer {key} attribute for {op.name}")
        return value

    def enum_attr(self, op: _Op, key: str, choices: tuple, default: str | None = None) -> str:
        value = op.attrs.get(key)
        if value is None and default is not None:
            return default
        word = value.words[-1] if isinstance(value, _Enum) else None
        if word not in choices:
            self.fail(op.attr_tokens.get(key, op.token), f"{key} one of {', '.join(choices)}")
        return word

    # ----- dense values ---------------------------------------------------------------------------

    def dense_values(self, dense: _Dense, shape: Shape) -> tuple[np.ndarray, bool]:
        """The elements of ``dense<...>`` for `shape` (its type's dims, given element type): an array of the
        shape, or for a splat (one value written for all) a 0-d array; and whether it is a splat."""
        count = math.prod(shape.dims)
        kind = shape.kind
        if shape.rank > _MAX_CONSTANT_RANK:
            self.fail(dense.token, f"a value of at most {_MAX_CONSTANT_RANK} dimensions", str(shape.rank))
        if kind in ("complex", "token"):
            self.fail(dense.token, "a constant of a real or integer element type", str(shape))
        dtype = shape.numpy_dtype
        content = dense.content
        if content.startswith('"'):
            return self.dense_hex(dense, shape, count, dtype)
        if "[" not in content:
            items = content.split()
            if count == 0 and not items:
                return np.empty(shape.dims, dtype), False
            if len(items) != 1:
                where = dense.offset + (len(content) - len(content.lstrip()))
                self.fail_at(where, f"one value (a splat) or a nested list of {count} values for {shape}",
                             repr(content.strip()[:40]) if content.strip() else "nothing")
            values = self.dense_items(dense, [items[0]], shape, [dense.offset + content.index(items[0])])
            return values.reshape(()), True
        self.dense_structure(dense, shape)
        pieces = _SEPARATOR.split(content)
        stripped = [piece.strip() for piece in pieces]
        items = [piece for piece in stripped if piece]
        if len(items) != count:
            self.fail_at(dense.offset, f"{count} values for {shape}", f"{len(items)}")
        return self.dense_items(dense, items, shape, None).reshape(shape.dims), False

    def dense_structure(self, dense: _Dense, shape: Shape) -> None:
        """The brackets and commas of the content must be those of nested lists of `shape`, one value between
        each '[' or ',' and the following ',' or ']'."""
        content = dense.content
        skeleton = _NOT_SEPARATOR.sub("", content)
        expected = _skeleton_length(shape.dims)
        where = None
        if expected == len(skeleton):
            want = _skeleton(shape.dims)
            if want != skeleton:
                where = next(i for i, (a, b) in enumerate(zip(want, skeleton)) if a != b)
        else:
            want = _skeleton(shape.dims, limit=len(skeleton) + 1)
            where = next((i for i, (a, b) in enumerate(zip(want, skeleton)) if a != b), min(len(want), len(skeleton)))
        if where is None:
            pieces = _SEPARATOR.split(content)
            if pieces[0].strip() or pieces[-1].strip():
                where = 0 if pieces[0].strip() else len(skeleton)
            else:
                is_value = [a in "[," and b in ",]" for a, b in zip(want, want[1:])] if math.prod(shape.dims) else [
                    False] * (len(want) - 1)
                wrong = next((i for i, (value, piece) in enumerate(zip(is_value, pieces[1:-1]))
                              if value != bool(piece.strip()) or value and len(piece.split()) != 1), None)
                if wrong is None:
                    return
                offset = self.separator_offset(dense, wrong + 1)
                piece = pieces[wrong + 1].strip()
                self.fail_at(offset, "one value" if is_value[wrong] else "',' or a bracket, as the shape says",
                             repr(piece[:40]) if piece else "no value")
        offset = self.separator_offset(dense, where)
        got = repr(skeleton[where]) if where < len(skeleton) else "'>'"
        want_char = repr(want[where]) if where < len(want) else "'>'"
        self.fail_at(offset, f"nested lists of the type's shape {list(shape.dims)}: {want_char} here", got)

    def separator_offset(self, dense: _Dense, index: int) -> int:
        """Source offset of the index-th bracket or comma of the content (or of its end)."""
        for number, match in enumerate(_SEPARATOR.finditer(dense.content)):
            if number == index:
                return dense.offset + match.start()
        return dense.offset + len(dense.content)

    def dense_items(self, dense: _Dense, items: list[str], shape: Shape, offsets) -> np.ndarray:
        """The values of element texts (decimal, hex bits, true/false) as a flat array of shape's dtype."""
        kind, dtype = shape.kind, shape.numpy_dtype
        bad = None
        if kind == "pred":
            values = np.array([item in ("true", "1") for item in items], np.bool_)
            bad = next((i for i, item in enumerate(items) if item not in ("true", "false", "1", "0")), None)
            expected = "true or false"
        elif kind in ("int", "uint"):
            low, high = int_range(shape.element_type)
            numbers = []
            for index, item in enumerate(items):
                if _INT_ITEM.fullmatch(item):
                    number = int(item)
                elif _HEX_ITEM.fullmatch(item):
                    number = int(item, 16)
                else:
                    bad = index
                    break
                if not low <= number <= high:
                    bad = index
                    break
                numbers.append(number)
            values = np.array(numbers, dtype)
            expected = f"an integer in [{low}, {high}] for {shape.element_type}"
        else:
            values, bad = self.float_items(items, shape)
            bits = 8 * np.dtype(dtype).itemsize
            expected = (f"a number such as 1.5e+00, or the value's {bits} bits in hex such as "
                        f"0x7FC{'0' * (bits // 4 - 3)}")
        if bad is not None:
            offset = self.item_offset(dense, bad) if offsets is None else offsets[bad]
            self.fail_at(offset, expected, repr(items[bad][:40]))
        return values

    def float_items(self, items: list[str], shape: Shape) -> tuple[np.ndarray, int | None]:
        dtype = shape.numpy_dtype
        if not items:
            return np.empty(0, dtype), None
        uint = _UINT[np.dtype(dtype).itemsize]
        bits = 8 * np.dtype(dtype).itemsize
        texts = np.array(items, dtype=str)
        is_hex = np.char.startswith(texts, "0x")
        out = np.empty(len(items), dtype)
        decimal = ~is_hex
        if decimal.any():
            chosen = texts[decimal]
            joined = " ".join(chosen.tolist())
            try:
                if _FLOAT_CHARS.search(joined) or re.search(r"[xX]|(?<![0-9.])[eE]|[a-dfA-DF]", joined):
                    raise ValueError
                wide = chosen.astype(np.float64)
            except ValueError:
                for index in np.flatnonzero(decimal):
                    try:
                        if _FLOAT_CHARS.search(items[index]) or re.search(r"[xXa-dfA-DF]", items[index]):
                            raise ValueError
                        float(items[index])
                    except ValueError:
                        return out, int(index)
                return out, int(np.flatnonzero(decimal)[0])
            out[decimal] = narrow(wide, shape.element_type)
        for index in np.flatnonzero(is_hex):
            item = items[index]
            if not _HEX_ITEM.fullmatch(item) or int(item, 16) >> bits:
                return out, int(index)
            out.view(uint)[index] = int(item, 16)
        return out, None

    def item_offset(self, dense: _Dense, index: int) -> int:
        for number, match in enumerate(re.finditer(r"[^\s\[\],]+", dense.content)):
            if number == index:
                return dense.offset + match.start()
        return dense.offset

    def dense_hex(self, dense: _Dense, shape: Shape, count: int, dtype) -> np.ndarray:
        """``dense<"0x...">``: the elements' little-endian bytes (one element's for a splat)."""
        text = dense.content[1:-1]
        size = np.dtype(dtype).itemsize
        if shape.element_type in ("s2", "s4", "u2", "u4", "f4e2m1fn"):
            self.fail_at(dense.offset, "decimal values for a sub-byte element type", "hex bytes")
        if not text.startswith("0x") or len(text) % 2 or _NOT_HEX.search(text, 2):
            self.fail_at(dense.offset, 'hex bytes such as "0x0000803F"', repr(text[:40]))
        raw = bytes.fromhex(text[2:])
        if len(raw) not in (size * count, size):
            self.fail_at(dense.offset, f"{size * count} bytes ({count} values of {size}) or {size} (a splat)",
                         f"{len(raw)} bytes")
        if shape.kind == "pred":
            array = np.frombuffer(raw, np.uint8) != 0
        else:
            array = np.frombuffer(raw, np.dtype(dtype).newbyteorder("<")).astype(dtype)
        if len(raw) == size and count != 1:
            return array.reshape(()), True
        return array.reshape(shape.dims), False

    # ----- conversion to HLO --------------------------------------------------------------------

    def convert(self, op: _Op) -> list[HloInstruction]:
        """The op's results as HLO instructions (made here, or existing ones for an op that changes nothing)."""
        short = op.name.split(".", 1)[1]
        values = [value for value, _ in op.operands]
        expected_operands = {"constant": 0, "iota": 0, "transpose": 1, "broadcast_in_dim": 1, "reshape": 1,
                             "convert": 1, "get_tuple_element": 1, "select": 3, "clamp": 3, "pad": 2,
                             **{name: 1 for name in _UNARY}, **{name: 2 for name in _BINARY},
                             "compare": 2}.get(short)
        if expected_operands is not None and len(values) != expected_operands:
            self.fail(op.token, f"{expected_operands} operand(s) for {op.name}", str(len(values)))
        if short not in ("custom_call", "call", "reduce", "reduce_window") and len(op.result_types) != 1:
            self.fail(op.type_token or op.token, f"one result type for {op.name}", str(len(op.result_types)))
        handler = getattr(self, "convert_" + short, None)
        if handler is not None:
            return handler(op, values)
        if short in _UNARY:
            return [self.elementwise(op, values, _UNARY[short])]
        return [self.elementwise(op, values, _BINARY[short])]

    def result(self, op: _Op) -> Shape:
        """The single result type, an array."""
        result = op.result_types[0]
        if not isinstance(result, Shape):
            self.fail(op.type_token or op.token, f"an array result type for {op.name}", _type_text(result))
        return result

    def array_operands(self, op: _Op) -> None:
        for value, token in op.operands:
            if not isinstance(value.shape, Shape):
                self.fail(token, f"an array operand for {op.name}", f"{token.text} of type {_type_text(value.shape)}")

    def elementwise(self, op: _Op, values: list, opcode: str, attributes=None) -> HloInstruction:
        """An elementwise op: operands and result of one shape."""
        self.array_operands(op)
        result = self.result(op)
        for value, token in op.operands:
            if value.shape.dims != result.dims:
                self.fail(token, f"an operand of the result's dimensions {list(result.dims)}",
                          f"{token.text} of type {_type_text(value.shape)}")
        first = values[0].shape
        if opcode not in ("compare", "is-finite") and any(v.shape.element_type != first.element_type for v in values):
            if opcode in COMMUTATIVE_OPCODES and [self.fold(v).opcode == "constant" for v in values] == [True, False]:
                first = values[1].shape  # MLIR moves the constant right first: the other operand sets the type
            for value, token in op.operands:
                if value.shape.element_type != first.element_type:
                    self.fail(token, f"operands of one element type ({first.element_type})",
                              f"{token.text} of type {_type_text(value.shape)}")
        if opcode == "compare" or opcode == "is-finite":
            if result.element_type != "pred":
                self.fail(op.type_token, "an i1 result type", _type_text(result))
        elif result.element_type != first.element_type:
            self.fail(op.type_token, f"a result of the operands' element type ({_type_text(first)})",
                      _type_text(result))
        return self.emit(opcode, result, values, attributes)

    def convert_constant(self, op: _Op, values) -> list:
        dense = op.attrs.get("value")
        if not isinstance(dense, _Dense):
            self.fail(op.attr_tokens.get("value", op.token), "a value = dense<...> attribute")
        result = self.result(op)
        if not compatible(dense.type, result):
            self.fail(op.type_token or op.token, f"the value's type {_type_text(dense.type)}", _type_text(result))
        array, splat = self.dense_values(dense, result)
        if not splat and math.prod(result.dims) > 1:
            flat = array.reshape(-1)
            bits = flat.view(_UINT[flat.dtype.itemsize]) if flat.dtype != np.bool_ else flat
            if (bits == bits[0]).all():  # MLIR keeps equal values as a splat, whatever the text
                array, splat = flat[0].reshape(()), True
        payload = Splat(result, array) if splat else Literal(result, array.reshape(result.dims))
        return [self.emit("constant", result, payload=payload)]

    def convert_convert(self, op: _Op, values) -> list:
        self.array_operands(op)
        result, operand = self.result(op), values[0].shape
        if result.dims != operand.dims:
            self.fail(op.type_token, f"a result of the operand's dimensions {list(operand.dims)}", _type_text(result))
        return [self.emit("convert", result, values)]

    def convert_reshape(self, op: _Op, values) -> list:
        self.array_operands(op)
        result, operand = self.result(op), values[0].shape
        if result.element_type != operand.element_type or math.prod(result.dims) != math.prod(operand.dims):
            self.fail(op.type_token, f"a result of {math.prod(operand.dims)} {operand.element_type} elements, as the "
                                     f"operand has", _type_text(result))
        return [self.emit("reshape", result, values)]

    def convert_transpose(self, op: _Op, values) -> list:
        self.array_operands(op)
        result, operand = self.result(op), values[0].shape
        perm = self.ints(op, "permutation")
        token = op.attr_tokens.get("permutation", op.token)
        if sorted(perm) != list(range(operand.rank)):
            self.fail(token, f"a permutation of the operand's {operand.rank} dimensions", _list_text(list(perm)))
        dims = tuple(operand.dims[p] for p in perm)
        if (result.element_type, result.dims) != (operand.element_type, dims):
            self.fail(op.type_token, f"the transposed type {_type_text(Shape(operand.element_type, dims))}",
                      _type_text(result))
        return [self.emit("transpose", result, values, {"dimensions": IntList(perm)})]

    def convert_broadcast_in_dim(self, op: _Op, values) -> list:
        self.array_operands(op)
        result, operand = self.result(op), values[0].shape
        dims = self.ints(op, "broadcast_dimensions")
        token = op.attr_tokens.get("broadcast_dimensions", op.token)
        if len(dims) != operand.rank or len(set(dims)) != len(dims) or any(not 0 <= d < result.rank for d in dims):
            self.fail(token, f"{operand.rank} distinct result dimensions (below {result.rank}), one per operand "
                             f"dimension", _list_text(list(dims)))
        for axis, dim in enumerate(dims):
            if operand.dims[axis] not in (1, result.dims[dim]):
                self.fail(token, f"operand dimension {axis} ({operand.dims[axis]}) of size 1 or the size of result "
                                 f"dimension {dim} ({result.dims[dim]})", _list_text(list(dims)))
        if result.element_type != operand.element_type:
            self.fail(op.type_token, f"a result of the operand's element type {operand.element_type}",
                      _type_text(result))
        return [self.emit("broadcast", result, values, {"dimensions": IntList(dims)})]

    def convert_custom_call(self, op: _Op, values) -> list:
        target = op.attrs.get("call_target_name")
        if not isinstance(target, str):
            self.fail(op.attr_tokens.get("call_target_name", op.token), "a call_target_name string")
        attributes = {"custom_call_target": String(target)}
        results = op.result_types
        layouts = op.attrs.get("result_layouts")
        if layouts is not None:
            layouts = self.layouts(op, "result_layouts", results)
        shapes = results if layouts is None else [_with_layout(r, layouts[i]) for i, r in enumerate(results)]
        operand_layouts = op.attrs.get("operand_layouts")
        if operand_layouts is not None:
            types = [value.shape for value in values]
            constraints = self.layouts(op, "operand_layouts", types)
            attributes["operand_layout_constraints"] = "{" + ", ".join(
                str(_with_layout(t, layout)) for t, layout in zip(types, constraints)) + "}"
        if op.attrs.get("has_side_effect") is True:
            attributes["custom_call_has_side_effect"] = "true"
        version = op.attrs.get("api_version", 1)
        name = _API_VERSIONS.get(version) if isinstance(version, int) and not isinstance(version, bool) else (
            version.words[-1] if isinstance(version, _Enum) else None)
        if name is None:
            self.fail(op.attr_tokens.get("api_version", op.token), "an api_version from 0 to 4")
        if name != "API_VERSION_ORIGINAL":
            attributes["api_version"] = name
        config = op.attrs.get("backend_config")
        if isinstance(config, str):
            if config:  # XLA leaves an empty one out
                attributes["backend_config"] = String(config)
        elif isinstance(config, dict):
            start, end = op.attr_tokens["backend_config"].start, op.attr_ends["backend_config"]
            # The dictionary as written, one space for blanks, its strings escaped as HLO text escapes them.
            attributes["backend_config"] = _STRING_OR_BLANKS.sub(
                lambda m: str(String(self.lexer.string(start + m.start(1))[1])) if m.group(1) else " ",
                self.text[start:end])
        elif config is not None:
            self.fail(op.attr_tokens.get("backend_config", op.token), "a backend_config string or dictionary")
        return self.results("custom-call", shapes, values, attributes)

    def layouts(self, op: _Op, key: str, types: list) -> list:
        items = op.attrs.get(key)
        token = op.attr_tokens.get(key, op.token)
        if not isinstance(items, list) or len(items) != len(types):
            self.fail(token, f"a list of {len(types)} layouts (dense<[...]> : tensor<Nxindex>) for {key}")
        layouts = []
        for item, shape in zip(items, types):
            if not isinstance(item, _Dense) or not isinstance(shape, Shape):
                self.fail(token, f"a layout dense<[...]> : tensor<Nxindex> per array in {key}")
            layout = self.small_ints(item, item.token).reshape(-1).tolist()
            if sorted(layout) != list(range(shape.rank)):
                self.fail(item.token, f"a layout listing each of the {shape.rank} dimensions once", _list_text(layout))
            layouts.append(tuple(layout))
        return layouts

    def results(self, opcode: str, shapes: list, values: list, attributes: dict) -> list:
        """An op's results: its instruction when it has one; else a tuple-shaped instruction, marked with its
        number of results (``results=2``), and a get-tuple-element per result, made at once (as XLA does, used or
        not)."""
        if len(shapes) == 1:
            return [self.emit(opcode, shapes[0], values, attributes)]
        value = self.emit(opcode, TupleShape(shapes), values, {**attributes, "results": len(shapes)})
        return [self.emit("get-tuple-element", shape, [value], {"index": index}) for index, shape in enumerate(shapes)]

    def convert_compare(self, op: _Op, values) -> list:
        direction = self.enum_attr(op, "comparison_direction", _DIRECTIONS)
        kind = values[0].shape.kind if isinstance(values[0].shape, Shape) else "float"
        default = {"float": "FLOAT", "int": "SIGNED", "uint": "UNSIGNED", "pred": "UNSIGNED"}.get(kind, "NOTYPE")
        compare_type = self.enum_attr(op, "compare_type", _COMPARE_TYPES, default)
        attributes = {"direction": direction}
        if compare_type not in (default, "NOTYPE"):
            attributes["type"] = compare_type
        return [self.elementwise(op, values, "compare", attributes)]

    def convert_select(self, op: _Op, values) -> list:
        self.array_operands(op)
        result = self.result(op)
        predicate, on_true, on_false = (value.shape for value in values)
        if predicate.element_type != "pred" or predicate.dims not in ((), result.dims):
            self.fail(op.operands[0][1], f"an i1 predicate, a scalar or of dimensions {list(result.dims)}",
                      _type_text(predicate))
        for (value, token) in op.operands[1:]:
            if not compatible(value.shape, result):
                self.fail(token, f"a value of the result's type {_type_text(result)}", _type_text(value.shape))
        return [self.emit("select", result, values)]

    def convert_clamp(self, op: _Op, values) -> list:
        self.array_operands(op)
        result = self.result(op)
        low, operand, high = (value.shape for value in values)
        if not compatible(operand, result):
            self.fail(op.operands[1][1], f"a value of the result's type {_type_text(result)}", _type_text(operand))
        for (value, token) in (op.operands[0], op.operands[2]):
            if value.shape.element_type != result.element_type or value.shape.dims not in ((), result.dims):
                self.fail(token, f"a bound of type {_type_text(result)} or a scalar", _type_text(value.shape))
        return [self.emit("clamp", result, values)]

    def convert_concatenate(self, op: _Op, values) -> list:
        self.array_operands(op)
        result = self.result(op)
        dimension = self.int_attr(op, "dimension")
        if not values:
            self.fail(op.token, "at least one operand for stablehlo.concatenate")
        first = values[0].shape
        if not 0 <= dimension < first.rank:
            self.fail(op.attr_tokens.get("dimension", op.token), f"a dimension below {first.rank}", str(dimension))
        total = 0
        for value, token in op.operands:
            shape = value.shape
            if shape.rank != first.rank or shape.element_type != first.element_type or any(
                    shape.dims[d] != first.dims[d] for d in range(first.rank) if d != dimension):
                self.fail(token, f"an operand like the first but along dimension {dimension}", _type_text(shape))
            total += shape.dims[dimension]
        dims = first.dims[:dimension] + (total,) + first.dims[dimension + 1:]
        if not compatible(result, Shape(first.element_type, dims)):
            self.fail(op.type_token, f"the result type {_type_text(Shape(first.element_type, dims))}",
                      _type_text(result))
        return [self.emit("concatenate", result, values, {"dimensions": IntList([dimension])})]

    def convert_slice(self, op: _Op, values) -> list:
        self.array_operands(op)
        result, operand = self.result(op), values[0].shape
        starts = self.ints(op, "start_indices")
        limits = self.ints(op, "limit_indices")
        strides = self.ints(op, "strides", (1,) * operand.rank)
        token = op.attr_tokens.get("start_indices", op.token)
        if not len(starts) == len(limits) == len(strides) == operand.rank or any(
                not 0 <= s <= l <= n or st < 1 for s, l, st, n in zip(starts, limits, strides, operand.dims)):
            self.fail(token, f"{operand.rank} ranges start:limit[:stride] within {list(operand.dims)}")
        dims = tuple(ceil_div(l - s, st) for s, l, st in zip(starts, limits, strides))
        if not compatible(result, Shape(operand.element_type, dims)):
            self.fail(op.type_token, f"the result type {_type_text(Shape(operand.element_type, dims))}",
                      _type_text(result))
        unit = all(st == 1 for st in strides)  # XLA writes every stride unless all are 1
        text = "{" + ", ".join(f"[{s}:{l}]" if unit else f"[{s}:{l}:{st}]"
                               for s, l, st in zip(starts, limits, strides)) + "}"
        return [self.emit("slice", result, values, {"slice": text})]

    def convert_iota(self, op: _Op, values) -> list:
        result = self.result(op)
        dimension = self.int_attr(op, "iota_dimension")
        if not 0 <= dimension < result.rank:
            self.fail(op.attr_tokens.get("iota_dimension", op.token), f"a dimension below {result.rank}",
                      str(dimension))
        return [self.emit("iota", result, [], {"iota_dimension": dimension})]

    def convert_pad(self, op: _Op, values) -> list:
        self.array_operands(op)
        result, operand, padding = self.result(op), values[0].shape, values[1].shape
        if padding.rank != 0 or padding.element_type != operand.element_type:
            self.fail(op.operands[1][1], f"a scalar padding value of type {operand.element_type}",
                      _type_text(padding))
        low = self.ints(op, "edge_padding_low")
        high = self.ints(op, "edge_padding_high")
        interior = self.ints(op, "interior_padding", (0,) * operand.rank)
        token = op.attr_tokens.get("edge_padding_low", op.token)
        if not len(low) == len(high) == len(interior) == operand.rank or min(interior, default=0) < 0:
            self.fail(token, f"{operand.rank} low, high and (non-negative) interior paddings")
        dims = tuple(lo + hi + n + max(n - 1, 0) * i for lo, hi, i, n in zip(low, high, interior, operand.dims))
        if any(d < 0 for d in dims) or not compatible(result, Shape(operand.element_type, dims)):
            self.fail(op.type_token, f"the padded type {_type_text(Shape(operand.element_type, dims))}",
                      _type_text(result))
        parts = [(lo, hi, i) for lo, hi, i in zip(low, high, interior)]
        text = "x".join("_".join(map(str, p if any(interior) else p[:2])) for p in parts)
        return [self.emit("pad", result, values, {"padding": text})]

    def convert_tuple(self, op: _Op, values) -> list:
        result = op.result_types[0]
        shape = TupleShape([value.shape for value in values])
        if not compatible(result, shape):
            self.fail(op.type_token, f"the tuple type of the operands {_type_text(shape)}", _type_text(result))
        return [self.emit("tuple", shape, values)]

    def convert_get_tuple_element(self, op: _Op, values) -> list:
        operand = values[0].shape
        index = self.int_attr(op, "index")
        if not isinstance(operand, TupleShape) or not 0 <= index < len(operand.elements):
            self.fail(op.attr_tokens.get("index", op.token), "an element index of a tuple operand",
                      f"{index} of {_type_text(operand)}")
        element = operand.elements[index]
        if not compatible(element, op.result_types[0]):
            self.fail(op.type_token, f"the element's type {_type_text(element)}", _type_text(op.result_types[0]))
        return [self.emit("get-tuple-element", element, values, {"index": index})]

    def convert_call(self, op: _Op, values) -> list:
        callee = op.attrs.get("callee")
        if not isinstance(callee, _Symbol):
            self.fail(op.attr_tokens.get("callee", op.token), "a callee = @function attribute")
        self.calls.append((op.attr_tokens.get("callee", op.token), callee.name,
                           [_declared(v.shape) for v in values], list(op.result_types)))
        return self.results("call", list(op.result_types), values, {"to_apply": callee})  # named in build_module

    def body(self, op: _Op, scalars: list) -> str:
        """The op's one region, checked to take (scalars, scalars) and return scalars; its computation's name."""
        if len(op.regions) != 1:
            self.fail(op.token, f"one region for {op.name}", str(len(op.regions)))
        body = op.regions[0]
        if not _same_types(body.params, scalars + scalars) or not _same_types(body.result_types, scalars):
            self.fail(body.token, f"a region ({_types_text(scalars + scalars)}) -> ({_types_text(scalars)})",
                      f"({_types_text(body.params)}) -> ({_types_text(body.result_types)})")
        self.pending.append(body.computation)
        return body.computation.name

    def reduction_operands(self, op: _Op, values) -> tuple[list, list, list]:
        self.array_operands(op)
        if not values or len(values) % 2:
            self.fail(op.token, f"inputs and as many init values for {op.name}", f"{len(values)} operands")
        count = len(values) // 2
        inputs, inits = values[:count], values[count:]
        for value, token in op.operands[count:]:
            if value.shape.rank != 0:
                self.fail(token, "a scalar init value", _type_text(value.shape))
        if len(op.result_types) != count:
            self.fail(op.type_token, f"{count} result type(s), one per input", str(len(op.result_types)))
        scalars = [Shape(v.shape.element_type, ()) for v in inits]
        return inputs, inits, scalars

    def convert_reduce_window(self, op: _Op, values) -> list:
        inputs, inits, scalars = self.reduction_operands(op, values)
        operand = inputs[0].shape
        rank = operand.rank
        size = self.ints(op, "window_dimensions")
        stride = self.ints(op, "window_strides", (1,) * rank)
        base = self.ints(op, "base_dilations", (1,) * rank)
        dilation = self.ints(op, "window_dilations", (1,) * rank)
        pad = self.padding(op, rank)
        token = op.attr_tokens.get("window_dimensions", op.token)
        if not len(size) == len(stride) == len(base) == len(dilation) == rank or min(size, default=1) < 0 or min(
                stride + base + dilation, default=1) < 1:
            self.fail(token, f"window_dimensions, window_strides, base_dilations and window_dilations of {rank} "
                             f"entries (sizes from 0, the others from 1)")
        window = Window(size, stride, pad, base, dilation)
        dims = []
        for n, k, s, b, d, (lo, hi) in zip(operand.dims, size, stride, base, dilation, pad):
            padded = (n - 1) * b + 1 + lo + hi if n else lo + hi
            extent = (k - 1) * d + 1 if k else 0
            dims.append(max(0, (padded - extent) // s + 1) if padded >= extent else 0)
        for (value, token_), result in zip(op.operands, op.result_types):
            if value.shape.dims != operand.dims:
                self.fail(token_, f"inputs of one shape {list(operand.dims)}", _type_text(value.shape))
            if not isinstance(result, Shape) or result.dims != tuple(dims) or (
                    result.element_type != value.shape.element_type):
                self.fail(op.type_token, f"the result type {_type_text(Shape(value.shape.element_type, tuple(dims)))}",
                          _type_text(result))
        to_apply = self.body(op, scalars)
        return self.results("reduce-window", list(op.result_types), values, {"window": window, "to_apply": to_apply})

    def padding(self, op: _Op, rank: int) -> tuple:
        value = op.attrs.get("padding")
        if value is None:
            return ((0, 0),) * rank
        token = op.attr_tokens.get("padding", op.token)
        if not isinstance(value, _Dense) or not isinstance(value.type, Shape) or value.type.dims != (rank, 2):
            self.fail(token, f"padding = dense<...> : tensor<{rank}x2xi64>")
        array = self.small_ints(value, token)
        return tuple((int(lo), int(hi)) for lo, hi in array)

    def convert_reduce(self, op: _Op, values) -> list:
        inputs, inits, scalars = self.reduction_operands(op, values)
        operand = inputs[0].shape
        dims = self.ints(op, "dimensions")
        token = op.attr_tokens.get("dimensions", op.token)
        if len(set(dims)) != len(dims) or any(not 0 <= d < operand.rank for d in dims):
            self.fail(token, f"distinct dimensions below {operand.rank}", _list_text(list(dims)))
        kept = tuple(n for axis, n in enumerate(operand.dims) if axis not in dims)
        for (value, token_), result in zip(op.operands, op.result_types):
            if value.shape.dims != operand.dims:
                self.fail(token_, f"inputs of one shape {list(operand.dims)}", _type_text(value.shape))
            if not compatible(result, Shape(value.shape.element_type, kept)):
                self.fail(op.type_token, f"the result type {_type_text(Shape(value.shape.element_type, kept))}",
                          _type_text(result))
        to_apply = self.body(op, scalars)
        attributes = {"dimensions": IntList(dims), "to_apply": to_apply}
        return self.results("reduce", list(op.result_types), values, attributes)


# ----- shapes and helpers --------------------------------------------------------------------------

def _with_layout(shape: Shape, layout) -> Shape:
    """`shape` with the given layout (major to minor order, as MLIR writes it); scalars have none."""
    return Shape(shape.element_type, shape.dims, tuple(layout) if shape.rank else None)


def _declared(shape):
    """`shape` without layouts: a type as StableHLO declares it."""
    if isinstance(shape, TupleShape):
        return TupleShape([_declared(element) for element in shape.elements])
    return Shape(shape.element_type, shape.dims)


def _same_types(a, b) -> bool:
    return len(a) == len(b) and all(map(compatible, a, b))


_MLIR_ELEMENT = {hlo: mlir for mlir, hlo in reversed(list(ELEMENT_TYPE_NAMES.items())) if mlir != "index"}


def _type_text(shape) -> str:
    """A type as StableHLO writes it: tensor<2x3xf32>, tuple<...>."""
    if isinstance(shape, TupleShape):
        return "tuple<" + ", ".join(map(_type_text, shape.elements)) + ">"
    if shape.element_type == "token":
        return "!stablehlo.token"
    element = _MLIR_ELEMENT.get(shape.element_type, shape.element_type)
    return "tensor<" + "".join(f"{d}x" for d in shape.dims) + element + ">"


def _list_text(values) -> str:
    """A list of integers for an error message, cut after a few."""
    values = list(values)
    text = ", ".join(map(str, values[:16]))
    return f"[{text}{', ...' if len(values) > 16 else ''}] ({len(values)} entries)" if len(values) > 16 else f"[{text}]"


def _types_text(shapes) -> str:
    return ", ".join(map(_type_text, shapes))


def _identifier(name: str) -> str:
    name = _IDENTIFIER_CHAR.sub("_", name) or "module"
    return name if re.match(r"[A-Za-z_]", name) else "_" + name


def _skeleton_length(dims: tuple[int, ...]) -> int:
    """Length of the brackets and commas of nested lists of `dims` (0 for a scalar)."""
    length = 0
    for size in reversed(dims):
        length = 2 + size * length + max(size - 1, 0)
    return length


def _skeleton(dims: tuple[int, ...], limit: int | None = None) -> str:
    """The brackets and commas of nested lists of `dims` (``[[,],[,]]`` for 2x2), at most `limit` characters.

    Runs of size-1 dimensions are added at once, so the work is linear in the result's length.
    """
    text, index = "", len(dims)
    while index > 0:
        run = 0
        while index > 0 and dims[index - 1] == 1:
            run += 1
            index -= 1
        if run:
            text = "[" * run + text + "]" * run
        else:
            size = dims[index - 1]
            index -= 1
            if size == 0:
                text = "[]"
            else:
                copies = size if limit is None else min(size, limit // (len(text) + 1) + 1)
                text = "[" + ",".join([text] * copies) + "]"
        if limit is not None and len(text) > limit:
            text = text[:limit]
    return text

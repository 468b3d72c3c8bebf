"""HLO attribute values: their grammar and typed values that print as canonical HLO.

An instruction's ``attributes`` map a key to either raw text, as parsed
(``'{0,3,2,1}'``: unknown attributes round-trip untouched), or a typed value
built by a compiler pass: ``String``, ``IntList``, ``Window`` (and ``Literal``
for a constant's payload). ``str()`` of a typed value is its canonical HLO
text, which is what the printer writes; parsing that text back gives an equal
value. The ``parse_*`` functions read raw text into the same typed values,
raising HloParseError when it is malformed.

The grammar rules take a ``Cursor`` (the module parser is one), so the module
parser and the standalone value parsers share them.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass

import numpy as np

from ...errors import InvalidValueError
from .cursor import Cursor
from .lexer import FLOAT, INT, NAME, STRING, WORD
from .shape import Shape, TupleShape

__all__ = ["IntList", "Literal", "String", "Window", "parse_int", "parse_int_list", "parse_literal", "parse_name",
           "parse_string", "parse_window", "skip_value"]

WINDOW_FIELDS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")
_MAX_INT_DIGITS = 20
_ELIDED = "{...}"  # how XLA prints a constant whose values it left out
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


# ----- typed values -------------------------------------------------------------------------------

@dataclass(frozen=True)
class String:
    """A quoted string attribute such as ``custom_call_target="ResizeNearest"``; ``value`` is unescaped."""

    value: str

    def __post_init__(self):
        if not isinstance(self.value, str):
            raise InvalidValueError(f"a String holds str, got {self.value!r}")

    def __str__(self) -> str:
        return '"' + "".join(_escape(char) for char in self.value) + '"'


def _escape(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    if char.isprintable():
        return char
    # Octal escapes of the UTF-8 bytes, always three digits so that a following digit is not swallowed.
    return "".join(f"\\{byte:03o}" for byte in char.encode("utf-8", errors="surrogatepass"))


class IntList(tuple):
    """A braced list of integers such as ``dimensions={0,3,2,1}``: a tuple of ints that prints as HLO."""

    def __new__(cls, values=()):
        values = tuple(values)
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values):
            raise InvalidValueError(f"an IntList holds integers, got {values!r}")
        return super().__new__(cls, (int(v) for v in values))

    def __str__(self) -> str:
        return "{" + ",".join(map(str, self)) + "}"

    def __repr__(self) -> str:
        return f"IntList({tuple(self)!r})"


@dataclass(frozen=True)
class Window:
    """A window such as ``window={size=1x2x2x1 stride=1x2x2x1}``, one entry per dimension.

    Fields left as None take XLA's defaults (stride and dilations 1, pads
    (0, 0), no reversal). ``str()`` prints size and each field that differs
    from its default, as XLA does.
    """

    size: tuple[int, ...]
    stride: tuple[int, ...] | None = None
    pad: tuple[tuple[int, int], ...] | None = None
    lhs_dilate: tuple[int, ...] | None = None
    rhs_dilate: tuple[int, ...] | None = None
    rhs_reversal: tuple[bool, ...] | None = None

    def __post_init__(self):
        size = _ints("size", self.size, 0)
        rank = len(size)
        if rank == 0:
            raise InvalidValueError("a window has at least one dimension")
        values = {"size": size}
        for name in ("stride", "lhs_dilate", "rhs_dilate"):
            given = getattr(self, name)
            values[name] = (1,) * rank if given is None else _ints(name, given, 1)
        values["pad"] = ((0, 0),) * rank if self.pad is None else tuple(_ints("pad", p, None) for p in self.pad)
        if any(len(p) != 2 for p in values["pad"]):
            raise InvalidValueError(f"window pad is (lo, hi) per dimension, got {self.pad!r}")
        values["rhs_reversal"] = (False,) * rank if self.rhs_reversal is None else tuple(
            bool(v) for v in self.rhs_reversal)
        for name, value in values.items():
            if len(value) != rank:
                raise InvalidValueError(f"window {name} needs {rank} entries, as size has, got {value!r}")
            object.__setattr__(self, name, value)

    def __str__(self) -> str:
        rank = len(self.size)
        parts = [f"size={_x(self.size)}"]
        if self.stride != (1,) * rank:
            parts.append(f"stride={_x(self.stride)}")
        if self.pad != ((0, 0),) * rank:
            parts.append("pad=" + "x".join(f"{lo}_{hi}" for lo, hi in self.pad))
        if self.lhs_dilate != (1,) * rank:
            parts.append(f"lhs_dilate={_x(self.lhs_dilate)}")
        if self.rhs_dilate != (1,) * rank:
            parts.append(f"rhs_dilate={_x(self.rhs_dilate)}")
        if any(self.rhs_reversal):
            parts.append(f"rhs_reversal={_x(map(int, self.rhs_reversal))}")
        return "{" + " ".join(parts) + "}"


def _ints(name: str, values, minimum: int | None) -> tuple[int, ...]:
    values = tuple(values)
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values) or (
            minimum is not None and any(v < minimum for v in values)):
        bound = "" if minimum is None else f" of at least {minimum}"
        raise InvalidValueError(f"window {name} needs integers{bound}, got {values!r}")
    return tuple(int(v) for v in values)


def _x(values) -> str:
    return "x".join(map(str, values))


@dataclass(frozen=True, eq=False)
class Literal:
    """A constant's value for its shape: a read-only numpy array (a tuple of them for a tuple shape).

    ``str()`` is the literal as HLO writes it between ``constant(`` and ``)``:
    ``0``, ``{1, 2}``, ``{ {1, 2}, {3, 4} }``, ``(1, {2, 3})``. Two literals
    are equal when their shapes and printed texts are.
    """

    shape: Shape | TupleShape
    value: object

    def __post_init__(self):
        object.__setattr__(self, "value", _as_literal_value(self.value, self.shape))

    def __str__(self) -> str:
        return _literal_text(self.value, self.shape)

    def __eq__(self, other) -> bool:
        return isinstance(other, Literal) and (self.shape, str(self)) == (other.shape, str(other))

    def __hash__(self) -> int:
        return hash((self.shape, str(self)))


def _as_literal_value(value, shape):
    if isinstance(shape, TupleShape):
        if not isinstance(value, (tuple, list)) or len(value) != len(shape.elements):
            raise InvalidValueError(f"a literal of {shape} is a tuple of {len(shape.elements)} values, got {value!r}")
        return tuple(_as_literal_value(v, s) for v, s in zip(value, shape.elements))
    if shape.kind == "token":
        raise InvalidValueError(f"{shape.element_type} has no literal")
    array = np.array(value, dtype=shape.numpy_dtype)
    if array.shape != shape.dims:
        raise InvalidValueError(f"a literal of {shape} has shape {shape.dims}, got values of shape {array.shape}")
    array.flags.writeable = False
    return array


def _literal_text(value, shape) -> str:
    if isinstance(shape, TupleShape):
        return "(" + ", ".join(map(_literal_text, value, shape.elements)) + ")"

    def text(array: np.ndarray) -> str:
        if array.ndim == 0:
            return _scalar_text(array[()], shape.kind)
        items = ", ".join(map(text, array))
        return f"{{{items}}}" if array.ndim == 1 or not items else f"{{ {items} }}"

    return text(value)


def _scalar_text(v, kind: str) -> str:
    if kind == "pred":
        return "true" if v else "false"
    if kind in ("int", "uint"):
        return str(int(v))
    if kind == "complex":
        return f"({_float_text(float(v.real))}, {_float_text(float(v.imag))})"
    return _float_text(float(v))


def _float_text(x: float) -> str:
    """Shortest text that reads back as the same float64: integers without '.0', inf, nan(0x<payload>)."""
    negative = math.copysign(1.0, x) < 0
    if math.isnan(x):
        mantissa = struct.unpack("<Q", struct.pack("<d", x))[0] & ((1 << 52) - 1)
        text = "nan" if mantissa == 1 << 51 else f"nan(0x{mantissa:x})"
        return "-" + text if negative else text
    if math.isinf(x):
        return "-inf" if negative else "inf"
    if x.is_integer() and abs(x) < 2 ** 53:
        return "-0" if x == 0 and negative else str(int(x))
    return repr(x)


# ----- parsing raw text ---------------------------------------------------------------------------

def parse_int(text: str) -> int:
    """An integer attribute value, e.g. ``index=1``."""
    return Cursor(text).whole(lambda c: c.int_value("an integer"))


def parse_int_list(text: str) -> IntList:
    """A braced integer list, e.g. ``dimensions={0,3,2,1}``."""
    return Cursor(text).whole(int_list)


def parse_name(text: str) -> str:
    """A name, with or without '%', e.g. ``to_apply=%add.1``."""
    return Cursor(text).whole(lambda c: c.expect_kind(NAME, "a name").value)


def parse_string(text: str) -> str:
    """The unescaped value of a quoted string, e.g. ``backend_config="\\"00\\""`` gives '"00"'."""
    return Cursor(text).whole(string).value


def parse_window(text: str) -> Window:
    """A window spec ``{size=2x2 stride=2x2 pad=0_0x1_1 ...}``."""
    return Cursor(text).whole(window)


def parse_literal(text: str, shape: Shape | TupleShape) -> np.ndarray | tuple:
    """A constant's literal as a numpy array of `shape` (a tuple of arrays for a tuple shape)."""
    return _to_numpy(Cursor(text).whole(lambda c: literal(c, shape)), shape)


# ----- grammar rules ------------------------------------------------------------------------------

def skip_value(c: Cursor) -> None:
    """Any attribute value, checked only for balance: a string, word or balanced group, then any groups
    (e.g. a shape ``f32[2]{0}``). The caller keeps the tokens it passed over as raw text."""
    token = c.peek()
    if token.kind in (NAME, INT, FLOAT, WORD, STRING):
        c.advance()
    elif c.at_opener():
        c.group()
    else:
        c.fail(token, "an attribute value")
    while c.at_opener():
        c.group()


def string(c: Cursor) -> String:
    """A quoted string."""
    return String(c.expect_kind(STRING, "a quoted string").value)


def int_list(c: Cursor) -> IntList:
    """'{' [int (',' int)*] '}'"""
    c.expect("{", "'{' starting a list of integers")
    values = []
    if not c.at("}"):
        values.append(c.int_value("an integer"))
        while c.eat(","):
            values.append(c.int_value("an integer"))
    c.expect("}", "',' or '}' in the list")
    return IntList(values)


def window(c: Cursor) -> Window:
    """'{' (field '=' AxBx..)* '}' with size required; the other fields default per dimension."""
    c.expect("{", "'{' starting a window")
    fields: dict[str, tuple] = {}
    tokens = {}
    while not c.at("}"):
        key = c.expect_kind(NAME, f"a window field ({', '.join(WINDOW_FIELDS)}) or '}}'")
        if key.value not in WINDOW_FIELDS or key.value in fields:
            c.fail(key, f"a window field not given before ({', '.join(WINDOW_FIELDS)})")
        c.expect("=", f"'=' after {key.value}")
        tokens[key.value] = key
        fields[key.value] = _window_field(c, key.value)
    closer = c.expect("}")
    if "size" not in fields:
        c.fail(closer, "a size= field in the window")
    rank = len(fields["size"])
    for name, values in fields.items():
        if len(values) != rank:
            c.fail(tokens[name], f"{rank} entries in {name}=, as in size=", str(len(values)))
    return Window(**fields)


def _window_field(c: Cursor, name: str) -> tuple:
    """``2x2`` (or ``0_0x1_1`` for pad): one entry per window dimension."""
    token = c.peek()
    pattern, expected = {
        "pad": (r"-?\d{1,18}_-?\d{1,18}", "pads lo_hi per dimension, e.g. 0_0x1_1"),
        "size": (r"\d{1,18}", "sizes per dimension, e.g. 2x2"),
        "rhs_reversal": (r"[01]", "0 or 1 per dimension, e.g. 0x1"),
    }.get(name, (r"0*[1-9]\d{0,17}", f"positive {name} per dimension, e.g. 2x2"))
    parts = token.text.split("x")
    if token.kind not in (INT, WORD) or not all(re.fullmatch(pattern, part) for part in parts):
        c.fail(token, expected)
    c.advance()
    if name == "pad":
        return tuple(tuple(int(v) for v in part.split("_")) for part in parts)
    if name == "rhs_reversal":
        return tuple(part == "1" for part in parts)
    return tuple(int(part) for part in parts)


def literal(c: Cursor, shape: Shape | TupleShape):
    """A constant's literal for `shape`: flat element values (a list per tuple element), or _ELIDED."""
    token = c.peek()
    if isinstance(shape, TupleShape):
        count = len(shape.elements)
        with c.nested(token):
            c.expect("(", "'(' starting a tuple literal")
            values = []
            for index, element in enumerate(shape.elements):
                if index:
                    c.expect(",", f"',' ({count} tuple elements)")
                values.append(literal(c, element))
            c.expect(")", f"')' after {count} tuple elements")
        return values
    if shape.kind == "token":
        c.fail(token, f"a shape with values ({shape.element_type} has no literal)")
    if shape.rank == 0:
        return [_scalar(c, shape)]
    if c.at("{") and c.peek(1).text == "..." and c.at("}", 2):
        c.pos += 3
        return _ELIDED
    values: list = []
    _array(c, shape, 0, values)
    return values


def _array(c: Cursor, shape: Shape, axis: int, out: list) -> None:
    """'{' element (',' element)* '}' for dimension `axis`, exactly dims[axis] elements."""
    size = shape.dims[axis]
    with c.nested(c.peek()):
        c.expect("{", f"'{{' starting dimension {axis} of the literal")
        for index in range(size):
            if c.at("}"):
                c.fail(c.peek(), f"{size} elements along dimension {axis}", f"'}}' after {index}")
            if index:
                c.expect(",", f"',' ({size} elements along dimension {axis})")
            if axis + 1 == shape.rank:
                out.append(_scalar(c, shape))
            else:
                _array(c, shape, axis + 1, out)
        c.expect("}", f"'}}' after {size} elements along dimension {axis}")


def _scalar(c: Cursor, shape: Shape):
    """One element value: true/false, an integer in range, a float (inf, nan), or (re, im)."""
    token = c.peek()
    kind = shape.kind
    if kind == "complex":
        with c.nested(token):
            c.expect("(", "'(' starting a complex value (re, im)")
            real = _real(c)
            c.expect(",", "',' between the real and imaginary parts")
            imag = _real(c)
            c.expect(")", "')' closing the complex value")
        return complex(real, imag)
    if kind == "float":
        return _real(c)
    c.advance()
    if kind == "pred":
        if token.text in ("true", "false", "1", "0") and token.kind in (NAME, INT):
            return token.text in ("true", "1")
        c.fail(token, "true or false")
    low, high = _int_range(shape.element_type)
    if token.kind != INT or len(token.text.lstrip("-")) > _MAX_INT_DIGITS or not low <= int(token.text) <= high:
        c.fail(token, f"an integer in [{low}, {high}] for {shape.element_type}")
    return int(token.text)


def _real(c: Cursor) -> float:
    """A float: a number, inf, -inf, nan, -nan, or nan(0x<payload>)."""
    token = c.advance()
    if token.kind in (INT, FLOAT):
        return float(token.text)
    if token.kind in (NAME, WORD) and token.text in ("inf", "-inf"):
        return -math.inf if token.text.startswith("-") else math.inf
    if token.kind in (NAME, WORD) and token.text in ("nan", "-nan"):
        payload = None
        if c.at("("):
            c.advance()
            digits = c.peek()
            if not re.fullmatch(r"0x[0-9a-fA-F]{1,13}", digits.text) or not 0 < int(digits.text, 16) < 1 << 52:
                c.fail(digits, "a NaN payload 0x1..0xfffffffffffff")
            payload = int(c.advance().text, 16)
            c.expect(")", "')' after the NaN payload")
        return _nan(token.text.startswith("-"), payload)
    c.fail(token, "a number, inf or nan")


def _to_numpy(values, shape: Shape | TupleShape) -> np.ndarray | tuple:
    if isinstance(shape, TupleShape):
        return tuple(_to_numpy(v, s) for v, s in zip(values, shape.elements))
    if values is _ELIDED:
        raise InvalidValueError("the literal was elided ('{...}') when the HLO was printed")
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

"""HLO literals: a constant's values, their grammar, their typed value, and NaN payloads as XLA keeps them.

A literal is read element by element through the token cursor, except that a
run of plain elements inside an innermost ``{...}`` (numbers, inf, nan,
true/false, complex pairs, separated by commas, blanks and comments) is taken
in one regular-expression match and converted at once: a 10 MB literal costs
a few C-speed passes, not one Python step per token. Whatever the run does
not take (a payload out of range, an integer out of range, a malformed
element) is left to the element-wise rule, which raises at its token.

NaN payloads follow XLA (``RoundTripFpToString`` prints, the HLO parser reads):
``nan(0x<p>)`` is the payload in the element type's *own* mantissa, p from 1
to the mantissa mask (0x3ff for f16, 0x7f for bf16, 0x7fffff for f32); plain
``nan`` is the quiet NaN (p = the mantissa's top bit, written without a
payload); ``-`` sets the sign. Types whose NaNs have no payload (f8e4m3fn and
the other fnuz / e8m0 / f4 types) take plain ``nan`` only.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ...errors import InvalidValueError
from .cursor import MAX_DEPTH, Cursor
from . import literal_runs
from .lexer import FLOAT, INT, NAME, WORD
from .shape import ELEMENT_TYPES, Shape, TupleShape

__all__ = ["Literal", "Splat", "literal", "parse_literal"]

ELIDED = "{...}"  # how XLA prints a constant whose values it left out
_MAX_INT_DIGITS = 20
_F64_PAYLOAD = (1 << 52) - 1
_F64_QUIET = 1 << 51
#: Element types whose NaNs carry a payload (IEEE-style: they have signalling NaNs), by mantissa bits.
NAN_PAYLOAD_BITS = {name: ml_dtypes.finfo(ELEMENT_TYPES[name][1]).nmant
                    for name in ("f16", "bf16", "f32", "f64", "f8e5m2", "f8e4m3", "f8e3m4")
                    if ELEMENT_TYPES[name][1] is not None}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


# ----- the typed value ----------------------------------------------------------------------------

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


@dataclass(frozen=True, eq=False)
class Splat:
    """One value for every element of an array shape, as MLIR writes a splat (``dense<2.5> : tensor<2x3xf32>``).

    ``value`` is that value as a read-only 0-d array of the shape's dtype, so
    a splat costs one element however large its shape. ``str()`` is the value
    as HLO writes a scalar literal; ``Literal`` is the HLO form of a constant.
    """

    shape: Shape
    value: object

    def __post_init__(self):
        array = np.array(self.value, dtype=self.shape.numpy_dtype).reshape(())
        array.flags.writeable = False
        object.__setattr__(self, "value", array)

    def __str__(self) -> str:
        return _scalar_text(self.value, self.shape)


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
            return _scalar_text(array, shape)
        items = ", ".join(map(text, array))
        return f"{{{items}}}" if array.ndim == 1 or not items else f"{{ {items} }}"

    return text(value)


def _scalar_text(v: np.ndarray, shape: Shape) -> str:
    kind = shape.kind
    if kind == "pred":
        return "true" if v else "false"
    if kind in ("int", "uint"):
        return str(int(v))
    if kind == "complex":
        part = "f32" if v.dtype == np.complex64 else "f64"
        return f"({_float_text(v.real, part)}, {_float_text(v.imag, part)})"
    return _float_text(v, shape.element_type)


def _float_text(v: np.ndarray, element_type: str) -> str:
    """Shortest text that reads back as the same value: integers without '.0', inf, nan(0x<payload>)."""
    x = float(v)
    negative = math.copysign(1.0, x) < 0
    if math.isnan(x):
        text = _nan_text(v, element_type)
        bits = int(np.ascontiguousarray(v).reshape(1).view(_UINT[v.dtype.itemsize])[0])
        return "-" + text if bits >> (8 * v.dtype.itemsize - 1) else text
    if math.isinf(x):
        return "-inf" if negative else "inf"
    if x.is_integer() and abs(x) < 2 ** 53:
        return "-0" if x == 0 and negative else str(int(x))
    return repr(x)


def _nan_text(v: np.ndarray, element_type: str) -> str:
    """``nan``, or ``nan(0x<payload>)`` with the payload of the element type's own mantissa (as XLA prints)."""
    bits = NAN_PAYLOAD_BITS.get(element_type)
    if bits is None:
        return "nan"
    payload = int(np.ascontiguousarray(v).reshape(1).view(_UINT[v.dtype.itemsize])[0]) & ((1 << bits) - 1)
    return "nan" if payload == 1 << (bits - 1) else f"nan(0x{payload:x})"


# ----- parsing ------------------------------------------------------------------------------------

def parse_literal(text: str, shape: Shape | TupleShape) -> np.ndarray | tuple:
    """A constant's literal as a numpy array of `shape` (a tuple of arrays for a tuple shape)."""
    return to_numpy(Cursor(text).whole(lambda c: literal(c, shape)), shape)


class _Values:
    """A literal's element values in order: runs taken at once (arrays) and single elements (Python values)."""

    def __init__(self):
        self.parts: list = []
        self.singles: list = []

    def add(self, value) -> None:
        self.singles.append(value)

    def extend(self, array: np.ndarray) -> None:
        self._flush()
        self.parts.append(array)

    def _flush(self) -> None:
        if self.singles:
            self.parts.append(self.singles)
            self.singles = []

    def array(self, dtype) -> np.ndarray:
        self._flush()
        if not self.parts:
            return np.empty(0, dtype)
        return np.concatenate([np.asarray(part, dtype) for part in self.parts])


def literal(c: Cursor, shape: Shape | TupleShape):
    """A constant's literal for `shape`: its element values (a list per tuple element), or ELIDED."""
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
    values = _Values()
    if shape.rank == 0:
        values.add(_scalar(c, shape))
        return values
    if c.at("{") and c.peek(1).text == "..." and c.at("}", 2):
        for _ in range(3):
            c.advance()
        return ELIDED
    _array(c, shape, 0, values)
    return values


def _array(c: Cursor, shape: Shape, axis: int, out: _Values) -> None:
    """'{' element (',' element)* '}' for dimension `axis`, exactly dims[axis] elements (runs taken at once)."""
    size, innermost = shape.dims[axis], axis + 1 == shape.rank
    with c.nested(c.peek()):
        c.expect("{", f"'{{' starting dimension {axis} of the literal")
        index = 0
        while index < size:
            index += _run(c, shape, axis, index, size - index, out)
            if index == size:
                break
            if c.at("}"):
                c.fail(c.peek(), f"{size} elements along dimension {axis}", f"'}}' after {index}")
            if index:
                c.expect(",", f"',' ({size} elements along dimension {axis})")
            if innermost:
                out.add(_scalar(c, shape))
            else:
                _array(c, shape, axis + 1, out)
            index += 1
        c.expect("}", f"'}}' after {size} elements along dimension {axis}")


def _scalar(c: Cursor, shape: Shape):
    """One element value: true/false, an integer in range, a float (inf, nan), or (re, im)."""
    token = c.peek()
    kind = shape.kind
    if kind == "complex":
        part = "f32" if shape.element_type == "c64" else "f64"
        with c.nested(token):
            c.expect("(", "'(' starting a complex value (re, im)")
            real = _real(c, part)
            c.expect(",", "',' between the real and imaginary parts")
            imag = _real(c, part)
            c.expect(")", "')' closing the complex value")
        return _complex(real, imag)
    if kind == "float":
        return _real(c, shape.element_type)
    c.advance()
    if kind == "pred":
        if token.text in ("true", "false", "1", "0") and token.kind in (NAME, INT):
            return token.text in ("true", "1")
        c.fail(token, "true or false")
    low, high = int_range(shape.element_type)
    if token.kind != INT or len(token.text.lstrip("-")) > _MAX_INT_DIGITS or not low <= int(token.text) <= high:
        c.fail(token, f"an integer in [{low}, {high}] for {shape.element_type}")
    return int(token.text)


def _real(c: Cursor, element_type: str) -> float:
    """A float: a number, inf, -inf, nan, -nan, or nan(0x<payload>) with a payload the element type can hold."""
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
            if not re.fullmatch(r"0x[0-9a-fA-F]{1,13}", digits.text) or not _payload_fits(
                    int(digits.text, 16), element_type):
                c.fail(digits, _payload_expected(element_type))
            payload = int(c.advance().text, 16)
            c.expect(")", "')' after the NaN payload")
        return _nan(token.text.startswith("-"), payload)
    c.fail(token, "a number, inf or nan")



def _payload_fits(payload: int, element_type: str) -> bool:
    """XLA's rule: the double's quiet payload means the type's quiet NaN; others must fit the type's mantissa."""
    if payload == _F64_QUIET:
        return True
    bits = NAN_PAYLOAD_BITS.get(element_type)
    return bits is not None and 0 < payload < 1 << bits


def _payload_expected(element_type: str) -> str:
    bits = NAN_PAYLOAD_BITS.get(element_type)
    if bits is None:
        return f"nan without a payload ({element_type} NaNs carry none)"
    return f"a NaN payload 0x1..0x{(1 << bits) - 1:x} for {element_type}"


def _nan(negative: bool, payload: int | None) -> float:
    """A float64 NaN carrying the sign and the payload as written (its element type applies it later)."""
    bits = 0x7FF0000000000000 | (_F64_QUIET if payload is None else payload)
    return struct.unpack("<d", struct.pack("<Q", bits | (1 << 63 if negative else 0)))[0]


def _complex(real: float, imag: float) -> np.complex128:
    value = np.empty((), np.complex128)
    value.real, value.imag = real, imag
    return value[()]


def int_range(element_type: str) -> tuple[int, int]:
    bits = int(element_type[1:])
    if element_type.startswith("s"):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


# ----- runs of plain elements, taken at once -------------------------------------------------------

_PAYLOAD_ITEM = re.compile(r"(-?)nan\(0x([0-9a-f]{1,13})\)")


def _run(c: Cursor, shape: Shape, axis: int, index: int, count: int, out: _Values) -> int:
    """Take whole sub-arrays of dimension `axis` at once (literal_runs); how many (0: read on token by token)."""
    dims = shape.dims[axis + 1:]
    if c.depth + len(dims) + (shape.kind == "complex") > MAX_DEPTH:  # the nesting limit is the element rules'
        return 0
    run = literal_runs.take(c.text, c.last_end, shape.kind, dims, index == 0, count)
    if run is None:
        return 0
    values, good = _convert(run.items, shape)
    units = good // run.per_unit  # whole sub-arrays before the first element that does not convert
    if units == 0:
        return 0
    out.extend(values[: units * run.per_unit // (2 if shape.kind == "complex" else 1)])
    c.seek(int(run.ends[units - 1]))
    return units


def _convert(items: list[str], shape: Shape) -> tuple[np.ndarray, int]:
    """The values of element texts, and how many items before the first that is not a valid element."""
    kind = shape.kind
    if kind == "pred":
        good = next((i for i, item in enumerate(items) if item not in ("true", "false", "1", "0")), len(items))
        return np.array([item in ("true", "1") for item in items[:good]], np.bool_), good
    if kind in ("int", "uint"):
        values, good = _ints(items)
        low, high = int_range(shape.element_type)
        if values and (min(values) < low or max(values) > high):
            good = next(i for i, v in enumerate(values) if not low <= v <= high)
        return np.array(values[:good], shape.numpy_dtype), good
    if kind == "float":
        return _reals(items, shape.element_type)
    part = "f32" if shape.element_type == "c64" else "f64"
    parts, good = _reals(items, part)
    good -= good % 2
    values = np.empty(good // 2, np.complex128)
    values.real, values.imag = parts[0:good:2], parts[1:good:2]
    return values, good


def _ints(items: list[str]) -> tuple[list[int], int]:
    if max(map(len, items)) <= _MAX_INT_DIGITS:
        try:
            return list(map(int, items)), len(items)
        except ValueError:
            pass
    values = []
    for item in items:
        if len(item.lstrip("-")) > _MAX_INT_DIGITS or not re.fullmatch(r"-?[0-9]+", item):
            break
        values.append(int(item))
    return values, len(values)


def _reals(items: list[str], element_type: str) -> tuple[np.ndarray, int]:
    joined = "," + ",".join(items)
    if "(" not in joined and ",+" not in joined:
        try:
            return np.fromiter(map(float, items), np.float64, len(items)), len(items)
        except ValueError:
            pass
    values = []
    for item in items:
        if "(" in item:
            payload = _PAYLOAD_ITEM.fullmatch(item)
            if payload is None or not _payload_fits(int(payload.group(2), 16), element_type):
                break
            values.append(_nan(payload.group(1) == "-", int(payload.group(2), 16)))
            continue
        try:
            values.append(float(item))
        except ValueError:
            break
        if item.startswith("+"):
            values.pop()
            break
    return np.array(values, np.float64), len(values)


# ----- values to numpy -----------------------------------------------------------------------------

def to_numpy(values, shape: Shape | TupleShape) -> np.ndarray | tuple:
    """The parsed element values as a numpy array of `shape` (NaN payloads in the element type's own bits)."""
    if isinstance(shape, TupleShape):
        return tuple(to_numpy(v, s) for v, s in zip(values, shape.elements))
    if values is ELIDED:
        raise InvalidValueError("the literal was elided ('{...}') when the HLO was printed")
    if shape.kind == "float":
        array = narrow(values.array(np.float64), shape.element_type)
    elif shape.kind == "complex":
        wide = values.array(np.complex128)
        part = "f32" if shape.element_type == "c64" else "f64"
        array = np.empty(wide.shape, shape.numpy_dtype)
        array.real, array.imag = narrow(wide.real, part), narrow(wide.imag, part)
    else:
        array = values.array(shape.numpy_dtype)
    return array.reshape(shape.dims)


def narrow(wide: np.ndarray, element_type: str) -> np.ndarray:
    """float64 values as `element_type`; a NaN keeps its sign and takes its payload into the type's mantissa."""
    dtype = ELEMENT_TYPES[element_type][1]
    with np.errstate(over="ignore", invalid="ignore"):
        array = wide.astype(dtype)
    bits = NAN_PAYLOAD_BITS.get(element_type)
    nan = np.isnan(wide)
    if bits is None or not nan.any():
        return array
    source = wide[nan].view(np.uint64)
    payload = source & np.uint64(_F64_PAYLOAD)
    payload[payload == _F64_QUIET] = 1 << (bits - 1)
    width = 8 * np.dtype(dtype).itemsize
    exponent = ((1 << (width - 1 - bits)) - 1) << bits
    sign = (source >> np.uint64(63)) << np.uint64(width - 1)
    uint = _UINT[np.dtype(dtype).itemsize]
    array.view(uint)[nan] = (sign | np.uint64(exponent) | payload).astype(uint)
    return array

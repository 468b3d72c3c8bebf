"""Tensor handles seen by kernels: an HBM tensor or SBUF tile with a logical shape.

Indexing a handle with integers and slices, or calling ``.ap(...)``, gives the
machine's AccessPattern; ``reshape`` gives another handle on the same storage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidTypeError, InvalidValueError
from ..machine.access import AccessPattern
from ..machine.memory import HbmTensor, SbufTile
from .index import IndexedAccess, IndexExpr, row_major_strides
from .promotion import is_scalar, result_dtype

#: The nl elementwise functions (by ALU op name) that the tile operators call; nki.language registers them
#: when it is imported (it imports this module, so this module cannot import it).
ELEMENTWISE: dict = {}


@dataclass(frozen=True)
class TensorSpec:
    """The shape and dtype of a kernel argument, for tracing without data."""

    shape: tuple
    dtype: np.dtype


class NkiTensor:
    """A kernel-visible tensor: ``storage`` (HbmTensor or SbufTile) seen with ``shape``."""

    def __init__(self, storage: HbmTensor | SbufTile, shape=None):
        self.storage = storage
        self.shape = tuple(storage.shape if shape is None else shape)
        self._whole: AccessPattern | None = None

    @property
    def whole(self) -> AccessPattern:
        """The access pattern of the whole tensor (made once: kernels pass whole tiles constantly)."""
        if self._whole is None:
            pattern = tuple(zip(row_major_strides(self.shape), self.shape))
            if self.buffer == "sbuf" and len(pattern) == 1:
                pattern += ((1, 1),)
            self._whole = AccessPattern(self.storage, pattern, 0, row_size=math.prod(self.shape[1:]))
        return self._whole

    @property
    def dtype(self) -> np.dtype:
        return self.storage.dtype

    @property
    def buffer(self) -> str:
        return "sbuf" if isinstance(self.storage, SbufTile) else "hbm"

    @property
    def name(self) -> str:
        return self.storage.name

    def __repr__(self) -> str:
        return f"NkiTensor({self.name}, {self.buffer}, {self.dtype}{list(self.shape)})"

    # Tile operators, as in NKI: ``a + b``, ``tile * 3``, ``1.0 - tile``, ``-tile``, ``tile < 0.5`` are the
    # nl elementwise functions (nl.add, nl.multiply, nl.less, ...) on SBUF tiles and Python numbers, with NKI's
    # type promotion for the result dtype (see promotion.py): int32 tile * 3 -> int32, int32 tile * 0.5 ->
    # float32, float16 tile + float32 tile -> float32. ``/`` is true division: int / int -> float32 (NKI does
    # not document ``/`` on two integer operands; an integer quotient would be rounded to nearest by the
    # engines' output cast). ``%`` is nl.mod: the engines' fmod (the remainder takes the sign of the dividend,
    # unlike Python's %). Comparisons give tiles of 1 and 0 in the promoted dtype, as nl.less does.

    def __add__(self, other):
        return _binary("+", "add", self, other)

    def __radd__(self, other):
        return _binary("+", "add", other, self)

    def __sub__(self, other):
        return _binary("-", "subtract", self, other)

    def __rsub__(self, other):
        return _binary("-", "subtract", other, self)

    def __mul__(self, other):
        return _binary("*", "multiply", self, other)

    def __rmul__(self, other):
        return _binary("*", "multiply", other, self)

    def __truediv__(self, other):
        return _binary("/", "divide", self, other)

    def __rtruediv__(self, other):
        return _binary("/", "divide", other, self)

    def __mod__(self, other):
        return _binary("%", "mod", self, other)

    def __rmod__(self, other):
        return _binary("%", "mod", other, self)

    def __neg__(self):
        """-tile: nl.negative (a multiply by -1, in the tile's dtype)."""
        _check_tile("unary -", self)
        return ELEMENTWISE["negative"](self)

    def __lt__(self, other):
        return _binary("<", "less", self, other)

    def __le__(self, other):
        return _binary("<=", "less_equal", self, other)

    def __gt__(self, other):
        return _binary(">", "greater", self, other)

    def __ge__(self, other):
        return _binary(">=", "greater_equal", self, other)

    def __eq__(self, other):
        return _binary("==", "equal", self, other)

    def __ne__(self, other):
        return _binary("!=", "not_equal", self, other)

    __hash__ = object.__hash__  # handles stay hashable (by identity) although == builds a tile
    __array_ufunc__ = None  # np.float16(2) + tile: numpy defers to the tile's reflected operator, keeping the dtype

    def reshape(self, shape) -> "NkiTensor":
        shape = tuple(int(s) for s in shape)
        if math.prod(shape) != math.prod(self.shape):
            raise InvalidValueError(f"cannot reshape {self.name} of shape {self.shape} ({math.prod(self.shape)} elements) "
                                    f"to {shape} ({math.prod(shape)} elements)")
        if self.buffer == "sbuf" and shape[0] != self.shape[0]:
            raise InvalidValueError(f"reshaping SBUF tile {self.name} must keep its partition dimension {self.shape[0]}, "
                                    f"got {shape}")
        return NkiTensor(self.storage, shape)

    def ap(self, pattern, offset=0, vector_offset=None, indirect_dim=None) -> AccessPattern:
        """An access pattern on this tensor's base storage, flattened (it does not compose with views)."""
        if vector_offset is not None:
            vector_offset = as_ap(vector_offset)
        return AccessPattern(self.storage, tuple(map(tuple, pattern)), int(offset), vector_offset,
                             indirect_dim, row_size=math.prod(self.shape[1:]))

    def __getitem__(self, key) -> AccessPattern | IndexedAccess:
        """Basic indexing (integers, slices) as an access pattern; with nl.arange expressions or an index
        tile, an IndexedAccess for nl.load / nl.store."""
        if (type(key) is tuple and len(key) == 2 == len(self.shape) and type(key[0]) is slice
                and type(key[1]) is slice and key[0].step is None and key[1].step is None):
            return self._rectangle(key[0], key[1])
        key = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, (IndexExpr, NkiTensor)) for k in key):
            return IndexedAccess(self, key)
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (len(self.shape) - len(key) + 1) + key[i + 1:]
        if len(key) > len(self.shape):
            raise InvalidValueError(f"too many indices for {self.name} of shape {self.shape}: {key}")
        key = key + (slice(None),) * (len(self.shape) - len(key))
        strides = row_major_strides(self.shape)
        offset, pattern = 0, []
        for axis, (k, n, stride) in enumerate(zip(key, self.shape, strides)):
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                if step <= 0 or stop <= start:
                    raise InvalidValueError(f"{self.name}[{key}]: axis {axis} selects nothing or steps backwards")
                offset += start * stride
                pattern.append((stride * step, len(range(start, stop, step))))
            elif isinstance(k, (int, np.integer)):
                if not -n <= k < n:
                    raise InvalidValueError(f"index {k} is out of range for axis {axis} of {self.name} (size {n})")
                offset += (k % n) * stride
                if axis == 0 and self.buffer == "sbuf":
                    pattern.append((stride, 1))  # the partition dimension always stays
            else:
                raise InvalidTypeError(f"{self.name} takes integers and slices as indices, got {k!r}")
        if self.buffer == "sbuf" and len(pattern) == 1:
            pattern.append((1, 1))
        return AccessPattern(self.storage, tuple(pattern), offset, row_size=math.prod(self.shape[1:]))


    def _rectangle(self, rows: slice, cols: slice) -> AccessPattern:
        """t[a:b, c:d] of a 2-D tensor, the commonest index in kernels, without the general walk."""
        (p0, p1, _), (f0, f1, _) = rows.indices(self.shape[0]), cols.indices(self.shape[1])
        if p1 <= p0 or f1 <= f0:
            raise InvalidValueError(f"{self.name}[{p0}:{p1}, {f0}:{f1}] selects nothing")
        width = self.shape[1]
        if p0 == 0 == f0 and p1 == self.shape[0] and f1 == width:
            return self.whole  # the very same pattern, made once: fewer objects to build, check and view
        return AccessPattern(self.storage, ((width, p1 - p0), (1, f1 - f0)), p0 * width + f0, row_size=width)


def _describe(x) -> str:
    return repr(x) if isinstance(x, NkiTensor) else f"{type(x).__name__} {x!r}"


def _check_tile(operator: str, x) -> None:
    if isinstance(x, NkiTensor) and x.buffer != "sbuf":
        raise InvalidTypeError(f"the operator {operator} requires SBUF tiles and numbers, got the HBM tensor "
                               f"{_describe(x)}; load it into a tile with nl.load first")


def _binary(symbol: str, op: str, x, y):
    """``x symbol y`` on tiles and numbers: the nl function ``op`` with the promoted dtype."""
    for v in (x, y):
        if isinstance(v, NkiTensor):
            _check_tile(symbol, v)
        elif not is_scalar(v):
            hint = ("; make a tile of an nl.arange expression with nisa.iota(expr, dtype=...) first"
                    if isinstance(v, IndexExpr) else "")
            raise InvalidTypeError(f"the operator {symbol} requires SBUF tiles and numbers, got "
                                   f"{_describe(x)} {symbol} {_describe(y)}{hint}")
    if isinstance(x, NkiTensor) and isinstance(y, NkiTensor) and x.shape != y.shape:
        raise InvalidValueError(f"the operator {symbol} requires tiles of one shape, got {_describe(x)} {symbol} "
                                f"{_describe(y)}")
    return ELEMENTWISE[op](x, y, dtype=result_dtype(op, x, y))


def as_ap(x) -> AccessPattern:
    """A whole tensor handle or an access pattern, as an access pattern."""
    if isinstance(x, AccessPattern):
        return x
    if isinstance(x, NkiTensor):
        return x.whole
    raise InvalidTypeError(f"expected a tensor or an access pattern, got {type(x).__name__}")

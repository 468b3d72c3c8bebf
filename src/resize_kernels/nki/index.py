"""Index expressions of the nl-level API: nl.arange, affine combinations, masks, tensor indexing.

``nl.arange(n)[:, None]`` runs along the partition dimension and
``nl.arange(n)[None, :]`` along the free dimension; integer sums and multiples
of them are affine expressions known at trace time. Comparing one with an
integer gives a Mask, which ``nl.load`` / ``nl.store`` turn into the range of
partitions and elements the DMA covers. Indexing an HBM tensor with such
expressions, integers and at most one int32 tile (a gather) gives an
IndexedAccess, which becomes the machine's access pattern.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..errors import InvalidTypeError, InvalidValueError
from ..machine.access import AccessPattern


def row_major_strides(shape) -> list[int]:
    """Element strides of a row-major tensor of ``shape``."""
    return [math.prod(shape[k + 1:]) for k in range(len(shape))]


class Arange:
    """``nl.arange(n)``: place it on an axis with ``[:, None]`` (partitions) or ``[None, :]`` (free)."""

    def __init__(self, n: int):
        if not isinstance(n, int) or n < 1:
            raise InvalidValueError(f"nl.arange requires a positive integer, got {n!r}")
        self.n = n

    def __getitem__(self, key) -> "IndexExpr":
        if key == (slice(None), None):
            return IndexExpr(1, 0, 0, p_size=self.n)
        if key == (None, slice(None)):
            return IndexExpr(0, 1, 0, f_size=self.n)
        raise InvalidValueError(f"nl.arange({self.n}) is placed on an axis with [:, None] (partitions) or [None, :] "
                                f"(free dimension), got [{key}]")


class IndexExpr:
    """coef_p * p + coef_f * f + const over a (p_size, f_size) grid of partitions p and free elements f."""

    def __init__(self, coef_p: int, coef_f: int, const: int, p_size: int | None = None, f_size: int | None = None):
        self.coef_p, self.coef_f, self.const = coef_p, coef_f, const
        self.p_size, self.f_size = p_size, f_size

    def _combine(self, other, sign: int) -> "IndexExpr":
        if isinstance(other, (int, np.integer)):
            return IndexExpr(self.coef_p, self.coef_f, self.const + sign * int(other), self.p_size, self.f_size)
        if isinstance(other, IndexExpr):
            return IndexExpr(self.coef_p + sign * other.coef_p, self.coef_f + sign * other.coef_f,
                             self.const + sign * other.const, _same(self.p_size, other.p_size, "partition"),
                             _same(self.f_size, other.f_size, "free"))
        return NotImplemented

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        return (self * -1)._combine(other, 1)

    def __mul__(self, k):
        if not isinstance(k, (int, np.integer)):
            return NotImplemented
        k = int(k)
        return IndexExpr(self.coef_p * k, self.coef_f * k, self.const * k, self.p_size, self.f_size)

    __rmul__ = __mul__

    def __lt__(self, value):
        return Mask(self, operator.lt, value)

    def __le__(self, value):
        return Mask(self, operator.le, value)

    def __gt__(self, value):
        return Mask(self, operator.gt, value)

    def __ge__(self, value):
        return Mask(self, operator.ge, value)

    def values(self) -> np.ndarray:
        """The expression's value at every (p, f) of its grid, shape (p_size or 1, f_size or 1)."""
        p = np.arange(self.p_size or 1, dtype=np.int64)[:, None]
        f = np.arange(self.f_size or 1, dtype=np.int64)[None, :]
        return self.const + self.coef_p * p + self.coef_f * f


def _same(a, b, what):
    if a is not None and b is not None and a != b:
        raise InvalidValueError(f"index expressions over {what} ranges of different sizes ({a} and {b}) cannot combine")
    return a if a is not None else b


class Mask:
    """A trace-time predicate on an index expression (``i_p < n``); masks combine with ``&``."""

    def __init__(self, expr: IndexExpr, op, value):
        self.terms = [(expr, op, value)]

    def __and__(self, other: "Mask") -> "Mask":
        combined = Mask.__new__(Mask)
        combined.terms = self.terms + other.terms
        return combined

    def rectangle(self, p_size: int, f_size: int) -> tuple[int, int, int, int]:
        """The (p0, p1, f0, f1) block of the grid the mask keeps; it must keep a non-empty rectangle."""
        keep = np.ones((p_size, f_size), bool)
        for expr, op, value in self.terms:
            keep &= np.broadcast_to(op(expr.values(), value), keep.shape)
        ps, fs = np.nonzero(keep.any(axis=1))[0], np.nonzero(keep.any(axis=0))[0]
        if len(ps) == 0:
            raise InvalidValueError("the mask keeps no element: drop the instruction instead")
        p0, p1, f0, f1 = ps[0], ps[-1] + 1, fs[0], fs[-1] + 1
        if not keep[p0:p1, f0:f1].all():
            raise InvalidValueError("a mask must keep a rectangle of partitions and free elements (one range of each)")
        return int(p0), int(p1), int(f0), int(f1)


class IndexedAccess:
    """``tensor[...]`` indexed with expressions, integers and at most one int32 index tile (a gather)."""

    def __init__(self, tensor, key: tuple):
        self.tensor, self.key = tensor, key

    def _walk(self):
        """(offset, partition step, free step, partitions, free size, index tile, row size) of the key."""
        t = self.tensor
        if len(self.key) != len(t.shape):
            raise InvalidValueError(f"{t.name} of shape {t.shape} needs {len(t.shape)} indices, got {len(self.key)}")
        offset, p_step, f_step, p_size, f_size, gather, row_size = 0, 0, 0, None, None, None, 0
        for axis, (k, stride) in enumerate(zip(self.key, row_major_strides(t.shape))):
            if isinstance(k, (int, np.integer)):
                offset += int(k) * stride
            elif isinstance(k, IndexExpr):
                offset += k.const * stride
                p_step += k.coef_p * stride
                f_step += k.coef_f * stride
                p_size, f_size = _same(p_size, k.p_size, "partition"), _same(f_size, k.f_size, "free")
            elif getattr(k, "buffer", None) == "sbuf" and gather is None:  # an index tile
                gather, row_size = k, stride
                p_size = _same(p_size, k.shape[0], "partition")
            else:
                raise InvalidTypeError(f"{t.name} is indexed with integers, nl.arange expressions and at most one int32 "
                                       f"index tile, got {k!r} on axis {axis}")
        return offset, p_step, f_step, p_size or 1, f_size or 1, gather, row_size

    @property
    def grid(self) -> tuple[int, int]:
        """(partitions, free elements) the access spans before any mask: the tile it loads into."""
        return self._walk()[3:5]

    def to_ap(self, mask: Mask | None = None) -> tuple[AccessPattern, tuple[int, int, int, int]]:
        """The access pattern (restricted to the mask) and the (p0, p1, f0, f1) block of the tile it maps to."""
        offset, p_step, f_step, p_size, f_size, gather, row_size = self._walk()
        p0, p1, f0, f1 = mask.rectangle(p_size, f_size) if mask is not None else (0, p_size, 0, f_size)
        offset += f0 * f_step
        if gather is None:
            pattern = ((p_step, p1 - p0), (f_step, f1 - f0))
            return AccessPattern(self.tensor.storage, pattern, offset + p0 * p_step), (p0, p1, f0, f1)
        pattern = ((row_size, p1 - p0), (f_step, f1 - f0))  # step0 is replaced by the index tile's rows
        return (AccessPattern(self.tensor.storage, pattern, offset, gather[p0:p1, 0:1], 0, row_size),
                (p0, p1, f0, f1))

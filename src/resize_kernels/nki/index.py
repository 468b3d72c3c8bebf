"""Index expressions of the nl-level API: nl.arange, nl.mgrid, affine combinations, masks, tensor indexing.

An expression is an affine function of the indices of an N-D grid: axis 0 is
the partition dimension, the others are free. ``nl.arange(n)[:, None]`` runs
along axis 0 of a 2-D grid, ``nl.arange(n)[None, :, None]`` along axis 1 of a
3-D one, and ``nl.mgrid[0:128, 0:4, 0:3]`` gives all the axes of a grid at once
(``.p``, ``.x``, ``.y``, ``.z``, or unpacked). Integer sums and multiples of
them are known at trace time. Comparing one with an integer gives a Mask, which
the DMAs (nl.load, nl.store, nisa.dma_copy) and reductions turn into the box of
the grid they cover. Indexing an HBM tensor with expressions, integers and at
most one int32 tile (a gather) gives an IndexedAccess, which becomes the
machine's access pattern.
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


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


class Arange:
    """``nl.arange(n)`` or ``nl.arange(start, stop)`` (start..stop-1): placed on an axis of a grid by indexing,
    ``[:, None]`` (partitions of a 2-D grid), ``[None, :]`` (its free axis), ``[None, :, None]`` (axis 1 of a 3-D
    grid), ..."""

    def __init__(self, n: int, start: int = 0):
        if not _is_int(n) or n < 1 or not _is_int(start):
            raise InvalidValueError(f"nl.arange requires integers start < stop, got start {start!r}, stop "
                                    f"{start + n if _is_int(n) and _is_int(start) else n!r}")
        self.n, self.start = int(n), int(start)

    def __getitem__(self, key) -> "IndexExpr":
        key = key if isinstance(key, tuple) else (key,)
        axes = [k for k, item in enumerate(key) if item == slice(None)]
        if len(axes) != 1 or any(item is not None for k, item in enumerate(key) if k != axes[0]):
            raise InvalidValueError(f"nl.arange({self.n}) is placed on one axis of a grid with one ':' and Nones, "
                                    f"[:, None] (partitions) or [None, :] (free), got [{key}]")
        expr = IndexExpr.axis(axes[0], len(key), self.n)
        return expr + self.start if self.start else expr


class IndexExpr:
    """const + sum(coefs[k] * i_k) over the indices i_k of a grid whose axis k has ``sizes[k]`` (None: any)."""

    def __init__(self, coefs: tuple, const: int, sizes: tuple):
        self.coefs, self.const, self.sizes = tuple(coefs), int(const), tuple(sizes)

    @classmethod
    def axis(cls, k: int, rank: int, n: int) -> "IndexExpr":
        """The index of axis ``k`` (of size ``n``) of a grid of ``rank`` axes."""
        return cls(tuple(int(j == k) for j in range(rank)), 0, tuple(n if j == k else None for j in range(rank)))

    @property
    def rank(self) -> int:
        return len(self.coefs)

    # The 2-D view of the seed's kernels: partitions (axis 0) and one free axis (axis 1).
    @property
    def coef_p(self) -> int:
        return self.coefs[0]

    @property
    def p_size(self):
        return self.sizes[0]

    def _combine(self, other, sign: int) -> "IndexExpr":
        if _is_int(other):
            return IndexExpr(self.coefs, self.const + sign * int(other), self.sizes)
        if isinstance(other, IndexExpr):
            if other.rank != self.rank:
                raise InvalidValueError(f"index expressions over grids of {self.rank} and {other.rank} axes cannot "
                                        f"combine; place every nl.arange on a grid of the same rank")
            return IndexExpr([a + sign * b for a, b in zip(self.coefs, other.coefs)], self.const + sign * other.const,
                             [_same(a, b, k) for k, (a, b) in enumerate(zip(self.sizes, other.sizes))])
        return NotImplemented

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        return (self * -1)._combine(other, 1)

    def __mul__(self, k):
        if not _is_int(k):
            return NotImplemented
        return IndexExpr([c * int(k) for c in self.coefs], self.const * int(k), self.sizes)

    __rmul__ = __mul__

    def __lt__(self, value):
        return Mask(self, operator.lt, value)

    def __le__(self, value):
        return Mask(self, operator.le, value)

    def __gt__(self, value):
        return Mask(self, operator.gt, value)

    def __ge__(self, value):
        return Mask(self, operator.ge, value)

    def shape(self) -> tuple:
        """The grid's shape, 1 on axes of unknown size."""
        return tuple(n or 1 for n in self.sizes)

    def values(self, shape: tuple | None = None) -> np.ndarray:
        """The expression's value at every index of its grid (broadcastable to ``shape``)."""
        shape = self.shape() if shape is None else shape
        value = np.full((1,) * len(shape), self.const, np.int64)
        for k, c in enumerate(self.coefs):
            if c:
                value = value + c * np.arange(shape[k], dtype=np.int64).reshape([-1 if j == k else 1
                                                                                  for j in range(len(shape))])
        return value


def _same(a, b, axis):
    if a is not None and b is not None and a != b:
        raise InvalidValueError(f"index expressions over axis {axis} ranges of different sizes ({a} and {b}) "
                                f"cannot combine")
    return a if a is not None else b


class MGrid:
    """``nl.mgrid[0:128, 4:8, ...]``: the index of every axis of that grid (``.p``, ``.x``, ``.y``, ``.z``, or
    unpacked ``i_p, i_f = nl.mgrid[0:128, 0:512]``); axis k runs over its range start..stop-1."""

    def __getitem__(self, key) -> "Grid":
        key = key if isinstance(key, tuple) else (key,)
        ranges = []
        for s in key:
            start = 0 if not isinstance(s, slice) or s.start is None else s.start
            if not isinstance(s, slice) or s.step not in (None, 1) or not _is_int(s.stop) or not _is_int(start) \
                    or s.stop <= start:
                raise InvalidValueError(f"nl.mgrid takes ranges start:stop with stop > start, got {s!r}")
            ranges.append((int(start), int(s.stop) - int(start)))
        sizes = tuple(n for _, n in ranges)
        return Grid([IndexExpr(tuple(int(j == k) for j in range(len(sizes))), start, sizes)
                     for k, (start, _) in enumerate(ranges)])  # dense, as numpy's mgrid: each spans the whole grid


class Grid(tuple):
    """The axes of an nl.mgrid: a tuple of IndexExprs, also named ``p`` (axis 0), ``x``, ``y``, ``z``."""

    def __getattr__(self, name):
        axis = {"p": 0, "x": 1, "y": 2, "z": 3}.get(name)
        if axis is None or axis >= len(self):
            raise AttributeError(f"an nl.mgrid of {len(self)} axes has no axis {name!r}")
        return self[axis]


class Mask:
    """A trace-time predicate on index expressions (``i_p < n``); masks combine with ``&``."""

    def __init__(self, expr: IndexExpr, op, value):
        if isinstance(value, IndexExpr):  # q_pos >= k_pos: (q_pos - k_pos) >= 0
            expr, value = expr - value, 0
        if not _is_int(value):
            raise InvalidTypeError(f"a mask compares an index expression with an integer or another index "
                                   f"expression, got {value!r}")
        self.terms = [(expr, op, int(value))]

    def __and__(self, other: "Mask | bool") -> "Mask | bool":
        """Both masks' terms; with a trace-time Python bool (``(i < n) & (k * 128 < seqlen)``), this mask or
        False (a mask that keeps nothing)."""
        if isinstance(other, (bool, np.bool_)):
            return self if other else False
        if not isinstance(other, Mask):
            return NotImplemented
        combined = Mask.__new__(Mask)
        combined.terms = self.terms + other.terms
        return combined

    __rand__ = __and__

    @property
    def rank(self) -> int:
        return self.terms[0][0].rank

    def keeps_any(self, shape: tuple) -> bool:
        """Whether the mask keeps any element of a grid of ``shape`` (NKI drops an instruction whose mask keeps
        none)."""
        if any(expr.rank != len(shape) for expr, _, _ in self.terms):
            raise InvalidValueError(f"a mask over a grid of {self.rank} axes cannot select from one of shape {shape}")
        keep = np.ones(shape, bool)
        for expr, op, value in self.terms:
            keep &= np.broadcast_to(op(expr.values(shape), value), shape)
        return bool(keep.any())

    def box(self, shape: tuple) -> list[tuple[int, int]]:
        """The [lo, hi) range of each axis of a grid of ``shape`` that the mask keeps; it must keep a box."""
        if any(expr.rank != len(shape) for expr, _, _ in self.terms):
            raise InvalidValueError(f"a mask over a grid of {self.rank} axes cannot select from one of shape {shape}")
        keep = np.ones(shape, bool)
        for expr, op, value in self.terms:
            keep &= np.broadcast_to(op(expr.values(shape), value), shape)
        ranges = []
        for k in range(len(shape)):
            kept = np.nonzero(keep.any(axis=tuple(j for j in range(len(shape)) if j != k)))[0]
            if len(kept) == 0:
                raise InvalidValueError("the mask keeps no element: drop the instruction instead")
            ranges.append((int(kept[0]), int(kept[-1]) + 1))
        if not keep[tuple(slice(lo, hi) for lo, hi in ranges)].all():
            raise InvalidValueError("a mask must keep a box of the grid (one range of indices on each axis)")
        return ranges

    def rectangle(self, p_size: int, f_size: int) -> tuple[int, int, int, int]:
        """The (p0, p1, f0, f1) block of a 2-D grid the mask keeps."""
        (p0, p1), (f0, f1) = self.box((p_size, f_size))
        return p0, p1, f0, f1


def cut(ap: AccessPattern, ranges: list[tuple[int, int]]) -> AccessPattern:
    """``ap`` restricted to index ranges [lo, hi) of its leading axes (a mask's box); the gather's index tile too."""
    pattern, offset = list(ap.pattern), ap.offset
    if len(ranges) > len(pattern):
        raise InvalidValueError(f"a mask over {len(ranges)} axes cannot restrict {ap.describe()}, which has "
                                f"{len(pattern)}")
    for k, (lo, hi) in enumerate(ranges):
        step, num = pattern[k]
        if hi > num:
            raise InvalidValueError(f"a mask keeps indices {lo}..{hi - 1} of axis {k}, but {ap.describe()} has "
                                    f"{num} there")
        if k > 0 or ap.indirect_dim is None:
            offset += lo * step
        pattern[k] = (step, hi - lo)
    vector = ap.vector_offset
    if vector is not None and ranges:
        lo, hi = ranges[0]
        vector = AccessPattern(vector.tensor, ((vector.pattern[0][0], hi - lo), *vector.pattern[1:]),
                               vector.offset + lo * vector.pattern[0][0])
    return AccessPattern(ap.tensor, tuple(pattern), offset, vector, ap.indirect_dim, ap.row_size)


def _storage(t):
    """The storage a tensor handle (its ``storage``) or a view (an access pattern: its ``tensor``) indexes."""
    return t.tensor if isinstance(t, AccessPattern) else t.storage


class IndexedAccess:
    """``tensor[...]`` indexed with expressions, integers and at most one int32 index tile (a gather)."""

    def __init__(self, tensor, key: tuple):
        self.tensor, self.key = tensor, key

    def _walk(self):
        """(offset, step per grid axis, size per grid axis, index tile, row size) of the key."""
        t = self.tensor
        if len(self.key) != len(t.shape):
            raise InvalidValueError(f"{t.name} of shape {t.shape} needs {len(t.shape)} indices, got {len(self.key)}")
        exprs = [k for k in self.key if isinstance(k, IndexExpr)]
        rank = max([e.rank for e in exprs], default=2)
        offset, steps, sizes, gather, row_size = getattr(t, "view_offset", 0), [0] * rank, [None] * rank, None, 0
        for axis, (k, stride) in enumerate(zip(self.key, t.storage_strides())):
            if _is_int(k):
                offset += int(k) * stride
            elif isinstance(k, IndexExpr):
                if k.rank != rank:
                    raise InvalidValueError(f"{t.name} is indexed with expressions over grids of different ranks")
                offset += k.const * stride
                for j, (c, n) in enumerate(zip(k.coefs, k.sizes)):
                    steps[j] += c * stride
                    sizes[j] = _same(sizes[j], n, j)
            elif getattr(k, "buffer", None) == "sbuf" and gather is None:  # an index tile
                gather, row_size = k, stride
                sizes[0] = _same(sizes[0], k.shape[0], 0)
            else:
                raise InvalidTypeError(f"{t.name} is indexed with integers, nl.arange expressions and at most one int32 "
                                       f"index tile, got {k!r} on axis {axis}")
        return offset, steps, [n or 1 for n in sizes], gather, row_size

    @property
    def grid(self) -> tuple:
        """The shape of the grid the access spans before any mask: the tile it loads into."""
        return tuple(self._walk()[2])

    def to_ap(self, mask: Mask | None = None) -> tuple[AccessPattern, list[tuple[int, int]]]:
        """The access pattern (restricted to the mask) and the box of the grid it maps to."""
        offset, steps, sizes, gather, row_size = self._walk()
        box = mask.box(tuple(sizes)) if mask is not None else [(0, n) for n in sizes]
        if gather is None:
            ap = AccessPattern(_storage(self.tensor), tuple(zip(steps, sizes)), offset)
        else:  # step 0 is replaced by the index tile's rows
            ap = AccessPattern(_storage(self.tensor), ((row_size, sizes[0]), *zip(steps[1:], sizes[1:])), offset,
                               gather[0:sizes[0], 0:1], 0, row_size)
        return cut(ap, box), box


class SlicesPastTheEnd(IndexedAccess):
    """``hbm[a:b, ...]`` with a slice past its axis: NKI takes it where a mask cuts what lies past the end
    (nki-samples' adaptive_avg_pool2d loads ``in_flattened[256:384, ...]`` of 288 rows under ``i_p < N * C``);
    used unmasked, or where the mask keeps some of it, it is the out-of-bounds error a static slice gives."""

    def _walk(self):
        t = self.tensor
        offset, steps, sizes, self._limits = 0, [], [], []
        for axis, (k, n, stride) in enumerate(zip(self.key, t.shape, t.storage_strides())):
            if _is_int(k):
                offset += int(k) * stride
                continue
            start, step = k.indices(n)[0], k.step or 1
            stop = n if k.stop is None else k.stop if k.stop >= 0 else k.stop + n
            offset += start * stride
            steps.append(stride * step)
            sizes.append(len(range(start, stop, step)))
            self._limits.append((len(range(start, min(stop, n), step)), axis, k, n))
        return offset, steps, sizes, None, 0

    def to_ap(self, mask: Mask | None = None) -> tuple[AccessPattern, list[tuple[int, int]]]:
        offset, steps, sizes, _, _ = self._walk()
        box = mask.box(tuple(sizes)) if mask is not None else [(0, n) for n in sizes]
        for (_, hi), (limit, axis, k, n) in zip(box, self._limits):
            if hi > limit:
                raise InvalidValueError(f"{self.tensor.name}[{k.start}:{k.stop}] on axis {axis} (size {n}) is out of "
                                        f"bounds: slice bounds must lie in -{n}..{n}; slice within the axis, or mask "
                                        f"off what lies past its end (a masked nisa.dma_copy or nl.load)")
        return cut(AccessPattern(_storage(self.tensor), tuple(zip(steps, sizes)), offset), box), box

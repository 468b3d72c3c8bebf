"""Tensor handles seen by kernels: an HBM tensor or SBUF tile with a logical shape.

Indexing a handle with integers and slices, or calling ``.ap(...)``, gives the
machine's AccessPattern (an HbmView on HBM, a TileView on SBUF, which also takes
tile operators); views index again and take assignments, as NKI tensors do;
``reshape`` gives another handle on the same storage; ``tile[...] = value``
copies into a tile. A tile with block dimensions (axes before ``nl.par_dim``) is
a BlockTensor: one tile per block, each with storage of its own; ``t[i]`` with
fewer integers than block dimensions is the BlockTensor of the blocks under i.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidTypeError, InvalidValueError
from ..machine.access import AccessPattern
from ..machine.memory import HbmTensor, SbufTile
from .index import IndexedAccess, IndexExpr, SlicesPastTheEnd, row_major_strides
from .promotion import is_scalar, result_dtype

#: The nl elementwise functions (by ALU op name) that the tile operators call; nki.language registers them
#: when it is imported (it imports this module, so this module cannot import it).
ELEMENTWISE: dict = {}


@dataclass(frozen=True)
class TensorSpec:
    """The shape and dtype of a kernel argument, for tracing without data."""

    shape: tuple
    dtype: np.dtype


class TileOps:
    """Tile operators, as in NKI: ``a + b``, ``tile * 3``, ``1.0 - tile``, ``-tile``, ``tile < 0.5`` are the nl
    elementwise functions (nl.add, nl.multiply, nl.less, ...) on SBUF tiles, tile views and Python numbers, with
    NKI's type promotion for the result dtype (promotion.py): int32 tile * 3 -> int32, int32 tile * 0.5 -> float32,
    float16 tile + float32 tile -> float32. Shapes broadcast along free axes as numpy's do ((P, 1) with (P, 4),
    or (P,) with (P, 1)); the partition counts must agree. ``/`` is true division: int / int -> float32 (NKI does
    not document ``/`` on two integer operands; an integer quotient would be rounded to nearest by the engines'
    output cast). ``%`` is nl.mod: the engines' fmod (the remainder takes the sign of the dividend, unlike
    Python's %). Comparisons give tiles of 1 and 0 in the promoted dtype, as nl.less does. ``+=`` and the other
    in-place operators write the result into the tile (or view) itself."""

    __slots__ = ()  # TileView's instances have an AccessPattern's slots only, no __dict__

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

    def __iadd__(self, other):
        return _in_place("+=", "add", self, other)

    def __isub__(self, other):
        return _in_place("-=", "subtract", self, other)

    def __imul__(self, other):
        return _in_place("*=", "multiply", self, other)

    def __itruediv__(self, other):
        return _in_place("/=", "divide", self, other)

    def broadcast_to(self, shape):
        """``tile.broadcast_to(shape)``: nl.broadcast_to of this tile (numpy's rule; a partition dimension of 1
        broadcasts to many partitions by a DMA, free axes of size 1 by a step-0 view)."""
        return ELEMENTWISE["broadcast_to"](self, shape)

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

    # Handles stay hashable by identity although == builds a tile: dicts keyed by them (the simulator's views)
    # compare full hashes first, and live objects' identity hashes differ, so == is never asked there.
    __hash__ = object.__hash__
    __array_ufunc__ = None  # np.float16(2) + tile: numpy defers to the tile's reflected operator, keeping the dtype


class _Reindex:
    """Indexing a view again (``v[b, h][0:128, nl.ds(j, 128)]``, ``tile[:, 0:4][:, 1]``), as NKI tensor views
    index: each axis of the view is a [step, num] pair of its pattern; an integer drops the axis (an SBUF view
    keeps its partition axis, as a tile does), slices and nl.arange expressions select along it."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self.tensor.name

    @property
    def view_offset(self) -> int:
        return self.offset

    def storage_strides(self) -> list[int]:
        return [step for step, _ in self.pattern]

    def __getitem__(self, key):
        sbuf = self.is_sbuf
        key = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, (IndexExpr, NkiTensor)) for k in key):
            access = IndexedAccess(self, _full_key(key, self.shape, self.name))
            if not sbuf:
                return access
            ap = access.to_ap()[0]
            return TileView(ap.tensor, ap.pattern, ap.offset, row_size=ap.row_size)
        key = _full_key(key, self.shape, self.name)
        offset, pattern = self.offset, []
        for axis, (k, (step, n)) in enumerate(zip(key, self.pattern)):
            if isinstance(k, slice):
                start, stop, stride = _bounds(k, n, axis, self.name)
                offset += start * step
                pattern.append((step * stride, len(range(start, stop, stride))))
            elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                if not -n <= k < n:
                    raise InvalidValueError(f"index {k} is out of range for axis {axis} of a view of {self.name} "
                                            f"(size {n})")
                offset += (int(k) % n) * step
                if sbuf and axis == 0:
                    pattern.append((step, 1))
            else:
                raise InvalidTypeError(f"a view of {self.name} takes integers, slices and nl.arange expressions as "
                                       f"indices, got {k!r}")
        if sbuf and len(pattern) == 1:
            pattern.append((1, 1))
        kind = TileView if sbuf else HbmView
        return kind(self.tensor, tuple(pattern) or ((1, 1),), offset, row_size=self.row_size)


class TileView(TileOps, AccessPattern):
    """An SBUF tile indexed with integers and slices (``tile[0:64, 3]``): an access pattern that also takes the
    tile operators, so it reads and computes like a tile (partition axis first), and indexes again."""

    __slots__ = ()

    @property
    def buffer(self) -> str:
        return "sbuf"

    __getitem__, name, view_offset, storage_strides = (_Reindex.__getitem__, _Reindex.name, _Reindex.view_offset,
                                                       _Reindex.storage_strides)

    def __setitem__(self, key, value):
        """``view[key] = value``: as into the tile (nl's assign), in the part of it the view selects."""
        ELEMENTWISE["assign"](self[key], value)


class HbmView(_Reindex, AccessPattern):
    """An HBM tensor indexed with integers and slices (``v[b, h]``, ``q[0, 0:128, :]``): an access pattern that
    indexes again."""

    __slots__ = ()


def _full_key(key: tuple, shape: tuple, name: str) -> tuple:
    """``key`` with an Ellipsis expanded and missing trailing axes taken whole."""
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (len(shape) - len(key) + 1) + key[i + 1:]
    if len(key) > len(shape):
        raise InvalidValueError(f"too many indices for {name} of shape {shape}: {key}")
    return key + (slice(None),) * (len(shape) - len(key))


def _past_the_end(key, shape: tuple) -> bool:
    """Whether a basic index's slice stops past its axis (and starts within it): a mask may cut that part."""
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in key):
        key = _full_key(key, shape, "")
    return any(type(k) is slice and k.stop is not None and k.stop > n and (k.step or 1) > 0
               and -n <= (k.start or 0) < n for k, n in zip(key, shape))


def _bounds(k: slice, n: int, axis: int, name: str) -> tuple[int, int, int]:
    """A slice's (start, stop, step) on an axis of size n; a bound past the axis, an empty selection or a backward
    step is an error (numpy would clip or reverse)."""
    for bound in (k.start, k.stop):
        if bound is not None and not -n <= bound <= n:
            raise InvalidValueError(f"{name}[{k.start}:{k.stop}] on axis {axis} (size {n}) is out of bounds: slice "
                                    f"bounds must lie in -{n}..{n}; slice within the axis")
    start, stop, step = k.indices(n)
    if step <= 0 or stop <= start:
        raise InvalidValueError(f"{name}[{k.start}:{k.stop}:{k.step}]: axis {axis} selects nothing or steps backwards")
    return start, stop, step


class NkiTensor(TileOps):
    """A kernel-visible tensor: ``storage`` (HbmTensor or SbufTile) seen with ``shape`` (an SBUF tile's partition
    axis first)."""

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
            kind = TileView if self.buffer == "sbuf" else AccessPattern
            self._whole = kind(self.storage, pattern, 0, row_size=math.prod(self.shape[1:]))
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

    def reshape(self, shape) -> "NkiTensor":
        shape = tuple(int(s) for s in shape)
        if math.prod(shape) != math.prod(self.shape):
            raise InvalidValueError(f"cannot reshape {self.name} of shape {self.shape} ({math.prod(self.shape)} elements) "
                                    f"to {shape} ({math.prod(shape)} elements)")
        if self.buffer == "sbuf" and shape[0] != self.shape[0]:
            raise InvalidValueError(f"reshaping SBUF tile {self.name} must keep its partition dimension {self.shape[0]} "
                                    f"first, got {shape}")
        return NkiTensor(self.storage, shape)

    def ap(self, pattern, offset=0, vector_offset=None, indirect_dim=None) -> AccessPattern:
        """An access pattern on this tensor's base storage, flattened (it does not compose with views)."""
        if vector_offset is not None:
            vector_offset = as_ap(vector_offset)
        return AccessPattern(self.storage, tuple(map(tuple, pattern)), int(offset), vector_offset,
                             indirect_dim, row_size=math.prod(self.shape[1:]))

    def __getitem__(self, key) -> AccessPattern | IndexedAccess:
        """Basic indexing (integers, slices) as an access pattern (a TileView on SBUF); with nl.arange
        expressions or an index tile, an IndexedAccess for nl.load / nl.store."""
        if self.buffer != "sbuf" and _past_the_end(key, self.shape):
            return SlicesPastTheEnd(self, _full_key(key if isinstance(key, tuple) else (key,), self.shape, self.name))
        if (type(key) is tuple and len(key) == 2 == len(self.shape) and type(key[0]) is slice
                and type(key[1]) is slice and key[0].step is None and key[1].step is None):
            return self._rectangle(key[0], key[1])
        if type(key) is slice and key.step is None and len(self.shape) > 1:
            start, stop, _ = self._slice_bounds(key, 0)
            if stop > start:
                return self._partitions(start, stop)
        key = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, (IndexExpr, NkiTensor)) for k in key):
            access = IndexedAccess(self, key)
            if self.buffer != "sbuf":
                return access  # for nl.load / nl.store (a gather when an index tile is in the key)
            if any(isinstance(k, NkiTensor) for k in key):
                raise InvalidTypeError(f"SBUF tile {self.name} is indexed with integers, slices and nl.arange / "
                                       f"nl.mgrid expressions; an index tile gathers only from HBM")
            ap = access.to_ap()[0]  # an affine walk of the tile: a view
            return TileView(ap.tensor, ap.pattern, ap.offset, row_size=ap.row_size)
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (len(self.shape) - len(key) + 1) + key[i + 1:]
        if len(key) > len(self.shape):
            raise InvalidValueError(f"too many indices for {self.name} of shape {self.shape}: {key}")
        key = key + (slice(None),) * (len(self.shape) - len(key))
        strides, sbuf = row_major_strides(self.shape), self.buffer == "sbuf"
        offset, pattern, partition = 0, [], None
        for axis, (k, n, stride) in enumerate(zip(key, self.shape, strides)):
            if isinstance(k, slice):
                start, stop, step = self._slice_bounds(k, axis)
                if step <= 0 or stop <= start:
                    raise InvalidValueError(f"{self.name}[{key}]: axis {axis} selects nothing or steps backwards")
                offset += start * stride
                pair = (stride * step, len(range(start, stop, step)))
            elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                if not -n <= k < n:
                    raise InvalidValueError(f"index {k} is out of range for axis {axis} of {self.name} (size {n})")
                offset += (k % n) * stride
                pair = (stride, 1) if sbuf and axis == 0 else None  # the partition axis always stays
            else:
                raise InvalidTypeError(f"{self.name} takes integers and slices as indices, got {k!r}")
            if pair is not None and sbuf and axis == 0:
                partition = pair
            elif pair is not None:
                pattern.append(pair)
        if not sbuf:
            return HbmView(self.storage, tuple(pattern) or ((1, 1),), offset, row_size=math.prod(self.shape[1:]))
        pattern.insert(0, partition)
        if len(pattern) == 1:
            pattern.append((1, 1))
        return TileView(self.storage, tuple(pattern), offset, row_size=math.prod(self.shape[1:]))

    def storage_strides(self) -> list[int]:
        """Each axis's step in storage: row-major (on SBUF the partition axis steps a whole partition row)."""
        return row_major_strides(self.shape)

    def __setitem__(self, key, value) -> None:
        """``tile[key] = value``: a tile or view (broadcast along free axes, cast to the tile's dtype) is copied
        in (nl's ``assign``: the copy is elided when value is an instruction's fresh result); a number is
        written by a memset."""
        if self.buffer != "sbuf":
            raise InvalidTypeError(f"assigning into the HBM tensor {self.name} is a DMA: use nl.store or "
                                   f"nisa.dma_copy")
        ELEMENTWISE["assign"](self[key], value)

    def _slice_bounds(self, k: slice, axis: int) -> tuple[int, int, int]:
        """``k.indices(size)`` of one axis, but a start or stop past the axis is an error, as NKI reports it (numpy
        would clip it: an access pattern past a tensor's end would then read or write less than it says)."""
        n = self.shape[axis]
        for bound in (k.start, k.stop):
            if bound is not None and not -n <= bound <= n:
                raise InvalidValueError(f"{self.name}[{k.start}:{k.stop}] on axis {axis} (size {n}) is out of bounds: "
                                        f"slice bounds must lie in -{n}..{n}; slice within the axis")
        return k.indices(n)

    def _partitions(self, start: int, stop: int) -> AccessPattern:
        """t[start:stop] (rows start .. stop - 1, every other axis whole), as the general walk gives it, without it."""
        strides = row_major_strides(self.shape)
        pattern = ((strides[0], stop - start), *zip(strides[1:], self.shape[1:]))
        kind = TileView if self.buffer == "sbuf" else HbmView
        return kind(self.storage, pattern, start * strides[0], row_size=math.prod(self.shape[1:]))

    def _rectangle(self, rows: slice, cols: slice) -> AccessPattern:
        """t[a:b, c:d] of a 2-D tensor, the commonest index in kernels, without the general walk."""
        (p0, p1, _), (f0, f1, _) = self._slice_bounds(rows, 0), self._slice_bounds(cols, 1)
        if p1 <= p0 or f1 <= f0:
            raise InvalidValueError(f"{self.name}[{p0}:{p1}, {f0}:{f1}] selects nothing")
        width = self.shape[1]
        if p0 == 0 == f0 and p1 == self.shape[0] and f1 == width:
            return self.whole  # the very same pattern, made once: fewer objects to build, check and view
        kind = TileView if self.buffer == "sbuf" else HbmView
        return kind(self.storage, ((width, p1 - p0), (1, f1 - f0)), p0 * width + f0, row_size=width)


class BlockTensor(TileOps):
    """An on-chip tile with block dimensions, ``nl.ndarray((4, 8, nl.par_dim(128), 512), ...)``: the axes before
    the partition axis count (P, F...) tiles, and ``t[i, j]`` is block (i, j)'s tile.

    As NKI documents them, blocks are logical: each is a tile of its own, given storage by the allocator from
    its first write to its last use ("the physical tiles may not be alive in the memory simultaneously", NKI
    Block Dimension Migration Guide), not all at once. A block's tile is made when it is first indexed
    (``make_block(index)``: the tracer's, with a memset for ``nl.zeros``/``nl.full``); an instruction reads or
    writes one block, so every block dimension is indexed with an integer.
    """

    def __init__(self, name: str, shape: tuple, par_axis: int, dtype, make_block):
        self.name, self.shape, self.par_axis = name, tuple(shape), par_axis
        self.block_shape, self.tile_shape = self.shape[:par_axis], self.shape[par_axis:]
        self._dtype, self._make, self._blocks = np.dtype(dtype), make_block, {}
        self._parent, self._prefix = None, ()

    def _sub(self, prefix: tuple) -> "BlockTensor":
        """``t[i]`` with fewer integers than block dimensions: the blocks under ``prefix``, a block tensor of the
        remaining block dimensions (``t[i][j, k]`` is ``t[i, j, k]``, the very same block)."""
        sub = BlockTensor(f"{self.name}[{', '.join(map(str, prefix))}]", self.shape[len(prefix):],
                          self.par_axis - len(prefix), self._dtype, None)
        sub._parent, sub._prefix = self, prefix
        return sub

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def buffer(self) -> str:
        return "sbuf"

    def __repr__(self) -> str:
        return f"BlockTensor({self.name}, {self._dtype}{list(self.shape)}, blocks {list(self.block_shape)})"

    def block(self, index: tuple) -> NkiTensor:
        """Block ``index``'s tile (made on first use)."""
        if self._parent is not None:
            return self._parent.block(self._prefix + index)
        tile = self._blocks.get(index)
        if tile is None:
            tile = self._blocks[index] = NkiTensor(self._make(index))
        return tile

    def blocks(self) -> list:
        """The blocks made so far, as (index, tile)."""
        if self._parent is not None:
            n = len(self._prefix)
            return [(i[n:], t) for i, t in self._parent.blocks() if i[:n] == self._prefix]
        return list(self._blocks.items())

    def _split(self, key) -> tuple[tuple, tuple]:
        """(the block index, the key of the rest) of ``key``: each block dimension takes an integer (or a slice
        of one element, or a constant index expression)."""
        key = key if isinstance(key, tuple) else (key,)
        nb = self.par_axis
        if key and key[0] is Ellipsis and all(n == 1 for n in self.block_shape):
            return (0,) * nb, key
        if len(key) < nb or Ellipsis in key[:nb]:
            raise InvalidValueError(f"{self.name} has block dimensions {self.block_shape}: index each with an "
                                    f"integer, {self.name}[{', '.join(f'i{k}' for k in range(nb))}, ...], "
                                    f"got {key!r}; an instruction reads or writes one block's tile")
        index = []
        for axis, (k, n) in enumerate(zip(key[:nb], self.block_shape)):
            if isinstance(k, IndexExpr) and not any(k.coefs):
                k = k.const
            if isinstance(k, slice):
                if any(bound is not None and not -n <= bound <= n for bound in (k.start, k.stop)):
                    raise InvalidValueError(f"{self.name}[{k.start}:{k.stop}] on block dimension {axis} (size {n}) is "
                                            f"out of bounds: slice bounds must lie in -{n}..{n}")
                picked = range(*k.indices(n))
                k = picked[0] if len(picked) == 1 else k
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                raise InvalidValueError(f"{self.name}'s block dimension {axis} (size {n}) takes an integer index, got "
                                        f"{k!r}; an instruction reads or writes one block's tile: loop over the "
                                        f"blocks")
            if not -n <= k < n:
                raise InvalidValueError(f"block index {k} is out of range for block dimension {axis} of "
                                        f"{self.name} (size {n})")
            index.append(int(k) % n)
        return tuple(index), key[nb:]

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if 0 < len(key) < self.par_axis and all(isinstance(k, (int, np.integer)) and not isinstance(k, bool)
                                                for k in key):
            prefix = []
            for axis, (k, n) in enumerate(zip(key, self.block_shape)):
                if not -n <= k < n:
                    raise InvalidValueError(f"block index {k} is out of range for block dimension {axis} of "
                                            f"{self.name} (size {n})")
                prefix.append(int(k) % n)
            return self._sub(tuple(prefix))
        index, rest = self._split(key)
        tile = self.block(index)
        return tile[rest] if rest else tile

    def __setitem__(self, key, value) -> None:
        index, rest = self._split(key)
        self.block(index)[rest if rest else ...] = value

    def _one_tile(self, what: str):
        raise InvalidValueError(f"{what} {self.name}, a tile with block dimensions {self.block_shape}, needs one "
                                f"block: {self.name}[{', '.join('0' for _ in self.block_shape)}]; an instruction "
                                f"reads or writes one block's tile")

    @property
    def whole(self):
        self._one_tile("an instruction operand of")

    def reshape(self, shape):
        self._one_tile("reshaping")

    def ap(self, *args, **kwargs):
        self._one_tile("an access pattern on")


def _describe(x) -> str:
    return repr(x) if isinstance(x, NkiTensor) else f"{type(x).__name__} {x!r}"


def is_tile(x) -> bool:
    """An SBUF tile or a view of one (what the engines compute on)."""
    return (isinstance(x, NkiTensor) and x.buffer == "sbuf") or (isinstance(x, AccessPattern) and x.is_sbuf)


def _check_tile(operator: str, x) -> None:
    if isinstance(x, (NkiTensor, AccessPattern)) and not is_tile(x):
        raise InvalidTypeError(f"the operator {operator} requires SBUF tiles and numbers, got the HBM tensor "
                               f"{_describe(x)}; load it into a tile with nl.load first")


def _check_operands(symbol: str, x, y) -> None:
    for v in (x, y):
        if isinstance(v, (NkiTensor, AccessPattern)):
            _check_tile(symbol, v)
        elif not is_scalar(v):
            hint = ("; make a tile of an nl.arange expression with nisa.iota(expr, dtype=...) first"
                    if isinstance(v, IndexExpr) else "")
            raise InvalidTypeError(f"the operator {symbol} requires SBUF tiles and numbers, got "
                                   f"{_describe(x)} {symbol} {_describe(y)}{hint}")


def _binary(symbol: str, op: str, x, y):
    """``x symbol y`` on tiles and numbers: the nl function ``op`` with the promoted dtype."""
    _check_operands(symbol, x, y)
    if not is_scalar(x) and not is_scalar(y):
        free_shape_broadcast(as_ap(x).shape, as_ap(y).shape, f"the operator {symbol}")
    return ELEMENTWISE[op](x, y, dtype=result_dtype(op, x, y))


def _in_place(symbol: str, op: str, x, y):
    """``x symbol y``: x op y written into x itself (in x's dtype), as NKI's in-place tile operators do."""
    _check_operands(symbol, x, y)
    dst = as_ap(x)
    ELEMENTWISE["add_in_place" if op == "add" else op](x, y, dtype=dst.dtype, out=dst)
    return x


def free_shape_broadcast(a: tuple, b: tuple, what: str) -> tuple:
    """The broadcast shape of two tile shapes (partition axis first): numpy's rule on the free axes, a (P,)
    tile counting as (P, 1); the partition counts must agree."""
    a, b = (a if len(a) > 1 else (a[0], 1)), (b if len(b) > 1 else (b[0], 1))
    if a[0] != b[0]:
        raise InvalidValueError(f"{what} requires tiles with the same partitions, got shapes {a} and {b}")
    try:
        return (a[0], *np.broadcast_shapes(a[1:], b[1:]))
    except ValueError:
        raise InvalidValueError(f"{what} requires tile shapes that broadcast along free axes, got {a} and {b}") \
            from None


def broadcast_to(ap: AccessPattern, shape: tuple, what: str) -> AccessPattern:
    """``ap`` read as ``shape`` (partition axis first): free axes of size 1 repeat through step-0 pairs, as
    numpy broadcasting would; a (P,) tile counts as (P, 1)."""
    if ap.shape == tuple(shape):
        return ap
    pairs = list(ap.pattern)
    if len(shape) == 1:
        shape = (shape[0], 1)
    free, target = pairs[1:], list(shape[1:])
    while len(free) < len(target):
        free.insert(0, (0, 1))
    while len(free) > len(target) and free[0][1] == 1:
        free.pop(0)
    if len(free) != len(target) or pairs[0][1] != shape[0] \
            or any(n != t and n != 1 for (_, n), t in zip(free, target)):
        raise InvalidValueError(f"{what} cannot broadcast {ap.describe()} of shape {ap.shape} to {tuple(shape)}")
    free = [(s, n) if n == t else (0, t) for (s, n), t in zip(free, target)]
    return AccessPattern(ap.tensor, (pairs[0], *free), ap.offset, ap.vector_offset, ap.indirect_dim, ap.row_size)


def as_ap(x) -> AccessPattern:
    """A whole tensor handle or an access pattern (a view), as an access pattern."""
    if isinstance(x, AccessPattern):
        return x
    if isinstance(x, (NkiTensor, BlockTensor)):
        return x.whole
    if isinstance(x, SlicesPastTheEnd):  # unmasked: the out-of-bounds error
        return x.to_ap()[0]
    raise InvalidTypeError(f"expected a tensor or an access pattern, got {type(x).__name__}")

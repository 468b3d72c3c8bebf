"""nl: dtypes, buffers, tensor allocation, loops, index expressions, loads, stores, elementwise ops.

``nl.ndarray(shape, dtype, buffer=nl.sbuf)`` allocates a tile (first dimension =
partitions, at most ``nl.tile_size.pmax``); ``buffer=nl.shared_hbm`` creates an
HBM tensor, which a kernel returns as its output. The ALU op names
(``nl.multiply``) serve both as ``op=`` of nisa calls and as elementwise
functions that allocate their result (``nl.multiply(tile, 0.5)``); ``nl.load``
and ``nl.store`` move ``tensor[...]`` indexed with nl.arange expressions, an
index tile and a mask. Every call becomes the same instruction records as nisa.

Tiles also take Python operators (``a + b``, ``tile * 3``, ``tile < 0.5``,
``-tile``), which call these functions with NKI's type promotion (promotion.py);
the functions themselves, without ``dtype=``, keep their own default (the tile
operand's dtype if float, else float32). ``nl.par_dim(n)`` may mark the first
dimension of a shape given to ``nl.ndarray`` / ``nl.zeros``.
"""

from __future__ import annotations

import builtins
from types import SimpleNamespace

import ml_dtypes
import numpy as np

from ..errors import InvalidTypeError, InvalidValueError, not_simulated
from ..intmath import ceil_div
from ..machine import dtypes
from ..machine.isa import ALU_OPS
from ..machine.memory import NUM_PARTITIONS, SBUF_ALIGNMENT
from . import isa as nisa
from . import tensor as _tensor
from ..machine.access import AccessPattern
from .index import Arange, IndexedAccess, Mask, MGrid, cut
from .promotion import is_scalar, operand_dtype, promote_types
from .tensor import as_ap
from .tracer import current

float32, bfloat16, float16 = dtypes.float32, dtypes.bfloat16, dtypes.float16
int32, int16, int8, uint8 = dtypes.int32, dtypes.int16, dtypes.int8, dtypes.uint8
uint16, uint32 = dtypes.uint16, dtypes.uint32
bool_ = dtypes.uint8  # NKI stores booleans as uint8

sbuf = "sbuf"
shared_hbm = "shared_hbm"  # shared by every SPMD instance of a launch (a kernel's outputs live here)
hbm = "hbm"
private_hbm = "private_hbm"  # an HBM tensor of one SPMD instance (scratch)
psum = "psum"  # the engines' accumulator memory: tiles the engines read and write, DMAs cannot

tile_size = SimpleNamespace(pmax=NUM_PARTITIONS)


class AluOp:
    """An ALU operation: ``op=nl.multiply`` in nisa calls, or ``nl.multiply(x, y, dtype=None)`` on tiles."""

    def __init__(self, name: str):
        self.alu_name = name

    def __repr__(self) -> str:
        return f"nl.{self.alu_name}"

    def __call__(self, x, y, dtype=None, out=None):
        """x op y, elementwise; one of x, y may be a Python number, and tile shapes broadcast along free axes.
        The result is a new tile (dtype: the tile operand's if float, else float32), or ``out``."""
        tile = y if _is_scalar(x) else x
        if _is_scalar(tile):
            raise InvalidTypeError(f"{self!r} needs at least one tile operand, got {x!r} and {y!r}")
        if _is_scalar(x) or _is_scalar(y):
            shape = as_ap(tile).shape
        else:
            shape = _tensor.free_shape_broadcast(as_ap(x).shape, as_ap(y).shape, repr(self))
        if out is None:
            out = ndarray(shape, dtype or _result_dtype(tile), name=self.alu_name)
        else:
            shape = as_ap(out).shape
        if _is_scalar(x):
            nisa.tensor_scalar(out, _tensor.broadcast_to(as_ap(y), shape, repr(self)), op0=self, operand0=x,
                               reverse0=True)
        elif _is_scalar(y):
            nisa.tensor_scalar(out, _tensor.broadcast_to(as_ap(x), shape, repr(self)), op0=self, operand0=y)
        else:
            nisa.tensor_tensor(out, _tensor.broadcast_to(as_ap(x), shape, repr(self)),
                               _tensor.broadcast_to(as_ap(y), shape, repr(self)), op=self)
        return out


def _is_scalar(x) -> bool:
    return is_scalar(x)


def _result_dtype(tile):
    return tile.dtype if tile.dtype.kind == "f" else float32


for _name in ALU_OPS:
    globals()[_name] = AluOp(_name)
del _name


def negative(x, dtype=None):
    """-x elementwise (a multiply by -1 on the vector engine), as a new tile of x's dtype (or ``dtype``)."""
    return multiply(x, -1, dtype=dtype or x.dtype)


def where(condition, x, y, dtype=None):
    """x where condition (a tile) is nonzero, else y; x and y are tiles or numbers, broadcast along free axes.
    The result is a new tile of ``dtype`` (default: x and y promoted as nl's arithmetic does)."""
    shape = as_ap(condition).shape
    for v in (x, y):
        if not _is_scalar(v):
            shape = _tensor.free_shape_broadcast(shape, as_ap(v).shape, "nl.where")
    if dtype is None:
        dtype = promote_types(operand_dtype(x), operand_dtype(y))
    out = ndarray(shape, dtype, name="where")

    def operand(v):
        return v if _is_scalar(v) else _tensor.broadcast_to(as_ap(v), shape, "nl.where")
    nisa.select(out, operand(condition), operand(x), operand(y))
    return out


def finfo(dtype):
    """Machine limits of a float dtype (``nl.finfo(nl.bfloat16).min``), as ml_dtypes / numpy give them."""
    dt = dtypes.as_dtype(dtype, "nl.finfo")
    if dt.kind != "f" and dt != bfloat16:
        raise InvalidTypeError(f"nl.finfo requires a float dtype, got {dt}; use nl.iinfo for integers")
    return ml_dtypes.finfo(dt)


def iinfo(dtype):
    """Machine limits of an integer dtype (``nl.iinfo(nl.int32).max``)."""
    dt = dtypes.as_dtype(dtype, "nl.iinfo")
    if dt.kind not in "iu":
        raise InvalidTypeError(f"nl.iinfo requires an integer dtype, got {dt}; use nl.finfo for floats")
    return np.iinfo(dt)


def _copy_into(dst, src) -> None:
    nisa.tensor_copy(dst, src)


_tensor.ELEMENTWISE.update({name: globals()[name] for name in ALU_OPS}, negative=negative,
                           memset=lambda dst, value: nisa.memset(dst, value), copy_into=_copy_into)


class par_dim(int):
    """``nl.par_dim(n)``: marks the partition dimension in a shape, ``nl.ndarray((nl.par_dim(128), 512), ...)``.

    It is the int n everywhere a shape is taken; it may only mark the first dimension.
    """

    def __new__(cls, n):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise InvalidValueError(f"nl.par_dim requires a positive integer, got {n!r}")
        return super().__new__(cls, int(n))

    def __repr__(self) -> str:
        return f"nl.par_dim({int(self)})"


def _shape(shape) -> tuple[tuple, int]:
    """(the shape as plain ints, the axis nl.par_dim marks (0 if none)); at most one axis may be marked."""
    shape = tuple(shape)
    if all([type(n) is int for n in shape]):  # plain ints, none marked: the common case, as it is
        return shape, 0
    marked = [axis for axis, n in enumerate(shape) if isinstance(n, par_dim)]
    if len(marked) > 1:
        raise InvalidValueError(f"nl.par_dim marks the one partition dimension of a shape, got it on axes {marked} "
                                f"of {shape}")
    return tuple(int(n) for n in shape), (marked[0] if marked else 0)


def ndarray(shape, dtype, buffer=sbuf, name: str | None = None):
    """Allocate a tensor: an SBUF tile (the default) or an HBM tensor (``shared_hbm``/``hbm``/``private_hbm``).
    ``nl.par_dim(n)`` may mark the partition dimension of a tile; axes before it are blocks:
    ``nl.ndarray((4, nl.par_dim(128), 512), ...)`` is four (128, 512) tiles, ``t[b]`` the b-th."""
    tracer = current()
    shape, par_axis = _shape(shape)
    if buffer in (sbuf, psum):
        if not par_axis:
            return tracer.sbuf(name, shape, dtype, buffer)
        storage = tracer.sbuf(name, (shape[par_axis], *shape[:par_axis], *shape[par_axis + 1:]), dtype,
                              buffer).storage
        return _tensor.NkiTensor(storage, shape, par_axis)
    if buffer in (shared_hbm, hbm, private_hbm):
        if buffer == shared_hbm and tracer.grid:
            return _shared(tracer, shape, dtype)
        return _hbm(tracer, name, shape, dtype)
    raise InvalidValueError(f"nl.ndarray buffer must be nl.sbuf, nl.psum, nl.shared_hbm, nl.hbm or nl.private_hbm, "
                            f"got {buffer!r}")


def _hbm(tracer, name, shape, dtype):
    taken = {t.name for t in tracer.program.inputs + tracer.program.internal}
    name = name if name and name not in taken else tracer.unique(name or "hbm")
    return tracer.hbm(name, shape, dtype, "internal")


def _shared(tracer, shape, dtype):
    """The k-th shared_hbm tensor of an SPMD instance: the first instance's k-th (created by it)."""
    k, tracer.shared_index = tracer.shared_index, tracer.shared_index + 1
    if k == len(tracer.shared):
        tracer.shared.append(_hbm(tracer, None, shape, dtype))
    tensor = tracer.shared[k]
    if tensor.shape != shape or tensor.dtype != dtypes.as_dtype(dtype):
        raise InvalidValueError(f"SPMD instance {tracer.program_id} creates shared_hbm tensor {k} as {shape} "
                                f"{dtypes.as_dtype(dtype)}, but the first instance created it as {tensor.shape} "
                                f"{tensor.dtype}; every instance must create the same shared tensors")
    return tensor


def program_id(axis: int = 0) -> int:
    """The index of the SPMD instance being traced along grid ``axis`` (``kernel[grid]``); 0 without a grid (the
    kernel is then its only instance)."""
    tracer = current()
    if not tracer.grid and isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and axis >= 0:
        return 0
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not 0 <= axis < len(tracer.grid):
        raise InvalidValueError(f"nl.program_id requires an axis of the launch grid {tracer.grid} "
                                f"(0..{len(tracer.grid) - 1}), got {axis!r}")
    return tracer.program_id[axis]


def num_programs(axes=None):
    """The launch grid's size along ``axes`` (an int or a tuple of ints; None: every axis); 1 without a grid."""
    grid = current().grid or (1,)
    if axes is None:
        return int(np.prod(grid))
    if isinstance(axes, (tuple, list)):
        return tuple(num_programs(a) for a in axes)
    if isinstance(axes, bool) or not isinstance(axes, (int, np.integer)) or not 0 <= axes < len(grid):
        raise InvalidValueError(f"nl.num_programs requires an axis of the launch grid {grid}, got {axes!r}")
    return grid[axes]


def program_ndim() -> int:
    """The number of axes of the launch grid (0 without a grid)."""
    return len(current().grid)


def static_cast(x, dtype):
    """x cast to ``dtype``: a numpy array on the host (floats by numpy's round to nearest even; float to int as
    the engines do, rounding to nearest even and saturating), or a tile in a kernel (a tensor_copy)."""
    dtype = dtypes.as_dtype(dtype, "nl.static_cast")
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f" and dtype.kind in "iu":
            return dtypes.cast(x.astype(np.float32), dtype)
        return x.astype(dtype)
    if not isinstance(x, _tensor.NkiTensor):
        raise InvalidTypeError(f"nl.static_cast requires a numpy array or a tile, got {type(x).__name__}")
    out = ndarray(x.shape, dtype, name="cast")
    nisa.tensor_copy(out, x)
    return out


def zeros(shape, dtype, buffer=sbuf, name: str | None = None):
    """A new SBUF tile of zeros (nl.ndarray and a memset); the shape may mark ``nl.par_dim(n)``."""
    return full(shape, 0, dtype, buffer, name=name or "zeros")


def full(shape, fill_value, dtype, buffer=sbuf, name: str | None = None):
    """A new SBUF tile of ``fill_value`` (nl.ndarray and a memset: the value as float32, cast to dtype)."""
    if buffer not in (sbuf, psum):
        raise InvalidValueError(f"nl.full and nl.zeros require buffer=nl.sbuf or nl.psum (a memset of an on-chip "
                                f"tile), got {buffer!r}")
    if not _is_scalar(fill_value):
        raise InvalidTypeError(f"nl.full requires a number as fill_value, got {type(fill_value).__name__}")
    tile = ndarray(shape, dtype, buffer, name=name or "full")
    nisa.memset(tile.whole, fill_value)
    return tile


def shared_constant(constant, dtype=None):
    """An HBM tensor filled at trace time with ``constant`` (a numpy array, or anything ``np.asarray`` takes), as
    ``dtype`` (None: the array's own); equal constants (same bits, shape and dtype) are one tensor, as NKI shares
    them. Kernels load it like any HBM tensor; the values must fit ``dtype`` exactly (nothing is wrapped)."""
    tracer = current()
    data = np.asarray(constant)
    target = dtypes.as_dtype(data.dtype if dtype is None else dtype)
    cast = data.astype(target)
    if data.dtype != target and not np.array_equal(cast.astype(data.dtype), data):
        raise InvalidValueError(f"nl.shared_constant requires values that {target} holds exactly, got a "
                                f"{data.dtype} array with values from {data.min()} to {data.max()}; pass a wider dtype")
    key = (cast.shape, cast.dtype.str, cast.tobytes())
    for t in tracer.program.constants:
        if (t.shape, t.data.dtype.str, t.data.tobytes()) == key:
            return _tensor.NkiTensor(t)
    cast.setflags(write=False)
    return tracer.hbm(tracer.unique("const"), cast.shape, target, "constant", cast)


def copy(x, dtype=None):
    """A new tile holding x (a tile or view; ``dtype`` casts, as the engines do)."""
    src = as_ap(x)
    out = ndarray(src.shape, dtype or src.dtype, name="copy")
    nisa.tensor_copy(out, src)
    return out


#: Buffers the allocator gives a tile declared in an ``affine_range`` body (NKI programming model: "two rotate
#: (double buffering) and overlap DMA with compute"; nl.alloc_stream_buffers defaults to num_slots=2).
ROTATING_BUFFERS = 2


def affine_range(*args):
    """range(...) unrolled at trace time, its iterations declared independent: the tiles an iteration declares
    live in ROTATING_BUFFERS rotating buffers (fewer if SBUF is short), so iteration i + 1 need not wait for
    iteration i's tiles to be free, as NKI's allocator gives them; they are freed when the loop ends."""
    tracer = current()
    base = tracer.mark()
    iterations = range(*args)
    if len(iterations) == 1:  # nothing to rotate: the one iteration's tiles from the loop's base, as in any loop
        yield iterations[0]
        tracer.release(base)
        return
    spans = (0, 0)  # bytes one iteration allocates, per allocator (SBUF, PSUM)
    for n, i in enumerate(iterations):
        starts = tracer.rotate(base, n, spans, ROTATING_BUFFERS)
        outer = tracer.peaks(reset=starts)  # measure this iteration's peak, inner loops' tiles included
        try:
            yield i
        finally:  # also when the loop is left early: the trace's own high-water mark must survive
            ends = tracer.peaks(reset=tuple(builtins.max(o, p) for o, p in zip(outer, tracer.peaks())))
        spans = tuple(builtins.max(s, _aligned(e - b)) for s, e, b in zip(spans, ends, starts))
    tracer.release(base)


def _aligned(nbytes: int) -> int:
    return ceil_div(nbytes, SBUF_ALIGNMENT) * SBUF_ALIGNMENT


def _scoped_range(*args):
    """range(...) unrolled at trace time, one buffer for all iterations: an iteration's tiles are freed at its
    end, so the next one reuses their addresses and (in the cost model) waits for them."""
    tracer = current()
    for i in range(*args):
        mark = tracer.mark()
        yield i
        tracer.release(mark)


def static_range(*args):
    """range(...) fully unrolled (NKI: by the compiler front end), as a plain Python loop: one buffer per tile,
    so iterations keep their order."""
    yield from _scoped_range(*args)


def sequential_range(*args):
    """range(...) whose iterations are declared dependent (NKI: a loop-carried dependency): unrolled at trace
    time with one buffer per tile, so iterations keep their order. The simulator runs every Program in issue order."""
    yield from _scoped_range(*args)


mgrid = MGrid()


def arange(n: int) -> Arange:
    """Indices 0..n-1, placed on an axis with ``[:, None]`` (partitions) or ``[None, :]`` (free)."""
    return Arange(n)


def floor(x, dtype=None):
    """floor(x) elementwise on the scalar engine (an activation), as a new tile."""
    out = ndarray(as_ap(x).shape, dtype or _result_dtype(x), name="floor")
    nisa.activation(out, "floor", x)
    return out


def _access(what: str, access, mask: Mask | None):
    """(the HBM access pattern of ``access``, restricted to the mask; the grid it spans; the mask's box)."""
    if isinstance(access, IndexedAccess):
        ap, box = access.to_ap(mask)
        return ap, access.grid, box
    if isinstance(access, _tensor.NkiTensor) and access.buffer != "sbuf":  # the whole HBM tensor
        access = access.whole
    if isinstance(access, AccessPattern) and not access.is_sbuf:  # a plain view, hbm_tensor[0:64, 3:7]
        box = mask.box(access.shape) if mask is not None else [(0, n) for n in access.shape]
        return cut(access, box), access.shape, box
    raise InvalidTypeError(f"nl.{what} takes an HBM tensor indexed with slices, nl.arange expressions or an index "
                           f"tile, e.g. data[b, load_indices, i_f], got {access!r}")


def load(access, mask: Mask | None = None, dtype=None, name: str | None = None):
    """DMA ``tensor[...]`` into a new SBUF tile of the indexed grid's shape; with a mask, only the box it keeps
    (the rest stays as fresh memory). ``dtype`` casts the loaded tile (a tensor_copy after the DMA)."""
    src, grid, box = _access("load", access, mask)
    tile = ndarray(grid, src.dtype, name=name or "loaded")
    nisa.dma_copy(dst=cut(tile.whole, box), src=src)
    return tile if dtype is None or dtypes.as_dtype(dtype) == tile.dtype else copy(tile, dtype)


def store(access, value, mask: Mask | None = None) -> None:
    """DMA a tile (or view) into ``tensor[...]``; with a mask, only the box it keeps."""
    dst, _, box = _access("store", access, mask)
    nisa.dma_copy(dst=dst, src=cut(as_ap(value), box))


def _reduce(name: str, op: str, x, axis, dtype, mask, keepdims):
    """nl.sum / nl.max / nl.min: nisa.tensor_reduce over the free axes ``axis`` of x (or of its box). Axes that
    are not the last ones are walked last (an access pattern visits its axes in any order), so any set of free
    axes reduces in one instruction, the kept axes keeping their order."""
    src = as_ap(x)
    if mask is not None:
        src = cut(src, mask.box(src.shape))
    rank = len(src.shape)
    axes = [a % rank if isinstance(a, (int, np.integer)) and -rank <= a < rank else None
            for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
    if None in axes or 0 in axes or len(set(axes)) != len(axes):
        raise InvalidValueError(f"nl.{name} requires axis to name free axes of the tile (1..{rank - 1}, or -1 for "
                                f"the last) once each, for shape {src.shape}, got {axis!r}")
    reduced = sorted(axes)
    kept = [k for k in range(rank) if k not in reduced]
    walk = AccessPattern(src.tensor, tuple(src.pattern[k] for k in kept + reduced), src.offset)
    kept_shape = tuple(src.shape[k] for k in kept)
    shape = tuple(1 if k in reduced else n for k, n in enumerate(src.shape)) if keepdims else kept_shape
    out = ndarray(shape, dtype or src.dtype, name=name)
    nisa.tensor_reduce(out, op, walk, list(range(len(kept), rank)))
    return out


def sum(x, axis, dtype=None, mask: Mask | None = None, keepdims: bool = False):  # noqa: A001 - NKI's name
    """The sum of x along its free axes ``axis`` (in float32, in order), as a new tile."""
    return _reduce("sum", "add", x, axis, dtype, mask, keepdims)


def max(x, axis, dtype=None, mask: Mask | None = None, keepdims: bool = False):  # noqa: A001 - NKI's name
    """The maximum of x along its free axes ``axis``, as a new tile."""
    return _reduce("max", "maximum", x, axis, dtype, mask, keepdims)


def min(x, axis, dtype=None, mask: Mask | None = None, keepdims: bool = False):  # noqa: A001 - NKI's name
    """The minimum of x along its free axes ``axis``, as a new tile."""
    return _reduce("min", "minimum", x, axis, dtype, mask, keepdims)


max.alu_name, min.alu_name = "max", "min"  # also op=nl.max / op=nl.min of nisa calls, as NKI's are


def mean(x, axis, dtype=None, mask: Mask | None = None, keepdims: bool = False):
    """The mean of x along its free axes ``axis``: the float32 sum times float32(1 / count)."""
    total = _reduce("mean", "add", x, axis, float32, mask, keepdims)
    count = as_ap(x).size // as_ap(total).size
    return multiply(total, 1.0 / count, dtype=dtype or as_ap(x).dtype)


def __getattr__(name: str):
    """An NKI name this module does not simulate: a clear error, never a silent stand-in."""
    raise not_simulated("nl", name)

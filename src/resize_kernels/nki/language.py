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
import contextlib
from types import SimpleNamespace

import ml_dtypes
import numpy as np

from ..errors import InvalidTypeError, InvalidValueError, NotSimulatedError, not_simulated
from ..intmath import ceil_div
from ..machine import dtypes
from ..machine import isa as machine_isa
from ..machine.isa import ALU_OPS, PSUM_BANK_BYTES, PSUM_BANKS
from ..machine.memory import NUM_PARTITIONS, SBUF_ALIGNMENT
from . import isa as nisa
from . import tensor as _tensor
from ..machine.access import AccessPattern
from .allocation import DirectAllocation
from .index import _is_int, Arange, IndexedAccess, Mask, MGrid, cut
from .promotion import is_scalar, operand_dtype, promote_types
from .tensor import as_ap
from .tracer import current

float32, bfloat16, float16 = dtypes.float32, dtypes.bfloat16, dtypes.float16
int32, int16, int8, uint8 = dtypes.int32, dtypes.int16, dtypes.int8, dtypes.uint8
uint16, uint32 = dtypes.uint16, dtypes.uint32
float8_e4m3, float8_e5m2, float8_e4m3fn = dtypes.float8_e4m3, dtypes.float8_e5m2, dtypes.float8_e4m3fn
bool_ = dtypes.uint8  # NKI stores booleans as uint8

sbuf = "sbuf"
shared_hbm = "shared_hbm"  # shared by every SPMD instance of a launch (a kernel's outputs live here)
hbm = "hbm"
private_hbm = "private_hbm"  # an HBM tensor of one SPMD instance (scratch)
psum = "psum"  # the engines' accumulator memory: tiles the engines read and write, DMAs cannot

#: Tile size limits (nki.language.tile_size): partitions of a tile; the free sizes of nc_matmul's stationary and
#: moving operands (nki.isa.nc_matmul); bn_stats' free size (nki.isa.bn_stats); a PSUM tile's free size, one 2 KiB
#: bank of float32 (NKI Direct Allocation Developer Guide, "Known Limitations").
tile_size = SimpleNamespace(pmax=NUM_PARTITIONS, gemm_stationary_fmax=128, gemm_moving_fmax=512, bn_stats_fmax=512,
                            psum_fmax=512)


class AluOp:
    """An ALU operation: ``op=nl.multiply`` in nisa calls, or ``nl.multiply(x, y, dtype=None)`` on tiles."""

    def __init__(self, name: str):
        self.alu_name = name

    def __repr__(self) -> str:
        return f"nl.{self.alu_name}"

    def __call__(self, x, y, dtype=None, out=None, mask: Mask | None = None):
        """x op y, elementwise; one of x, y may be a Python number, and tile shapes broadcast along free axes.
        The result is a new tile (dtype: the tile operand's if float, else float32), or ``out``; with a mask,
        only the box it keeps is computed."""
        tile = y if _is_scalar(x) else x
        if _is_scalar(tile):
            raise InvalidTypeError(f"{self!r} needs at least one tile operand, got {x!r} and {y!r}")
        if _is_scalar(x) or _is_scalar(y):
            shape = as_ap(tile).shape
        else:
            x, y = _partition_broadcast(x, y)
            shape = _tensor.free_shape_broadcast(as_ap(x).shape, as_ap(y).shape, repr(self))
        result = None
        if out is None:
            out = result = ndarray(shape, dtype or _result_dtype(tile), name=self.alu_name)
        else:
            shape = as_ap(out).shape
        box = masked_box(mask, shape)
        if box == ():
            if result is not None:
                fresh(result, box)
            return out
        dst = cut_box(out, box)

        def operand(v):
            return cut_box(_tensor.broadcast_to(as_ap(v), shape, repr(self)), box)
        if _is_scalar(x):
            nisa.tensor_scalar(dst, operand(y), op0=self, operand0=x, reverse0=True)
        elif _is_scalar(y):
            nisa.tensor_scalar(dst, operand(x), op0=self, operand0=y)
        else:
            nisa.tensor_tensor(dst, operand(x), operand(y), op=self)
        if result is not None:
            fresh(result, box)
        return out


def _is_scalar(x) -> bool:
    return is_scalar(x)


def _partition_broadcast(x, y):
    """x and y with a one-partition tile broadcast to the other's partitions (nl.broadcast_to, a DMA): the nl
    functions take shapes that "must be broadcastable to a common shape" (nki.language.add); the tile operators do
    not broadcast partitions ("not supported on operator overloads", NKI known issues), and check before."""
    px, py = as_ap(x).shape[0], as_ap(y).shape[0]
    if px != py and 1 in (px, py):
        if px == 1:
            x = broadcast_to(x, (py, *as_ap(x).shape[1:]))
        else:
            y = broadcast_to(y, (px, *as_ap(y).shape[1:]))
    return x, y


def _result_dtype(tile):
    return tile.dtype if tile.dtype.kind == "f" else float32


for _name in ALU_OPS:
    globals()[_name] = AluOp(_name)
del _name


def negative(x, dtype=None, mask: Mask | None = None):
    """-x elementwise (a multiply by -1 on the vector engine), as a new tile of x's dtype (or ``dtype``)."""
    return multiply(x, -1, dtype=dtype or x.dtype, mask=mask)


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
    fresh(out, None)
    return out


def finfo(dtype):
    """Machine limits of a float dtype (``nl.finfo(nl.bfloat16).min``), as ml_dtypes / numpy give them."""
    dt = dtypes.as_dtype(dtype, "nl.finfo")
    if not dtypes.is_float(dt):
        raise InvalidTypeError(f"nl.finfo requires a float dtype, got {dt}; use nl.iinfo for integers")
    return ml_dtypes.finfo(dt)


def iinfo(dtype):
    """Machine limits of an integer dtype (``nl.iinfo(nl.int32).max``)."""
    dt = dtypes.as_dtype(dtype, "nl.iinfo")
    if dt.kind not in "iu":
        raise InvalidTypeError(f"nl.iinfo requires an integer dtype, got {dt}; use nl.finfo for floats")
    return np.iinfo(dt)


def masked_box(mask: Mask | None, shape: tuple):
    """The box of a grid of ``shape`` that ``mask`` keeps (None: no mask, all of it; (): nothing, so the
    instruction is dropped, as NKI's masks "skip generating the instruction", nki.api.shared "NKI API Masking")."""
    if mask is None or mask is True:  # a mask may be a trace-time Python bool (flash attention's diagonal tests)
        return None
    if mask is False:
        return ()
    if not mask.keeps_any(shape):
        return ()
    return mask.box(shape)


def cut_box(x, box):
    """The access pattern of ``x`` restricted to a mask's ``box`` (None: all of it)."""
    return as_ap(x) if box is None else cut(as_ap(x), box)


def fresh(tile, box) -> None:
    """Mark ``tile`` (a new tile) as the fresh result of the last instruction, written in ``box``: assigning it
    into another tile (``t[...] = result``) then becomes that instruction writing there (Tracer._fold_copies).
    ``box`` ``()``: a masked-out instruction wrote nothing, so assigning or adding the result does nothing."""
    current().mark_fresh(tile.storage, box)


def assign(dst, value) -> None:
    """``tile[...] = value``: a number is a memset; a tile or view is copied in (broadcast along free axes, cast to
    dst's dtype), only the box a masked instruction wrote when value is such a fresh result; a deferred value
    (nl.loop_reduce) writes itself."""
    if _is_scalar(value):
        nisa.memset(dst, value)
        return
    if hasattr(value, "assign_into"):
        value.assign_into(dst)
        return
    src = as_ap(value)
    if src.tensor is dst.tensor and src.pattern == dst.pattern and src.offset == dst.offset:
        return  # t[k] += x wrote in place; Python's follow-up t[k] = t[k] has nothing to copy
    tracer = current()
    made = tracer.take_fresh(value.storage) if isinstance(value, _tensor.NkiTensor) else None
    if made is not None and made[1] == ():
        return  # the statement is masked out
    src = _tensor.broadcast_to(src, dst.shape, "tile[...] =")
    box = made[1] if made is not None and src.shape == dst.shape else None
    nisa.tensor_copy(cut_box(dst, box), cut_box(src, box))
    if made is not None:
        tracer.note_assignment(made[0], value.storage)


def add_in_place(x, y, dtype, out) -> None:
    """``x += y``: an add into x; where y is a fresh result (``psum[...] += nisa.nc_matmul(...)``, classic NKI's
    accumulation), the producer may accumulate into x itself instead (Tracer._fold_accumulations)."""
    tracer = current()
    made = tracer.take_fresh(y.storage) if isinstance(y, _tensor.NkiTensor) else None
    if made is not None and made[1] == ():
        return  # the statement is masked out
    add(x, y, dtype=dtype, out=out)
    if made is not None and made[1] is None:
        tracer.note_accumulation(made[0], y.storage)


_tensor.ELEMENTWISE.update({name: globals()[name] for name in ALU_OPS}, negative=negative, add_in_place=add_in_place,
                           memset=lambda dst, value: nisa.memset(dst, value), assign=assign,
                           broadcast_to=lambda x, shape: broadcast_to(x, shape))


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


def ndarray(shape, dtype, buffer=sbuf, name: str | None = None, address=None):
    """Allocate a tensor: an SBUF tile (the default) or an HBM tensor (``shared_hbm``/``hbm``/``private_hbm``).
    ``nl.par_dim(n)`` may mark the partition dimension of a tile; axes before it are blocks:
    ``nl.ndarray((4, nl.par_dim(128), 512), ...)`` is four (128, 512) tiles, ``t[b]`` the b-th, each given
    storage from its first write to its last use (a BlockTensor). ``address=(partition_offset, free_offset)``
    places an SBUF tile there (NKI 0.3.0; bytes into each partition), checked as a direct allocation."""
    tracer = current()
    shape, par_axis = _shape(shape)
    buffer = sbuf if buffer is None else buffer
    if address is not None:
        buffer = _at_address(buffer, address, par_axis)
    if isinstance(buffer, DirectAllocation):
        buffer = tracer.traced_once(buffer)
        if not par_axis:
            return _tensor.NkiTensor(tracer.direct_tile(tracer.unique(name or "t"), shape, dtype, buffer, ()))
        return _blocks(tracer, name, shape, par_axis, dtype, buffer)
    if buffer in (sbuf, psum):
        if not par_axis:
            return tracer.sbuf(name, shape, dtype, buffer)
        return _blocks(tracer, name, shape, par_axis, dtype, buffer)
    if buffer in (shared_hbm, hbm, private_hbm):
        if buffer == shared_hbm and tracer.grid:
            return _shared(tracer, shape, dtype)
        return _hbm(tracer, name, shape, dtype)
    raise InvalidValueError(f"nl.ndarray buffer must be nl.sbuf, nl.psum, nl.shared_hbm, nl.hbm, nl.private_hbm or a direct "
                            f"allocation (ncc.sbuf.mod_alloc(...), ncc.psum.alloc(...), ...), "
                            f"got {buffer!r}")


def _blocks(tracer, name, shape, par_axis, dtype, buffer, fill=None):
    """A BlockTensor whose blocks are the tracer's block tiles; with ``fill``, each block is set to it (a memset)
    when first used, which is when its storage is given."""
    key = object()
    base = tracer.unique(name or "t")

    def make_block(index):
        block = f"{base}[{','.join(map(str, index))}]"
        if isinstance(buffer, DirectAllocation):
            tile = tracer.direct_tile(block, shape[par_axis:], dtype, buffer, index)
        else:
            tile = tracer.block_tile(block, shape[par_axis:], dtype, buffer, key)
        if fill is not None:
            nisa.memset(_tensor.NkiTensor(tile).whole, fill)
        return tile
    return _tensor.BlockTensor(name or "tile", shape, par_axis, dtypes.as_dtype(dtype), make_block)


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


def _at_address(buffer, address, par_axis) -> DirectAllocation:
    """nl.ndarray's ``address=``: the direct allocation placing its one tile at ``address`` (a PSUM tile at a bank's
    start, spanning as many banks as it needs)."""
    if buffer not in (sbuf, psum) or par_axis:
        raise InvalidValueError(f"nl.ndarray takes address= for one SBUF or PSUM tile (no nl.par_dim blocks), got "
                                f"buffer {buffer!r}; drop address= and let the allocator place it")
    if (not isinstance(address, (tuple, list)) or len(address) != 2
            or not all(_is_int(a) and not isinstance(a, bool) for a in address)):
        raise InvalidTypeError(f"nl.ndarray requires address=(partition_offset, free_offset), two integers, got "
                               f"{address!r}")
    start, offset = int(address[0]), int(address[1])
    label = f"nl.ndarray(address={(start, offset)})"
    if buffer == sbuf:
        return DirectAllocation("sbuf", lambda idx, pdim_size, fdim_size: (start, offset), label)
    if offset % PSUM_BANK_BYTES:
        raise InvalidValueError(f"{label} in PSUM requires a free_offset at a bank's start (a multiple of "
                                f"{PSUM_BANK_BYTES}), got {offset}")
    return DirectAllocation("psum", lambda idx, pdim_size, fdim_size: (offset // PSUM_BANK_BYTES, start, 0), label,
                            psum_banks=PSUM_BANKS)


def zeros(shape, dtype, buffer=sbuf, name: str | None = None, lazy_initialization: bool = False):
    """A new SBUF tile of zeros (nl.ndarray and a memset); the shape may mark ``nl.par_dim(n)``."""
    return full(shape, 0, dtype, buffer, name=name or "zeros", lazy_initialization=lazy_initialization)


def ones(shape, dtype, buffer=sbuf, name: str | None = None, lazy_initialization: bool = False):
    """A new SBUF tile of ones (nl.ndarray and a memset)."""
    return full(shape, 1, dtype, buffer, name=name or "ones", lazy_initialization=lazy_initialization)


def full(shape, fill_value, dtype, buffer=sbuf, name: str | None = None, lazy_initialization: bool = False):
    """A new SBUF tile of ``fill_value`` (nl.ndarray and a memset: the value as float32, cast to dtype).

    With block dimensions each block is set when it is first used (its storage is given then), so a tile of
    many blocks does not hold them all at once; ``lazy_initialization`` (which asks for that) changes nothing."""
    buffer = sbuf if buffer is None else buffer
    if buffer not in (sbuf, psum) and not isinstance(buffer, DirectAllocation):
        raise InvalidValueError(f"nl.full and nl.zeros require buffer=nl.sbuf or nl.psum (a memset of an on-chip "
                                f"tile), got {buffer!r}")
    if not _is_scalar(fill_value):
        raise InvalidTypeError(f"nl.full requires a number as fill_value, got {type(fill_value).__name__}")
    plain, par_axis = _shape(shape)
    if par_axis:
        if isinstance(buffer, DirectAllocation):
            buffer = current().traced_once(buffer)
        return _blocks(current(), name or "full", plain, par_axis, dtype, buffer, fill=fill_value)
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


def copy(x, dtype=None, mask: Mask | None = None):
    """A new SBUF tile holding x (a tile or view, in SBUF or PSUM; ``dtype`` casts, as the engines do)."""
    src = as_ap(x)
    out = ndarray(src.shape, dtype or src.dtype, name="copy")
    box = masked_box(mask, src.shape)
    if box != ():
        nisa.tensor_copy(cut_box(out, box), cut_box(src, box))
    fresh(out, box)
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
    with _symbolic_loop(tracer) as loop:
        if len(iterations) == 1:  # nothing to rotate: the one iteration's tiles from the loop's base, as in any loop
            yield iterations[0]
            tracer.release(base)
            return
        spans = (0, 0)  # bytes one iteration allocates, per allocator (SBUF, PSUM)
        for n, i in enumerate(iterations):
            starts = tracer.rotate(base, n, spans, ROTATING_BUFFERS)
            outer = tracer.peaks(reset=starts)  # measure this iteration's peak, inner loops' tiles included
            loop[1] = {}
            try:
                yield i
            finally:  # also when the loop is left early: the trace's own high-water mark must survive
                ends = tracer.peaks(reset=tuple(builtins.max(o, p) for o, p in zip(outer, tracer.peaks())))
            spans = tuple(builtins.max(s, _aligned(e - b)) for s, e, b in zip(spans, ends, starts))
        tracer.release(base)


@contextlib.contextmanager
def _symbolic_loop(tracer):
    """A loop NKI's front end traces once (affine_range, sequential_range), for Tracer.traced_once: yields its
    [token, {line: executions in the current iteration}] entry, on the tracer's loop stack meanwhile."""
    loop = [object(), {}]
    tracer.loops.append(loop)
    try:
        yield loop
    finally:
        tracer.loops.remove(loop)


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


def _symbolic_scoped_range(*args):
    """_scoped_range of a loop NKI's front end traces once."""
    tracer = current()
    with _symbolic_loop(tracer) as loop:
        for i in _scoped_range(*args):
            loop[1] = {}
            yield i


def static_range(*args):
    """range(...) fully unrolled (NKI: by the compiler front end), as a plain Python loop: one buffer per tile,
    so iterations keep their order."""
    yield from _scoped_range(*args)


def sequential_range(*args):
    """range(...) whose iterations are declared dependent (NKI: a loop-carried dependency): unrolled at trace
    time with one buffer per tile, so iterations keep their order. The simulator runs every Program in issue order."""
    yield from _symbolic_scoped_range(*args)


mgrid = MGrid()


def ds(start, size):
    """nl.ds(start, size): "a dynamic slice for tensor indexing", elements start .. start + size - 1 of an axis; the
    loops here are unrolled, so start is a Python integer and the slice is ``slice(start, start + size)``."""
    for what, v in (("start", start), ("size", size)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InvalidTypeError(f"nl.ds requires an integer {what}, got {v!r}; a runtime-valued start is not "
                                   f"simulated")
    if size < 1 or start < 0:
        raise InvalidValueError(f"nl.ds requires start >= 0 and size >= 1, got nl.ds({start}, {size})")
    return slice(int(start), int(start) + int(size))


def arange(*args) -> Arange:
    """``nl.arange(stop)``: indices 0..stop-1; ``nl.arange(start, stop)``: start..stop-1 (nki.language.arange);
    placed on an axis with ``[:, None]`` (partitions) or ``[None, :]`` (free)."""
    if len(args) == 1:
        return Arange(args[0])
    if len(args) == 2:
        start, stop = args
        return Arange(stop - start if _is_int(start) and _is_int(stop) else stop, start)
    raise InvalidValueError(f"nl.arange takes stop or start, stop, got {len(args)} arguments")


def _activate(name: str, x, dtype, mask):
    """``name``(x) elementwise on the scalar engine (nisa.activation), as a new tile."""
    if name not in machine_isa.ACTIVATION_FUNCS:
        raise NotSimulatedError(f"nl.{name} runs on the scalar engine's {name} function, which the NeuronCore model "
                                f"does not simulate yet (its functions: {', '.join(machine_isa.ACTIVATION_FUNCS)}); a "
                                f"kernel that uses it cannot run here yet")
    src = as_ap(x)
    out = ndarray(src.shape, dtype or _result_dtype(src), name=name)
    box = masked_box(mask, src.shape)
    if box != ():
        nisa.activation(cut_box(out, box), name, cut_box(src, box))
    fresh(out, box)
    return out


def _activation_function(name: str):
    def function(x, dtype=None, mask: Mask | None = None):
        return _activate(name, x, dtype, mask)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"nl.{name}(x): {name} of every element on the scalar engine (an activation function: "
                        f"``op=nl.{name}`` of nisa.activation), as a new tile (dtype: x's if float, else float32).")
    return function


#: The scalar engine's activation functions, each also an nl function of a tile (the "Supported Activation Functions
#: for NKI ISA" table, nki.api.shared); one the NeuronCore model does not simulate raises NotSimulatedError when
#: called.
ACTIVATION_FUNCTIONS = ("floor", "square", "sigmoid", "relu", "gelu", "gelu_dx", "gelu_apprx_tanh",
                        "gelu_apprx_sigmoid", "silu", "silu_dx", "tanh", "softplus", "mish", "erf", "erf_dx", "exp",
                        "log", "sin", "arctan", "sqrt", "rsqrt", "reciprocal", "sign", "abs")
for _name in ACTIVATION_FUNCTIONS:
    globals()[_name] = _activation_function(_name)
del _name


def _access(what: str, access, mask: Mask | None):
    """(the HBM access pattern of ``access``, restricted to the mask; the grid it spans; the mask's box)."""
    if isinstance(access, IndexedAccess):
        ap, box = access.to_ap(mask)
        return ap, access.grid, box
    if isinstance(access, _tensor.NkiTensor) and access.buffer != "sbuf":  # the whole HBM tensor
        access = access.whole
    if isinstance(access, AccessPattern) and not access.is_sbuf:  # a plain view, hbm_tensor[0:64, 3:7]
        if len(access.shape) == 1:  # hbm[0:128, k]: a (par_dim(128),) tile, one column, as the Mamba tutorial's A_i
            access = AccessPattern(access.tensor, (*access.pattern, (1, 1)), access.offset, row_size=access.row_size)
        box = mask.box(access.shape) if mask is not None else [(0, n) for n in access.shape]
        return cut(access, box), access.shape, box
    raise InvalidTypeError(f"nl.{what} takes an HBM tensor indexed with slices, nl.arange expressions or an index "
                           f"tile, e.g. data[b, load_indices, i_f], got {access!r}")


def load(access, mask: Mask | None = None, dtype=None, name: str | None = None):
    """DMA ``tensor[...]`` into a new SBUF tile of the indexed grid's shape; with a mask, only the box it keeps
    (the rest stays as fresh memory; a mask that keeps nothing drops the DMA). ``dtype`` casts in the DMA
    (dma_copy between two dtypes). A Python bool mask keeps all (True) or nothing (False)."""
    if mask is False or (mask not in (None, True) and isinstance(access, IndexedAccess)
                         and not mask.keeps_any(access.grid)):
        src, grid, _ = _access("load", access, None)
        tile = ndarray(grid, src.dtype if dtype is None else dtype, name=name or "loaded")
        fresh(tile, ())
        return tile
    mask = None if mask is True else mask
    src, grid, box = _access("load", access, mask)
    tile = ndarray(grid, src.dtype if dtype is None else dtype, name=name or "loaded")
    nisa.dma_copy(dst=cut(tile.whole, box), src=src)
    fresh(tile, box)
    return tile


def store(access, value, mask: Mask | None = None) -> None:
    """DMA a tile (or view) into ``tensor[...]``; with a mask, only the box it keeps (nothing: no DMA; a Python
    bool keeps all or nothing)."""
    if mask is False or (mask not in (None, True) and isinstance(access, IndexedAccess)
                         and not mask.keeps_any(access.grid)):
        return
    mask = None if mask is True else mask
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
    fresh(out, None)
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


#: numpy's names of the operations NKI takes as ``op=np.add`` (nl.loop_reduce, nisa.tensor_tensor_scan, ...), as
#: the ALU ops they are.
NUMPY_ALU_NAMES = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
                   "true_divide": "divide", "maximum": "maximum", "minimum": "minimum", "max": "max", "amax": "max",
                   "min": "min", "amin": "min", "fmod": "mod", "equal": "equal", "not_equal": "not_equal",
                   "greater": "greater", "greater_equal": "greater_equal", "less": "less", "less_equal": "less_equal",
                   "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor"}


def alu_name(op) -> str:
    """An ALU op given as nl's (``nl.add``), numpy's (``np.add``, ``np.max``) or by name, as its name."""
    name = getattr(op, "alu_name", None)
    if name is None and not isinstance(op, str):
        name = NUMPY_ALU_NAMES.get(getattr(op, "__name__", None))
    return machine_isa.alu_op(op if name is None else name)


def broadcast_to(x, shape):
    """x (a tile or view) read as ``shape`` by numpy's rule: a partition dimension of 1 broadcasts to
    ``shape[0]`` partitions by a DMA from that one partition into a new tile (the engines compute within
    partitions), free axes of size 1 by a step-0 view. ``tile.broadcast_to(shape)`` is the same."""
    src, shape = as_ap(x), tuple(int(n) for n in shape)
    if len(shape) == 1:
        shape = (shape[0], 1)
    if src.shape == shape or (len(src.shape) == 1 and src.shape + (1,) == shape):
        return x
    if src.shape[0] != shape[0]:
        if src.shape[0] != 1:
            raise InvalidValueError(f"nl.broadcast_to requires a partition dimension of 1 or {shape[0]} to broadcast "
                                    f"to {shape}, got {src.describe()} of shape {src.shape}")
        if not src.is_sbuf:
            raise InvalidTypeError(f"nl.broadcast_to requires an on-chip tile, got {src.describe()}; nl.load it first")
        out = ndarray((shape[0], *src.shape[1:]), src.dtype, name="broadcast")
        repeated = AccessPattern(src.tensor, ((0, shape[0]), *src.pattern[1:]), src.offset, row_size=src.row_size)
        nisa.dma_copy(dst=out, src=repeated)
        fresh(out, None)
        if out.shape == shape:
            return out
        src = out.whole
    view = _tensor.broadcast_to(src, shape, "nl.broadcast_to")
    return _tensor.TileView(view.tensor, view.pattern, view.offset, row_size=view.row_size)


def matmul(x, y, transpose_x: bool = False, mask: Mask | None = None):
    """``x @ y`` on the tensor engine, as a new float32 PSUM tile: nisa.nc_matmul computes ``stationary.T @ moving``,
    so x (M, K) is first transposed (nisa.nc_transpose into PSUM, copied to SBUF), unless ``transpose_x`` says x is
    given as (K, M) already (nl.matmul's documented lowering). With a mask, the box it keeps of the (M, N) result."""
    stationary, moving = as_ap(x), as_ap(y)
    if not transpose_x:
        flipped = ndarray((stationary.shape[1], stationary.shape[0]), stationary.dtype, buffer=psum, name="transposed")
        nisa.nc_transpose(flipped, stationary)
        stationary = as_ap(copy(flipped))
    out = ndarray((stationary.shape[1], *moving.shape[1:]), float32, buffer=psum, name="matmul")
    box = masked_box(mask, out.shape)
    if box == ():
        fresh(out, box)
        return out
    if box is not None:
        stationary = cut(stationary, [(0, stationary.shape[0]), box[0]])
        moving = cut(moving, [(0, moving.shape[0]), *box[1:]])
    nisa.nc_matmul(cut_box(out, box), stationary, moving)
    fresh(out, box)
    return out


class _LoopReduce:
    """nl.loop_reduce's value: assigned into a tile, it starts the reduction there (the loops' first iteration)
    or folds x into it (``dst = dst op x``)."""

    def __init__(self, x, op: str, first: bool, mask):
        self.x, self.op, self.first, self.mask = x, op, first, mask

    def assign_into(self, dst) -> None:
        src = _tensor.broadcast_to(as_ap(self.x), dst.shape, "nl.loop_reduce")
        box = masked_box(self.mask, dst.shape)
        if box == ():
            return
        dst, src = cut_box(dst, box), cut_box(src, box)
        if self.first:
            nisa.tensor_copy(dst, src)
        else:
            nisa.tensor_tensor(dst, dst, src, op=self.op)


def loop_reduce(x, op, loop_indices, dtype=None, mask: Mask | None = None):
    """``dst[...] = nl.loop_reduce(x, op, loop_indices)``: reduce x with ``op`` over the iterations of the loops
    ``loop_indices`` into dst (dst is op's left operand, x its right): the first iteration (every index 0) copies
    x in, the others apply op (nisa.tensor_copy / nisa.tensor_tensor, in float32, cast to dst's dtype, so ``dtype``
    changes nothing here). Loops are unrolled at trace time, so the indices are integers."""
    indices = loop_indices if isinstance(loop_indices, (list, tuple)) else [loop_indices]
    if any(isinstance(i, bool) or not isinstance(i, (int, np.integer)) for i in indices):
        raise InvalidTypeError(f"nl.loop_reduce requires loop indices of nl.affine_range loops (integers when "
                               f"traced), got {loop_indices!r}")
    return _LoopReduce(x, alu_name(op), all(int(i) == 0 for i in indices), mask)

#: The NKI names this module defines (what ``from ... import *`` and the classic dialect's nl share).
__all__ = ["float32", "bfloat16", "float16", "int32", "int16", "int8", "uint8", "uint16", "uint32", "bool_",
           "float8_e4m3", "float8_e5m2", "float8_e4m3fn",
           "sbuf", "shared_hbm", "hbm", "private_hbm", "psum", "tile_size", "negative", "where", "finfo",
           "iinfo", "par_dim", "ndarray", "program_id", "num_programs", "program_ndim", "static_cast", "zeros",
           "ones", "full", "shared_constant", "copy", "affine_range", "static_range", "sequential_range", "mgrid",
           "arange", "ds", "load", "store", "sum", "max", "min", "mean", "broadcast_to", "matmul",
           "loop_reduce"]
__all__.extend([*ALU_OPS, *ACTIVATION_FUNCTIONS])  # apart: documentation tools read the list above as literal strings


def __getattr__(name: str):
    """An NKI name this module does not simulate: a clear error, never a silent stand-in."""
    raise not_simulated("nl", name)

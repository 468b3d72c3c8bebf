"""nisa of the classic dialect (``neuronxcc.nki.isa``, NKI Beta 1): value-returning instructions.

Each call is the classic page's signature (nki.isa.* of Neuron SDK 2.21-2.26,
e.g. ``nc_matmul(stationary, moving, *, is_stationary_onezero=False, ...,
mask=None)``): it allocates its result tile (SBUF; PSUM for ``nc_matmul`` and a
tensor-engine ``nc_transpose``, as those pages say), of the documented shape and
dtype (``dtype=`` or the page's default), and calls the dst-first instruction of
``resize_kernels.nki.isa`` (NKI 0.3.0's ``nki.isa``: the Beta 2 migration guide's
"Explicit dst parameter is now required ... and is always the first argument").
A ``mask`` restricts the instruction to the box of the result's grid it keeps,
or drops it when it keeps nothing ("skip generating the instruction or generate
the instruction with a smaller input tile shape", NKI API Masking). Assigning the
result into a tile (``t[...] = nisa.exp(...)``) makes the instruction write
there (the tracer folds the copy). An instruction the machine does not simulate
(or an option of one) is a NotSimulatedError naming it.
"""

from __future__ import annotations

import functools
import inspect
import operator
from enum import IntEnum

import numpy as np

from .. import isa as base
from .. import language as nl
from ..index import IndexExpr, Mask, cut
from ..promotion import is_scalar, promote_types
from ..tensor import as_ap, broadcast_to, free_shape_broadcast
from ..tracer import current, tracing
from ...errors import InvalidTypeError, InvalidValueError, NotSimulatedError, not_simulated
from ...machine import dtypes

# The engines, as the dst-first module names them (nisa.engine.vector, nisa.vector_engine, ...).
engine = base.engine
tensor_engine, vector_engine, scalar_engine, gpsimd_engine, unknown_engine = (
    base.tensor_engine, base.vector_engine, base.scalar_engine, base.gpsimd_engine, base.unknown_engine)


#: The engines' accumulator register commands (classic nisa.reduce_cmd: idle, reset, reduce, reset_reduce), as the
#: dst-first module names them.
reduce_cmd = base.reduce_cmd


class oob_mode(IntEnum):
    """Out-of-bounds DMA access mode (classic nisa.oob_mode): only ``error`` is simulated (the machine's checks)."""

    error = 0
    skip = 1


class dge_mode(IntEnum):
    """Descriptor generation mode of a DMA (classic nisa.dge_mode); the cost model chooses none of them."""

    none = 0
    swdge = 1
    hwdge = 2
    unknown = 3


class nc_version(IntEnum):
    """NeuronCore version (classic nisa.nc_version)."""

    gen2 = 2
    gen3 = 3


def get_nc_version() -> nc_version:
    """The NeuronCore version of the platform being traced for: gen3 on trn2, else gen2 (trn1, the default)."""
    return nc_version.gen3 if tracing() and current().platform == "trn2" else nc_version.gen2


@functools.lru_cache(maxsize=None)
def _parameters(function) -> frozenset:
    return frozenset(inspect.signature(function).parameters)


def _call(name: str, *args, **options):
    """The dst-first ``nisa.<name>`` with ``args`` and the ``options`` a kernel set (those left at their default
    are not passed); one the machine does not simulate is a NotSimulatedError naming it."""
    function = getattr(base, name)  # NotSimulatedError (nisa.<name>) if the machine has no such instruction
    missing = [k for k in options if k not in _parameters(function)]
    if missing:
        raise NotSimulatedError(f"nisa.{name}'s {missing[0]}= is not simulated by resize_kernels.nki; leave it at its "
                                f"default")
    return function(*args, **options)


def _set(**options) -> dict:
    """The options that differ from their documented defaults, given as name=(value, default) (a tile always does:
    it is compared by identity, never by ``!=``, which on tiles is an instruction)."""
    def differs(value, default) -> bool:
        if value is default:
            return False
        if is_scalar(value) or isinstance(value, (tuple, list, str)):
            return value != default
        return True
    return {k: v for k, (v, default) in options.items() if differs(v, default)}


def _engine(name: str, value) -> dict:
    """The ``engine=`` to pass on: none for the compiler's choice (unknown) or the engine the instruction runs on
    anyway; another is passed, and is a NotSimulatedError where the dst-first call takes no engine."""
    if value in (None, unknown_engine, engine.unknown):
        return {}
    if name in ("tensor_tensor", "tensor_scalar", "memset") and value == vector_engine and \
            "engine" not in _parameters(getattr(base, name)):
        return {}
    return {"engine": value}


def _result(shape, dtype, name: str, buffer=nl.sbuf):
    return nl.ndarray(tuple(int(n) for n in shape), dtypes.as_dtype(dtype), buffer=buffer, name=name)


def _grid(x) -> tuple:
    return as_ap(x).shape


def _tile(x, box):
    """A tile operand of the instruction's grid, restricted to a mask's box."""
    return nl.cut_box(x, box)


def _vector(x, box):
    """A number, or a per-partition (P, 1) tile restricted to the box's partitions."""
    if x is None or is_scalar(x):
        return x
    ap = as_ap(x)
    return ap if box is None else cut(ap, [box[0]])


def _done(out, box):
    nl.fresh(out, box)
    return out


#: Reductions kernels name by numpy's reducing functions (np.sum, np.prod, np.max, np.min: allocated_attention's
#: ``reduce_op=np.sum``), as the ALU ops they reduce with.
_REDUCING = {np.sum: "add", np.prod: "multiply", np.max: "max", np.min: "min"}


def _op(op):
    return _REDUCING.get(op) or nl.alu_name(op)


def _function(op) -> str:
    """An activation function given as nl's (``nl.exp``), numpy's (``np.exp``, ``np.abs``) or by name."""
    if isinstance(op, str):
        return op
    name = getattr(op, "__name__", None)
    if name is None:
        raise InvalidTypeError(f"nisa.activation requires an activation function (nl.exp, np.tanh, ...), got {op!r}")
    return {"absolute": "abs"}.get(name, name)


def activation(op, data, *, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle,
               mask=None, dtype=None):
    """out = op(data * scale + bias) on the scalar engine (classic nki.isa.activation); scale and bias are numbers or
    (P, 1) tiles; dtype defaults to data's. Returns the new tile."""
    out = _result(_grid(data), dtype or as_ap(data).dtype, "activation")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    options = _set(bias=(_vector(bias, box), None), scale=(_vector(scale, box), 1.0), reduce_op=(reduce_op, None),
                   reduce_res=(_vector(reduce_res, box), None), reduce_cmd=(reduce_cmd, base.reduce_cmd.idle))
    _call("activation", _tile(out, box), _function(op), _tile(data, box), **options)
    return _done(out, box)


def activation_reduce(op, data, *, reduce_op, reduce_res, bias=None, scale=1.0, mask=None, dtype=None):
    """activation, and reduce_op over each partition's results into ``reduce_res`` (classic
    nki.isa.activation_reduce)."""
    out = _result(_grid(data), dtype or as_ap(data).dtype, "activation")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    options = _set(bias=(_vector(bias, box), None), scale=(_vector(scale, box), 1.0))
    _call("activation_reduce", _tile(out, box), _function(op), _tile(data, box), _op(reduce_op),
          _vector(reduce_res, box), **options)
    return _done(out, box)


def tensor_tensor(data1, data2, op, *, dtype=None, mask=None, engine=unknown_engine):
    """out = data1 op data2 elementwise (classic nki.isa.tensor_tensor); dtype defaults to the inputs' promoted
    type ("whichever has the highest precision", NKI type promotion). A free axis of size 1 repeats along the
    other operand's (a step-0 read, costed as any tensor_tensor): the page asks for equal sizes yet points to
    tensor_scalar for "broadcasting capability in the free dimension" as the faster way, and nki-samples'
    quantized_double_row_matmul multiplies a (P, N) tile by a (P, 1) one so."""
    a, b = as_ap(data1), as_ap(data2)
    if a.shape != b.shape:
        shape = free_shape_broadcast(a.shape, b.shape, "classic nisa.tensor_tensor")
        a, b = (broadcast_to(x, shape, "classic nisa.tensor_tensor") for x in (a, b))
    out = _result(a.shape, dtype or promote_types(a.dtype, b.dtype), "tensor_tensor")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    _call("tensor_tensor", _tile(out, box), _tile(a, box), _tile(b, box), _op(op), **_engine("tensor_tensor", engine))
    return _done(out, box)


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, *, dtype=None,
                  mask=None, engine=unknown_engine):
    """out = (data op0 operand0) op1 operand1 (classic nki.isa.tensor_scalar); operands are numbers or (P, 1)
    tiles; dtype defaults to data's."""
    out = _result(_grid(data), dtype or as_ap(data).dtype, "tensor_scalar")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    _call("tensor_scalar", _tile(out, box), _tile(data, box), _op(op0), _vector(operand0, box), reverse0,
          None if op1 is None else _op(op1), _vector(operand1, box), reverse1, **_engine("tensor_scalar", engine))
    return _done(out, box)


def scalar_tensor_tensor(*, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, dtype=None,
                         mask=None):
    """out = (data op0 operand0) op1 operand1, operand0 a number or (P, 1) tile, operand1 a tile of data's shape
    (classic nki.isa.scalar_tensor_tensor)."""
    out = _result(_grid(data), dtype or as_ap(data).dtype, "scalar_tensor_tensor")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    _call("scalar_tensor_tensor", _tile(out, box), _tile(data, box), _op(op0), _vector(operand0, box), _op(op1),
          _tile(operand1, box), reverse0, reverse1)
    return _done(out, box)


def tensor_scalar_reduce(*, data, op0, operand0, reduce_op, reduce_res, reverse0=False, dtype=None, mask=None):
    """tensor_scalar with one op, and reduce_op over each partition's results into ``reduce_res`` (classic
    nki.isa.tensor_scalar_reduce)."""
    out = _result(_grid(data), dtype or as_ap(data).dtype, "tensor_scalar")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    _call("tensor_scalar_reduce", _tile(out, box), _tile(data, box), _op(op0), _vector(operand0, box),
          _op(reduce_op), _vector(reduce_res, box), reverse0)
    return _done(out, box)


def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *, dtype=None, mask=None):
    """out[:, i] = (data0[:, i] op0 out[:, i - 1]) op1 data1[:, i], out[:, -1] = initial (a number or (P, 1) tile),
    along each partition (classic nki.isa.tensor_tensor_scan); dtype defaults to the inputs' promoted type."""
    a, b = as_ap(data0), as_ap(data1)
    out = _result(a.shape, dtype or promote_types(a.dtype, b.dtype), "tensor_tensor_scan")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    _call("tensor_tensor_scan", _tile(out, box), _tile(a, box), _tile(b, box), _vector(initial, box), _op(op0),
          _op(op1), reverse0, reverse1)
    return _done(out, box)


def tensor_copy(src, *, mask=None, dtype=None, engine=unknown_engine):
    """A copy of src (classic nki.isa.tensor_copy), cast to ``dtype``; on the scalar engine a copy activation (it
    casts through float32, as the page says of that engine)."""
    out = _result(_grid(src), dtype or as_ap(src).dtype, "tensor_copy")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    if engine == scalar_engine:
        _call("activation", _tile(out, box), "copy", _tile(src, box))
    else:
        _call("tensor_copy", _tile(out, box), _tile(src, box), **_engine("tensor_copy", engine))
    return _done(out, box)


def reciprocal(data, *, dtype=None, mask=None):
    """1 / data elementwise on the vector engine (classic nki.isa.reciprocal); dtype defaults to data's."""
    out = _result(_grid(data), dtype or as_ap(data).dtype, "reciprocal")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    _call("reciprocal", _tile(out, box), _tile(data, box))
    return _done(out, box)


def memset(shape, value, dtype, *, mask=None, engine=unknown_engine):
    """A new tile of ``shape`` filled with ``value`` cast to dtype (classic nki.isa.memset; nl.par_dim in the shape
    is ignored, the first dimension is the partitions)."""
    out = _result(shape, dtype, "memset")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    _call("memset", _tile(out, box), value, **_engine("memset", engine))
    return _done(out, box)


def iota(expr, dtype, *, mask=None):
    """A new tile of an affine nl.arange expression's values (classic nki.isa.iota), computed by GpSimd."""
    if not isinstance(expr, IndexExpr):
        raise InvalidTypeError(f"nisa.iota requires an affine expression of nl.arange indices, got {expr!r}")
    shape = expr.shape() if expr.rank > 1 else (*expr.shape(), 1)
    box = nl.masked_box(mask, shape)
    if box is None:
        return _done(base.iota(expr, dtype=dtypes.as_dtype(dtype)), None)
    out = _result(shape, dtype, "iota")
    if box == ():
        return _done(out, box)
    coefs = expr.coefs if expr.rank > 1 else (*expr.coefs, 0)
    offset = expr.const + sum(c * lo for c, (lo, _) in zip(coefs, box))
    pattern = tuple((c, hi - lo) for c, (lo, hi) in zip(coefs[1:], box[1:]))
    base.iota(_tile(out, box), pattern, offset, coefs[0])
    return _done(out, box)


#: A mask's comparison (Python's operator) -> the ALU op the engine compares the affine value with 0 by.
_COMPARISONS = {operator.lt: "less", operator.le: "less_equal", operator.gt: "greater", operator.ge: "greater_equal",
                operator.eq: "equal", operator.ne: "not_equal"}


def affine_select(pred, on_true_tile, on_false_value, *, mask=None, dtype=None):
    """on_true_tile where the affine predicate ``pred`` (one comparison of nl.arange / nl.mgrid expressions, e.g.
    ``q_pos >= k_pos``) holds, else on_false_value, on GpSimd (classic nki.isa.affine_select): the dst-first call's
    pattern, offset and channel_multiplier are pred's expression less its right side, compared with 0."""
    if not isinstance(pred, Mask) or len(pred.terms) != 1:
        raise InvalidValueError(f"nisa.affine_select requires pred to be one comparison of affine index expressions "
                                f"(the page: it \"can't be multiple masks combined\"), got {pred!r}; use nl.where")
    (expr, op, value), = pred.terms
    src = as_ap(on_true_tile)
    out = _result(src.shape, dtype or src.dtype, "affine_select")
    if expr.rank != len(src.shape):
        raise InvalidValueError(f"nisa.affine_select's pred is over a grid of {expr.rank} axes, on_true_tile has "
                                f"shape {src.shape}")
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    ranges = box or [(0, n) for n in out.shape]
    offset = expr.const - value + sum(c * lo for c, (lo, _) in zip(expr.coefs, ranges))
    pattern = [(c, hi - lo) for c, (lo, hi) in zip(expr.coefs[1:], ranges[1:])]
    _call("affine_select", _tile(out, box), pattern, offset, expr.coefs[0], _tile(src, box), on_false_value,
          cmp_op=_COMPARISONS[op])
    return _done(out, box)


def tensor_reduce(op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False):
    """op over the free axes ``axis`` of data, per partition (classic nki.isa.tensor_reduce); the result drops them
    (keeps them as 1 with ``keepdims``); dtype defaults to data's."""
    src = as_ap(data)
    rank = len(src.shape)
    axes = sorted({int(a) % rank for a in (axis if isinstance(axis, (list, tuple)) else [axis])})
    shape = tuple(1 if k in axes else n for k, n in enumerate(src.shape)) if keepdims else tuple(
        n for k, n in enumerate(src.shape) if k not in axes)
    out = _result(shape, dtype or src.dtype, "tensor_reduce")
    box = nl.masked_box(mask, src.shape)
    if box == ():
        return _done(out, box)
    kept = None if box is None else [(lo, hi) if k not in axes else (0, 1)
                                     for k, (lo, hi) in enumerate(box) if keepdims or k not in axes]
    _call("tensor_reduce", nl.cut_box(out, kept), _op(op), _tile(src, box), list(axes), **_set(
        negate=(negate, False), keepdims=(keepdims, False)))
    return _done(out, kept)


def dma_copy(*, dst, src, mask=None, dst_rmw_op=None, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown):
    """Copy src to dst by DMA (classic nki.isa.dma_copy; dst is given, nothing is returned); ``dst_rmw_op=np.add``
    adds into dst."""
    if oob_mode != 0:
        raise NotSimulatedError("nisa.dma_copy's oob_mode=skip is not simulated by resize_kernels.nki (the machine "
                                "fails on an out-of-bounds access); leave it at oob_mode.error")
    rmw = None if dst_rmw_op is None else getattr(nl, _op(dst_rmw_op))
    base.dma_copy(dst, src, dst_rmw_op=rmw, mask=mask)


#: Classic nc_matmul's ``perf_mode`` values -> the dst-first module's: "double_row_gen3" is NeuronCore-v3's double
#: FP8 mode (the Neuron 2.23-2.26 docs' nc_matmul example passes ``perf_mode="double_row_gen3"``).
CLASSIC_PERF_MODES = {None: base.matmul_perf_mode.none, "none": base.matmul_perf_mode.none,
                      "double_row_gen3": base.matmul_perf_mode.double_row}


def nc_matmul(stationary, moving, *, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False,
              tile_position=(), tile_size=(), mask=None, perf_mode=None):
    """stationary.T @ moving on the tensor engine into a new float32 PSUM tile of shape (stationary's free size,
    moving's free size) (classic nki.isa.nc_matmul). ``is_transpose`` is the page's hint that moving is an identity
    matrix (the product is then stationary's transpose): the product is computed as it is, so it is not passed on.
    The operands are read from SBUF (the page's "on SBUF"); one in PSUM (a tensor-engine nc_transpose's result, as
    the nki-samples attention backward passes it) is copied to SBUF first, the extra copy classic nl.store
    documents for a PSUM tile (ASSUMED the compiler's move here; the page states none). ``perf_mode=
    "double_row_gen3"``: the double FP8 mode, float8 stationary (K, 2, M) and moving (K, 2, N) giving (M, N)."""
    if not isinstance(perf_mode, (str, type(None))) or perf_mode not in CLASSIC_PERF_MODES:
        raise InvalidValueError(f"classic nisa.nc_matmul requires perf_mode 'double_row_gen3' (NeuronCore-v3's "
                                f"double FP8 mode) or none, got {perf_mode!r}")
    mode = CLASSIC_PERF_MODES[perf_mode]
    a, b = (as_ap(nl.copy(x) if as_ap(x).is_sbuf and as_ap(x).tensor.memory == nl.psum else x)
            for x in (stationary, moving))
    first = 2 if mode == base.matmul_perf_mode.double_row else 1  # double_row: axis 1 (the 2) is contraction
    out = _result((int(np.prod(a.shape[first:])), *b.shape[first:]), nl.float32, "nc_matmul", buffer=nl.psum)
    box = nl.masked_box(mask, out.shape)
    if box == ():
        return _done(out, box)
    if box is not None:
        if first == 2:
            raise NotSimulatedError("classic nisa.nc_matmul's mask= with perf_mode='double_row_gen3' is not "
                                    "simulated by resize_kernels.nki; pass the operands' slices instead")
        a = cut(a, [(0, a.shape[0]), box[0]])
        b = cut(b, [(0, b.shape[0]), *box[1:]])
    _call("nc_matmul", _tile(out, box), a, b, **_set(
        is_stationary_onezero=(is_stationary_onezero, False), is_moving_onezero=(is_moving_onezero, False),
        tile_position=(tuple(tile_position), ()),
        tile_size=(tuple(tile_size), ()), perf_mode=(mode, base.matmul_perf_mode.none)))
    return _done(out, box)


#: The largest tile the vector engine transposes (classic nki.isa.nc_transpose: "Vector Engine can handle shape
#: (32, 32) or smaller"); the compiler's choice of engine when none is given.
VECTOR_TRANSPOSE_MAX = 32


def nc_transpose(data, *, mask=None, dtype=None, engine=unknown_engine):
    """The (F, P) transpose of a (P, F) tile (free axes flattened) (classic nki.isa.nc_transpose): on the tensor
    engine into PSUM, on the vector engine (tiles up to 32 x 32, its choice when none is given) into SBUF; a
    ``dtype`` other than data's casts the result (an extra copy)."""
    src = as_ap(data)
    free = int(np.prod(src.shape[1:]))
    if engine in (None, unknown_engine, base.engine.unknown):
        small = src.shape[0] <= VECTOR_TRANSPOSE_MAX and free <= VECTOR_TRANSPOSE_MAX
        engine = vector_engine if small else tensor_engine
    buffer = nl.psum if engine == tensor_engine else nl.sbuf
    out = _result((free, src.shape[0]), src.dtype, "nc_transpose", buffer=buffer)
    box = nl.masked_box(mask, src.shape)
    if box == ():
        return _done(out, box)
    if box is not None:
        raise NotSimulatedError("nisa.nc_transpose's mask= is not simulated by resize_kernels.nki; transpose a view "
                                "of the tile instead")
    _call("nc_transpose", out, src, engine=engine)
    nl.fresh(out, None)
    return out if dtype is None or dtypes.as_dtype(dtype) == out.dtype else nl.copy(out, dtype)


def _per_partition(name: str, data, width: int, mask, dtype):
    """A (P, width) result of an instruction that reduces each partition of ``data``: a mask selects the box of
    data's grid it reads (the instruction's iteration space, NKI API Masking); the result keeps the box's
    partitions."""
    src = as_ap(data)
    out = _result((src.shape[0], width), dtype or src.dtype, name)
    box = nl.masked_box(mask, src.shape)
    if box == ():
        return _done(out, box)
    rows = None if box is None else [box[0]]
    _call(name, nl.cut_box(out, rows), _tile(src, box))
    return _done(out, rows)


def bn_stats(data, *, mask=None, dtype=None):
    """Per partition, (count, mean, variance * count) of the even and of the odd elements: a (P, 6) tile (classic
    nki.isa.bn_stats); dtype defaults to data's; a mask selects the elements read."""
    return _per_partition("bn_stats", data, 6, mask, dtype)


def bn_aggr(data, *, mask=None, dtype=None):
    """The mean and variance per partition of one or more bn_stats results: a (P, 2) tile (classic
    nki.isa.bn_aggr); a mask selects the elements read."""
    return _per_partition("bn_aggr", data, 2, mask, dtype)


def tensor_partition_reduce(op, data, *, mask=None, dtype=None):
    """op across the partitions of data: a (1, F...) tile (classic nki.isa.tensor_partition_reduce)."""
    src = as_ap(data)
    out = _result((1, *src.shape[1:]), dtype or src.dtype, "tensor_partition_reduce")
    box = nl.masked_box(mask, src.shape)  # the box of data's grid read; the result keeps its free ranges
    if box == ():
        return _done(out, box)
    kept = None if box is None else [(0, 1), *box[1:]]
    _call("tensor_partition_reduce", nl.cut_box(out, kept), _op(op), _tile(src, box))
    return _done(out, kept)


def __getattr__(name: str):
    """An NKI name this module does not simulate: a clear error, never a silent stand-in."""
    raise not_simulated("nisa", name)


__all__ = ["engine", "tensor_engine", "vector_engine", "scalar_engine", "gpsimd_engine", "unknown_engine",
           "reduce_cmd", "oob_mode", "dge_mode", "nc_version", "get_nc_version", "activation", "activation_reduce",
           "tensor_tensor", "tensor_scalar", "scalar_tensor_tensor", "tensor_scalar_reduce", "tensor_tensor_scan",
           "tensor_copy", "reciprocal", "memset", "iota", "affine_select", "tensor_reduce", "dma_copy", "nc_matmul", "nc_transpose",
           "bn_stats", "bn_aggr", "tensor_partition_reduce"]

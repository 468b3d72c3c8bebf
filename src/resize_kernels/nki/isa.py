"""nisa: one call, one instruction, with an explicit destination (NKI 0.3.0's dst-first ``nki.isa``).

Operands are SBUF or PSUM tiles or access patterns (``t[0:n, 0:1]``, ``t.ap(...)``);
scalar operands are Python numbers, used as float32 by the engines; where NKI
takes "a scalar or a (P, 1) vector" (tensor_scalar's operands, activation's
scale and bias, a scan's initial value), a (P, 1) tile gives each partition its
own value. Names, argument names and their order are NKI 0.3.0's; ``name=`` is
accepted and unused.
"""

from __future__ import annotations

import weakref
from types import SimpleNamespace

import numpy as np

from ..errors import InvalidTypeError, InvalidValueError, not_simulated
from ..machine import dtypes
from ..machine import isa as m
from .index import IndexedAccess, IndexExpr, cut
from .promotion import is_scalar
from .tensor import as_ap
from .tracer import current

#: NKI's engine names (``nisa.engine.vector`` or ``nisa.vector_engine``), for the ``engine=`` arguments.
engine = SimpleNamespace(tensor="tensor", vector="vector", scalar="scalar", gpsimd="gpsimd", dma="dma", sync="sync",
                         unknown="unknown")
_ENGINES = engine  # the namespace, for functions whose ``engine`` argument hides it
tensor_engine, vector_engine, scalar_engine, gpsimd_engine, unknown_engine = (
    engine.tensor, engine.vector, engine.scalar, engine.gpsimd, engine.unknown)
#: The scalar engine's reduce-register commands (``nisa.reduce_cmd.reset_reduce``).
reduce_cmd = SimpleNamespace(idle="idle", reset="reset", reduce="reduce", reset_reduce="reset_reduce",
                             load_reduce="load_reduce")
#: nc_matmul's performance modes (``nisa.matmul_perf_mode.none``); double_row needs float8 inputs (NcMatmul).
matmul_perf_mode = SimpleNamespace(none="none", double_row="double_row")


def _engine(value, call: str, allowed: dict) -> str:
    """The machine engine an ``engine=`` argument names (None and unknown: the default NKI's compiler would pick)."""
    name = allowed.get("unknown" if value is None else value)
    if name is None:
        choices = ", ".join(f"nisa.engine.{e}" for e in allowed if e != "unknown")
        raise InvalidValueError(f"{call} runs on {choices} here, got engine={value!r}")
    return name


def _alu(op, call: str) -> str:
    """An ALU op given as NKI does: ``nl.add`` (alu_name), its name, or the numpy function of that name (np.add)."""
    name = getattr(op, "alu_name", None) or (op if isinstance(op, str) else getattr(op, "__name__", None))
    if name not in m.ALU_OPS:
        raise InvalidValueError(f"{call} requires an ALU op ({', '.join(sorted(m.ALU_OPS))}), got {op!r}")
    return name


def _operand(x, call: str, what: str):
    """A scalar-or-vector operand: a float for a number, else the (P, 1) tile's access pattern."""
    if is_scalar(x):
        return float(x)
    try:
        return as_ap(x)
    except InvalidTypeError:
        raise InvalidValueError(f"{call} requires a Python number as {what} or a (P, 1) tile, got "
                                f"{type(x).__name__}; put per-partition values in a tile first") from None


def iota(dst, pattern=None, offset=0, channel_multiplier=0, name=None, dtype=None):
    """dst[p, x...] = offset + p * channel_multiplier + sum(step_k * x_k) (GpSimd).

    The expression form ``iota(expr, dtype=...)`` (an nl.arange expression in
    place of dst) allocates and returns a new (p_size, f_size) tile of its values.
    """
    if isinstance(dst, IndexExpr):
        expr = dst
        shape = expr.shape() if expr.rank > 1 else (*expr.shape(), 1)
        tile = current().sbuf("iota", shape, dtype or dtypes.int32)
        free = tuple(zip(expr.coefs[1:], shape[1:])) if expr.rank > 1 else ((0, 1),)
        current().emit(m.Iota(as_ap(tile), free, expr.const, expr.coefs[0]))
        return tile
    if pattern is None:
        raise InvalidValueError("nisa.iota takes a destination and a pattern, or an nl.arange expression")
    current().emit(m.Iota(as_ap(dst), tuple(tuple(int(v) for v in p) for p in pattern), int(offset),
                          int(channel_multiplier)))
    return None


def affine_select(dst, pattern, offset, channel_multiplier, on_true_tile, on_false_value, cmp_op="equal", name=None):
    """dst = on_true_tile where cmp_op(offset + p * channel_multiplier + sum(step_k * x_k), 0), else on_false_value
    (a float32 number), on GpSimd; the affine value is iota's, over dst's free elements in order."""
    if not is_scalar(on_false_value):
        raise InvalidTypeError(f"nisa.affine_select requires a number as on_false_value, got {on_false_value!r}")
    current().emit(m.AffineSelect(as_ap(dst), as_ap(on_true_tile), tuple(tuple(int(v) for v in p) for p in pattern),
                                  int(offset), int(channel_multiplier), _alu(cmp_op, "nisa.affine_select"),
                                  float(on_false_value)))


#: tensor_scalar's op pairs on the scalar engine (nki.isa.tensor_scalar: "The Scalar Engine on trn2 only supports
#: some operator combinations"; trn1's are a superset the docs do not list, so these are taken for both).
_SCALAR_ENGINE_OPS = (("multiply", "add"), ("multiply", None), ("add", None))


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, engine=None,
                  name=None) -> None:
    """dst = (data op0 operand0) op1 operand1, elementwise on the vector engine (or ``engine=nisa.scalar_engine``).

    Each operand is a number or a (P, 1) float32 tile broadcast along each partition's free elements.
    """
    if (op1 is None) != (operand1 is None):
        raise InvalidValueError("tensor_scalar takes op1 and operand1 together")
    where = _engine(engine, "nisa.tensor_scalar", {"unknown": "vector", "vector": "vector", "scalar": "scalar"})
    ops = (_alu(op0, "nisa.tensor_scalar"), None if op1 is None else _alu(op1, "nisa.tensor_scalar"))
    if where == "scalar" and ops not in _SCALAR_ENGINE_OPS:
        raise InvalidValueError(f"nisa.tensor_scalar on the scalar engine takes op0, op1 = multiply, add; multiply; "
                                f"or add (the documented combinations), got {ops}; use the vector engine")
    current().emit(m.TensorScalar(as_ap(dst), as_ap(data), ops[0], _operand(operand0, "nisa.tensor_scalar", "operand0"),
                                  bool(reverse0), ops[1],
                                  None if operand1 is None else _operand(operand1, "nisa.tensor_scalar", "operand1"),
                                  bool(reverse1), where))


def tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res, reverse0=False, name=None) -> None:
    """dst = data op0 operand0 on the vector engine, and reduce_op (add, subtract, multiply, max, min) over each
    partition's results into ``reduce_res``, a (P, 1) tile (nki.isa.tensor_scalar_reduce)."""
    reduce = _alu(reduce_op, "nisa.tensor_scalar_reduce")
    reduce = {"maximum": "max", "minimum": "min"}.get(reduce, reduce)  # np.maximum names nl.max's reduction
    if reduce not in m.REDUCE_OPS:
        raise InvalidValueError(f"nisa.tensor_scalar_reduce requires reduce_op to be one of "
                                f"{', '.join('nl.' + op for op in m.REDUCE_OPS)}, got {reduce_op!r}")
    current().emit(m.TensorScalar(as_ap(dst), as_ap(data), _alu(op0, "nisa.tensor_scalar_reduce"),
                                  _operand(operand0, "nisa.tensor_scalar_reduce", "operand0"), bool(reverse0),
                                  reduce_op=reduce, reduce_res=as_ap(reduce_res)))


def tensor_tensor(dst, data1, data2, op, engine=None, name=None) -> None:
    """dst = data1 op data2, elementwise on the vector engine."""
    _engine(engine, "nisa.tensor_tensor", {"unknown": "vector", "vector": "vector"})
    current().emit(m.TensorTensor(as_ap(dst), as_ap(data1), as_ap(data2), m.alu_op(op)))


def tensor_copy(dst, src, engine=None, name=None) -> None:
    """dst = src; a cast (through float32, RNE, saturating) when the dtypes differ. ``engine``: the vector engine
    (default; also for nisa.unknown_engine, the compiler's choice) or GpSimd, both bit-exact for equal dtypes."""
    name = {None: "vector", "unknown": "vector", "vector": "vector", "gpsimd": "gpsimd"}.get(engine)
    if name is None:
        raise InvalidValueError(f"nisa.tensor_copy runs on nisa.vector_engine or nisa.gpsimd_engine, got {engine!r}; "
                                f"on the scalar engine copy with nisa.activation(dst, nl.copy, src) (NeuronCore-v2 "
                                f"has no scalar tensor_copy)")
    current().emit(m.TensorCopy(as_ap(dst), as_ap(src), name))


def dma_copy(dst, src, dst_rmw_op=None, mask=None) -> None:
    """Copy bits between HBM and SBUF; ``src`` may be an indirect gather (``.ap(vector_offset=...)``).

    With ``dst_rmw_op=nl.add`` the DMA adds src into dst instead (read-modify-write
    in float32, into HBM); dst may then be an indirect scatter, where repeated
    rows all count.
    """
    indexed = next((x for x in (dst, src) if isinstance(x, IndexedAccess)), None)
    if indexed is not None:  # data[i_p, i_f]: index expressions (past the end where the mask cuts them)
        ap, box = indexed.to_ap(mask)
        other = as_ap(src if indexed is dst else dst)
        dst, src = (ap, cut(other, box)) if indexed is dst else (cut(other, box), ap)
    else:
        dst, src = as_ap(dst), as_ap(src)
        if mask is not None:  # both sides cut to the box of their grid the mask keeps
            box = mask.box(dst.shape[:mask.rank])
            dst, src = cut(dst, box), cut(src, box)
    if dst_rmw_op is None:
        current().emit(m.DmaCopy(dst, src))
        return
    if getattr(dst_rmw_op, "alu_name", dst_rmw_op) != "add":
        raise InvalidValueError(f"dma_copy supports only dst_rmw_op=nl.add (the DMA engines' one read-modify-write "
                                f"op), got {dst_rmw_op!r}")
    current().emit(m.DmaCopyAdd(dst, src))


def _activation_name(op) -> str:
    """An activation function given as NKI does: ``nl.exp`` (a function named exp), np.exp, or "exp"."""
    func = op if isinstance(op, str) else getattr(op, "__name__", None)
    if func not in m.ACTIVATION_FUNCS:
        raise InvalidValueError(f"nisa.activation has no function {op!r}; the scalar engine here has "
                                f"{', '.join(m.ACTIVATION_FUNCS)}")
    return func


def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle,
               name=None) -> None:
    """dst = op(data * scale + bias) on the scalar engine, in float32 (NKI's argument order).

    ``op`` is an activation function (``nl.exp``, ``np.tanh``, ``nl.floor``) or its
    name; ``scale`` a number or a (P, 1) float32 tile, ``bias`` a number or a (P, 1)
    tile. ``reduce_cmd`` drives the engine's reduce registers (one per partition,
    kept between activations; ``reduce_op`` must be nl.add): reset, reduce (add
    the activated values), reset_reduce, idle; ``reduce_res`` (a (P, 1) tile)
    receives them afterwards.
    """
    func = _activation_name(op)
    operands = []
    for what, value in (("scale", scale), ("bias", 0.0 if bias is None else bias)):
        if isinstance(value, (bool, np.bool_)):
            raise InvalidValueError(f"nisa.activation requires a Python number as {what} or a (P, 1) tile, got "
                                    f"{type(value).__name__}")
        operands.append(_operand(value, "nisa.activation", what))
    if reduce_cmd not in m.REDUCE_CMDS:
        raise InvalidValueError(f"nisa.activation requires reduce_cmd to be one of nisa.reduce_cmd."
                                f"{', nisa.reduce_cmd.'.join(m.REDUCE_CMDS)}, got {reduce_cmd!r}")
    adds = reduce_op is not None and (getattr(reduce_op, "alu_name", None) or getattr(reduce_op, "__name__", None)
                                      or reduce_op) == "add"
    if (reduce_op is not None or reduce_cmd in ("reduce", "reset_reduce")) and not adds:
        raise InvalidValueError(f"nisa.activation with reduce_cmd={reduce_cmd!r} requires reduce_op=nl.add (the scalar "
                                f"engine's one reduction), got {reduce_op!r}")
    current().emit(m.Activation(as_ap(dst), as_ap(data), func, *operands, reduce_cmd,
                                None if reduce_res is None else as_ap(reduce_res)))


def activation_reduce(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None) -> None:
    """nisa.activation, and the sum of each partition's activated values into ``reduce_res`` (a (P, 1) tile):
    activation with reduce_cmd=reset_reduce (NKI keeps this call for backward compatibility)."""
    activation(dst, op, data, bias=bias, scale=scale, reduce_op=reduce_op, reduce_res=reduce_res,
               reduce_cmd=reduce_cmd.reset_reduce)


def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, name=None) -> None:
    """dst = op over the free axes ``axis`` of data (the last ones, ending at the final axis), per partition, on
    the vector engine, in float32; ``negate`` multiplies the result by -1. dst holds the kept elements
    (``keepdims`` only says whether its shape keeps the reduced axes as 1, so both shapes are accepted)."""
    data = as_ap(data)
    rank = len(data.shape)
    axes = sorted({int(a) % rank for a in (axis if isinstance(axis, (list, tuple)) else [axis])})
    if 0 in axes or axes != list(range(rank - len(axes), rank)):
        raise InvalidValueError(f"nisa.tensor_reduce requires axis to be the last free axes of the tile, ending at "
                                f"axis {rank - 1} (not the partition axis 0), got {axis!r} for shape {data.shape}")
    current().emit(m.TensorReduce(as_ap(dst), data, m.alu_op(op), len(axes), bool(negate)))


def select(dst, predicate, on_true, on_false) -> None:
    """dst = on_true where predicate != 0, else on_false (tiles or numbers), elementwise on the vector engine."""
    def operand(x):
        return float(x) if is_scalar(x) else as_ap(x)
    current().emit(m.Select(as_ap(dst), as_ap(predicate), operand(on_true), operand(on_false)))


def tensor_copy_predicated(dst, src, predicate, reverse_pred=False, name=None) -> None:
    """dst = src where ``predicate`` is nonzero (zero with ``reverse_pred``), elsewhere dst unchanged, on the vector
    engine: a bit-exact copy; ``src`` a tile of dst's dtype or a number; the predicate uint8, uint16 or uint32."""
    call, pred = "nisa.tensor_copy_predicated", as_ap(predicate)
    if np.dtype(pred.dtype) not in (np.uint8, np.uint16, np.uint32):
        raise InvalidValueError(f"{call} requires a uint8, uint16 or uint32 predicate, got {np.dtype(pred.dtype)}; "
                                f"make it with nisa.tensor_copy into a uint8 tile")
    d = as_ap(dst)
    if not is_scalar(src) and as_ap(src).dtype != d.dtype:
        raise InvalidValueError(f"{call} requires src and dst of one dtype, got {np.dtype(as_ap(src).dtype)} and "
                                f"{np.dtype(d.dtype)}; cast src first with nisa.tensor_copy")
    current().emit(m.CopyPredicated(d, float(src) if is_scalar(src) else as_ap(src), pred, bool(reverse_pred)))


def nc_n_gather(dst, data, indices, name=None) -> None:
    """dst[p, ...] = data[p, indices[p, ...]] on GpSimd: a gather within each partition, data's free dimensions
    flattened; uint32 indices of dst's shape; a bit-exact copy (one dtype). ``name`` is accepted and unused."""
    current().emit(m.NcNGather(as_ap(dst), as_ap(data), as_ap(indices)))


def memset(dst, value, engine=None, name=None) -> None:
    """dst = value in every element (the float32 scalar cast to dst's dtype), on the vector engine or GpSimd."""
    where = _engine(engine, "nisa.memset", {"unknown": "vector", "vector": "vector", "gpsimd": "gpsimd"})
    current().emit(m.Memset(as_ap(dst), float(value), where))


# -- the tensor engine ---------------------------------------------------------------------------------

#: Per trace: each PSUM tile a tensor-engine instruction has written, with a mask of the elements written (or
#: True once all are: a trace writes many PSUM tiles whole, and a mask each would outweigh its instructions), for
#: nc_matmul's accumulate=None ("the first write to a PSUM location overwrites, and subsequent writes to the same
#: location accumulate", nki.isa.nc_matmul).
_psum_written: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


#: What ``_psum_writes`` gives for elements all written before, or none (nc_matmul reads .all() and .any()).
_ALL_WRITTEN, _NONE_WRITTEN = np.ones(1, bool), np.zeros(1, bool)


def _psum_writes(dst) -> tuple:
    """(which of dst's elements a tensor-engine instruction has written in this trace, as a bool array, and a
    function to call once the instruction is emitted, which notes dst as written)."""
    tile = dst.tensor
    written = _psum_written.setdefault(current(), {})
    state = written.get(tile)
    if state is True:
        return _ALL_WRITTEN, _nothing
    if state is None and _whole_tile(dst):
        def note():
            written[tile] = True
        return _NONE_WRITTEN, note
    mask = np.zeros(tile.partitions * tile.free_size, bool) if state is None else state
    at = np.ndarray(dst.shape, bool, buffer=mask, offset=dst.offset, strides=[step for step, _ in dst.pattern])

    def note():
        at[...] = True
        written[tile] = True if mask.all() else mask
    return at, note


def _nothing() -> None:
    pass


def _whole_tile(ap) -> bool:
    """Whether a direct pattern covers its tile's elements, each once, in order."""
    if ap.offset or ap.size != ap.tensor.partitions * ap.tensor.free_size:
        return False
    run = 1
    for step, num in reversed(ap.pattern):
        if step != run and num > 1:
            return False
        run *= num
    return True


def nc_matmul(dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False,
              accumulate=None, tile_position=(), tile_size=(), perf_mode=matmul_perf_mode.none, name=None) -> None:
    """dst = stationary.T @ moving on the tensor engine: stationary (K, M) and moving (K, N) SBUF tiles (K <= 128
    partitions, M <= 128, N <= 512), dst (M, N) a float32 PSUM tile within one bank; float32 accumulation.

    ``accumulate``: True adds the product to dst, False overwrites it, None (the
    default) overwrites where no tensor-engine instruction of this trace wrote dst's
    elements before and adds where one did (an accumulation group: successive
    matmuls into one PSUM tile sum, as NKI 0.3.0 documents).
    ``perf_mode=nisa.matmul_perf_mode.double_row``: the double FP8 mode, float8
    stationary (K, 2, M) and moving (K, 2, N) (machine NcMatmul).
    """
    modes = vars(matmul_perf_mode)
    if perf_mode is None:
        perf_mode = matmul_perf_mode.none
    if perf_mode not in modes.values():
        raise InvalidValueError(f"nisa.nc_matmul requires perf_mode one of "
                                f"{', '.join(f'nisa.matmul_perf_mode.{k}' for k in modes)}, got {perf_mode!r}")
    if is_transpose:
        raise InvalidValueError("nisa.nc_matmul(is_transpose=True) multiplies by an identity moving tile to "
                                "transpose; call nisa.nc_transpose(dst, data, engine=nisa.tensor_engine) instead")
    if accumulate not in (None, True, False):
        raise InvalidValueError(f"nisa.nc_matmul requires accumulate True, False or None, got {accumulate!r}")
    dst = as_ap(dst)
    before, note_written = _psum_writes(dst)
    if accumulate is None:
        if before.all():
            accumulate = True
        elif before.any():
            raise InvalidValueError(f"nisa.nc_matmul(accumulate=None) into {dst.describe()}: some of its elements were "
                                    f"written by an earlier matmul and some were not, so it would both overwrite "
                                    f"and accumulate; pass accumulate=True or False")
        else:
            accumulate = False
    current().emit(m.NcMatmul(dst, as_ap(stationary), as_ap(moving), bool(accumulate), bool(is_stationary_onezero),
                              bool(is_moving_onezero), tuple(tile_position), tuple(tile_size), perf_mode))
    note_written()


def nc_transpose(dst, data, engine=None, name=None) -> None:
    """dst = data transposed (partitions <-> free elements, free axes flattened), bit-exact, dst of data's dtype.

    ``engine``: nisa.tensor_engine (data in SBUF up to 128 x 128, dst in PSUM) or
    nisa.vector_engine (up to 32 x 32, SBUF or PSUM); unknown (the default) takes
    the tensor engine where data is in SBUF and dst in PSUM, else the vector engine.
    """
    dst, data = as_ap(dst), as_ap(data)
    if engine in (None, _ENGINES.unknown):
        where = "tensor" if data.tensor.memory == "sbuf" and dst.tensor.memory == "psum" else "vector"
    else:
        where = _engine(engine, "nisa.nc_transpose", {"tensor": "tensor", "vector": "vector"})
    if where == "tensor":
        _, note_written = _psum_writes(dst)
        current().emit(m.NcTranspose(dst, data, where))
        note_written()
    else:
        current().emit(m.NcTranspose(dst, data, where))


# -- vector engine and GpSimd extras --------------------------------------------------------------------

def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False, name=None) -> None:
    """A scan along each partition on the vector engine: r[i] = (data0[i] op0 r[i-1]) op1 data1[i], r[-1] =
    ``initial`` (a number or a (P, 1) tile); ``reverse0`` puts data0 on the right of op0, ``reverse1`` data1 on
    the left of op1."""
    call = "nisa.tensor_tensor_scan"
    current().emit(m.TensorTensorScan(as_ap(dst), as_ap(data0), as_ap(data1), _operand(initial, call, "initial"),
                                      _alu(op0, call), _alu(op1, call), bool(reverse0), bool(reverse1)))


def bn_stats(dst, data, name=None) -> None:
    """dst (P, 6) = count, mean and variance * count of data's even-indexed, then odd-indexed, elements per
    partition (at most 512 of them), on the vector engine; bn_aggr combines them."""
    current().emit(m.BnStats(as_ap(dst), as_ap(data)))


def bn_aggr(dst, data, name=None) -> None:
    """dst (P, 2) = mean and variance per partition from one or more bn_stats results side by side in data."""
    current().emit(m.BnAggr(as_ap(dst), as_ap(data)))


def tensor_partition_reduce(dst, op, data, name=None) -> None:
    """dst (1, F...) = op (nl.add or nl.maximum) over data's partitions, in order, in float32, on GpSimd."""
    op = _alu(op, "nisa.tensor_partition_reduce")
    current().emit(m.TensorPartitionReduce(as_ap(dst), "maximum" if op == "max" else op, as_ap(data)))


def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False,
                         name=None) -> None:
    """dst = (data op0 operand0) op1 operand1 on the vector engine: operand0 a number or a (P, 1) tile, operand1
    a tile of data's shape; ``reverse0`` / ``reverse1`` put operand0 / operand1 on the left."""
    call = "nisa.scalar_tensor_tensor"
    current().emit(m.ScalarTensorTensor(as_ap(dst), as_ap(data), _alu(op0, call), _operand(operand0, call, "operand0"),
                                        _alu(op1, call), as_ap(operand1), bool(reverse0), bool(reverse1)))


def reciprocal(dst, data, name=None) -> None:
    """dst = 1 / data elementwise on the vector engine, in float32."""
    current().emit(m.Reciprocal(as_ap(dst), as_ap(data)))


def exponential(dst, src, max_value=0.0, reduce_res=None, reduce_cmd=reduce_cmd.idle, reduce_init=0.0, name=None):
    """NKI's vector-engine exp(src - max_value): NeuronCore-v4 only, so not on this model's trn1 and trn2."""
    raise InvalidValueError("nisa.exponential requires NeuronCore-v4 (trn3), and the model's targets are trn1 and "
                            "trn2; use nisa.activation(dst, nl.exp, src, bias=<-max_value>, reduce_cmd=...) on the "
                            "scalar engine")


def __getattr__(name: str):
    """An NKI name this module does not simulate: a clear error, never a silent stand-in."""
    raise not_simulated("nisa", name)

"""nisa: one call, one instruction, with an explicit destination (NKI's new-frontend style).

Operands are SBUF tiles or access patterns (``t[0:n, 0:1]``, ``t.ap(...)``);
scalar operands are Python numbers, used as float32 by the engines.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..errors import InvalidValueError, not_simulated
from ..machine import dtypes
from ..machine import isa as m
from .index import IndexedAccess, IndexExpr, cut
from .promotion import is_scalar
from .tensor import as_ap
from .tracer import current


def iota(dst, pattern=None, offset=0, channel_multiplier=0, dtype=None):
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


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False) -> None:
    """dst = (data op0 operand0) op1 operand1, elementwise on the vector engine."""
    if (op1 is None) != (operand1 is None):
        raise InvalidValueError("tensor_scalar takes op1 and operand1 together")
    current().emit(m.TensorScalar(as_ap(dst), as_ap(data), m.alu_op(op0), float(operand0), bool(reverse0),
                                  None if op1 is None else m.alu_op(op1),
                                  None if operand1 is None else float(operand1), bool(reverse1)))


def tensor_tensor(dst, data1, data2, op) -> None:
    """dst = data1 op data2, elementwise on the vector engine."""
    current().emit(m.TensorTensor(as_ap(dst), as_ap(data1), as_ap(data2), m.alu_op(op)))


#: NKI's engine names (``nisa.engine.vector`` or ``nisa.vector_engine``), for the ``engine=`` of tensor_copy.
engine = SimpleNamespace(tensor="tensor", vector="vector", scalar="scalar", gpsimd="gpsimd", dma="dma", sync="sync",
                         unknown="unknown")
tensor_engine, vector_engine, scalar_engine, gpsimd_engine, unknown_engine = (
    engine.tensor, engine.vector, engine.scalar, engine.gpsimd, engine.unknown)


def tensor_copy(dst, src, engine=None) -> None:
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


def activation(dst, op, data, bias=None, scale=1.0) -> None:
    """dst = op(data * scale + bias) on the scalar engine, in float32 (NKI's argument order).

    ``op`` is an activation function (``nl.floor``, ``nl.copy``) or its name; scale
    and bias are Python numbers (NKI also takes per-partition tiles: not simulated).
    """
    func = op if isinstance(op, str) else getattr(op, "__name__", None)
    if func not in m.ACTIVATION_FUNCS:
        raise InvalidValueError(f"nisa.activation has no function {op!r}; the scalar engine here has "
                                f"{', '.join(m.ACTIVATION_FUNCS)}")
    for what, value in (("scale", scale), ("bias", 0.0 if bias is None else bias)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidValueError(f"nisa.activation requires a Python number as {what} (a per-partition tile is "
                                    f"not simulated), got {type(value).__name__}")
    current().emit(m.Activation(as_ap(dst), as_ap(data), func, float(scale), 0.0 if bias is None else float(bias)))


def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False) -> None:
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


def nc_n_gather(dst, data, indices, name=None) -> None:
    """dst[p, ...] = data[p, indices[p, ...]] on GpSimd: a gather within each partition, data's free dimensions
    flattened; uint32 indices of dst's shape; a bit-exact copy (one dtype). ``name`` is accepted and unused."""
    current().emit(m.NcNGather(as_ap(dst), as_ap(data), as_ap(indices)))


def memset(dst, value) -> None:
    """dst = value in every element (the float32 scalar cast to dst's dtype)."""
    current().emit(m.Memset(as_ap(dst), float(value)))


def __getattr__(name: str):
    """An NKI name this module does not simulate: a clear error, never a silent stand-in."""
    raise not_simulated("nisa", name)

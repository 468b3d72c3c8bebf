"""nisa: one call, one instruction, with an explicit destination (NKI's new-frontend style).

Operands are SBUF tiles or access patterns (``t[0:n, 0:1]``, ``t.ap(...)``);
scalar operands are Python numbers, used as float32 by the engines.
"""

from __future__ import annotations

from ..machine import isa as m
from .tensor import as_ap
from .tracer import current


def iota(dst, pattern, offset=0, channel_multiplier=0) -> None:
    """dst[p, x...] = offset + p * channel_multiplier + sum(step_k * x_k) (GpSimd)."""
    current().emit(m.Iota(as_ap(dst), tuple(tuple(int(v) for v in p) for p in pattern), int(offset),
                          int(channel_multiplier)))


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False) -> None:
    """dst = (data op0 operand0) op1 operand1, elementwise on the vector engine."""
    if (op1 is None) != (operand1 is None):
        raise ValueError("tensor_scalar takes op1 and operand1 together")
    current().emit(m.TensorScalar(as_ap(dst), as_ap(data), m.alu_op(op0), float(operand0), bool(reverse0),
                                  None if op1 is None else m.alu_op(op1),
                                  None if operand1 is None else float(operand1), bool(reverse1)))


def tensor_tensor(dst, data1, data2, op) -> None:
    """dst = data1 op data2, elementwise on the vector engine."""
    current().emit(m.TensorTensor(as_ap(dst), as_ap(data1), as_ap(data2), m.alu_op(op)))


def tensor_copy(dst, src) -> None:
    """dst = src; a cast (through float32, RNE, saturating) when the dtypes differ."""
    current().emit(m.TensorCopy(as_ap(dst), as_ap(src)))


def dma_copy(dst, src) -> None:
    """Copy bits between HBM and SBUF; ``src`` may be an indirect gather (``.ap(vector_offset=...)``)."""
    current().emit(m.DmaCopy(as_ap(dst), as_ap(src)))

"""Helpers shared by kernels."""

from __future__ import annotations

from ..nki import isa as nisa
from ..nki import language as nl


def floor_nisa_kernel(a, out, p, f):
    """out[0:p, 0:f] = floor(a[0:p, 0:f]) for a float32 tile ``a`` into an int32 tile ``out``.

    A float -> int32 cast rounds to nearest even on this hardware (kaena-4592), so
    floor is the cast minus 1 wherever the cast rounded up: cast, cast back,
    compare, and select with xor / multiply / add. A single cast is wrong at x.5
    and above.
    """
    src, dst = a[0:p, 0:f], out[0:p, 0:f]
    casted = nl.ndarray((p, f), dtype=nl.int32, name="casted")
    nisa.tensor_copy(dst=casted, src=src)  # round to nearest even
    b = nl.ndarray((p, f), dtype=nl.float32, name="casted_f32")
    nisa.tensor_copy(dst=b, src=casted)  # back to float
    cast_m1 = nl.ndarray((p, f), dtype=nl.int32, name="cast_m1")
    nisa.tensor_scalar(dst=cast_m1, data=casted, op0=nl.subtract, operand0=1)
    cond = nl.ndarray((p, f), dtype=nl.int8, name="cond")
    nisa.tensor_tensor(dst=cond, data1=b, data2=src, op=nl.greater)  # the cast rounded up
    cond_not = nl.ndarray((p, f), dtype=nl.int8, name="cond_not")
    nisa.tensor_scalar(dst=cond_not, data=cond, op0=nl.logical_xor, operand0=1)
    smaller = nl.ndarray((p, f), dtype=nl.int32, name="smaller")
    nisa.tensor_tensor(dst=smaller, data1=casted, data2=cond_not, op=nl.multiply)
    larger = nl.ndarray((p, f), dtype=nl.int32, name="larger")
    nisa.tensor_tensor(dst=larger, data1=cast_m1, data2=cond, op=nl.multiply)
    nisa.tensor_tensor(dst=dst, data1=larger, data2=smaller, op=nl.add)

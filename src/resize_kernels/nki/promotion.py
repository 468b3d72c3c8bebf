"""NKI's arithmetic type promotion: the dtype of ``x op y`` when a kernel writes ``tile + 3`` or ``a * b``.

The rules are NKI's "NKI Type Promotion" (aws-neuron-sdk, general/nki/api/nki.api.shared.rst, the
``nki-type-promotion`` section of "NKI API Common Fields"), restricted to the machine's dtypes:

* (float, integer): the float type (int32, float16 -> float16);
* (float, float): the wider float; float16 with bfloat16 -> float32 and two different float8s -> bfloat16 (a
  new type that holds both ranges: "(nl.float8_e4m3, nl.float8_e5m2) -> nl.bfloat16");
* (integer, integer): the wider integer, or a new widened one that holds both ranges (int8, uint8 -> int16);
* weakly typed scalars (Python numbers) count as the widest type of their kind the hardware has:
  bool -> uint8, int -> int32, float -> float32; so (int8 tile, 2) -> int32, (float16 tile, 1.2) -> float32,
  (int32 tile, 3) -> int32, (int32 tile, 0.5) -> float32, (bfloat16 tile, 2) -> bfloat16. A numpy scalar of
  a machine dtype (``np.float16(2)``) is strongly typed and counts as its own dtype.

True division: NKI does not document ``/`` on two integer operands, so ``int / int`` gives float32, as
numpy's true division does (an integer quotient would be rounded to nearest by the engines' output cast
before any floor; ``nl.floor(iota / w, dtype=nl.int32)`` relies on the float32 quotient).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidTypeError
from ..machine import dtypes


def is_scalar(x) -> bool:
    """A Python or numpy number, ml_dtypes' bfloat16 and float8s too (an operand the engines take as an immediate
    float32)."""
    return isinstance(x, (bool, int, float, np.bool_, np.integer, np.floating)) or (
        isinstance(x, np.generic) and x.dtype in dtypes.FLOATS)


def scalar_dtype(x) -> np.dtype:
    """The dtype a scalar operand counts as: its own for a numpy scalar of a machine dtype, else the widest."""
    if isinstance(x, np.generic) and x.dtype in dtypes.SUPPORTED:
        return x.dtype
    if isinstance(x, (bool, np.bool_)):
        return dtypes.uint8
    if isinstance(x, (int, np.integer)):
        return dtypes.int32
    if isinstance(x, (float, np.floating)):
        return dtypes.float32
    raise InvalidTypeError(f"type promotion requires a tile or a number, got {x!r}")


def is_float(dtype) -> bool:
    """A float dtype (bfloat16 and the float8s included: numpy reports some of ml_dtypes' floats as kind "V")."""
    return dtypes.is_float(dtypes.as_dtype(dtype))


def promote_types(a, b) -> np.dtype:
    """The promoted dtype of two machine dtypes, by NKI's rules (see the module docstring)."""
    a, b = dtypes.as_dtype(a), dtypes.as_dtype(b)
    if a == b:
        return a
    a_float, b_float = is_float(a), is_float(b)
    if a_float != b_float:
        return a if a_float else b
    if a_float:
        if a.itemsize != b.itemsize:
            return a if a.itemsize > b.itemsize else b
        # float16 with bfloat16, or two float8s: neither holds the other's values
        return dtypes.bfloat16 if a.itemsize == 1 else dtypes.float32
    wide = np.promote_types(a, b)
    return wide if wide in dtypes.SUPPORTED else dtypes.float32  # NKI: no int64 on the hardware -> float32


def operand_dtype(x) -> np.dtype:
    return scalar_dtype(x) if is_scalar(x) else dtypes.as_dtype(x.dtype)


def result_dtype(op: str, x, y) -> np.dtype:
    """The dtype of ``x op y`` (op an ALU op name such as "add" or "divide"): promotion, and float32 for
    true division of integers."""
    dt = promote_types(operand_dtype(x), operand_dtype(y))
    if op == "divide" and not is_float(dt):
        return dtypes.float32
    return dt

"""The machine's dtypes and its casting rules.

Engines compute in float32: inputs are cast to float32, results are cast to the
destination dtype. A float -> integer cast rounds to nearest, ties to even, and
saturates to the destination's range (NaN becomes 0). Float -> float casts round
to nearest even (numpy / ml_dtypes); into a float8 dtype a value past its largest
finite one becomes inf, or NaN in float8_e4m3fn, which has no inf (ml_dtypes, as
NKI's simulator stores float8: "NKI simulator" guide, "Precise floating-point
mode"). There is no float64 and no complex.

The float8 dtypes are NKI's ("NKI API Common Fields", "Supported Data Types"):
float8_e4m3 and float8_e5m2 are ``np.dtype('float8_e4m3')`` and
``np.dtype('float8_e5m2')`` (the classic nki.language, Neuron 2.26), i.e.
ml_dtypes.float8_e4m3 (1S,4E,3M with inf and NaN, largest finite 240: the
"legacy" float8_e4m3 of nki.isa.nc_matmul) and ml_dtypes.float8_e5m2 (1S,5E,2M);
float8_e4m3fn (NKI 0.3.0's nki.language: 1S,4E,3M "Extended range: no inf, NaN
represented by 0bS111'1111", the OCP format, largest finite 448) is
ml_dtypes.float8_e4m3fn.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ..errors import InvalidTypeError

float32 = np.dtype(np.float32)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float16 = np.dtype(np.float16)
int32 = np.dtype(np.int32)
int16 = np.dtype(np.int16)
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
float8_e4m3 = np.dtype(ml_dtypes.float8_e4m3)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)

#: Supported dtypes and their short names in listings.
SHORT_NAMES = {float32: "f32", bfloat16: "bf16", float16: "f16", int32: "i32", int16: "i16", int8: "i8", uint8: "u8",
               uint16: "u16", uint32: "u32", float8_e4m3: "f8e4m3", float8_e5m2: "f8e5m2", float8_e4m3fn: "f8e4m3fn"}
SUPPORTED = tuple(SHORT_NAMES)
#: The 8-bit floats, and every float dtype (numpy calls ml_dtypes' kind "V" for some of them, so ask here).
FLOAT8 = (float8_e4m3, float8_e5m2, float8_e4m3fn)
FLOATS = (float32, bfloat16, float16, *FLOAT8)

_NAMES = {"float32": float32, "bfloat16": bfloat16, "float16": float16,
          "int32": int32, "int16": int16, "int8": int8, "uint8": uint8, "uint16": uint16, "uint32": uint32,
          "float8_e4m3": float8_e4m3, "float8_e5m2": float8_e5m2, "float8_e4m3fn": float8_e4m3fn}
_NAMES.update({short: dt for dt, short in SHORT_NAMES.items()})


def as_dtype(dtype, what: str = "the NeuronCore model") -> np.dtype:
    """Normalise a dtype-like to one of the machine's dtypes, or raise TypeError naming the choices."""
    try:
        dt = _NAMES[dtype] if isinstance(dtype, str) else np.dtype(dtype)
    except (KeyError, TypeError):
        dt = None
    if dt not in SHORT_NAMES:
        choices = ", ".join(n for n in _NAMES if n not in SHORT_NAMES.values())
        got = dtype if isinstance(dtype, str) else getattr(dt, "name", repr(dtype))
        raise InvalidTypeError(f"{what} requires one of the dtypes {choices}, got {got}; cast the data first "
                               f"(float64 to float32; complex has no equivalent on the machine)")
    return dt


def short_name(dtype) -> str:
    return SHORT_NAMES[np.dtype(dtype)]


def is_float(dtype) -> bool:
    """Whether a machine dtype is a float (bfloat16 and the float8s included, whatever numpy's kind says)."""
    return np.dtype(dtype) in FLOATS


def to_f32(x: np.ndarray) -> np.ndarray:
    """Engine input cast: any machine dtype to float32 (ints round to nearest even above 2**24)."""
    return x if x.dtype == float32 else x.astype(float32)


def cast(values: np.ndarray, dtype) -> np.ndarray:
    """Engine output cast of float32 values to ``dtype``: RNE; integers saturate and NaN -> 0."""
    dtype = np.dtype(dtype)
    if dtype == values.dtype:
        return values
    bounds = _INT_BOUNDS.get(dtype)
    if bounds is None:
        return values.astype(dtype)
    wide = values.astype(np.float64)  # float64 holds every int32 bound exactly
    np.rint(wide, out=wide)
    np.maximum(wide, bounds[0], out=wide)
    np.minimum(wide, bounds[1], out=wide)
    nan = np.isnan(wide)
    if nan.any():
        wide[nan] = 0.0
    return wide.astype(dtype)


_INT_BOUNDS = {dt: (float(np.iinfo(dt).min), float(np.iinfo(dt).max)) for dt in SUPPORTED if dt.kind in "iu"}

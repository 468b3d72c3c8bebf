"""The resize op family's contract: one shape rule, one dtype rule and one set of limits for every caller.

As JAX keeps a primitive's shape and dtype rules beside it, every check of
what a ResizeNearest (forward) or ResizeNearestGrad (gradient) may be asked to
do lives here, with one wording: the API, the HLO validation pass and the
kernels all call these functions, prefixing the messages with their own name
(``what``). A resize changes only the height and width of an NHWC tensor;
every size is a positive integer below 2**24 (``semantics.MAX_DIM``); a
tensor has fewer than 2**31 elements (its flat addresses fit an int32 DMA
offset); data of any machine dtype is moved unchanged; a gradient is a sum of
real values, so it is float32, float16 or bfloat16.
"""

from __future__ import annotations

import math

import numpy as np

from . import semantics
from .errors import InvalidTypeError, InvalidValueError
from .machine import dtypes

#: Flat element addresses must fit an int32 DMA offset.
ADDRESS_LIMIT = 1 << 31
#: dtypes a gradient may have, as machine dtypes (the sums are float32 for all of them).
GRAD_DTYPES = tuple(dtypes.as_dtype(name) for name in semantics.GRAD_DTYPES)


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def size_pair(what: str, size, whose: str, names: str = "height, width") -> tuple[int, int]:
    """``size`` (``whose`` size, e.g. "output") as a pair; its values are checked by the shape rules below."""
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise InvalidTypeError(f"{what} requires the {whose} size as a pair ({names}), got {size!r}")
    return size[0], size[1]


def _four(what: str, name: str, shape) -> tuple:
    if not isinstance(shape, (tuple, list)) or len(shape) != 4:
        raise InvalidValueError(f"{what} requires {name} as four positive integers (N, H, W, C), got {shape!r}")
    return tuple(shape)


def resize_shapes(what: str, in_shape, out_shape) -> tuple[tuple, tuple]:
    """The shape rule of the forward resize: NHWC ``in_shape`` -> ``out_shape`` as int tuples, or a clear error.

    Both are four positive integers with equal batch and channels; heights and
    widths are below 2**24 (``semantics.check_axis``) and each tensor has fewer
    than 2**31 elements.
    """
    return _shapes(what, _four(what, "in_shape", in_shape), _four(what, "out_shape", out_shape), "in_shape",
                   "out_shape")


def grad_shapes(what: str, dy_shape, in_shape) -> tuple[tuple, tuple]:
    """The shape rule of the gradient: dy of ``dy_shape`` (the forward output) summed onto ``in_shape``.

    Returns (dy_shape, in_shape) as int tuples: the forward's rule, with
    in_shape the forward input and dy's shape its output.
    """
    dy, dx = _four(what, "dy's shape", dy_shape), _four(what, "in_shape", in_shape)
    dx, dy = _shapes(what, dx, dy, "in_shape", "dy's shape")
    return dy, dx


def _shapes(what, in_shape, out_shape, in_name, out_name):
    for i, o in zip(in_shape[1:3], out_shape[1:3]):
        semantics.check_axis(i, o, what)
    for name, shape in ((in_name, in_shape), (out_name, out_shape)):
        if not all(_is_int(d) and d > 0 for d in (shape[0], shape[3])):
            raise InvalidValueError(f"{what} requires at least one batch and one channel, got {name} {shape}")
    in_shape, out_shape = tuple(map(int, in_shape)), tuple(map(int, out_shape))
    if in_shape[0] != out_shape[0] or in_shape[3] != out_shape[3]:
        raise InvalidValueError(f"{what} requires equal batch and channels in {in_name} and {out_name} (a resize changes "
                                f"only H and W), got {in_shape} and {out_shape}")
    for name, shape in ((in_name, in_shape), (out_name, out_shape)):
        if math.prod(shape) >= ADDRESS_LIMIT:
            raise InvalidValueError(f"{what} requires fewer than 2**31 elements per tensor, got {name} {shape} "
                                    f"({math.prod(shape):,} elements); split the batch or the channels")
    return in_shape, out_shape


def resize_dtype(what: str, dtype) -> np.dtype:
    """The dtype rule of the forward resize: any machine dtype (the data is only moved)."""
    return dtypes.as_dtype(dtype, what)


def grad_dtype(what: str, dtype) -> np.dtype:
    """The dtype rule of the gradient: float32, float16 or bfloat16 (a gradient is a sum of real values)."""
    dt = np.dtype(dtype) if not isinstance(dtype, str) else dtypes.as_dtype(dtype, what)
    if dt not in GRAD_DTYPES:
        hint = "cast it with .astype(np.float32)" if dt.kind in "fc" else "a gradient is real-valued"
        raise InvalidTypeError(f"{what} requires dtype {', '.join(semantics.GRAD_DTYPES)}, got {dt}; {hint}")
    return dt

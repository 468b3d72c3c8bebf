"""The specification in code: what every nearest-neighbour resize must compute.

The convention is the asymmetric (align_corners=false, no half-pixel) transform
with floor rounding, computed as PyTorch's ``F.interpolate(mode="nearest")``
and the hardware compute it: the scale ``in/out`` is rounded once to float32,
the product ``dst * scale`` is a float32 multiply (round to nearest even), then
floored and clamped to ``in - 1``. The exact-rational map is kept only to report
where float32 and exact arithmetic disagree.

This module is the oracle: it imports nothing else from the package but its error classes.
"""

from __future__ import annotations

import numpy as np

from .errors import InvalidTypeError, InvalidValueError

#: Every dimension must stay below this: float32 holds integers exactly only up to 2**24.
MAX_DIM = 1 << 24


def check_axis(in_size, out_size, what="resize_nearest"):
    """Reject sizes the convention cannot represent (non-integers, <= 0, >= 2**24)."""
    for name, v in (("input", in_size), ("output", out_size)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise InvalidTypeError(f"{what} requires integer sizes, got {name} size {v!r} of type {type(v).__name__}")
        if v <= 0:
            raise InvalidValueError(f"{what} requires positive sizes, got {name} size {v}")
        if v >= MAX_DIM:
            raise InvalidValueError(
                f"{what} requires every size below 2**24 = {MAX_DIM} (float32 positions stop being exact there), "
                f"got {name} size {v}; split the resize into smaller pieces")


def axis_scale(in_size: int, out_size: int) -> np.float32:
    """The per-axis scale in/out, rounded once to float32."""
    check_axis(in_size, out_size)
    return np.float32(in_size / out_size)


def source_index(in_size: int, out_size: int) -> np.ndarray:
    """src(d) = min(floor(float32(d) *f32 float32(in/out)), in - 1) for d in 0..out-1, as int64."""
    s = axis_scale(in_size, out_size)
    d = np.arange(out_size, dtype=np.float32)  # exact: out_size < 2**24
    src = np.floor(d * s).astype(np.int64)  # float32 product, rounded to nearest even
    return np.minimum(src, in_size - 1)


def integer_ratio(in_size: int, out_size: int) -> tuple[int, int] | None:
    """(up, down) when the float32 map is src(d) = (d // up) * down with out * down == in * up, else None.

    One of up, down is 1: an integer upsample (src = d // k), an integer
    downsample (src = d * k) or the identity, checked against the float32 map
    itself rather than assumed from the sizes (2 -> 82 is not d // 41: output
    41 reads source 0).
    """
    if out_size % in_size == 0:
        up, down = out_size // in_size, 1
    elif in_size % out_size == 0:
        up, down = 1, in_size // out_size
    else:
        return None
    d = np.arange(out_size, dtype=np.int64)
    return (up, down) if np.array_equal(source_index(in_size, out_size), d // up * down) else None


def source_index_exact(in_size: int, out_size: int) -> np.ndarray:
    """floor(d * in / out) in exact rational arithmetic (never exceeds in - 1)."""
    check_axis(in_size, out_size)
    return np.arange(out_size, dtype=np.int64) * in_size // out_size


def _check_hw(name, hw):
    if not isinstance(hw, (tuple, list)) or len(hw) != 2:
        raise InvalidTypeError(f"index_map requires {name} as a pair (height, width), got {hw!r}")
    return tuple(hw)


def index_map(in_hw, out_hw, exact: bool = False) -> np.ndarray:
    """Flat source pixel index src_h * W_in + src_w for each output pixel, shape (H_out, W_out), int64."""
    (in_h, in_w), (out_h, out_w) = _check_hw("in_hw", in_hw), _check_hw("out_hw", out_hw)
    check_axis(in_h, out_h, "index_map")
    check_axis(in_w, out_w, "index_map")
    f = source_index_exact if exact else source_index
    return f(in_h, out_h)[:, None] * in_w + f(in_w, out_w)[None, :]


def map_differences(in_size: int, out_size: int) -> np.ndarray:
    """Output positions on one axis where the float32 map and the exact-rational map disagree."""
    return np.nonzero(source_index(in_size, out_size) != source_index_exact(in_size, out_size))[0]


def resize_nearest_reference(x: np.ndarray, out_hw) -> np.ndarray:
    """Reference forward resize of an NHWC array: a gather by the float32 index map."""
    if x.ndim != 4:
        raise InvalidValueError(f"resize_nearest_reference requires an NHWC array of rank 4, got shape {x.shape}")
    (out_h, out_w) = _check_hw("out_hw", out_hw)
    _, in_h, in_w, _ = x.shape
    return x[:, source_index(in_h, out_h)[:, None], source_index(in_w, out_w)[None, :], :]


#: dtypes a gradient may have (by numpy name; ml_dtypes' bfloat16 is "bfloat16").
GRAD_DTYPES = ("float32", "float16", "bfloat16")


def source_runs(in_size: int, out_size: int) -> tuple[np.ndarray, np.ndarray]:
    """For each source position i: (first output position mapping to i, how many do), as int64.

    The map is monotone, so the outputs of each source form one contiguous run;
    a run is empty (length 0) for sources a downsample skips.
    """
    src = source_index(in_size, out_size)
    sources = np.arange(in_size)
    first = np.searchsorted(src, sources, side="left")
    return first, np.searchsorted(src, sources, side="right") - first


def resize_nearest_grad_reference(dy: np.ndarray, in_hw) -> np.ndarray:
    """Reference gradient of the forward resize for an NHWC ``dy``: dx of shape (N, in_h, in_w, C).

    dx[b, i, j, c] is the sum of dy[b, oh, ow, c] over every output pixel whose
    source is (i, j): a scatter-add over the forward index map (a sum, not a
    mean). The accumulation is fixed so that a kernel can match it bit for bit:
    each dx element starts at +0.0 and adds its contributions in float32, one at
    a time, in row-major (oh, ow) order; float16 / bfloat16 dy is widened to
    float32 (exactly) and the float32 sum is cast once, at the end, rounding to
    nearest even. PyTorch's CPU backward sums in the same order.
    """
    if dy.ndim != 4:
        raise InvalidValueError(f"resize_nearest_grad_reference requires an NHWC array of rank 4, got shape {dy.shape}")
    if dy.dtype.name not in GRAD_DTYPES:
        raise InvalidTypeError(f"resize_nearest_grad_reference requires dy of dtype {', '.join(GRAD_DTYPES)}, "
                               f"got {dy.dtype}")
    (in_h, in_w) = _check_hw("in_hw", in_hw)
    b, out_h, out_w, c = dy.shape
    (first_h, count_h), (first_w, count_w) = source_runs(in_h, out_h), source_runs(in_w, out_w)
    dy32 = dy.astype(np.float32)
    kw = np.arange(count_w.max())
    cols = np.minimum(first_w[:, None] + kw, out_w - 1)  # (in_w, most): source column j's output columns, in order
    dx = np.zeros((b, in_h, in_w, c), np.float32)
    with np.errstate(over="ignore", invalid="ignore"):  # inf - inf is NaN, as the sum says; no warning
        for kh in range(count_h.max()):  # the kh-th output row of every source row, in row order
            # terms[:, i, j, k]: the k-th contribution of that row to dx[:, i, j], in column order; a source with
            # fewer (or none in this row) gets -0.0, which adds nothing to any sum.
            terms = dy32[:, np.minimum(first_h + kh, out_h - 1)][:, :, cols]  # (b, in_h, in_w, most, c)
            terms[:, count_h <= kh] = -0.0
            terms[:, :, kw >= count_w[:, None]] = -0.0
            if len(kw) <= 16:  # a few columns: one vectorized add each
                for k in kw:
                    dx += terms[:, :, :, k]
            else:  # many: accumulate adds one at a time, in order, from the sum so far
                dx = np.add.accumulate(np.concatenate([dx[:, :, :, None], terms], axis=3), axis=3)[:, :, :, -1]
        return dx.astype(dy.dtype)

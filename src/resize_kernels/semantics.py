"""The specification in code: what every nearest-neighbour resize must compute.

The convention is the asymmetric (align_corners=false, no half-pixel) transform
with floor rounding, computed as PyTorch's ``F.interpolate(mode="nearest")``
and the hardware compute it: the scale ``in/out`` is rounded once to float32,
the product ``dst * scale`` is a float32 multiply (round to nearest even), then
floored and clamped to ``in - 1``. The exact-rational map is kept only to report
where float32 and exact arithmetic disagree.

Other conventions are opt-in (``IndexConvention``): ONNX Resize's coordinate
transformation and nearest modes, torch's "nearest-exact" and scale_factor maps,
TensorFlow's align_corners and half_pixel_centers. Each is computed in the
arithmetic of the framework that defines it, since that is what its users get.

This module is the oracle: it imports nothing else from the package but its error classes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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


def source_runs(in_size: int, out_size: int, src: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For each source position i: (first output position mapping to i, how many do), as int64.

    The map (``src``; None: ``source_index``) is monotone, so the outputs of each
    source form one contiguous run; a run is empty (length 0) for sources a
    downsample skips.
    """
    src = source_index(in_size, out_size) if src is None else src
    sources = np.arange(in_size)
    first = np.searchsorted(src, sources, side="left")
    return first, np.searchsorted(src, sources, side="right") - first


def source_outputs(in_size: int, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each source position i: (the output positions mapping to i in increasing order, as row i of an
    (in_size, most) int64 table whose unused slots repeat a valid position; how many map to i).

    Unlike ``source_runs``, the map need not be monotone: some of onnx.reference's round_prefer_* maps are not
    (7 -> 17 half_pixel, round_prefer_floor: outputs 7, 8, 9 read sources 3, 2, 3), so a source's outputs may
    not be one run."""
    count = np.bincount(src, minlength=in_size)
    order = np.argsort(src, kind="stable")  # outputs grouped by source, increasing within each
    first = np.cumsum(count) - count
    return order[np.minimum(first[:, None] + np.arange(max(1, count.max())), len(src) - 1)], count


def resize_nearest_grad_reference(dy: np.ndarray, in_hw, convention: "IndexConvention | None" = None) -> np.ndarray:
    """Reference gradient of the forward resize for an NHWC ``dy``: dx of shape (N, in_h, in_w, C).

    dx[b, i, j, c] is the sum of dy[b, oh, ow, c] over every output pixel whose
    source is (i, j): a scatter-add over the forward index map (a sum, not a
    mean). The accumulation is fixed so that a kernel can match it bit for bit:
    each dx element starts at +0.0 and adds its contributions in float32, one at
    a time, in row-major (oh, ow) order; float16 / bfloat16 dy is widened to
    float32 (exactly) and the float32 sum is cast once, at the end, rounding to
    nearest even. PyTorch's CPU backward sums in the same order. ``convention``
    (None: the compiler's): the forward map's (``axis_index``).
    """
    if dy.ndim != 4:
        raise InvalidValueError(f"resize_nearest_grad_reference requires an NHWC array of rank 4, got shape {dy.shape}")
    if dy.dtype.name not in GRAD_DTYPES:
        raise InvalidTypeError(f"resize_nearest_grad_reference requires dy of dtype {', '.join(GRAD_DTYPES)}, "
                               f"got {dy.dtype}")
    (in_h, in_w) = _check_hw("in_hw", in_hw)
    b, out_h, out_w, c = dy.shape
    convention = COMPILER if convention is None else convention
    (rows, count_h), (cols, count_w) = (source_outputs(in_h, axis_index(in_h, out_h, convention, 0)),
                                        source_outputs(in_w, axis_index(in_w, out_w, convention, 1)))
    dy32 = dy.astype(np.float32)
    kw = np.arange(cols.shape[1])  # cols (in_w, most): source column j's output columns, in order
    dx = np.zeros((b, in_h, in_w, c), np.float32)
    with np.errstate(over="ignore", invalid="ignore"):  # inf - inf is NaN, as the sum says; no warning
        for kh in range(rows.shape[1]):  # the kh-th output row of every source row, in row order
            # terms[:, i, j, k]: the k-th contribution of that row to dx[:, i, j], in column order; a source with
            # fewer (or none in this row) gets -0.0, which adds nothing to any sum.
            terms = dy32[:, rows[:, kh]][:, :, cols]  # (b, in_h, in_w, most, c)
            terms[:, count_h <= kh] = -0.0
            terms[:, :, kw >= count_w[:, None]] = -0.0
            if len(kw) <= 16:  # a few columns: one vectorized add each
                for k in kw:
                    dx += terms[:, :, :, k]
            else:  # many: accumulate adds one at a time, in order, from the sum so far
                dx = np.add.accumulate(np.concatenate([dx[:, :, :, None], terms], axis=3), axis=3)[:, :, :, -1]
        return dx.astype(dy.dtype)


# -- other conventions (opt-in) ----------------------------------------------------------------------

#: ONNX Resize's coordinate transformation modes (tf_half_pixel_for_nn as opset 11 defines it: (d + 0.5) / scale)
#: and its nearest modes.
COORDINATE_MODES = ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
#: Whose arithmetic a convention follows, and the (coordinate mode, nearest mode) pairs each defines.
ARITHMETIC_PAIRS = {
    # F.interpolate's CPU kernels: "nearest" and "nearest-exact", from sizes or scale factors (``TORCH_PATHS``)
    "torch": (("asymmetric", "floor"), ("half_pixel", "round_prefer_ceil")),
    # onnx.reference's Resize: every pair, in float64
    "onnx": tuple((c, n) for c in COORDINATE_MODES for n in NEAREST_MODES),
    # TensorFlow's ResizeNearestNeighbor CPU kernel: plain, align_corners (roundf), half_pixel_centers, float32
    "tensorflow": (("asymmetric", "floor"), ("align_corners", "round_prefer_ceil"), ("tf_half_pixel_for_nn", "floor")),
    # jax.image.resize(method="nearest"): floor((d + 0.5) * in / out), float32, as XLA compiles JAX's formula
    "jax": (("tf_half_pixel_for_nn", "floor"),),
}
#: torch's two CPU index computations (aten/src/ATen/native/cpu/UpSampleKernel.cpp, UpSample.h, torch 2.13):
#: "generic", the TensorIterator kernel's tables (HelperInterpNearest / HelperInterpNearestExact::
#: compute_indices_weights) as torch's AVX2 and AVX-512 builds compute them (with a fused multiply-add),
#: "generic_unfused", the same in its DEFAULT build (x86 without AVX2, or ATEN_CPU_CAPABILITY=default), and
#: "indexed", UpSample.h's nearest_idx / nearest_exact_idx (the channels-last forward kernel and every backward).
#: ``torch_index`` gives the maps; the torch front end says which call takes which.
TORCH_PATHS = ("generic", "generic_unfused", "indexed")
#: F.interpolate's mode names and the (coordinate mode, nearest mode) pair each is.
TORCH_MODES = {"nearest": ("asymmetric", "floor"), "nearest-exact": ("half_pixel", "round_prefer_ceil")}


@dataclass(frozen=True)
class IndexConvention:
    """How an output index becomes a source index: ONNX's two mode names, the arithmetic of the framework whose
    map it is ("torch", "onnx", "tensorflow" or "jax"), and the scale factors (output / input, per height and width) the
    user gave instead of sizes (None: the sizes' ratio).

    The default is the compiler's map (``source_index``): torch's "nearest" on sizes. Every map is clamped to
    the input and non-decreasing in the output index except some of onnx.reference's round_prefer_* maps, whose
    float64 rounding steps back by one at a few outputs (``source_outputs``). The float maps can differ from the exact-rational
    meaning of their mode at a few indices (``convention_differences``): each follows its framework, not the
    rationals, because that is what a model exported from it computes.
    """

    coordinate_transformation_mode: str = "asymmetric"
    nearest_mode: str = "floor"
    arithmetic: str = "torch"
    scales: tuple = (None, None)
    path: str | None = None  # torch only: one of TORCH_PATHS (None: "generic"); see torch_index

    def __post_init__(self):
        what = "IndexConvention"
        if self.arithmetic not in ARITHMETIC_PAIRS:
            raise InvalidValueError(f"{what} requires arithmetic one of {', '.join(map(repr, ARITHMETIC_PAIRS))}, "
                                    f"got {self.arithmetic!r}")
        if self.coordinate_transformation_mode not in COORDINATE_MODES:
            raise InvalidValueError(f"{what} requires coordinate_transformation_mode one of "
                                    f"{', '.join(map(repr, COORDINATE_MODES))}, got "
                                    f"{self.coordinate_transformation_mode!r}")
        if self.nearest_mode not in NEAREST_MODES:
            raise InvalidValueError(f"{what} requires nearest_mode one of {', '.join(map(repr, NEAREST_MODES))}, "
                                    f"got {self.nearest_mode!r}")
        pair = (self.coordinate_transformation_mode, self.nearest_mode)
        if pair not in ARITHMETIC_PAIRS[self.arithmetic]:
            raise InvalidValueError(f"{what} with {self.arithmetic} arithmetic requires one of the pairs "
                                    f"{ARITHMETIC_PAIRS[self.arithmetic]}, got {pair}; arithmetic='onnx' takes "
                                    f"every pair")
        if not isinstance(self.scales, tuple) or len(self.scales) != 2:
            raise InvalidValueError(f"{what} requires scales as a pair (height, width) of floats or None, "
                                    f"got {self.scales!r}")
        for s in self.scales:
            if s is not None and (isinstance(s, bool) or not isinstance(s, (int, float, np.floating))
                                  or not math.isfinite(s) or s <= 0):
                raise InvalidValueError(f"{what} requires positive finite scales (or None), got {self.scales!r}")
        if self.arithmetic in ("tensorflow", "jax") and self.scales != (None, None):
            raise InvalidValueError(f"{what} with {self.arithmetic} arithmetic takes sizes, not scales, got "
                                    f"{self.scales!r}; arithmetic='onnx' or 'torch' takes scales")
        object.__setattr__(self, "scales", tuple(None if s is None else float(s) for s in self.scales))
        if self.arithmetic != "torch":
            if self.path is not None:
                raise InvalidValueError(f"{what} takes a path only with torch arithmetic, got path {self.path!r} "
                                        f"with {self.arithmetic} arithmetic; leave path None")
        elif self.path is not None and self.path not in TORCH_PATHS:
            raise InvalidValueError(f"{what} requires path one of {', '.join(map(repr, TORCH_PATHS))} (or None: "
                                    f"'generic'), got {self.path!r}")
        elif self.path is None or (pair == TORCH_MODES["nearest"] and self.scales == (None, None)):
            # on sizes, "nearest" is one map on both paths (nearest_idx's shortcuts agree with floor(d * in/out))
            object.__setattr__(self, "path", "generic")

    @property
    def is_default(self) -> bool:
        """The compiler's map: torch's "nearest" from sizes (``source_index``)."""
        return self == COMPILER

    def axis(self, k: int) -> "IndexConvention":
        """This convention for axis ``k`` (0: height, 1: width) alone: its scale in both slots (a hashable key)."""
        return IndexConvention(self.coordinate_transformation_mode, self.nearest_mode, self.arithmetic,
                               (self.scales[k], self.scales[k]), self.path)

    @property
    def key(self) -> str:
        """"arithmetic/coordinate mode/nearest mode": the convention in one string (scales left out; see
        ``from_key``), for sweeps, checkpoints and command lines; a torch path other than "generic" adds "/path"."""
        key = f"{self.arithmetic}/{self.coordinate_transformation_mode}/{self.nearest_mode}"
        return key + f"/{self.path}" if self.path not in (None, "generic") else key

    @classmethod
    def from_key(cls, key: str) -> "IndexConvention":
        """The convention ``key`` names ("onnx/half_pixel/round_prefer_ceil"; no scales)."""
        parts = key.split("/") if isinstance(key, str) else []
        if len(parts) == 4 and parts[0] == "torch" and parts[3] in TORCH_PATHS:
            return cls(parts[1], parts[2], parts[0], path=parts[3])
        if len(parts) != 3:
            raise InvalidValueError(f"IndexConvention.from_key requires 'arithmetic/coordinate mode/nearest mode' "
                                    f"(e.g. 'onnx/half_pixel/round_prefer_ceil'), got {key!r}")
        return cls(parts[1], parts[2], parts[0])

    def describe(self) -> str:
        """A short name: "torch nearest", "onnx half_pixel/round_prefer_floor", ..."""
        if self.arithmetic == "torch":
            name = "torch " + next(m for m, p in TORCH_MODES.items()
                                   if p == (self.coordinate_transformation_mode, self.nearest_mode))
            name += f" ({self.path} path)" if self.path != "generic" else ""
        elif self.arithmetic == "tensorflow":
            name = "tensorflow " + {"asymmetric": "resize_nearest_neighbor", "align_corners": "align_corners",
                                    "tf_half_pixel_for_nn": "half_pixel_centers"}[self.coordinate_transformation_mode]
        elif self.arithmetic == "jax":
            name = "jax image.resize nearest"
        else:
            name = f"onnx {self.coordinate_transformation_mode}/{self.nearest_mode}"
        return name + (f" scales {self.scales}" if self.scales != (None, None) else "")


#: The compiler's convention: asymmetric, floor, float32 (torch's "nearest" on sizes).
COMPILER = IndexConvention()
#: The ResizeNearest custom-call's two flags (backend_config "\"10\"" or "\"01\""), as TensorFlow's
#: ResizeNearestNeighbor computes them: what the compiler's extended modes lower.
TENSORFLOW_MODES = {"align_corners": IndexConvention("align_corners", "round_prefer_ceil", "tensorflow"),
                    "half_pixel_centers": IndexConvention("tf_half_pixel_for_nn", "floor", "tensorflow")}
#: ``jax.image.resize(x, shape, method="nearest")``'s map (``convention="jax"`` names it).
JAX = IndexConvention("tf_half_pixel_for_nn", "floor", "jax")


def conventions() -> tuple[IndexConvention, ...]:
    """Every convention other than the compiler's (sizes, no scales): each arithmetic's pairs, and torch's
    nearest-exact on each of its CPU index paths (torch's nearest on sizes is the compiler's map on every path)."""
    out = [IndexConvention(*pair, arithmetic) for arithmetic, pairs in ARITHMETIC_PAIRS.items() for pair in pairs
           if arithmetic != "torch"]
    out += [IndexConvention(*TORCH_MODES["nearest-exact"], "torch", path=path) for path in TORCH_PATHS]
    return tuple(out)


def scaled_size(in_size: int, scale: float) -> int:
    """The output size a scale factor gives: floor(in * scale) in float64, as torch and ONNX compute it."""
    return int(math.floor(in_size * float(scale)))


def torch_index(in_size: int, out_size: int, exact: bool = False, scale: float | None = None,
                path: str = "generic") -> np.ndarray:
    """torch's CPU source map on one axis (torch 2.13; ``exact``: "nearest-exact", else "nearest"), int64.

    s = float32(1.0 / scale) with a scale factor (1/scale in double, then rounded), else float32(in) / float32(out)
    (UpSample.h compute_scales_value<float>); the user's scale, not in/out, whenever F.interpolate passes it on.
    Two computations of the map, both clamped to in - 1 (UpSample.h, cpu/UpSampleKernel.cpp):

    path "generic" (compute_indices_weights of HelperInterpNearest / HelperInterpNearestExact, opmath float):
      nearest:        floorf(s * float32(d))
      nearest-exact:  r = s * (float32(d) + 0.5f) - 0.5f as ONE fused multiply-add (GCC contracts it in the AVX2
                      and AVX-512 builds of UpSampleKernel.cpp, which every x86 CPU with AVX2 runs); r = max(r, 0);
                      floorf(float32(double(r) + 0.5))
    path "generic_unfused": the same in torch's DEFAULT build, which has no FMA: r rounded twice (product, then
      difference); it differs from "generic" on (2, 109), (2, 141), (4, 82), ... (ATEN_CPU_CAPABILITY=default).
    path "indexed" (nearest_idx / nearest_exact_idx):
      nearest:        d if out == in, d >> 1 if out == 2 * in (whatever the scale), else floorf(float32(d) * s)
      nearest-exact:  floorf(float32((d + 0.5) * double(s)))

    The fused multiply-add is what makes (2, 141), (2, 159), ... differ from a two-rounding evaluation: at
    d = (out - 1) / 2 the exact value is 1/2 + 1/2, an integer. Measured against F.interpolate on every
    (in, out) in 1..300 and random scale factors, both ranks and memory formats (benchmarks/torch_index_sweep.py).
    """
    check_axis(in_size, out_size, "torch_index")
    if path not in TORCH_PATHS:
        raise InvalidValueError(f"torch_index requires path one of {', '.join(map(repr, TORCH_PATHS))}, got {path!r}")
    s = np.float32(1.0 / float(scale)) if scale is not None else np.float32(in_size) / np.float32(out_size)
    d = np.arange(out_size, dtype=np.int64)
    if not exact:
        if path == "indexed" and out_size == in_size:
            return d
        if path == "indexed" and out_size == 2 * in_size:
            return d >> 1
        src = np.floor(d.astype(np.float32) * s)  # float32 product, rounded to nearest even
    elif path == "indexed":
        src = np.floor(((d + 0.5) * np.float64(s)).astype(np.float32))
    elif path == "generic_unfused":
        x = d.astype(np.float32) + np.float32(0.5)
        r = np.maximum(x * s - np.float32(0.5), np.float32(0))
        src = np.floor((r.astype(np.float64) + 0.5).astype(np.float32))
    else:
        # the fused s * x - 0.5: s * x is exact in float64 (24 + 24 bits) and so is the difference wherever it is
        # not negative (clamped to 0 anyway), so one rounding to float32 is the FMA's
        x = (d.astype(np.float32) + np.float32(0.5)).astype(np.float64)
        r = np.maximum((np.float64(s) * x - 0.5).astype(np.float32), np.float32(0))
        src = np.floor((r.astype(np.float64) + 0.5).astype(np.float32))
    return np.minimum(src.astype(np.int64), in_size - 1)


def convention_index(in_size: int, out_size: int, convention: IndexConvention = COMPILER,
                     scale: float | None = None) -> np.ndarray:
    """src(d) for d in 0..out-1 under ``convention`` (one axis; ``scale``: that axis's scale factor or None), int64.

    torch (F.interpolate's CPU kernels, float32 with torch's own rounding steps): ``torch_index``.
    onnx (onnx.reference's Resize, float64): s = scale or out / in; x = the mode's transform of d; nearest_mode
      picks floor(x) or floor(x) + 1 by x's fraction (x itself when it is an integer); clamped to 0..in-1.
    tensorflow (resize_nearest_neighbor_op.cc, float32): s = float32((in - 1) / (out - 1)) with align_corners and
      out > 1, else float32(in / out); roundf(d * s) (ties away from zero) with align_corners, floorf((d + 0.5f) * s)
      with half_pixel_centers, else floorf(d * s); clamped to 0..in-1.
    jax (jax.image.resize, float32): floor((d + 0.5f) * s) with s = float32(in * float32(1 / out)): JAX writes
      (d + 0.5) * in / out, and XLA's algebraic simplifier (jax 0.10.2 on CPU) makes the division by the constant
      out a product with its float32 reciprocal and folds in's factor into it; clamped to 0..in-1 (XLA's gather).
    """
    check_axis(in_size, out_size, "convention_index")
    if scale is not None and scaled_size(in_size, scale) != out_size:
        raise InvalidValueError(f"convention_index requires out_size = floor(in_size * scale) as torch and ONNX compute "
                                f"it, got in_size {in_size}, scale {scale!r} and out_size {out_size} (it would be "
                                f"{scaled_size(in_size, scale)}); pass the size the scale gives, or no scale")
    d = np.arange(out_size, dtype=np.int64)
    mode, rounding = convention.coordinate_transformation_mode, convention.nearest_mode
    if convention.arithmetic == "torch":
        return torch_index(in_size, out_size, mode == "half_pixel", scale, convention.path)
    if convention.arithmetic == "tensorflow":
        align = mode == "align_corners" and out_size > 1
        s = np.float32(in_size - 1) / np.float32(out_size - 1) if align else np.float32(in_size) / np.float32(out_size)
        if mode == "tf_half_pixel_for_nn":
            x = np.floor((d.astype(np.float32) + np.float32(0.5)) * s)
        elif mode == "align_corners":
            # roundf(float32 product): ties away from zero; p + 0.5 is exact in float64, so its floor is roundf(p)
            x = np.floor((d.astype(np.float32) * s).astype(np.float64) + 0.5)
        else:
            x = np.floor(d.astype(np.float32) * s)
        return np.clip(x.astype(np.int64), 0, in_size - 1)
    if convention.arithmetic == "jax":
        s = np.float32(np.float32(in_size) * (np.float32(1) / np.float32(out_size)))
        x = np.floor((d.astype(np.float32) + np.float32(0.5)) * s)
        return np.clip(x.astype(np.int64), 0, in_size - 1)
    return _onnx_index(in_size, out_size, mode, rounding, scale)


def _onnx_index(in_size: int, out_size: int, mode: str, rounding: str, scale: float | None) -> np.ndarray:
    """onnx.reference's nearest Resize on one axis, step for step in float64 (the vectorized reference's order)."""
    s = float(scale) if scale is not None else out_size / in_size
    y = np.arange(out_size, dtype=np.float64)
    width = s * in_size  # the reference's "output_width": a float
    if mode == "align_corners":
        x = np.zeros(out_size) if width == 1 else y * (in_size - 1) / (width - 1)
    elif mode == "asymmetric":
        x = y / s
    elif mode == "pytorch_half_pixel":
        x = np.full(out_size, -0.5) if width == 1 else (y + 0.5) / s - 0.5
    elif mode == "half_pixel":
        x = (y + 0.5) / s - 0.5
    else:  # tf_half_pixel_for_nn (opset 11)
        x = (y + 0.5) / s
    lower = np.floor(x).astype(np.int64)
    ratio = np.where(x == lower, 1.0, x - lower)  # an integer x takes x itself (the second of [x - 1, x])
    second = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5,
              "floor": np.zeros(out_size, bool), "ceil": np.ones(out_size, bool)}[rounding] | (ratio == 1.0)
    padded = x + 1  # the reference pads one edge pixel and finds the two neighbours in the padded axis
    p = np.floor(padded).astype(np.int64)
    start = p + np.where(padded - p == 0, -1, 0) - 1
    return np.clip(start + second, 0, in_size - 1)


def convention_index_exact(in_size: int, out_size: int, convention: IndexConvention = COMPILER,
                           scale: float | None = None) -> np.ndarray:
    """The map ``convention`` means in exact rational arithmetic (the float32 / float64 maps may differ from it at
    a few indices: ``convention_differences``)."""
    from fractions import Fraction

    check_axis(in_size, out_size, "convention_index_exact")
    mode, rounding = convention.coordinate_transformation_mode, convention.nearest_mode
    ratio = Fraction(scale) if scale is not None else Fraction(out_size, in_size)  # output / input
    half = Fraction(1, 2)
    out = []
    for d in range(out_size):
        if mode == "align_corners":
            x = Fraction(0) if out_size == 1 else Fraction(d * (in_size - 1), out_size - 1)
        elif mode == "asymmetric":
            x = d / ratio
        elif mode == "pytorch_half_pixel":
            x = Fraction(-1, 2) if out_size == 1 else (d + half) / ratio - half
        elif mode == "half_pixel":
            x = (d + half) / ratio - half
        else:
            x = (d + half) / ratio
        lower = math.floor(x)
        frac = x - lower
        up = {"floor": False, "ceil": frac > 0, "round_prefer_floor": frac > half,
              "round_prefer_ceil": frac >= half}[rounding]
        out.append(min(max(lower + up, 0), in_size - 1))
    return np.array(out, dtype=np.int64)


def convention_differences(in_size: int, out_size: int, convention: IndexConvention = COMPILER,
                           scale: float | None = None) -> np.ndarray:
    """Output positions where ``convention``'s map and its exact-rational meaning disagree."""
    return np.nonzero(convention_index(in_size, out_size, convention, scale)
                      != convention_index_exact(in_size, out_size, convention, scale))[0]


def axis_index(in_size: int, out_size: int, convention: IndexConvention, k: int) -> np.ndarray:
    """Axis ``k``'s map (0: height, 1: width): ``source_index`` for the compiler's convention, else
    ``convention_index`` with that axis's scale."""
    if convention.is_default:
        return source_index(in_size, out_size)
    return convention_index(in_size, out_size, convention, convention.scales[k])


def convention_reference(x: np.ndarray, out_hw, convention: IndexConvention = COMPILER) -> np.ndarray:
    """Reference forward resize of an NHWC array under ``convention``: a gather by its two maps."""
    if x.ndim != 4:
        raise InvalidValueError(f"convention_reference requires an NHWC array of rank 4, got shape {x.shape}")
    (out_h, out_w) = _check_hw("out_hw", out_hw)
    _, in_h, in_w, _ = x.shape
    return x[:, axis_index(in_h, out_h, convention, 0)[:, None], axis_index(in_w, out_w, convention, 1)[None, :], :]

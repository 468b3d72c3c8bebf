"""The default never fails an accepted shape: new random shapes every run, exact bits, no exception.

Shapes are drawn as the project's users meet them, not from a list: batch 1-8, channels 1-1536, widths 2-16384
and heights 2-2048 (log-uniform), a ratio in 1/8..8 per axis (log-uniform), every dtype class, inputs and
outputs up to 256 MiB. The suite draws a few each run; RESIZE_KERNELS_RANDOM_SHAPES sets how many (CI draws a
few hundred). Hypothesis keeps any failing shape and tries it first next time.
"""

import math
import os

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics

from conftest import assert_bits_equal, random_data

SHAPES = int(os.environ.get("RESIZE_KERNELS_RANDOM_SHAPES", "12"))
MAX_BYTES = 256 << 20
FORWARD_DTYPES = [np.float32, ml_dtypes.bfloat16, np.float16, np.int32, np.int16, np.int8, np.uint8, np.uint16,
                  np.uint32]
GRAD_DTYPES = [np.float32, ml_dtypes.bfloat16, np.float16]


def log_int(low: int, high: int):
    """Integers in low..high, log-uniform (as many 2-16 as 1024-16384)."""
    return st.floats(math.log2(low), math.log2(high)).map(lambda e: min(high, max(low, round(2 ** e))))


@st.composite
def accepted(draw, dtypes):
    """(NHWC in, (out_h, out_w), dtype) within MAX_BYTES on both sides."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    n, c = draw(st.integers(1, 8)), draw(log_int(1, 1536))
    h, w = draw(log_int(2, 2048)), draw(log_int(2, 16384))
    ratio = st.floats(-3, 3).map(lambda e: 2 ** e)
    oh, ow = (max(1, min(semantics.MAX_DIM - 1, round(side * draw(ratio)))) for side in (h, w))
    pixel = c * dtype.itemsize
    # the larger side within MAX_BYTES: shrink the batch, then the channels (the shape stays one users meet)
    while n * max(h * w, oh * ow) * pixel > MAX_BYTES and n > 1:
        n -= 1
    c = max(1, min(c, MAX_BYTES // (max(h * w, oh * ow) * dtype.itemsize)))
    return (n, h, w, c), (oh, ow), dtype


@settings(max_examples=SHAPES, deadline=None, suppress_health_check=list(HealthCheck))
@given(accepted(FORWARD_DTYPES), st.integers(0, 2**32 - 1))
def test_the_default_resizes_every_accepted_shape_exactly(shape, seed):
    in_shape, out_hw, dtype = shape
    x = random_data(np.random.default_rng(seed), in_shape, dtype)  # random bits: NaN payloads, -0.0, subnormals
    assert_bits_equal(rk.resize_nearest(x, out_hw), semantics.resize_nearest_reference(x, out_hw))
    _forget()


@settings(max_examples=max(1, SHAPES // 3), deadline=None, suppress_health_check=list(HealthCheck))
@given(accepted(GRAD_DTYPES), st.integers(0, 2**32 - 1))
def test_the_default_gradient_sums_every_accepted_shape_exactly(shape, seed):
    in_shape, out_hw, dtype = shape
    dy = random_data(np.random.default_rng(seed), (in_shape[0], *out_hw, in_shape[3]), dtype)
    dy[~np.isfinite(dy.astype(np.float32))] = 0  # finite sums: NaN and inf propagate alike, but compare unequal
    in_hw = in_shape[1:3]
    assert_bits_equal(rk.resize_nearest_grad(dy, in_hw), semantics.resize_nearest_grad_reference(dy, in_hw))
    _forget()


def _forget():
    """Drop the cached Programs: each shape is new, and a few hundred would only hold memory."""
    rk.api.executable.cache_clear()
    rk.api._program.cache_clear()

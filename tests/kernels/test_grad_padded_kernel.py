"""The padded gradient kernel: the reference's sums bit for bit on any map, in instructions bounded by the data."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics, select
from resize_kernels.kernels import GRAD, fallback
from resize_kernels.kernels.grad_padded import INDEX_ROWS
from resize_kernels.kernels.slots import SLOTS

from conftest import assert_bits_equal, random_data

FLOATS = [np.float32, np.float16, ml_dtypes.bfloat16]
MODES = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"]


def finite(rng, shape, dtype):
    """Random bits (-0.0, subnormals, every exponent), the non-finite ones zeroed: NaN compares unequal."""
    dy = random_data(rng, shape, dtype)
    dy[~np.isfinite(dy.astype(np.float32))] = 0
    return dy


def test_the_default_takes_it_before_the_scatter_add_kernel():
    assert [r.name for r in rk.kernels.candidates(GRAD)] == ["rows", "padded", "general"]
    assert fallback(GRAD).name == "general"


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3), h=st.integers(1, 40), w=st.integers(1, 40), oh=st.integers(1, 90), ow=st.integers(1, 90),
       c=st.integers(1, 5), dtype=st.sampled_from(FLOATS), seed=st.integers(0, 2**32 - 1))
def test_random_bits_sum_as_the_reference_does(n, h, w, oh, ow, c, dtype, seed):
    dy = finite(np.random.default_rng(seed), (n, oh, ow, c), dtype)
    want = semantics.resize_nearest_grad_reference(dy, (h, w))
    assert_bits_equal(rk.resize_nearest_grad(dy, (h, w), kernel="padded"), want)


@settings(max_examples=40, deadline=None)
@given(mode=st.sampled_from(MODES), nearest=st.sampled_from(semantics.NEAREST_MODES), h=st.integers(1, 20),
       w=st.integers(1, 20), oh=st.integers(1, 45), ow=st.integers(1, 45), seed=st.integers(0, 2**32 - 1))
def test_every_convention_sums_as_the_scatter_add_kernel_does(mode, nearest, h, w, oh, ow, seed):
    """Monotone or not (onnx.reference's round_prefer_* maps step back), the same sums as the general kernel's,
    which tests/kernels/test_grad_kernel.py checks against the reference."""
    dy = finite(np.random.default_rng(seed), (2, oh, ow, 3), np.float32)
    kw = dict(coordinate_transformation_mode=mode, nearest_mode=nearest)
    try:
        want = rk.resize_nearest_grad(dy, (h, w), kernel="general", **kw)
    except rk.errors.ResizeKernelsError:  # a mode the sizes do not take (align_corners on one pixel, say)
        return
    assert_bits_equal(rk.resize_nearest_grad(dy, (h, w), kernel="padded", **kw), want)


@pytest.mark.parametrize("dy_shape, in_hw", [
    ((1, 3, 2 * SLOTS + 5, 1), (2, 2)),  # more dy columns per dx column than a piece's slots
    ((2, INDEX_ROWS + 40, 3, 2), (3, 2)),  # more dy rows per dx row than one row table
    ((1, 5, 7, SLOTS + 3), (3, 3)),  # more channels than a piece's slots
    ((1, 130, 300, 2), (129, 101)),  # two row tiles, the second of one row
])
def test_chunks_past_a_pieces_bounds(rng, dy_shape, in_hw):
    dy = finite(rng, dy_shape, np.float16)
    assert_bits_equal(rk.resize_nearest_grad(dy, in_hw, kernel="padded"),
                      semantics.resize_nearest_grad_reference(dy, in_hw))


def test_an_irregular_ratio_on_narrow_pixels_takes_few_instructions():
    """CI's random draw that no gradient kernel traced within the tracer's budget (seed 262: the rows kernel's
    bands and column groups and the scatter-add kernel's 128-pixel tiles grow with the pixels)."""
    program = select.program(GRAD, None, (7, 407, 28838, 1), (7, 119, 5950, 1), np.float16, sources=False)
    assert program.selection.kernel == "padded"
    assert len(program.instructions) < 4 * (7 * 407 * 28838) // (128 * SLOTS) * (5 + 4) + 1000

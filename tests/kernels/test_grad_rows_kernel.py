"""The gradient's rows kernel (dx rows on partitions, sums in PSUM) and auto, against the reference, bit for bit."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import api, semantics
from resize_kernels.errors import InvalidValueError
from resize_kernels.kernels.grad_rows import grad_rows_applies
from resize_kernels.kernels.plan import plan_resize
from resize_kernels.verifier import GRAD, sweep

from conftest import assert_bits_equal

FLOATS = [np.float32, np.float16, ml_dtypes.bfloat16]
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-40, 3.0, -2.5, 65504.0], np.float32)


def check(dy, in_hw, kernel):
    assert_bits_equal(rk.resize_nearest_grad(dy, in_hw, kernel=kernel), semantics.resize_nearest_grad_reference(dy, in_hw))


@pytest.mark.parametrize("kernel", ["rows", "general"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dy_shape, in_hw", [
    ((2, 59, 38, 8), (30, 20)),  # SD2's ratio: the last dx row of each batch takes one dy row, not two
    ((1, 11, 13, 3), (5, 7)),
    ((1, 4, 5, 2), (9, 9)),  # a downsample: dx rows and columns no dy pixel reads stay +0.0
    ((1, 401, 61, 2), (200, 30)),  # dx rows past 128: tiles of one batch; runs of 2 and 3 dy rows
    ((3, 20, 9, 1), (7, 5)),  # whole batches per tile, channel blocks of 1
    ((1, 5, 7, 3000), (2, 3)),  # channels past an accumulator's 2048: chunks
])
def test_equals_the_reference_bit_for_bit(dy_shape, in_hw, dtype, kernel, rng):
    for dy in (rng.standard_normal(dy_shape).astype(dtype), rng.choice(SPECIALS, size=dy_shape).astype(dtype)):
        check(dy, in_hw, kernel)  # random rounding (order matters); infinities, -0.0, subnormals


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 3), st.integers(1, 40), st.integers(1, 140), st.integers(1, 40), st.integers(1, 140),
       st.sampled_from([1, 3, 8, 130]), st.sampled_from(FLOATS), st.integers(0, 2**32 - 1))
def test_random_shapes_equal_the_reference(n, in_h, out_h, in_w, out_w, c, dtype, seed):
    dy = np.random.default_rng(seed).standard_normal((n, out_h, out_w, c)).astype(dtype)
    plan = plan_resize((n, in_h, in_w, c), (n, out_h, out_w, c))
    if grad_rows_applies(plan, np.dtype(dtype).itemsize):
        check(dy, (in_h, in_w), "rows")
    else:  # a dx pixel's dy pixels pass the tile (97 x 127 float32, say): refused, pointing to the general kernel
        with pytest.raises(InvalidValueError, match="requires a dx pixel's dy pixels .* use kernel='general'"):
            check(dy, (in_h, in_w), "rows")


def test_sd2_program_is_direct_dmas_and_psum_adds():
    program = api.trace_resize_grad((2, 59, 38, 1280), (30, 20), "bfloat16", kernel="rows")
    assert not any(d.is_indirect for d in program.dmas())  # no scatter, no descriptors for GpSimd to write
    adds = [i for i in program.instructions if i.opcode == "tensor_tensor"]
    assert adds and all(i.dst.tensor.memory == "psum" for i in adds)  # one SBUF stream per add (cost model E2)


def test_a_run_too_long_for_the_tile_is_the_general_kernels():
    with pytest.raises(InvalidValueError, match="requires a dx pixel's dy pixels .* use kernel='general'"):
        api.trace_resize_grad((1, 300, 300, 1), (1, 1), kernel="rows")
    dy = np.random.default_rng(0).standard_normal((1, 300, 300, 1)).astype(np.float32)
    check(dy, (1, 1), None)  # auto: general here
    assert api.trace_resize_grad((1, 300, 300, 1), (1, 1)).counts()["dma_copy_add"] > 0


@pytest.mark.parametrize("axis", ["h", "w"])
def test_per_axis_sweep_1_to_48(axis):
    result = sweep(48, axis, "rows", jobs=2, op=GRAD)
    assert not result.failures and not result.not_applicable, result.summary()

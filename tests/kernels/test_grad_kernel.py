"""The gradient kernel: the reference scatter-add for every ratio, bit for bit, on the simulated NeuronCore."""

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import api, semantics
from resize_kernels.kernels import GRAD, record
from resize_kernels.kernels.grad import resize_nearest_grad_kernel
from resize_kernels.kernels.slots import SLOTS
from resize_kernels.machine.memory import DEFAULT_SBUF_PARTITION_BYTES
from resize_kernels.machine.simulator import run
from resize_kernels.nki import TensorSpec, trace

from conftest import assert_bits_equal

FLOATS = [np.float32, np.float16, ml_dtypes.bfloat16]


def small_ints(rng, shape, dtype):
    """dy of integers in [-8, 8]: every float32 partial sum is exact, so any summation order gives these bits."""
    return rng.integers(-8, 9, size=shape).astype(np.float32).astype(dtype)


@st.composite
def axis(draw):
    """(in, out) for one axis: any pair, or an integer up- or downsampling ratio."""
    kind = draw(st.sampled_from(["any", "up", "down"]))
    if kind == "any":
        return draw(st.integers(1, 40)), draw(st.integers(1, 140))
    small, k = draw(st.integers(1, 20)), draw(st.integers(1, 6))
    return (small, small * k) if kind == "up" else (small * k, small)


@settings(max_examples=120, deadline=None)
@given(n=st.integers(1, 3), h=axis(), w=axis(), c=st.integers(1, 5), dtype=st.sampled_from(FLOATS),
       seed=st.integers(0, 2**32 - 1))
def test_small_integer_gradient_equals_reference(n, h, w, c, dtype, seed):
    (in_h, out_h), (in_w, out_w) = h, w
    dy = small_ints(np.random.default_rng(seed), (n, out_h, out_w, c), dtype)
    want = semantics.resize_nearest_grad_reference(dy, (in_h, in_w))
    assert_bits_equal(rk.resize_nearest_grad(dy, (in_h, in_w)), want)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 2), h=axis(), w=axis(), c=st.integers(1, 3), dtype=st.sampled_from(FLOATS),
       seed=st.integers(0, 2**32 - 1))
def test_random_gradient_equals_reference_bits(n, h, w, c, dtype, seed):
    # The kernel adds in the reference's order (row-major, float32), so even rounding agrees.
    (in_h, out_h), (in_w, out_w) = h, w
    dy = np.random.default_rng(seed).standard_normal((n, out_h, out_w, c)).astype(dtype)
    want = semantics.resize_nearest_grad_reference(dy, (in_h, in_w))
    assert_bits_equal(rk.resize_nearest_grad(dy, (in_h, in_w)), want)


def test_sd2_inpainting_shape_with_1280_channels(rng):
    dy = small_ints(rng, (2, 59, 38, 1280), np.float32)
    assert_bits_equal(rk.resize_nearest_grad(dy, (30, 20)), semantics.resize_nearest_grad_reference(dy, (30, 20)))


def torch_autograd_nhwc(dy: np.ndarray, in_hw) -> np.ndarray:
    n, _, _, c = dy.shape
    x = torch.zeros(n, c, *in_hw, requires_grad=True)
    y = torch.nn.functional.interpolate(x, size=dy.shape[1:3], mode="nearest")
    y.backward(torch.from_numpy(dy).permute(0, 3, 1, 2))
    return x.grad.permute(0, 2, 3, 1).numpy()


@pytest.mark.parametrize("in_hw, out_hw", [((30, 20), (59, 38)), ((59, 38), (30, 20)), ((8, 8), (16, 24)),
                                           ((5, 7), (5, 7)), ((3, 2), (100, 130))])
def test_equals_torch_autograd_to_float32_rounding(in_hw, out_hw, rng):
    """Against torch on random data, within the bound on reordering a float32 sum.

    A dx element sums k dy values; two summation orders of the same k float32
    terms differ by at most 2 (k - 1) eps32 sum|dy| (each order is within
    (k - 1) eps32 sum|dy| of the exact sum). Torch's CPU backward happens to add
    in our order today (the results are equal), but the order is not its contract.
    """
    dy = rng.standard_normal((2, *out_hw, 3)).astype(np.float32)
    got, want = rk.resize_nearest_grad(dy, in_hw), torch_autograd_nhwc(dy, in_hw)
    k = semantics.resize_nearest_grad_reference(np.ones_like(dy), in_hw)
    abs_sum = semantics.resize_nearest_grad_reference(np.abs(dy), in_hw)
    bound = 2 * np.maximum(k - 1, 0) * np.finfo(np.float32).eps * abs_sum
    assert (np.abs(got - want) <= bound).all()


def test_wide_rows_add_in_row_major_order_across_column_tiles(rng):
    # One dx column collects 300 dy columns from three 128-pixel tiles: rows outer keeps row-major order.
    dy = rng.standard_normal((1, 3, 300, 2)).astype(np.float32)
    assert_bits_equal(rk.resize_nearest_grad(dy, (2, 1)), semantics.resize_nearest_grad_reference(dy, (2, 1)))


def test_large_block_ratios_take_few_instructions(rng):
    """Issue 40.16: every dx pixel summing a large block of dy pixels (2048x2048 -> 1x1) in tens of instructions,
    not one per 128 dy pixels."""
    dy = rng.standard_normal((1, 2048, 2048, 1)).astype(np.float32)
    program = trace(resize_nearest_grad_kernel, dy, in_shape=(1, 1, 1, 1))
    assert len(program.instructions) < 100
    assert_bits_equal(run(program, [dy])[0], semantics.resize_nearest_grad_reference(dy, (1, 1)))


def test_channels_beyond_one_chunk_are_split(rng):
    c = SLOTS + 3  # channels past one piece's slots
    dy = small_ints(rng, (1, 3, 2, c), ml_dtypes.bfloat16)
    program = api.trace_resize_grad(dy.shape, (2, 3), dy.dtype, kernel="general")
    assert all(d.dst.shape[-1] <= SLOTS for d in program.dmas() if d.opcode == "dma_copy_add")
    assert_bits_equal(rk.resize_nearest_grad(dy, (2, 3)), semantics.resize_nearest_grad_reference(dy, (2, 3)))


def test_sbuf_capacity_holds_for_many_channels():
    program = trace(resize_nearest_grad_kernel, TensorSpec((1, 4, 3, 100000), np.dtype(ml_dtypes.bfloat16)),
                    in_shape=(1, 2, 2, 100000))
    assert program.sbuf_high_water <= DEFAULT_SBUF_PARTITION_BYTES


def test_sd2_program_shape():
    program = api.trace_resize_grad((10, 59, 38, 1280), (30, 20), kernel="general")
    counts = program.counts()
    # 20 dx columns (two slots of 1280 channels fill a piece), 590 dy rows in 5 tiles of 128
    assert counts["dma_copy_add"] == 20 * 5 and counts["nc_n_gather"] == 20 * 5
    assert all(d.is_indirect for d in program.dmas() if d.opcode == "dma_copy_add")


def test_float32_accumulates_in_dx_and_half_types_cast_once():
    f32 = api.trace_resize_grad((1, 4, 4, 2), (2, 2), "float32", kernel="general")
    bf16 = api.trace_resize_grad((1, 4, 4, 2), (2, 2), "bfloat16", kernel="general")
    assert not f32.internal and [t.dtype for t in bf16.internal] == [np.dtype(np.float32)]
    assert f32.counts()["tensor_copy"] < bf16.counts()["tensor_copy"]


def test_registered_as_general():
    assert record(GRAD, "general").function is resize_nearest_grad_kernel


@pytest.mark.parametrize("dy, in_shape, exc, match", [
    (TensorSpec((1, 4, 4, 2), np.dtype(np.int32)), (1, 2, 2, 2), TypeError, "float32, float16, bfloat16, got int32"),
    (TensorSpec((1, 4, 4, 2), np.dtype(np.float32)), (2, 2, 2, 2), ValueError, "equal batch and channels in in_shape and dy's shape"),
    (TensorSpec((1, 4, 4, 2), np.dtype(np.float32)), (1, 2, 2, 3), ValueError, "equal batch and channels in in_shape and dy's shape"),
    (TensorSpec((1, 4, 4, 2), np.dtype(np.float32)), (1, 2, 2), ValueError, "four positive integers"),
    (TensorSpec((4, 4, 2), np.dtype(np.float32)), (1, 2, 2, 2), ValueError, "dy's shape as four positive integers"),
    (TensorSpec((1, 2, 2, 1 << 30), np.dtype(np.float16)), (1, 4, 4, 1 << 30), ValueError, "fewer than 2\\*\\*31"),
])
def test_kernel_rejects_bad_shapes(dy, in_shape, exc, match):
    with pytest.raises(exc, match=match):
        trace(resize_nearest_grad_kernel, dy, in_shape=in_shape)


def test_programs_are_cached(rng):
    api.executable.cache_clear()
    dy = small_ints(rng, (1, 6, 6, 2), np.float32)
    rk.resize_nearest_grad(dy, (4, 4))
    rk.resize_nearest_grad(dy + 1, (4, 4))
    info = api.executable.cache_info()
    assert (info.misses, info.hits) == (1, 1)


DY = np.zeros((1, 8, 8, 2), np.float32)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: rk.resize_nearest_grad(DY.tolist(), (4, 4)), TypeError, "requires a numpy array.*got list"),
    (lambda: rk.resize_nearest_grad(torch.zeros(1, 8, 8, 2), (4, 4)), TypeError, "got Tensor; convert a torch tensor"),
    (lambda: rk.resize_nearest_grad(DY[0], (4, 4)), ValueError, r"rank 4.*got shape \(8, 8, 2\)"),
    (lambda: rk.resize_nearest_grad(np.zeros((1, 8, 8, 0), np.float32), (4, 4)), ValueError, "at least one batch"),
    (lambda: rk.resize_nearest_grad(DY.astype(np.float64), (4, 4)), TypeError,
     "float32, float16, bfloat16, got float64; cast it with .astype"),
    (lambda: rk.resize_nearest_grad(DY.astype(np.int16), (4, 4)), TypeError, "got int16; a gradient is real-valued"),
    (lambda: rk.resize_nearest_grad(DY, 4.0), TypeError, r"forward input size as a pair \(in_h, in_w\), got 4.0"),
    (lambda: rk.resize_nearest_grad(DY, (4, 4, 1)), TypeError, "as a pair"),
    (lambda: rk.resize_nearest_grad(DY, (4.0, 4)), TypeError, "integer sizes, got input size 4.0"),
    (lambda: rk.resize_nearest_grad(DY, (0, 4)), ValueError, "positive sizes, got input size 0"),
    (lambda: rk.resize_nearest_grad(np.zeros((1, 0, 8, 2), np.float32), (4, 4)), ValueError,
     "positive sizes, got output size 0"),
    (lambda: rk.resize_nearest_grad(DY, (4, 1 << 24)), ValueError, "below 2\\*\\*24"),
    (lambda: rk.resize_nearest_grad(DY, (4, 4), kernel="pool"), ValueError,
     "no kernel 'pool'; choose one of 'auto', 'rows', 'padded', 'general'"),
])
def test_bad_input_gets_a_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()

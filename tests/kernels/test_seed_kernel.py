"""The seed kernel runs bit-exact: equal to the reference where its arithmetic holds, faithful where it breaks."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from resize_kernels import semantics
from resize_kernels.kernels.baselines.seed_lowered import resize_nearest_fixed_dma_kernel
from resize_kernels.machine.errors import OutOfBoundsError
from resize_kernels.machine.simulator import run
from resize_kernels.nki import TensorSpec, trace

from conftest import DTYPES, assert_bits_equal, random_data
from seed_model import seed_load_indices, seed_resize


def run_seed(x, out_hw):
    n, _, _, c = x.shape
    program = trace(resize_nearest_fixed_dma_kernel, x, out_shape=(n, *out_hw, c))
    return run(program, [x])[0]


@pytest.mark.parametrize("shape, dtype", [((10, 30, 20, 1280), np.float32), ((1, 30, 20, 1280), np.float16),
                                          ((1, 30, 20, 1280), ml_dtypes.bfloat16)])
def test_nki_sample_shapes_equal_reference(shape, dtype, rng):
    x = random_data(rng, shape, dtype)
    assert_bits_equal(run_seed(x, (59, 38)), semantics.resize_nearest_reference(x, (59, 38)))


def check_against_model(x, out_hw):
    """The simulated seed kernel equals the independent float32 model, wrong pixels and all."""
    want, bad_row = seed_resize(x, out_hw)
    if bad_row is not None:
        with pytest.raises(OutOfBoundsError, match=f"reads elements {bad_row * x.shape[3]}\\.\\."):
            run_seed(x, out_hw)
        return None
    got = run_seed(x, out_hw)
    assert_bits_equal(got, want)
    return got


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 3), in_h=st.integers(1, 40), in_w=st.integers(1, 40), out_h=st.integers(1, 48),
       out_w=st.sampled_from([41, 47, 55, 61, 82]) | st.integers(1, 48), c=st.integers(1, 5),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_random_shapes(n, in_h, in_w, out_h, out_w, c, dtype, seed):
    x = random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dtype)
    exact = np.array_equal(seed_load_indices(in_h, in_w, out_h, out_w),
                           semantics.index_map((in_h, in_w), (out_h, out_w)).reshape(-1))
    event("seed arithmetic exact" if exact else "seed arithmetic breaks")
    got = check_against_model(x, (out_h, out_w))
    event("out of bounds" if got is None else "ran")
    if exact:  # where the seed's arithmetic holds, the kernel is the reference
        assert_bits_equal(got, semantics.resize_nearest_reference(x, (out_h, out_w)))


def test_width_41_misplaces_pixels_as_its_arithmetic_says():
    # The seed's defect: 41 * float32(1/41) = 0.99999994, so p = 41 lands in row 0, column 41.
    assert np.float32(41) * np.float32(1 / 41) < 1
    x = random_data(np.random.default_rng(0), (1, 30, 20, 3), np.float32)
    got = check_against_model(x, (59, 41))
    ref = semantics.resize_nearest_reference(x, (59, 41))
    wrong = np.argwhere((got != ref).any(axis=-1))
    assert len(wrong) > 0 and [0, 1, 0] in wrong.tolist()


def test_reciprocal_error_can_read_out_of_bounds():
    # 1x3 -> 2x41: p = 41 lands in row 0, column 41, whose source column 3 is one past the last pixel.
    load = seed_load_indices(1, 3, 2, 41)
    assert load[41] == 3
    x = np.zeros((1, 1, 3, 2), np.float32)
    with pytest.raises(OutOfBoundsError, match=r"gather from data_tensor\): partition 41 reads elements 6\.\.7 "):
        run_seed(x, (2, 41))


def test_program_structure_per_tile():
    program = trace(resize_nearest_fixed_dma_kernel, TensorSpec((2, 30, 20, 8), np.float32), out_shape=(2, 59, 38, 8))
    tiles = 2 * -(-59 * 38 // 128)
    counts = program.counts()
    assert counts["dma_copy"] == 2 * tiles and counts["iota"] == tiles
    gathers = [d for d in program.dmas() if d.is_indirect]
    assert len(gathers) == tiles and all(g.src.indirect_dim == 0 for g in gathers)
    assert gathers[-1].dst.shape == (59 * 38 % 128, 8)  # the last tile shrinks
    assert len(program.instructions) == tiles * 34  # iota + 5 tensor ops + 3 floors of 8 + 2 DMAs + ...


@pytest.mark.parametrize("out_shape, match", [
    ((2, 59, 38, 8), "equal batch and channels in in_shape and out_shape"), ((1, 59, 38, 4), "equal batch and channels"),
    ((1, 59, 38), "four positive integers"), ((1, 0, 38, 8), "positive sizes, got output size 0")])
def test_seed_asserts_are_clear_errors(out_shape, match):
    with pytest.raises(ValueError, match=match):
        trace(resize_nearest_fixed_dma_kernel, TensorSpec((1, 30, 20, 8), np.float32), out_shape=out_shape)

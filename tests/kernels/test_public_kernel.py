"""The public variant is the public NKI sample's algorithm: its float32 arithmetic, and exact where the sample is.

The sample divides the flat position by the output width (the seed's private
lowered kernel multiplies by a float32 reciprocal): a correctly rounded float32
quotient of integers below 2**24 never rounds up to the next integer, so its
row/column split is exact, and the sweeps find no wrong pixel.
"""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics

from conftest import DTYPES, assert_bits_equal, random_data
from resize_kernels.verifier import axis_shapes, sweep

from seed_model import public_load_indices, seed_load_indices


@pytest.mark.parametrize("shape, dtype", [((10, 30, 20, 1280), np.float32), ((1, 30, 20, 1280), np.float16),
                                          ((1, 30, 20, 1280), ml_dtypes.bfloat16)])
def test_nki_sample_shapes_equal_reference(shape, dtype, rng):
    x = random_data(rng, shape, dtype)
    assert_bits_equal(rk.resize_nearest(x, (59, 38), kernel="public"), semantics.resize_nearest_reference(x, (59, 38)))


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 2), in_h=st.integers(1, 40), in_w=st.integers(1, 40), out_h=st.integers(1, 48),
       out_w=st.sampled_from([41, 47, 55, 61, 82]) | st.integers(1, 100), c=st.integers(1, 3),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_random_shapes_match_its_arithmetic(n, in_h, in_w, out_h, out_w, c, dtype, seed):
    load = public_load_indices(in_h, in_w, out_h, out_w)
    ref = semantics.index_map((in_h, in_w), (out_h, out_w)).reshape(-1)
    assert 0 <= load.min() and load.max() < in_h * in_w  # the column is a modulo: never outside the image
    x = random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dtype)
    got = rk.resize_nearest(x, (out_h, out_w), kernel="public")
    if np.array_equal(load, ref):
        assert_bits_equal(got, semantics.resize_nearest_reference(x, (out_h, out_w)))
    else:
        want = x.reshape(n, in_h * in_w, c)[:, load].reshape(n, out_h, out_w, c)
        assert_bits_equal(got, want)
    report = rk.verify((n, in_h, in_w, c), (n, out_h, out_w, c), kernel="public")
    assert report.wrong_pixels == n * int((load != ref).sum())  # the verifier's report is accurate


def test_last_tile_is_masked_not_shrunk():
    program = rk.trace_resize((1, 30, 20, 4), (59, 38), kernel="public")
    gathers = [d for d in program.dmas() if d.is_indirect]
    assert gathers[-1].dst.shape == (2242 % 128, 4)
    last_index_tile = gathers[-1].src.vector_offset.tensor
    assert last_index_tile.partitions == 128  # the index graph ran on a full tile
    assert program.counts()["activation"] == 3 * len(gathers)  # nl.floor: one activation, three per tile


@pytest.mark.parametrize("axis", ["w", "h"])
def test_exact_on_every_pair_where_the_samples_arithmetic_is(axis):
    """The model of the sample's arithmetic equals the reference on every pair, and the kernel is exact there."""
    for i in range(1, 65):
        for o in range(1, 65):
            (_, ih, iw, _), (_, oh, ow, _) = axis_shapes(axis, i, o)
            assert np.array_equal(public_load_indices(ih, iw, oh, ow),
                                  semantics.index_map((ih, iw), (oh, ow)).reshape(-1)), (i, o)
    assert sweep(48, axis, "public", jobs=2).failures == []  # the arithmetic to 64, the kernel to 48


def test_width_41_where_the_seed_misplaces_pixels():
    """1x3x1x2 -> 5x41: the seed's reciprocal multiply puts 2 pixels in the wrong row; the sample's divide does not."""
    ref = semantics.index_map((3, 1), (5, 41)).reshape(-1)
    assert (seed_load_indices(3, 1, 5, 41) != ref).sum() > 0
    assert rk.verify((1, 3, 1, 2), (1, 5, 41, 2), kernel="public").ok
    assert not rk.verify((1, 3, 1, 2), (1, 5, 41, 2), kernel="seed").ok

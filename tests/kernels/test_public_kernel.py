"""The public (nl-style) variant: the reference where its float32 arithmetic holds, and the verifier says where not."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics

from conftest import DTYPES, assert_bits_equal, random_data
from seed_model import public_load_indices


@pytest.mark.parametrize("shape, dtype", [((10, 30, 20, 1280), np.float32), ((1, 30, 20, 1280), np.float16),
                                          ((1, 30, 20, 1280), ml_dtypes.bfloat16)])
def test_nki_sample_shapes_equal_reference(shape, dtype, rng):
    x = random_data(rng, shape, dtype)
    assert_bits_equal(rk.resize_nearest(x, (59, 38), kernel="public"), semantics.resize_nearest_reference(x, (59, 38)))


@settings(max_examples=150, deadline=None)
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

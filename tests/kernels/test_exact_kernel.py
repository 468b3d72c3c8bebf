"""The default kernel is exact: equal to the reference for every accepted shape."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics
from resize_kernels.kernels import FORWARD, record
from resize_kernels.kernels.baselines.exact import resize_nearest_exact_kernel
from resize_kernels.kernels.dma import CHUNK_BYTES
from resize_kernels.nki.language import ROTATING_BUFFERS
from resize_kernels.nki import TensorSpec, trace
from resize_kernels.verifier import verify

from conftest import DTYPES, assert_bits_equal, random_data


def test_stays_selectable_as_a_baseline():
    exact = record(FORWARD, "exact")
    assert exact.function is resize_nearest_exact_kernel and exact.rank is None and exact.conventions


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 3), in_h=st.integers(1, 40), in_w=st.integers(1, 70), out_h=st.integers(1, 48),
       out_w=st.sampled_from([41, 47, 55, 61, 82, 128, 129, 257]) | st.integers(1, 140), c=st.integers(1, 5),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_random_shapes_equal_reference(n, in_h, in_w, out_h, out_w, c, dtype, seed):
    x = random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dtype)
    assert_bits_equal(rk.resize_nearest(x, (out_h, out_w)), semantics.resize_nearest_reference(x, (out_h, out_w)))


@pytest.mark.parametrize("out_w", [41, 47, 55, 61, 82])
def test_widths_the_seed_gets_wrong(out_w):
    assert not verify((1, 30, 20, 1), (1, 59, out_w, 1), kernel="seed").ok
    assert verify((1, 30, 20, 1), (1, 59, out_w, 1)).ok


def test_row_split_is_exact_for_every_narrow_width():
    # Tiles of whole rows split i = r * out_w + ow on chip; identity resizes make any slip visible.
    for out_w in range(1, 65):
        rows = 128 // out_w
        report = verify((2, 2 * rows + 1, out_w, 1), (2, 2 * rows + 1, out_w, 1))
        assert report.ok, report


@pytest.mark.parametrize("axis", ["h", "w"])
def test_per_axis_sweep_1_to_40(axis):
    # Every (in, out) pair up to 40 on one axis, the other axis fixed at a multi-row width (CI sweeps to 320).
    for i in range(1, 41):
        for o in range(1, 41):
            shape_in, shape_out = ((1, i, 5, 1), (1, o, 7, 1)) if axis == "h" else ((1, 3, i, 1), (1, 4, o, 1))
            report = verify(shape_in, shape_out)
            assert report.ok, report


def test_more_than_2_24_output_pixels_is_exact():
    report = verify((1, 2049, 2047, 1), (1, 4099, 4097, 1))
    assert report.ok and report.wrong_pixels == 0, report
    assert 4099 * 4097 > 2**24


def test_wide_rows_and_large_flat_index_stay_exact():
    # in_h * in_w > 2**24: the flat source index is past float32's exact range; rows fold into the DMA offset
    assert verify((1, 4100, 4100, 1), (1, 3, 5, 1)).ok
    assert verify((1, 8193, 2049, 1), (1, 2, 3, 1)).ok


def test_channels_that_do_not_fit_are_split(rng):
    c = CHUNK_BYTES // 2 + 3  # bfloat16: just over one chunk
    x = random_data(rng, (1, 2, 3, c), np.dtype("float16"))
    program = trace(resize_nearest_exact_kernel, x, out_shape=(1, 3, 2, c))
    assert all(d.dst.shape[1] <= CHUNK_BYTES // 2 for d in program.dmas())
    assert_bits_equal(rk.resize_nearest(x, (3, 2)), semantics.resize_nearest_reference(x, (3, 2)))


def test_channels_far_beyond_sbuf_reuse_one_tile(rng):
    c = 200_000  # 800 KB of float32 per pixel: four times a partition's SBUF
    x = random_data(rng, (1, 2, 3, c), np.float32)
    program = trace(resize_nearest_exact_kernel, x, out_shape=(1, 3, 2, c))
    assert program.sbuf_high_water <= ROTATING_BUFFERS * (CHUNK_BYTES + 4096)  # chunks rotate through two buffers
    assert_bits_equal(rk.resize_nearest(x, (3, 2)), semantics.resize_nearest_reference(x, (3, 2)))


def test_address_limit_is_a_clear_error():
    with pytest.raises(ValueError, match="fewer than 2\\*\\*31 elements"):
        trace(resize_nearest_exact_kernel, TensorSpec((1, 2, 2, 1 << 30), np.dtype("int8")), out_shape=(1, 4, 4, 1 << 30))


def test_index_work_is_shared_by_batches():
    program = trace(resize_nearest_exact_kernel, TensorSpec((10, 30, 20, 1280), np.dtype("float32")),
                    out_shape=(10, 59, 38, 1280))
    counts = program.counts()
    assert counts["dma_copy"] == 2 * 10 * 20  # 20 tiles of 3 rows (the last has 2), each batch
    assert counts["iota"] == 1
    assert len(program.instructions) < len(rk.trace_resize((10, 30, 20, 1280), (59, 38), kernel="seed").instructions) / 8

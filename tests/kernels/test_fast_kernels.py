"""The faster kernels (batched, rowreuse, strided, twopass) and the default: exact, and cheaper than the baselines."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics
from resize_kernels.kernels import FORWARD, record
from resize_kernels.kernels.batched import resize_nearest_batched_kernel
from resize_kernels.semantics import integer_ratio
from resize_kernels.kernels.dma import CHUNK_BYTES
from resize_kernels.nki.language import ROTATING_BUFFERS
from resize_kernels.nki import TensorSpec, trace
from resize_kernels.verifier import sweep, verify

from conftest import DTYPES, assert_bits_equal, random_data

NEW = ["batched", "rowreuse", "twopass", "auto"]  # "strided" takes integer ratios only: checked on those below
SD2_IN, SD2_OUT = (10, 30, 20, 1280), (10, 59, 38, 1280)


def check(x, out_hw, kernel):
    assert_bits_equal(rk.resize_nearest(x, out_hw, kernel=kernel), semantics.resize_nearest_reference(x, out_hw))


@pytest.mark.parametrize("axis", ["h", "w"])
@pytest.mark.parametrize("kernel", NEW)
def test_per_axis_sweep_1_to_32(kernel, axis):  # CI sweeps each over 1..192
    result = sweep(32, axis, kernel, jobs=2)
    assert not result.failures, result.summary()


@pytest.mark.parametrize("axis", ["h", "w"])
def test_strided_is_exact_on_every_integer_ratio_pair_up_to_64(axis):
    pairs = [(i, o) for i in range(1, 65) for o in range(1, 65) if integer_ratio(i, o)]
    assert len(pairs) > 400
    for i, o in pairs:
        shapes = ((1, i, 3, 1), (1, o, 6, 1)) if axis == "h" else ((2, 2, i, 1), (2, 4, o, 1))
        report = verify(*shapes, kernel="strided")
        assert report.ok, report


@settings(max_examples=60, deadline=None)
@given(kernel=st.sampled_from(NEW), n=st.integers(1, 3), in_h=st.integers(1, 40), in_w=st.integers(1, 70),
       out_h=st.integers(1, 60), out_w=st.sampled_from([41, 47, 64, 128, 129, 257]) | st.integers(1, 140),
       c=st.integers(1, 5), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_random_shapes_equal_reference(kernel, n, in_h, in_w, out_h, out_w, c, dtype, seed):
    check(random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dtype), (out_h, out_w), kernel)


INTEGER_RATIOS = [  # (in_hw, out_hw)
    ((5, 7), (10, 14)),  # 2x up
    ((5, 7), (15, 21)),  # 3x up
    ((10, 14), (5, 7)),  # 2x down
    ((15, 21), (5, 7)),  # 3x down
    ((5, 21), (10, 7)),  # 2x up in h, 3x down in w
    ((5, 7), (5, 28)),  # ratio 1 in h, 4x up in w
    ((12, 7), (4, 7)),  # 3x down in h, ratio 1 in w
    ((6, 9), (6, 9)),  # identity
]


@pytest.mark.parametrize("in_hw, out_hw", INTEGER_RATIOS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8])
def test_integer_ratios_take_strided_dmas_and_are_exact(in_hw, out_hw, dtype, rng):
    x = random_data(rng, (3, *in_hw, 5), dtype)
    program = rk.trace_resize(x.shape, out_hw, dtype, kernel="strided")
    assert program.counts() == {"dma_copy": len(program.instructions)}  # no index graph
    assert not any(d.is_indirect for d in program.dmas())
    check(x, out_hw, None)
    check(x, out_hw, "strided")


def test_strided_rejects_other_ratios_with_a_pointer_to_auto():
    with pytest.raises(ValueError, match="integer ratio on each axis.*use kernel 'auto'"):
        rk.trace_resize((1, 30, 20, 4), (59, 40), kernel="strided")


def test_more_than_2_24_output_pixels_is_exact():
    assert 4099 * 4097 > 2**24
    assert verify((1, 2049, 2047, 1), (1, 4099, 4097, 1), kernel="rowreuse").ok
    assert verify((1, 2048, 2049, 1), (1, 4096, 4098, 1), kernel="auto").ok  # 2x up in h, 2x up in w: strided


@pytest.mark.parametrize("kernel, out_hw", [("rowreuse", (3, 2)), ("batched", (3, 2)), ("strided", (4, 6)),
                                            ("strided", (1, 3))])
def test_channels_far_beyond_sbuf_are_chunked(kernel, out_hw, rng):
    c = 200_000  # 800 KB of float32 per pixel: four times a partition's SBUF
    x = random_data(rng, (1, 2, 3, c), np.float32)
    program = trace(record(FORWARD, kernel).function, x, out_shape=(1, *out_hw, c))
    assert program.sbuf_high_water <= ROTATING_BUFFERS * (CHUNK_BYTES + 4096)  # a chunk's tiles, double-buffered
    check(x, out_hw, kernel)


@pytest.mark.parametrize("in_h, out_h", [(30, 59), (59, 30), (7, 20), (20, 7), (9, 9), (5, 16)])
def test_row_reuse_tiles_split_rows_and_batches(in_h, out_h, rng):
    # int8 with 30,000 channels: two (batch, row) pairs per 64 KiB tile, so groups of rows and batches are cut
    x = random_data(rng, (3, in_h, 4, 30_000), np.int8)
    check(x, (out_h, 5), "rowreuse")


# -- what the default buys -------------------------------------------------------------------------

def test_sd2_default_uses_fewer_instructions_and_dmas_and_moves_fewer_bytes():
    default = rk.trace_resize(SD2_IN, SD2_OUT[1:3])
    exact = rk.trace_resize(SD2_IN, SD2_OUT[1:3], kernel="exact")
    assert len(default.instructions) < len(exact.instructions)
    assert len(default.dmas()) < 0.75 * len(exact.dmas())
    assert default.counts().get("iota", 0) <= 1  # at most one index graph for the whole resize (none: direct loads)
    # each source row (or each output row's source row) moved once, not each output pixel's source pixel
    assert sum(d.nbytes for d in default.dmas()) < 0.85 * sum(d.nbytes for d in exact.dmas())


def test_batched_index_work_does_not_grow_with_the_output():
    def index_instructions(out_hw):
        p = trace(resize_nearest_batched_kernel, TensorSpec((1, 30, 20, 8), np.dtype("float32")), out_shape=(1, *out_hw, 8))
        return len(p.instructions) - len(p.dmas())
    assert index_instructions((59, 38)) == index_instructions((590, 38))  # multi-row tiles
    assert index_instructions((59, 300)) == index_instructions((590, 3000))  # column tiles



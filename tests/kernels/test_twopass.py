"""The two-pass kernel (the default's fallback), and the default's bound on tracing: no shape traces for long."""

import time

import numpy as np
import pytest

import resize_kernels as rk
from resize_kernels import semantics
from resize_kernels import select
from resize_kernels.kernels.dma import CHUNK_BYTES

from conftest import DTYPES, assert_bits_equal, random_data


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_shape, out_hw", [
    ((2, 3, 5, 2), (7, 11)),  # up both: columns first (in_h * out_w < out_h * in_w)
    ((2, 9, 4, 3), (5, 13)),  # rows first
    ((1, 3, 200, 2), (7, 333)),  # several column tiles
    ((3, 300, 2, 1), (131, 3)),  # several row tiles, a downsample
])
def test_equals_the_reference(in_shape, out_hw, dtype, rng):
    x = random_data(rng, in_shape, dtype)  # random bits: NaN payloads, -0.0 and subnormals among them
    assert_bits_equal(rk.resize_nearest(x, out_hw, kernel="twopass"), semantics.resize_nearest_reference(x, out_hw))


def test_rows_longer_than_a_chunk_are_cut(rng):
    x = random_data(rng, (1, 3, 50, 200), np.float32)  # 101 * 200 * 4 bytes per output row: more than 64 KiB
    program = rk.trace_resize(x.shape, (7, 101), kernel="twopass")
    assert max(d.dst.shape[1] * 4 for d in program.dmas() if d.dst.is_sbuf) <= CHUNK_BYTES
    assert_bits_equal(rk.resize_nearest(x, (7, 101), kernel="twopass"), semantics.resize_nearest_reference(x, (7, 101)))


def test_channels_beyond_a_chunk_are_cut(rng):
    x = random_data(rng, (1, 2, 3, CHUNK_BYTES // 2 + 5), np.float16)
    assert_bits_equal(rk.resize_nearest(x, (3, 5), kernel="twopass"), semantics.resize_nearest_reference(x, (3, 5)))


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_takes_any_convention_as_tables(dtype, rng):
    x = random_data(rng, (2, 9, 13, 3), np.dtype(dtype))
    for convention in semantics.conventions()[::3]:
        got = rk.resize_nearest(x, (20, 7), kernel="twopass", convention=convention)
        assert_bits_equal(got, semantics.convention_reference(x, (20, 7), convention))


def test_the_default_never_takes_rowreuse_past_the_candidates_budget():
    selection = rk.trace_resize((1, 1000, 1000, 3), (1501, 1501)).selection  # repeats 2, 1, 2: 190k stores
    (rowreuse,) = [c for c in selection.candidates if c.kernel == "rowreuse"]
    assert rowreuse.reason == f"more than {select.CANDIDATE_INSTRUCTIONS:,} instructions"
    assert selection.kernel in ("rows", "sourcerows")


# The default's tracing budget: for every accepted shape up to 16384 x 16384 outputs, at most this many instructions
# (tracing costs about 25-50 us each: a few seconds). The count grows with the bytes moved over 8 MiB tiles, and the
# address limit (2**31 elements) bounds those; 16383**2 x 8 float32 takes 65,538.
DEFAULT_MAX_INSTRUCTIONS = 80_000


@pytest.mark.parametrize("in_shape, out_shape", [
    ((1, 7919, 7919, 1), (1, 10007, 10007, 1)),  # irregular both ways
    ((1, 3, 5, 1), (1, 16383, 16381, 1)),  # tiny to the largest
    ((1, 16383, 16381, 1), (1, 12007, 9001, 1)),  # irregular downsample
    ((1, 1000, 1000, 3), (1, 1501, 1501, 3)),  # RGB
    ((1, 100, 100, 128), (1, 3001, 3001, 128)),  # as many bytes as the address limit allows, about
    ((2, 7, 9, 5), (2, 16384 - 1, 17, 5)),  # tall and narrow
    ((1, 8192, 8192, 1), (1, 16384, 16384, 1)),  # an integer ratio at the size limit
    ((1, 16383, 16383, 8), (1, 16381, 16381, 8)),  # near the address limit: the most bytes, the most DMAs
])
def test_the_default_traces_a_bounded_program_for_any_shape(in_shape, out_shape):
    start = time.perf_counter()
    program = rk.trace_resize(in_shape, out_shape[1:3], dtype="float32")
    assert len(program.instructions) <= DEFAULT_MAX_INSTRUCTIONS, (len(program.instructions), program.name)
    assert time.perf_counter() - start < 300  # a hang guard, not a speed test (the budget above is the bound;
    # 75 s on the 100x100x128 -> 3001x3001 shape with two other jobs on the 2 cores)


def test_rowreuse_named_traces_past_the_candidates_budget():
    program = rk.trace_resize((1, 1000, 1000, 3), (1501, 1501), kernel="rowreuse")
    assert len(program.dmas()) > select.CANDIDATE_INSTRUCTIONS  # why the default skips it: it would be slow

"""The source-rows kernel: runs of equal source row on partitions, each row loaded once, repeated by the stores."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics
from resize_kernels.errors import InvalidValueError
from resize_kernels.kernels import FORWARD, record
from resize_kernels.kernels.plan import plan_resize
from resize_kernels.kernels.schedule import CHUNK_FACTORS
from resize_kernels.kernels.sourcerows import resize_nearest_source_rows_kernel
from resize_kernels.machine.simulator import run
from resize_kernels.nki.tracer import trace
from resize_kernels.verifier import sweep

from conftest import DTYPES, assert_bits_equal, random_data


def applies(shape, out_hw, item) -> bool:
    """Whether the source-rows kernel's record says it takes the shape."""
    return record(FORWARD, "sourcerows").applies(plan_resize(shape, (shape[0], *out_hw, shape[3])), item) is None


def check(x, out_hw):
    assert_bits_equal(rk.resize_nearest(x, out_hw, kernel="sourcerows"), semantics.resize_nearest_reference(x, out_hw))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_shape, out_hw", [
    ((1, 256, 256, 3), (511, 383)),  # RGB: the height's runs of two rows, five column groups
    ((2, 37, 9, 4), (300, 20)),  # three tiles of runs, the last one short
    ((1, 40, 37, 1), (70, 101)),  # many column groups: nc_n_gather
    ((2, 97, 3, 3), (131, 5)),  # irregular heights: many row groups
    ((3, 30, 20, 2), (15, 10)),  # a downsample: only the runs' rows are loaded
    ((1, 5, 200, 1), (3, 7)),  # a narrow pixel's span: 200 columns read for 7
])
def test_equals_the_reference_bit_for_bit(in_shape, out_hw, dtype, rng):
    check(random_data(rng, in_shape, dtype), out_hw)  # random bits: NaN payloads, -0.0 and subnormals among them


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 300), st.integers(1, 40), st.integers(1, 300), st.integers(1, 40),
       st.sampled_from([1, 3, 4, 64]), st.sampled_from(["float32", "bfloat16", "uint8"]), st.integers(0, 2**32 - 1))
def test_random_shapes_equal_the_reference(n, in_h, in_w, out_h, out_w, c, dtype, seed):
    dt = np.dtype(rk.machine.dtypes.as_dtype(dtype))
    assume(applies((n, in_h, in_w, c), (out_h, out_w), dt.itemsize))
    check(random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dt), (out_h, out_w))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_shape, out_hw", [
    ((1, 30, 60, 256), (15, 20)),  # 1 KiB pixels, 3x down: a descriptor per pixel, stored as whole rows
    ((2, 100, 100, 128), (70, 29)),  # 0.7x rows (periodic: loaded by row group), 0.29x columns (by column group)
    ((1, 70, 251, 192), (23, 88)),  # irregular deep downsamples of both axes
])
def test_a_deep_downsample_loads_only_the_pixels_it_needs_by_direct_dmas(in_shape, out_hw, dtype, rng):
    """Pixels of 128 B or more, where a descriptor per pixel costs less than reading the span (narrower ones read
    the span of their columns, ``columns._spanned``)."""
    name = "bfloat16" if dtype is DTYPES[1] else np.dtype(dtype).name
    program = rk.trace_resize(in_shape, out_hw, name, kernel="sourcerows")
    loads = [d for d in program.dmas() if d.dst.is_sbuf]
    assert not any(d.is_indirect for d in program.dmas())  # no index tile, no descriptors written by GpSimd
    assert sum(d.dst.size for d in loads) == in_shape[0] * out_hw[0] * out_hw[1] * in_shape[3]  # each pixel once
    assert program.counts().get("tensor_copy", 0) == 0  # loaded into output order: no copies
    check(random_data(rng, in_shape, dtype), out_hw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_shape, out_hw", [
    ((2, 30, 20, 160), (59, 38)),  # the SD2 upsample's maps, pixels of 640 B (float32) or 320 B (2 bytes)
    ((1, 7, 5, 300), (20, 13)),  # irregular groups of rows and columns
    ((2, 3, 1, 9000), (5, 1)),  # pixels wider than a tile: channel chunks
    ((3, 9, 9, 600), (4, 17)),  # a downsample of the height, an upsample of the width
])
def test_wide_pixels_repeat_rows_and_columns_in_the_stores(in_shape, out_hw, dtype, rng):
    program = rk.trace_resize(in_shape, out_hw, "bfloat16" if dtype is DTYPES[1] else np.dtype(dtype).name,
                              kernel="sourcerows")
    wide = in_shape[3] * np.dtype(dtype).itemsize >= 512
    assert (program.counts().get("tensor_copy", 0) == 0) or not wide  # no copies: the stores repeat the pixels
    check(random_data(rng, in_shape, dtype), out_hw)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 100), st.integers(1, 20), st.integers(1, 200), st.integers(1, 40),
       st.sampled_from([130, 700]), st.sampled_from(["float32", "bfloat16", "uint8"]), st.integers(0, 2**32 - 1))
def test_random_wide_shapes_equal_the_reference(n, in_h, in_w, out_h, out_w, c, dtype, seed):
    dt = np.dtype(rk.machine.dtypes.as_dtype(dtype))
    assume(applies((n, in_h, in_w, c), (out_h, out_w), dt.itemsize))
    check(random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dt), (out_h, out_w))


def test_loads_are_direct_and_each_source_row_is_read_once():
    program = rk.trace_resize((1, 256, 256, 3), (511, 383), "uint8", kernel="sourcerows")
    loads = [d for d in program.dmas() if d.dst.is_sbuf]
    assert not any(d.is_indirect for d in program.dmas())  # no index tile, no descriptors written by GpSimd
    assert sum(d.dst.size for d in loads) == 256 * 256 * 3


def test_the_default_takes_it_where_it_is_modelled_fastest():
    def pick(in_shape, out_hw, dtype):
        return rk.trace_resize(in_shape, out_hw, dtype).selection.kernel
    assert pick((1, 256, 256, 3), (511, 383), "uint8") == "sourcerows"  # RGB: half the rows to expand
    assert pick((2, 30, 20, 1280), (59, 38), "float16") == "sourcerows"  # SD2: each source row once
    assert pick((8, 192, 192, 256), (64, 64), "float32") == "strided"  # 3x down: one DMA per row


@pytest.mark.parametrize("axis", ["h", "w"])
def test_per_axis_sweep_1_to_32(axis):  # CI sweeps it over 1..192
    result = sweep(32, axis, "sourcerows", jobs=2)
    assert not result.failures, result.summary()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 300), st.integers(1, 60), st.integers(1, 300), st.integers(1, 200),
       st.sampled_from([1, 3, 4, 64]), st.sampled_from(CHUNK_FACTORS), st.sampled_from(["float32", "bfloat16", "uint8"]),
       st.integers(0, 2**32 - 1))
def test_every_chunk_factor_equals_the_reference(n, in_h, in_w, out_h, out_w, c, factor, dtype, seed):
    """Every schedule is exact, not only the one the small shapes of the sweeps take (factor 1)."""
    dt = np.dtype(rk.machine.dtypes.as_dtype(dtype))
    x = random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dt)
    try:
        program = trace(resize_nearest_source_rows_kernel, x, out_shape=(n, out_h, out_w, c), schedule=factor,
                        sources=False)
    except InvalidValueError:  # not at this chunk factor (a clamp at the far end of a chunk)
        assume(False)
    assert_bits_equal(run(program, [x])[0], semantics.resize_nearest_reference(x, (out_h, out_w)))

"""The source-rows kernel: runs of equal source row on partitions, each row loaded once, repeated by the stores."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics
from resize_kernels.errors import InvalidValueError
from resize_kernels.kernels import forward_kernel_for
from resize_kernels.kernels.plan import plan_resize
from resize_kernels.kernels.rows import source_rows_instruction_count
from resize_kernels.verifier import sweep

from conftest import DTYPES, assert_bits_equal, random_data


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
    assume(source_rows_instruction_count(plan_resize((n, in_h, in_w, c), (n, out_h, out_w, c)), dt.itemsize))
    check(random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dt), (out_h, out_w))


def test_wide_pixels_are_the_rows_kernels():
    with pytest.raises(InvalidValueError, match="requires pixels under 512 B.*kernel='rows'"):
        rk.trace_resize((1, 30, 20, 1280), (59, 38), kernel="sourcerows")
    assert source_rows_instruction_count(plan_resize((1, 30, 20, 1280), (1, 59, 38, 1280)), 4) is None


def test_loads_are_direct_and_each_source_row_is_read_once():
    program = rk.trace_resize((1, 256, 256, 3), (511, 383), "uint8", kernel="sourcerows")
    loads = [d for d in program.dmas() if d.dst.is_sbuf]
    assert not any(d.is_indirect for d in program.dmas())  # no index tile, no descriptors written by GpSimd
    assert sum(d.dst.size for d in loads) == 256 * 256 * 3
    count = source_rows_instruction_count(plan_resize((1, 256, 256, 3), (1, 511, 383, 3)), 1)
    assert len(program.instructions) <= count


def test_auto_takes_it_where_it_is_modelled_fastest():
    assert forward_kernel_for((1, 256, 256, 3), (1, 511, 383, 3), 1) == "sourcerows"  # RGB: half the rows to expand
    assert forward_kernel_for((2, 30, 20, 1280), (2, 59, 38, 1280), 2) == "rows"  # wide pixels


@pytest.mark.parametrize("axis", ["h", "w"])
def test_per_axis_sweep_1_to_64(axis):
    result = sweep(64, axis, "sourcerows", jobs=2)
    assert not result.failures, result.summary()

"""Instruction-level behaviour of what the gradient kernel adds to the machine: memset and DMA accumulate."""

import ml_dtypes
import numpy as np
import pytest

from resize_kernels.machine import errors
from resize_kernels.machine.isa import DmaCopyAdd
from resize_kernels.machine.simulator import run
from resize_kernels.nki import TensorSpec, trace
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl

from conftest import assert_bits_equal


def simulate(kernel, *inputs, **kwargs):
    outs = run(trace(kernel, *inputs, **kwargs), list(inputs))
    return outs[0] if len(outs) == 1 else outs


def _load(x):
    t = nl.ndarray(x.shape, dtype=x.dtype)
    nisa.dma_copy(dst=t, src=x)
    return t


def _zeros_hbm(shape, dtype=nl.float32):
    """A new HBM output tensor, zeroed through a memset tile (one partition per leading row)."""
    out = nl.ndarray(shape, dtype=dtype, buffer=nl.shared_hbm, name="out")
    z = nl.ndarray(shape, dtype=dtype)
    nisa.memset(z, 0.0)
    nisa.dma_copy(dst=out, src=z)
    return out


@pytest.mark.parametrize("dtype, value, want", [
    (np.float32, -2.5, -2.5), (ml_dtypes.bfloat16, 1.0 / 3, ml_dtypes.bfloat16(1.0 / 3)),
    (np.int8, 300.0, 127), (np.int32, 2.5, 2)])
def test_memset_casts_the_float32_value(dtype, value, want):
    def k():
        t = nl.ndarray((3, 4), dtype=dtype)
        nisa.memset(t, value)
        out = nl.ndarray((3, 4), dtype=dtype, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=t)
        return out
    np.testing.assert_array_equal(simulate(k), np.full((3, 4), want, dtype))


def test_memset_writes_only_its_slice():
    def k():
        t = nl.ndarray((4, 5), dtype=nl.float32)
        nisa.memset(t, 1.0)
        nisa.memset(t[1:3, 2:4], 7.0)
        out = nl.ndarray((4, 5), dtype=nl.float32, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=t)
        return out
    want = np.ones((4, 5), np.float32)
    want[1:3, 2:4] = 7.0
    np.testing.assert_array_equal(simulate(k), want)


def test_direct_accumulate_adds_in_float32():
    a = np.array([[1.0, 2.0, -3.0], [0.5, 1e8, 0.0]], np.float32)
    b = np.array([[10.0, 0.25, 3.0], [0.5, 1.0, -0.0]], np.float32)

    def k(a, b):
        out = _zeros_hbm(a.shape)
        nisa.dma_copy(dst=out, src=_load(a), dst_rmw_op=nl.add)
        nisa.dma_copy(dst=out, src=_load(b), dst_rmw_op=nl.add)
        return out
    assert_bits_equal(simulate(k, a, b), (np.float32(0) + a) + b)


def test_scatter_add_counts_every_duplicate():
    idx = np.array([[2], [0], [2], [2], [4], [0]], np.int32)
    v = np.arange(6 * 3, dtype=np.float32).reshape(6, 3)

    def k(v, idx):
        out = _zeros_hbm((5, 3))
        nisa.dma_copy(dst=out.ap(pattern=[[3, 6], [1, 3]], vector_offset=_load(idx), indirect_dim=0),
                      src=_load(v), dst_rmw_op=nl.add)
        return out
    want = np.zeros((5, 3), np.float32)
    np.add.at(want, idx[:, 0], v)
    np.testing.assert_array_equal(simulate(k, v, idx), want)


def test_scatter_add_order_is_partition_order():
    # Three partitions hit one float32: ((0 + 2**24) + 1) + 1 stays 2**24; any other order gives 2**24 + 2.
    v = np.array([[2.0**24], [1.0], [1.0]], np.float32)
    idx = np.zeros((3, 1), np.int32)

    def k(v, idx):
        out = _zeros_hbm((1, 1))
        nisa.dma_copy(dst=out.ap(pattern=[[1, 3], [1, 1]], vector_offset=_load(idx), indirect_dim=0),
                      src=_load(v), dst_rmw_op=nl.add)
        return out
    assert simulate(k, v, idx)[0, 0] == 2.0**24


def test_scatter_add_bfloat16_rounds_each_sum():
    v = np.array([[256.0], [1.0], [1.0]], ml_dtypes.bfloat16)
    idx = np.zeros((3, 1), np.int32)

    def k(v, idx):
        out = _zeros_hbm((1, 1), nl.bfloat16)
        nisa.dma_copy(dst=out.ap(pattern=[[1, 3], [1, 1]], vector_offset=_load(idx), indirect_dim=0),
                      src=_load(v), dst_rmw_op=nl.add)
        return out
    # each add is float32 then cast to bfloat16: 256 + 1 = 257 rounds to 256 (ties to even), twice
    assert float(simulate(k, v, idx)[0, 0]) == 256.0


def test_scatter_add_into_a_column_range_with_offset():
    idx = np.array([[1], [3], [1]], np.int32)
    v = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)

    def k(v, idx):
        out = _zeros_hbm((4, 5))
        nisa.dma_copy(dst=out.ap(pattern=[[5, 3], [1, 2]], offset=2, vector_offset=_load(idx), indirect_dim=0),
                      src=_load(v), dst_rmw_op=nl.add)
        return out
    want = np.zeros((4, 5), np.float32)
    np.add.at(want[:, 2:4], idx[:, 0], v)
    np.testing.assert_array_equal(simulate(k, v, idx), want)


def test_scatter_add_general_pattern_counts_overlaps_within_a_partition():
    # Free step 0 sends both elements of a partition to one address; rows 1 and 1 repeat too.
    idx = np.array([[1], [0], [1]], np.int32)
    v = np.array([[1.0, 2.0], [4.0, 8.0], [16.0, 32.0]], np.float32)

    def k(v, idx):
        out = _zeros_hbm((3, 2))
        nisa.dma_copy(dst=out.ap(pattern=[[2, 3], [0, 2]], offset=1, vector_offset=_load(idx), indirect_dim=0),
                      src=_load(v), dst_rmw_op=nl.add)
        return out
    want = np.zeros(6, np.float32)
    np.add.at(want, (1 + 2 * idx[:, 0])[:, None].repeat(2, axis=1), v)
    np.testing.assert_array_equal(simulate(k, v, idx), want.reshape(3, 2))


def test_direct_accumulate_with_overlapping_destination():
    v = np.array([[1.0, 2.0, 4.0]], np.float32)

    def k(v):
        out = _zeros_hbm((1, 2))
        nisa.dma_copy(dst=out.ap(pattern=[[2, 1], [0, 3]], offset=1), src=_load(v), dst_rmw_op=nl.add)
        return out
    np.testing.assert_array_equal(simulate(k, v), [[0.0, 7.0]])


def test_scatter_add_out_of_bounds_names_instruction_and_partition():
    idx = np.array([[0], [5]], np.int32)

    def k(v, idx):
        out = _zeros_hbm((5, 3))
        nisa.dma_copy(dst=out.ap(pattern=[[3, 2], [1, 3]], vector_offset=_load(idx), indirect_dim=0),
                      src=_load(v), dst_rmw_op=nl.add)
        return out
    with pytest.raises(errors.OutOfBoundsError, match=r"instruction 4 \(dma_copy_add scatter into out\): "
                                                        r"partition 1 writes elements 15\.\.17"):
        simulate(k, np.ones((2, 3), np.float32), idx)


def test_listing_shows_the_accumulate():
    def k(v):
        out = _zeros_hbm((2, 3))
        nisa.dma_copy(dst=out, src=_load(v), dst_rmw_op=nl.add)
        return out
    program = trace(k, TensorSpec((2, 3), np.float32))
    assert isinstance(program.instructions[-1], DmaCopyAdd) and program.counts()["dma_copy_add"] == 1
    assert "dma_copy_add" in str(program) and "memset" in str(program)


def _rmw(dst_fn, src_dtype=nl.float32, op=nl.add):
    def k(x):
        t = nl.ndarray((2, 3), dtype=src_dtype)
        nisa.memset(t, 0.0)
        nisa.dma_copy(dst=dst_fn(x), src=t, dst_rmw_op=op)
    return k


@pytest.mark.parametrize("kernel, match", [
    (_rmw(lambda x: nl.ndarray((2, 3), nl.float32)), "accumulates into HBM only.*tensor_tensor"),
    (_rmw(lambda x: x, src_dtype=nl.bfloat16), "one dtype on both sides.*cast the tile with tensor_copy"),
    (_rmw(lambda x: x[0:1, 0:3]), "one shape"),
    (_rmw(lambda x: x, op=nl.multiply), "only dst_rmw_op=nl.add"),
    (_rmw(lambda x: x.ap(pattern=[[3, 2], [1, 3]], offset=2)), "out-of-bounds"),
])
def test_bad_accumulate_is_a_trace_error(kernel, match):
    with pytest.raises((ValueError, errors.OutOfBoundsError), match=match):
        trace(kernel, TensorSpec((2, 3), np.float32))


def test_gather_accumulate_is_rejected():
    def k(x, idx):
        out = _zeros_hbm((2, 3))
        nisa.dma_copy(dst=out, src=x.ap(pattern=[[3, 2], [1, 3]], vector_offset=_load(idx), indirect_dim=0),
                      dst_rmw_op=nl.add)
    with pytest.raises(ValueError, match="takes a direct source.*gather into a tile first"):
        trace(k, TensorSpec((4, 3), np.float32), TensorSpec((2, 1), np.int32))

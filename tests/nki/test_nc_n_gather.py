"""nisa.nc_n_gather: a gather within each partition on GpSimd, bit-exact, bounds-checked, costed."""

import numpy as np
import pytest

from resize_kernels.machine import cost
from resize_kernels.machine.errors import OutOfBoundsError
from resize_kernels.machine.simulator import run
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.nki.tracer import trace

from conftest import assert_bits_equal, random_data


def gather_kernel(x, idx):
    out = nl.ndarray(idx.shape, x.dtype, buffer=nl.shared_hbm)
    data, index = nl.load(x), nl.load(idx)
    dst = nl.ndarray(idx.shape, x.dtype)
    nisa.nc_n_gather(dst, data, index)
    nl.store(out, value=dst)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8, np.int32])
def test_gathers_within_each_partition_bit_for_bit(dtype, rng):
    x = random_data(rng, (16, 3, 7), dtype)  # free dimensions flattened: 21 elements per partition
    idx = rng.integers(0, 21, size=(16, 40)).astype(np.uint32)
    got = run(trace(gather_kernel, x, idx), [x, idx])[0]
    want = np.take_along_axis(x.reshape(16, 21), idx.astype(np.int64), axis=1)
    assert_bits_equal(got, want)  # NaN payloads and -0.0 among the random bits


def test_an_index_past_the_data_is_an_error(rng):
    x = random_data(rng, (4, 5), np.float32)
    idx = np.zeros((4, 3), np.uint32)
    idx[2, 1] = 5
    with pytest.raises(OutOfBoundsError, match="partition 2 index 5 is past the 5 elements"):
        run(trace(gather_kernel, x, idx), [x, idx])


def test_operands_are_checked_when_traced():
    x, idx = np.zeros((4, 5), np.float32), np.zeros((4, 3), np.int32)
    with pytest.raises(ValueError, match="uint32 indices"):
        trace(gather_kernel, x, idx)

    def mixed(x, idx):
        out = nl.ndarray(idx.shape, nl.float16, buffer=nl.shared_hbm)
        dst = nl.ndarray(idx.shape, nl.float16)
        nisa.nc_n_gather(dst, nl.load(x), nl.load(idx))
        nl.store(out, value=dst)
        return out
    with pytest.raises(ValueError, match="one dtype"):
        trace(mixed, x, idx.astype(np.uint32))


def test_costs_a_startup_per_512_elements_and_an_element_per_cycle():
    x, idx = np.zeros((128, 2000), np.float32), np.zeros((128, 1100), np.uint32)
    report = cost.program_cost(trace(gather_kernel, x, idx))
    assert report.cycles["gpsimd"] == 150 * 3 + 1100  # ceil(1100 / 512) = 3 GpSimd instructions

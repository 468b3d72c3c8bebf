"""API surface of the classic dialect that public NKI kernels use (issue 37), against NKI's documented semantics.

Each kernel here is our own, small, with numpy as the oracle; none is copied from a public kernel.
"""

import numpy as np
import pytest

from resize_kernels.errors import InvalidValueError, NotSimulatedError
from resize_kernels.nki import classic as nki
from resize_kernels.nki import language as nl0

nl, nisa = nki.language, nki.isa


# -- an integer index on the last axis of an HBM tensor loads a (P, 1) tile ----------------------------------------

def test_load_with_an_integer_on_the_last_axis_gives_a_column_tile():
    """``nl.load(a[0:128, k])`` is a (128,) access; the tile is (par_dim(128),), i.e. one column (P, 1)."""
    @nki.jit
    def column_times(a, x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        col = nl.load(a[0:128, 3])
        t = nl.load(x)
        nl.store(out, value=nisa.tensor_scalar(t, op0=nl.multiply, operand0=col))
        return out

    rng = np.random.default_rng(0)
    a, x = rng.standard_normal((128, 5), np.float32), rng.standard_normal((128, 7), np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(column_times, a, x), x * a[:, 3:4])


def test_store_of_a_column_tile_into_an_integer_index_of_the_last_axis():
    @nki.jit
    def put_column(a):
        out = nl.ndarray((64, 4), dtype=a.dtype, buffer=nl.shared_hbm)
        for k in nl.affine_range(4):
            nl.store(out[0:64, k], value=nl.load(a[0:64, 3 - k]))
        return out

    a = np.arange(64 * 4, dtype=np.float32).reshape(64, 4)
    np.testing.assert_array_equal(nki.simulate_kernel(put_column, a), a[:, ::-1])


def test_dma_copy_still_requires_one_shape():
    """The column fix is nl.load's: dma_copy between a (64,) access and a (64, 2) tile stays an error."""
    @nki.jit
    def bad(a):
        out = nl.ndarray((64, 2), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((64, 2), dtype=a.dtype)
        nisa.dma_copy(dst=t, src=a[0:64, 1])
        nl.store(out, value=t)
        return out

    with pytest.raises(InvalidValueError, match="one shape"):
        nki.simulate_kernel(bad, np.zeros((64, 4), np.float32))


# -- @nki.jit(platform_target=...) --------------------------------------------------------------------------------

def test_classic_jit_takes_platform_target_and_benchmark_costs_on_it():
    def double(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.multiply(nl.load(x), 2.0))
        return out

    x = np.ones((128, 512), np.float32)
    k2 = nki.jit(platform_target="trn2")(double)
    np.testing.assert_array_equal(k2(x), 2 * x)
    bench = nki.benchmark(k2)
    bench(x)
    assert bench.benchmark_result.target == "trn2"
    assert nki.benchmark(nki.jit(double)).platform_target is None
    with pytest.raises(InvalidValueError, match="platform_target"):
        nki.jit(platform_target="trn9")(double)

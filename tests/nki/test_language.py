"""The nl-level API: index expressions, masks, loads and stores with tensor indices, elementwise ops."""

import numpy as np
import pytest

from resize_kernels.machine.simulator import run
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.nki import trace


def simulate(kernel, *inputs):
    (out,) = run(trace(kernel, *inputs), list(inputs))
    return out


def test_masked_load_store_of_an_affine_expression():
    x = np.arange(10 * 3, dtype=np.float32).reshape(10, 3)

    def k(x):
        out = nl.ndarray((10, 3), nl.float32, buffer=nl.shared_hbm, name="out")
        i_p, i_f = nl.arange(4)[:, None], nl.arange(3)[None, :]
        for t in range(3):  # tiles of 4 rows, the last masked to 2
            pos = t * 4 + i_p
            tile = nl.load(x[pos, i_f], mask=pos < 10)
            nl.store(out[pos, i_f], value=tile, mask=pos < 10)
        return out
    np.testing.assert_array_equal(simulate(k, x), x)


def test_load_with_an_index_tile_gathers_rows():
    x = np.arange(2 * 6 * 4, dtype=np.int32).reshape(2, 6, 4)
    idx = np.array([[5], [0], [5], [2]], np.int32)

    def k(x, idx):
        i_p, i_f = nl.arange(4)[:, None], nl.arange(4)[None, :]
        index = nl.load(idx[i_p, nl.arange(1)[None, :]])
        tile = nl.load(x[1, index, i_f])
        out = nl.ndarray((4, 4), nl.int32, buffer=nl.shared_hbm, name="out")
        nl.store(out[i_p, i_f], value=tile)
        return out
    np.testing.assert_array_equal(simulate(k, x, idx), x[1, idx[:, 0]])


def test_elementwise_ops_and_floor():
    def k():
        v = nisa.iota(nl.arange(8)[:, None] * 3 - 7, dtype=nl.float32)  # -7, -4, ..., 14
        half = nl.multiply(v, 0.5)
        r = nl.subtract(100.0, nl.floor(half))  # scalar first: reverse
        s = nl.add(r, nl.mod(v, 5), dtype=nl.int32)
        out = nl.ndarray((8, 1), nl.int32, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=s)
        return out
    v = np.arange(8, dtype=np.float32) * 3 - 7
    np.testing.assert_array_equal(simulate(k)[:, 0], (100 - np.floor(v / 2)) + np.fmod(v, 5))


def test_iota_expression_over_both_axes():
    def k():
        t = nisa.iota(nl.arange(3)[:, None] * 10 + nl.arange(4)[None, :] + 1, dtype=nl.int32)
        out = nl.ndarray((3, 4), nl.int32, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=t)
        return out
    np.testing.assert_array_equal(simulate(k), 1 + 10 * np.arange(3)[:, None] + np.arange(4)[None, :])


def test_mask_must_keep_a_rectangle():
    def k(x):
        i_p, i_f = nl.arange(4)[:, None], nl.arange(4)[None, :]
        nl.load(x[i_p, i_f], mask=(i_p + i_f < 3))
    with pytest.raises(ValueError, match="a mask must keep a box of the grid"):
        trace(k, np.zeros((4, 4), np.float32))


def test_bad_index_expressions():
    with pytest.raises(ValueError, match=r"\[:, None\] \(partitions\) or \[None, :\]"):
        nl.arange(4)[1:3]
    with pytest.raises(ValueError, match="different sizes"):
        nl.arange(4)[:, None] + nl.arange(5)[:, None]

    def k(x):
        t = nl.ndarray((4, 1), nl.int32)
        nl.load(x[t, t])
    with pytest.raises(TypeError, match="at most one int32 index tile"):
        trace(k, np.zeros((4, 4), np.float32))
    with pytest.raises(TypeError, match="nl.load takes an HBM tensor indexed with slices, nl.arange"):
        trace(lambda x: nl.load(nl.ndarray((4, 4), nl.float32)[0:2, 0:2]), np.zeros((4, 4), np.float32))

"""nisa.nc_matmul's accumulate=None: the first tensor-engine write to a PSUM element overwrites it, later ones
accumulate (nki.isa.nc_matmul), however the tile's elements were first written: in pieces, or whole."""

import numpy as np
import pytest

from resize_kernels.errors import InvalidValueError
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.nki import simulate, trace


def operands(a, b):
    """a (4, 8), b (4, 16) float32 in SBUF, an (8, 16) output and an unwritten (8, 16) PSUM tile."""
    out = nl.ndarray((8, 16), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.sbuf)
    sb = nl.ndarray((4, 16), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=sa, src=a)
    nisa.dma_copy(dst=sb, src=b)
    return out, sa, sb, nl.ndarray((8, 16), dtype=nl.float32, buffer=nl.psum)


def halves_then_whole(a, b):
    """The product's left and right halves written first, then all of it added."""
    out, sa, sb, acc = operands(a, b)
    nisa.nc_matmul(acc[:, 0:8], sa, sb[:, 0:8])
    nisa.nc_matmul(acc[:, 8:16], sa, sb[:, 8:16])
    nisa.nc_matmul(acc, sa, sb)
    nisa.nc_matmul(acc[:, 4:12], sa, sb[:, 4:12])
    res = nl.ndarray((8, 16), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out


def test_pieces_overwrite_then_the_whole_tile_accumulates():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 16)).astype(np.float32)
    program = trace(halves_then_whole, a, b)
    assert [inst.accumulate for inst in program.instructions if inst.opcode == "nc_matmul"] == [
        False, False, True, True]
    got = simulate(halves_then_whole)(a, b)
    product = a.T.astype(np.float64) @ b
    want = 2 * product
    want[:, 4:12] += product[:, 4:12]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_matmul_onto_partly_written_elements_must_say_whether_it_accumulates():
    def kernel(a, b):
        out, sa, sb, acc = operands(a, b)
        nisa.nc_matmul(acc[:, 0:8], sa, sb[:, 0:8])
        nisa.nc_matmul(acc, sa, sb)
        return out

    a, b = np.ones((4, 8), np.float32), np.ones((4, 16), np.float32)
    with pytest.raises(InvalidValueError, match="both overwrite and accumulate"):
        trace(kernel, a, b)

"""The simulator's and tracer's fast paths agree with the general ones they stand in for."""

import numpy as np
import pytest

import resize_kernels as rk
from resize_kernels.errors import InvalidValueError
from resize_kernels.kernels.plan import plan_resize
from resize_kernels.kernels.rowreuse import _data_tiles
from resize_kernels.machine.access import AccessPattern
from resize_kernels.machine.memory import HbmTensor, SbufTile
from resize_kernels.machine.isa import Program
from resize_kernels.machine.simulator import Executable

TILE = SbufTile("t", 8, (4, 6), np.dtype(np.int32), 128)
HBM = HbmTensor("h", (10, 12), np.dtype(np.float32))


@pytest.mark.parametrize("pattern", [[[24, 8], [1, 6]], ((24, 8), (1, 6)), ((np.int64(24), 8), (1, np.int32(6))),
                                     ([24, 8], (True, 6)), ((24.0, 8), (1, 6))])
def test_patterns_of_any_form_become_int_pairs(pattern):
    ap = AccessPattern(TILE, pattern)
    assert ap.pattern == tuple((int(s), int(n)) for s, n in pattern)
    assert all(type(v) is int for pair in ap.pattern for v in pair)
    assert ap.shape == tuple(int(n) for _, n in pattern)


@pytest.mark.parametrize("pattern, error, text", [
    ((), InvalidValueError, "at least one"), (((24, 0), (1, 6)), InvalidValueError, "num >= 1"),
    (((-1, 8), (1, 6)), InvalidValueError, "step >= 0"), (((24, 8, 1),), ValueError, "unpack"),
    (((24,),), ValueError, "unpack"), ((5,), TypeError, "non-iterable"), (((24, "x"),), ValueError, "invalid literal")])
def test_bad_patterns_raise_as_before(pattern, error, text):
    with pytest.raises(error, match=text):
        AccessPattern(TILE, pattern)


@pytest.mark.parametrize("pattern, offset", [(((24, 8), (1, 6)), 0), (((24, 3), (1, 4)), 50), (((0, 4), (1, 6)), 2),
                                             (((24, 2), (6, 4), (0, 3), (1, 2)), 25), (((48, 4), (2, 3)), 1)])
def test_sbuf_views_are_the_sliced_views(pattern, offset):
    program = Program("p", sbuf_high_water=1024)
    ex = Executable(program)
    ex.sbuf[:] = np.arange(ex.sbuf.size, dtype=np.uint64).reshape(ex.sbuf.shape).astype(np.uint8)
    ap = AccessPattern(TILE, pattern, offset)
    fast, general = ex._make_sbuf_view(ap), ex._make_sbuf_view_by_slicing(ap)
    assert fast.shape == general.shape and fast.strides == general.strides and fast.dtype == general.dtype
    assert fast.__array_interface__["data"] == general.__array_interface__["data"]
    np.testing.assert_array_equal(fast, general)


def test_hbm_bits_view_is_the_strided_view():
    program = Program("p", inputs=[HBM])
    ex = Executable(program)
    x = np.arange(120, dtype=np.float32)
    ex.mem[0] = x
    view = ex._bits_view(AccessPattern(HBM, ((24, 3), (2, 5)), 7))()
    np.testing.assert_array_equal(view, np.lib.stride_tricks.as_strided(x[7:], (3, 5), (96, 8)).view(np.uint32))


@pytest.mark.parametrize("shapes", [((2, 7, 5, 3), (2, 11, 9, 3)), ((1, 300, 200, 70), (1, 127, 301, 70))])
def test_row_reuse_planning_is_shared_and_unchanged(shapes):
    plan = plan_resize(*shapes)
    tiles = list(_data_tiles(plan, 4))
    count = sum(len(pieces) * (1 + len(stores)) for *_, pieces, stores in tiles)
    program = rk.trace_resize(shapes[0], shapes[1][1:3], kernel="rowreuse")
    assert len(program.dmas()) == count

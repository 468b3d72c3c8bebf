"""N-D tiles and index expressions, as NKI documents them: nl.arange on any axis of a grid, nl.mgrid, masks
that keep a box, tiles with block axes before nl.par_dim, views that compute like tiles, broadcasting along
free axes, tile[...] = value and +=, reductions (nl.sum/max/min/mean, nisa.tensor_reduce), masked DMAs."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resize_kernels.errors import InvalidValueError
from resize_kernels.machine.errors import OutOfBoundsError, SbufCapacityError
from resize_kernels.machine.simulator import run
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.nki import trace
from resize_kernels.nki.tensor import HbmView

F32, BF16 = np.float32, ml_dtypes.bfloat16


def simulate(kernel, *arrays):
    program = trace(kernel, *arrays)
    outs = run(program, list(arrays))
    return program, (outs[0] if len(outs) == 1 else outs)


def hbm_out(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.shared_hbm, name="out")


# -- index expressions ---------------------------------------------------------------------------

def test_arange_on_any_axis_and_mgrid_give_the_same_values_as_numpy():
    def kernel(x):
        i_p = nl.arange(4)[:, None, None]
        i_y = nl.arange(3)[None, :, None]
        i_z = nl.arange(5)[None, None, :]
        g = nl.mgrid[0:4, 0:3, 0:5]
        assert g.p.coefs == i_p.coefs and g.x.coefs == i_y.coefs and g.y.coefs == i_z.coefs
        want = np.mgrid[0:4, 0:3, 0:5]
        expr = 2 * i_p + 7 - i_z + 3 * i_y
        np.testing.assert_array_equal(np.broadcast_to(expr.values(), (4, 3, 5)),
                                      2 * want[0] + 7 - want[2] + 3 * want[1])
        ip, ix = nl.mgrid[0:2, 0:6]  # unpacked, as NKI writes it
        assert (ip.rank, ix.rank, ix.sizes) == (2, 2, (2, 6))  # dense: every index spans the whole grid
        with pytest.raises(AttributeError, match="an nl.mgrid of 2 axes has no axis 'y'"):
            nl.mgrid[0:2, 0:6].y
        with pytest.raises(InvalidValueError, match="grids of 3 and 2 axes cannot combine"):
            i_p + ix
        with pytest.raises(InvalidValueError, match="nl.mgrid takes ranges start:stop with stop > start"):
            nl.mgrid[3:3]
        _, i_h = nl.mgrid[0:2, 5:8]
        np.testing.assert_array_equal(i_h.values(), [[5, 6, 7]])
        return hbm_out((1, 1))
    trace(kernel, np.zeros((1, 1), F32))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6), st.integers(-2, 7), st.integers(-2, 7),
       st.integers(-2, 7))
def test_a_masks_box_is_where_every_term_holds(p, y, z, bp, by, bz):
    g = nl.mgrid[0:p, 0:y, 0:z]
    mask = (g.p < bp) & (g.x < by) & (g.y + 1 <= bz)
    keep = (np.mgrid[0:p, 0:y, 0:z][0] < bp) & (np.mgrid[0:p, 0:y, 0:z][1] < by) & (np.mgrid[0:p, 0:y, 0:z][2] + 1 <= bz)
    if not keep.any():
        with pytest.raises(InvalidValueError, match="keeps no element"):
            mask.box((p, y, z))
        return
    box = mask.box((p, y, z))
    assert all(keep[tuple(slice(lo, hi) for lo, hi in box)].ravel()) and sum(keep.ravel()) == np.prod(
        [hi - lo for lo, hi in box])


# -- tiles with block axes, views, setitem, broadcasting ---------------------------------------------

def test_block_axes_before_par_dim_are_separate_tiles_on_the_same_partitions():
    x = np.arange(2 * 4 * 3, dtype=F32).reshape(2, 4, 3)  # (block, partition, free)

    def kernel(t):
        tiles = nl.ndarray((2, nl.par_dim(4), 3), dtype=nl.float32)
        for b in range(2):
            nisa.dma_copy(dst=tiles[b], src=t[b])
        tiles[1, 1:3, 2] = 100.0  # a memset of a view
        tiles[0] += tiles[1]  # in place, block by block
        out = hbm_out((2, 4, 3))
        for b in range(2):
            nisa.dma_copy(dst=out[b], src=tiles[b, :, :])
        return out

    program, got = simulate(kernel, x)
    want = x.copy()
    want[1, 1:3, 2] = 100
    want[0] += want[1]
    np.testing.assert_array_equal(got, want)
    tile = next(t for t in program.instructions if t.opcode == "memset").dst.tensor
    assert (tile.partitions, tile.free_shape) == (4, (3,))  # each block is a (P, F) tile of its own
    blocks = {i.dst.tensor for i in program.instructions if i.dst.is_sbuf}
    assert len(blocks) == 2 and len({t.address for t in blocks}) == 2  # both live at once: apart


def test_views_take_tile_operators_and_broadcast_along_free_axes():
    x = (np.arange(4 * 6, dtype=F32).reshape(4, 6) - 7) / 4
    col = np.arange(4, dtype=F32).reshape(4, 1) + 0.5

    def kernel(a, c):
        ta, tc = nl.load(a[0:4, 0:6]), nl.load(c[0:4, 0:1])
        y = ta[:, 1:5] * tc  # (4, 4) view times (4, 1): step-0 broadcast
        z = nl.sum(ta, axis=[1])  # (4,)
        w = y - z  # (4, 4) with (4,): as (4, 1)
        out = hbm_out((4, 4))
        nl.store(out[0:4, 0:4], value=w)
        return out

    _, got = simulate(kernel, x, col)
    z = np.add.accumulate(x, axis=1)[:, -1:]
    np.testing.assert_array_equal(got, (x[:, 1:5] * col) - z)


def test_assigning_a_wider_dtype_casts_and_scalars_memset():
    def kernel(a):
        t = nl.zeros((nl.par_dim(2), 4), dtype=nl.bfloat16)
        t[:, 0:2] = nl.load(a[0:2, 0:2])  # float32 -> bfloat16, rounding to nearest even
        t[:, 3] = 2.5
        out = hbm_out((2, 4), nl.bfloat16)
        nl.store(out[0:2, 0:4], value=t)
        return out

    a = np.array([[1.00390625, 3.0], [-1.5, 1e-3]], F32)
    _, got = simulate(kernel, a)
    want = np.zeros((2, 4), BF16)
    want[:, 0:2] = a.astype(BF16)
    want[:, 3] = 2.5
    assert got.dtype == BF16 and np.array_equal(got.view(np.uint16), want.view(np.uint16))


# -- reductions ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, np_fn", [(nl.sum, None), (nl.max, np.max), (nl.min, np.min)])
@pytest.mark.parametrize("axis, keepdims", [([2], False), ([-2, -1], False), ([1, 2], True), ([1], False),
                                            ([1], True)])
def test_reductions_over_trailing_free_axes(fn, np_fn, axis, keepdims, rng=np.random.default_rng(3)):
    x = rng.standard_normal((8, 3, 5)).astype(F32) * 100

    def kernel(a):
        t = nl.load(a[nl.arange(8)[:, None, None], nl.arange(3)[None, :, None], nl.arange(5)[None, None, :]])
        r = fn(t, axis=axis, keepdims=keepdims)
        out = hbm_out(tuple(as_shape(r)))
        nisa.dma_copy(dst=out, src=r)
        return out

    def as_shape(r):
        return r.shape if len(r.shape) > 1 else (*r.shape, 1)

    _, got = simulate(kernel, x)
    axes = tuple(a % 3 for a in axis)
    if np_fn is None:  # float32 in order: a running sum, element by element, row-major over the reduced axes
        flat = np.moveaxis(x, axes, range(3 - len(axes), 3)).reshape(8, -1, int(np.prod([x.shape[a] for a in axes])))
        want = np.add.accumulate(flat, axis=-1)[..., -1]
    else:
        want = np_fn(x, axis=axes)
    np.testing.assert_array_equal(got.reshape(want.shape), want)


def test_mean_and_masked_sum():
    x = np.arange(4 * 6, dtype=F32).reshape(4, 6)

    def kernel(a):
        t = nl.load(a[0:4, 0:6])
        i_f = nl.arange(6)[None, :]
        m = nl.mean(t, axis=[1])
        s = nl.sum(t, axis=[1], mask=(i_f < 4) & (nl.arange(4)[:, None] < 4))
        out = hbm_out((4, 2))
        both = nl.ndarray((4, 2), nl.float32)
        both[:, 0] = m
        both[:, 1] = s
        nisa.dma_copy(dst=out, src=both)
        return out

    _, got = simulate(kernel, x)
    np.testing.assert_array_equal(got[:, 0], np.add.accumulate(x, axis=1)[:, -1] * np.float32(1 / 6))
    np.testing.assert_array_equal(got[:, 1], x[:, :4].sum(axis=1))


def test_reductions_name_bad_axes():
    def kernel(a):
        t = nl.load(a[0:4, 0:6])
        with pytest.raises(InvalidValueError, match=r"nl.sum requires axis to name free axes of the tile"):
            nl.sum(t, axis=[0])
        u = nl.ndarray((4, 2, 3), nl.float32)
        with pytest.raises(InvalidValueError, match=r"nl.max requires axis to name free axes of the tile"):
            nl.max(u, axis=[1, -2])
        with pytest.raises(InvalidValueError, match=r"nisa.tensor_reduce requires axis to be the last free axes"):
            nisa.tensor_reduce(nl.ndarray((4, 3), nl.float32), nl.add, u, axis=1)
        return hbm_out((1, 1))
    trace(kernel, np.zeros((4, 6), F32))


# -- masked DMAs ---------------------------------------------------------------------------------------

def test_a_masked_dma_copy_cuts_both_sides_to_the_box():
    x = np.arange(5 * 3 * 4, dtype=F32).reshape(5, 3, 4)  # 5 rows: the second tile of 4 partitions has 1

    def kernel(a):
        out = hbm_out((5, 3, 4))
        i_y, i_z = nl.arange(3)[None, :, None], nl.arange(4)[None, None, :]
        for start in (0, 4):  # index expressions past the end, as NKI masks them (a static slice there is an error)
            t = nl.ndarray((nl.par_dim(4), 3, 4), dtype=nl.float32)
            i_p = nl.arange(4)[:, None, None] + start
            nisa.dma_copy(dst=t, src=a[i_p, i_y, i_z], mask=(i_p < 5))
            nl.store(out[i_p, i_y, i_z], value=t, mask=(i_p < 5))
        return out

    program, got = simulate(kernel, x)
    np.testing.assert_array_equal(got, x)
    assert [d.dst.shape[0] for d in program.dmas()] == [4, 4, 1, 1]


# -- affine views of SBUF tiles, nl.where, limits ------------------------------------------------------

def test_sliding_windows_through_mgrid_are_strided_views():
    """operand[p, 2 i + y, 2 j + x]: every 3x3 window at stride 2 of a padded image, as one view."""
    img = np.arange(4 * 7 * 7, dtype=F32).reshape(4, 7, 7)

    def kernel(a):
        t = nl.load(a[0:4, 0:7, 0:7])
        g = nl.mgrid[0:4, 0:3, 0:3, 0:3, 0:3]  # p, i, j, y, x
        win = nl.copy(t[g.p, 2 * g.x + g.z, 2 * g.y + g[4]])
        out = hbm_out((4, 3, 3, 3, 3))
        nisa.dma_copy(dst=out, src=win)
        return out

    _, got = simulate(kernel, img)
    p, i, j, y, x = np.mgrid[0:4, 0:3, 0:3, 0:3, 0:3]
    np.testing.assert_array_equal(got, img[p, 2 * i + y, 2 * j + x])


def test_strided_writes_through_mgrid():
    def kernel(a):
        t = nl.zeros((nl.par_dim(2), 5, 5), dtype=nl.float32)
        g = nl.mgrid[0:2, 0:2, 0:2]
        t[g.p, 2 * g.x + 1, 2 * g.y] = nl.load(a[0:2, 0:2, 0:2])
        out = hbm_out((2, 5, 5))
        nisa.dma_copy(dst=out, src=t)
        return out

    a = np.arange(8, dtype=F32).reshape(2, 2, 2) + 1
    _, got = simulate(kernel, a)
    want = np.zeros((2, 5, 5), F32)
    want[:, 1::2, 0:4:2] = a
    np.testing.assert_array_equal(got, want)


def test_where_selects_and_broadcasts():
    c = np.array([[1, 0, 2], [0, 0, 1]], np.uint8)
    x = np.arange(6, dtype=F32).reshape(2, 3)
    col = np.array([[10.0], [20.0]], F32)

    def kernel(cond, a, b):
        tc, ta, tb = nl.load(cond[0:2, 0:3]), nl.load(a[0:2, 0:3]), nl.load(b[0:2, 0:1])
        w1 = nl.where(tc, ta, -1.5)
        w2 = nl.where(tc, tb, ta, dtype=nl.int32)
        out = hbm_out((2, 6))
        both = nl.ndarray((2, 6), nl.float32)
        both[:, 0:3] = w1
        both[:, 3:6] = w2
        nisa.dma_copy(dst=out, src=both)
        return out

    program, got = simulate(kernel, c, x, col)
    np.testing.assert_array_equal(got[:, :3], np.where(c != 0, x, np.float32(-1.5)))
    np.testing.assert_array_equal(got[:, 3:], np.where(c != 0, col, x))
    assert program.counts()["select"] == 2


def test_limits_and_bfloat16_scalars():
    assert nl.finfo(nl.bfloat16).min == ml_dtypes.finfo(ml_dtypes.bfloat16).min
    assert nl.finfo(nl.float32).max == np.finfo(np.float32).max and nl.iinfo(nl.uint32).max == 2**32 - 1
    with pytest.raises(TypeError, match="nl.finfo requires a float dtype, got int32"):
        nl.finfo(nl.int32)

    def kernel(a):
        t = nl.full((nl.par_dim(2), 3), fill_value=nl.finfo(nl.bfloat16).min, dtype=nl.bfloat16)
        out = hbm_out((2, 3), nl.bfloat16)
        nisa.dma_copy(dst=out, src=t)
        return out

    _, got = simulate(kernel, np.zeros((1, 1), F32))
    assert (got == ml_dtypes.finfo(ml_dtypes.bfloat16).min).all()


def test_index_expressions_may_walk_backwards():
    """1 - i reverses an axis: the access pattern steps backwards (on free axes and in HBM)."""
    x = np.arange(3 * 4 * 5, dtype=F32).reshape(3, 4, 5)

    def kernel(a):
        i_p, i_y, i_z = nl.mgrid[0:3, 0:4, 0:5]
        t = nl.load(a[i_p, 3 - i_y, i_z])  # rows reversed as they are read from HBM
        u = nl.copy(t[i_p, i_y, 4 - i_z])  # columns reversed within each partition
        out = hbm_out((3, 4, 5))
        nisa.dma_copy(dst=out, src=u)
        return out

    program, got = simulate(kernel, x)
    np.testing.assert_array_equal(got, x[:, ::-1, ::-1])
    assert any(step < 0 for inst in program.instructions for ap in (inst.dst, *inst.sources())
               for step, _ in ap.pattern)


def test_a_backwards_walk_past_the_start_of_a_partition_is_out_of_bounds():
    def kernel(a):
        t = nl.load(a[0:2, 0:4])
        g = nl.mgrid[1:2, 0:4]
        nl.copy(t[g.p, 2 - g.x])  # partition 1's elements 2, 1, 0, -1: the last is partition 0's element 3
        return hbm_out((1, 1))

    with pytest.raises(OutOfBoundsError, match="runs past the start of a partition"):
        trace(kernel, np.zeros((2, 4), F32))


# -- PSUM ------------------------------------------------------------------------------------------------

def test_psum_tiles_compute_like_sbuf_tiles_but_dmas_cannot_reach_them():
    x = np.arange(8, dtype=F32).reshape(2, 4)

    def kernel(a):
        t = nl.load(a[0:2, 0:4])
        acc = nl.zeros((2, 4), dtype=nl.float32, buffer=nl.psum)
        acc += t
        acc += t
        out = hbm_out((2, 4))
        nl.store(out[0:2, 0:4], value=nl.copy(acc))  # through SBUF
        return out

    program, got = simulate(kernel, x)
    np.testing.assert_array_equal(got, 2 * x)
    assert "@ psum+0x30000" in str(program.instructions[1].dst.tensor)  # past trn1's 192 KiB of SBUF
    assert program.psum_high_water == 2048 and program.sbuf_high_water == 128  # a PSUM tile takes a bank

    def direct(a):
        acc = nl.zeros((2, 4), dtype=nl.float32, buffer=nl.psum)
        nl.store(a[0:2, 0:4], value=acc)
        return a

    with pytest.raises(InvalidValueError, match=r"dma_copy moves data between HBM and SBUF; .* is in PSUM"):
        trace(direct, x)


def test_psum_capacity_is_16_kib_per_partition():
    def kernel(a):
        nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.psum)  # exactly 16 KiB
        return hbm_out((1, 1))

    trace(kernel, np.zeros((1, 1), F32))

    def too_big(a):
        nl.ndarray((128, 4097), dtype=nl.float32, buffer=nl.psum)
        return hbm_out((1, 1))

    with pytest.raises(SbufCapacityError, match="PSUM allocation of tile .* needs 16388 bytes per partition"):
        trace(too_big, np.zeros((1, 1), F32))


def test_a_static_hbm_slice_past_the_end_is_taken_where_a_mask_cuts_it():
    """nki-samples' adaptive_avg_pool2d loads in_flattened[256:384, h, w] of 288 rows under i_p < 288: NKI
    takes a slice past the end where the mask cuts that part, in dma_copy and nl.load alike."""
    x = np.arange(6 * 3 * 4, dtype=F32).reshape(6, 3, 4)

    def kernel(a):
        out = hbm_out((6, 3, 4))
        i_p = nl.arange(4)[:, None, None]
        for start in (0, 4):
            t = nl.ndarray((nl.par_dim(4), 3, 4), dtype=nl.float32)
            nisa.dma_copy(dst=t, src=a[start:start + 4, 0:3, 0:4], mask=(i_p + start < 6))
            u = nl.load(a[start:start + 4, ...], mask=(i_p + start < 6))  # an Ellipsis: the same slices
            nl.store(out[i_p + start, nl.arange(3)[None, :, None], nl.arange(4)[None, None, :]], value=t + u - u,
                     mask=(i_p + start < 6))
        return out

    program, got = simulate(kernel, x)
    np.testing.assert_array_equal(got, x)
    assert [d.src.shape[0] for d in program.dmas()][:2] == [4, 4]


def test_an_ellipsis_does_not_make_a_slice_within_its_axis_look_past_the_end():
    def kernel(x):
        assert isinstance(x[..., 0:5], HbmView)  # 0:5 is on the last axis (10), not the middle one (4)
        return hbm_out((1, 1))

    trace(kernel, np.zeros((3, 4, 10), F32))


@pytest.mark.parametrize("use", [
    lambda t, a, i_p: nisa.dma_copy(dst=t, src=a[4:8, 0:3, 0:4]),  # no mask
    lambda t, a, i_p: nisa.dma_copy(dst=t, src=a[4:8, 0:3, 0:4], mask=(i_p < 3)),  # a mask that keeps row 6
    lambda t, a, i_p: nl.load(a[4:8, 0:3, 0:4], mask=(i_p < 4)),
    lambda t, a, i_p: nisa.tensor_copy(dst=t, src=a[4:8, 0:3, 0:4]),
    lambda t, a, i_p: nisa.dma_copy(dst=t[0:2, 0:3, 0:4], src=a[4:6, 1:4, 0:4], mask=(i_p < 2)),  # an inner axis
])
def test_a_static_hbm_slice_past_the_end_is_an_error_where_nothing_cuts_it(use):
    def kernel(a):
        t = nl.ndarray((nl.par_dim(4), 3, 4), dtype=nl.float32)
        use(t, a, nl.arange(4)[:, None, None])

    with pytest.raises(InvalidValueError, match=r"a\[[14]:[48]\] on axis [01] \(size [36]\) is out of bounds: .*mask off"):
        trace(kernel, np.zeros((6, 3, 4), F32))


@pytest.mark.parametrize("index", [
    lambda x, t, s: t[0:4, 2:9],  # a tile's free axis
    lambda x, t, s: t[0:128, 0:3],  # a 4-partition tile's partitions
    lambda x, t, s: t[0:5],  # partitions alone
    lambda x, t, s: s[0:2, 0:3, 1:5],  # a 3-d tile's last axis
    lambda x, t, s: x[-9:2],  # a negative start past the beginning
])
def test_static_slices_past_an_axis_are_errors_not_clipped(index):
    """Issue 40.5: numpy clips t[0:128] on 4 partitions to t[0:4]; NKI reports it, and so does the tracer."""
    def kernel(x):
        t = nl.ndarray((4, 3), dtype=nl.float32, buffer=nl.sbuf)
        s = nl.ndarray((2, 3, 4), dtype=nl.float32, buffer=nl.sbuf)
        index(x, t, s)

    with pytest.raises(InvalidValueError, match=r"out of bounds: slice bounds must lie in"):
        trace(kernel, np.zeros((4, 3), np.float32))

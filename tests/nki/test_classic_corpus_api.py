"""API surface of the classic dialect that public NKI kernels use (issue 37), against NKI's documented semantics.

Each kernel here is our own, small, with numpy as the oracle; none is copied from a public kernel.
"""

import numpy as np
import pytest

from resize_kernels.errors import InvalidValueError, NotSimulatedError
from resize_kernels.nki import classic as nki
import resize_kernels.nki as rnki
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


# -- masks on nisa.bn_stats / bn_aggr ------------------------------------------------------------------------------

def test_bn_stats_mask_restricts_the_input_grid():
    """A mask on bn_stats selects the elements of its input's grid it reads (NKI API Masking): chunks of 512 of a
    700-wide row, the second chunk's index running past the tile and masked to its 188 columns, aggregate to the
    mean and variance of the whole row."""
    width, fmax = 700, nl.tile_size.bn_stats_fmax
    chunks = -(-width // fmax)

    @nki.jit
    def row_moments(x):
        out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(128)[:, None], nl.arange(fmax)[None, :]
        i_s = nl.arange(6)[None, :]
        t = nl.load(x)
        stats = nl.ndarray((128, 6 * chunks), dtype=nl.float32)
        for j in nl.affine_range(chunks):
            stats[i_p, j * 6 + i_s] = nisa.bn_stats(t[i_p, j * fmax + i_f], mask=(j * fmax + i_f < width),
                                                    dtype=nl.float32)
        nl.store(out, value=nisa.bn_aggr(stats))
        return out

    x = np.random.default_rng(1).standard_normal((128, width)).astype(np.float32)
    got = nki.simulate_kernel(row_moments, x)
    np.testing.assert_allclose(got[:, 0], x.mean(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[:, 1], x.var(axis=1), rtol=1e-4)


def test_bn_stats_mask_on_partitions_writes_only_those_rows():
    @nki.jit
    def first_rows(x):
        out = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(128)[:, None], nl.arange(64)[None, :]
        res = nl.zeros((128, 6), dtype=nl.float32)
        res[...] = nisa.bn_stats(nl.load(x)[i_p, i_f], mask=(i_p < 40))
        nl.store(out, value=res)
        return out

    x = np.random.default_rng(2).standard_normal((128, 64)).astype(np.float32)
    got = nki.simulate_kernel(first_rows, x)
    assert not got[40:].any() and got[:40].any()
    np.testing.assert_array_equal(got[:40, 0], 32.0)  # count of the even elements


def test_bn_aggr_mask_keeps_partitions():
    @nki.jit
    def aggr(x):
        out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(128)[:, None], nl.arange(6)[None, :]
        res = nl.zeros((128, 2), dtype=nl.float32)
        stats = nisa.bn_stats(nl.load(x))
        res[...] = nisa.bn_aggr(stats[i_p, i_f], mask=(i_p < 100))
        nl.store(out, value=res)
        return out

    x = np.random.default_rng(3).standard_normal((128, 32)).astype(np.float32)
    got = nki.simulate_kernel(aggr, x)
    assert not got[100:].any()
    np.testing.assert_allclose(got[:100, 0], x[:100].mean(axis=1), rtol=1e-5, atol=1e-6)


def test_tensor_partition_reduce_mask_reads_its_box():
    @nki.jit
    def colmax(x):
        out = nl.ndarray((1, 16), dtype=x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(32)[:, None], nl.arange(16)[None, :]
        res = nl.zeros((1, 16), dtype=x.dtype)
        res[...] = nisa.tensor_partition_reduce(nl.maximum, nl.load(x)[i_p, i_f], mask=(i_p < 20) & (i_f < 10))
        nl.store(out, value=res)
        return out

    x = np.random.default_rng(4).standard_normal((32, 16)).astype(np.float32)
    want = np.zeros((1, 16), np.float32)
    want[0, :10] = x[:20, :10].max(axis=0)
    np.testing.assert_array_equal(nki.simulate_kernel(colmax, x), want)


# -- nl.fp32, nl.ds ------------------------------------------------------------------------------------------------

def test_fp32_min_is_the_most_negative_float32():
    """nl.fp32.min: "FP32 Bit pattern (0xff7fffff) representing the minimum (or maximum negative) FP32 value"."""
    assert np.float32(nl.fp32.min).view(np.uint32) == 0xff7fffff
    assert float(nl.fp32.min) == float(np.finfo(np.float32).min)


def test_fp32_min_fills_a_tile():
    @nki.jit
    def fill(x):
        out = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.full((4, 8), fill_value=nl.fp32.min, dtype=nl.float32))
        return out

    got = nki.simulate_kernel(fill, np.zeros(1, np.float32))
    assert (got.view(np.uint32) == 0xff7fffff).all()


def test_ds_is_a_slice_of_start_and_size():
    @nki.jit
    def pick(x):
        out = nl.ndarray((32, 8), dtype=x.dtype, buffer=nl.shared_hbm)
        for j in nl.affine_range(2):
            t = nl.load(x[nl.ds(16 * j, 16), nl.ds(4, 8)])
            nl.store(out[nl.ds(16 * j, 16), :], value=t)
        return out

    x = np.arange(32 * 20, dtype=np.float32).reshape(32, 20)
    np.testing.assert_array_equal(nki.simulate_kernel(pick, x), x[:, 4:12])
    assert nl0.ds(3, 5) == slice(3, 8)
    with pytest.raises(InvalidValueError, match="nl.ds requires"):
        nl0.ds(0, 0)


# -- views of HBM tensors index again ------------------------------------------------------------------------------

def test_a_view_of_an_hbm_tensor_indexes_again():
    """``v[b, h]`` is the (S, D) tensor of batch b, head h; it takes slices, integers and nl.arange expressions."""
    @nki.jit
    def heads(v):
        b, h, s, d = v.shape
        out = nl.ndarray((b, h, s, d), dtype=v.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(s)[:, None], nl.arange(d)[None, :]
        for ib in nl.affine_range(b):
            for ih in nl.affine_range(h):
                src, dst = v[ib, ih], out[ib, ih]
                left = nl.load(src[:, nl.ds(0, 3)])
                right = nl.load(src[i_p, 3 + i_f], mask=(3 + i_f < d))
                nl.store(dst[:, 0:3], value=left)
                nl.store(dst[i_p, 3 + i_f], value=nl.multiply(right, 2.0), mask=(3 + i_f < d))
        return out

    v = np.random.default_rng(5).standard_normal((2, 3, 16, 8)).astype(np.float32)
    want = v.copy()
    want[..., 3:] *= 2
    np.testing.assert_array_equal(nki.simulate_kernel(heads, v), want)


def test_a_view_index_out_of_range_is_an_error():
    @nki.jit
    def bad(v):
        out = nl.ndarray((4, 4), dtype=v.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(v[1][0:4, 2:6]))
        return out

    with pytest.raises(InvalidValueError, match="out of bounds"):
        nki.simulate_kernel(bad, np.zeros((2, 4, 5), np.float32))


# -- nisa.affine_select ----------------------------------------------------------------------------------------------

def test_affine_select_causal_mask():
    """out = on_true where the affine predicate holds, else on_false_value (classic nki.isa.affine_select): the
    causal mask q >= k over a (64, 96) grid offset by tile positions."""
    @nki.jit
    def causal(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:64, 0:96]
        q_pos, k_pos = 64 + i_p, 32 + i_f
        t = nl.load(x)
        nl.store(out, value=nisa.affine_select(pred=q_pos >= k_pos, on_true_tile=t, on_false_value=nl.fp32.min))
        return out

    x = np.random.default_rng(6).standard_normal((64, 96)).astype(np.float32)
    q, k = np.mgrid[0:64, 0:96]
    want = np.where(64 + q >= 32 + k, x, np.finfo(np.float32).min).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(causal, x), want)


def test_affine_select_with_a_mask_and_dtype():
    @nki.jit
    def band(x):
        out = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:32, 0:40]
        res = nl.zeros(x.shape, dtype=nl.bfloat16)
        res[i_p, i_f] = nisa.affine_select(i_f - 2 * i_p < 5, nl.load(x), -1.0, dtype=nl.bfloat16,
                                           mask=(i_p < 20) & (i_f >= 8))
        nl.store(out, value=res)
        return out

    x = np.random.default_rng(7).standard_normal((32, 40)).astype(np.float32)
    p, f = np.mgrid[0:32, 0:40]
    want = np.where(f - 2 * p < 5, x, -1.0)
    want[(p >= 20) | (f < 8)] = 0
    import ml_dtypes
    np.testing.assert_array_equal(nki.simulate_kernel(band, x), want.astype(ml_dtypes.bfloat16))


def test_affine_select_refuses_combined_predicates():
    @nki.jit
    def both(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:8, 0:8]
        nl.store(out, value=nisa.affine_select((i_p >= i_f) & (i_f < 4), nl.load(x), 0.0))
        return out

    with pytest.raises(InvalidValueError, match="one comparison"):
        nki.simulate_kernel(both, np.zeros((8, 8), np.float32))


def test_dst_first_affine_select_is_one_gpsimd_instruction_costed_as_documented():
    """NKI 0.3.0: affine_select(dst, pattern, offset, channel_multiplier, on_true_tile, on_false_value, cmp_op):
    predicate = cmp_op(offset + p * channel_multiplier + sum(step * x), 0); "150 + N GpSimd Engine cycles"."""
    from resize_kernels import nki as nki0
    from resize_kernels.machine.cost import engine_cycles, target_params

    @nki0.jit
    def upper(x):
        out = nl0.ndarray(x.shape, dtype=x.dtype, buffer=nl0.shared_hbm)
        t = nl0.ndarray(x.shape, dtype=x.dtype)
        nki0.isa.dma_copy(dst=t, src=x)
        nki0.isa.affine_select(t, [[-1, 16]], 3, 1, t, 7.0, cmp_op=nl0.greater_equal)
        nki0.isa.dma_copy(dst=out, src=t)
        return out

    x = np.random.default_rng(8).standard_normal((16, 16)).astype(np.float32)
    p, f = np.mgrid[0:16, 0:16]
    np.testing.assert_array_equal(upper(x), np.where(3 + p - f >= 0, x, 7.0).astype(np.float32))
    (inst,) = [i for i in upper.trace(x).instructions if i.opcode == "affine_select"]
    assert inst.engine == "gpsimd" and engine_cycles(inst, target_params("trn1")) == 150 + 16


def test_a_view_of_a_tile_indexes_again():
    """``buf[:, 2:6][:, 1]`` is column 3 of buf, a (P, 1) view; ``buf[0:8, :][i_p, 2 * i_f]`` every other column."""
    @nki.jit
    def columns(x):
        out = nl.ndarray((8, 3), dtype=x.dtype, buffer=nl.shared_hbm)
        buf = nl.load(x)
        res = nl.ndarray((8, 3), dtype=x.dtype)
        i_p, i_f = nl.arange(8)[:, None], nl.arange(2)[None, :]
        res[:, 0:1] = nl.copy(buf[:, 2:6][:, 1])
        res[:, 1:3] = nl.copy(buf[0:8, :][i_p, 2 * i_f])
        nl.store(out, value=res)
        return out

    x = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
    want = np.concatenate([x[:, 3:4], x[:, 0:4:2]], axis=1)
    np.testing.assert_array_equal(nki.simulate_kernel(columns, x), want)


def test_assigning_into_a_view_of_a_tile_writes_the_tile():
    @nki.jit
    def write_view(x):
        out = nl.ndarray((8, 6), dtype=x.dtype, buffer=nl.shared_hbm)
        buf = nl.load(x)
        view = buf[:, 2:6]
        view[:, 1] = nl.multiply(buf[:, 0], 10.0)
        view[0:4, 2:4] = 0.0
        nl.store(out, value=buf)
        return out

    x = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
    want = x.copy()
    want[:, 3] = 10 * x[:, 0]
    want[0:4, 4:6] = 0
    np.testing.assert_array_equal(nki.simulate_kernel(write_view, x), want)


def test_classic_store_casts_to_the_destination_dtype():
    """Classic DMAs cast ("A cast will happen if the src and dst have different dtype"): a bfloat16 tile stored
    into a float32 tensor, with a mask, and a float32 PSUM tile into a bfloat16 tensor."""
    import ml_dtypes

    @nki.jit
    def widen(x):
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        narrow = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(16)[:, None], nl.arange(16)[None, :]
        t = nl.load(x)
        nl.store(out[i_p, i_f], value=nl.copy(t, dtype=nl.bfloat16), mask=(i_p < 16))
        nl.store(narrow, value=nisa.nc_matmul(t, t))
        return out, narrow

    x = np.random.default_rng(9).integers(-4, 5, (16, 16)).astype(np.float32) / 4
    got, got_narrow = nki.simulate_kernel(widen, x)
    np.testing.assert_array_equal(got, x.astype(ml_dtypes.bfloat16).astype(np.float32))
    np.testing.assert_array_equal(got_narrow, (x.T @ x).astype(ml_dtypes.bfloat16))


# -- block tiles indexed with fewer integers than block dimensions -------------------------------------------------

def test_a_partial_block_index_is_the_block_tensor_of_the_remaining_blocks():
    """``t[h]`` of a (2, 3, par_dim(8), 1) tile is the (3, par_dim(8), 1) tile of head h's blocks; a helper
    writing ``sub[i, :, 0]`` writes block (h, i) of t."""
    def fill_rows(sub, x, h):
        for i in nl.affine_range(3):
            sub[i, :, 0] = nl.sum(nl.load(x[h, i]), axis=1)

    @nki.jit
    def row_sums(x):
        out = nl.ndarray((2, 3, 8, 1), dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((2, 3, nl.par_dim(8), 1), dtype=x.dtype)
        for h in nl.affine_range(2):
            fill_rows(t[h], x, h)
        for h in nl.affine_range(2):
            for i in nl.affine_range(3):
                nl.store(out[h, i], value=t[h, i])
        return out

    x = np.random.default_rng(10).integers(-8, 8, (2, 3, 8, 5)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(row_sums, x), x.sum(axis=3, keepdims=True))


def test_a_partial_block_index_out_of_range_is_an_error():
    @nki.jit
    def bad(x):
        out = nl.ndarray((8, 1), dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.zeros((2, 3, nl.par_dim(8), 1), dtype=x.dtype)
        nl.store(out, value=t[2][0])
        return out

    with pytest.raises(InvalidValueError, match="out of range for block dimension 0"):
        nki.simulate_kernel(bad, np.zeros((8, 1), np.float32))


# -- nl.load_transpose2d ---------------------------------------------------------------------------------------------

def test_load_transpose2d_loads_the_transpose():
    """"Load a tensor from device memory (HBM) and 2D-transpose the data before storing into on-chip memory"."""
    import ml_dtypes

    @nki.jit
    def transposed(x):
        out = nl.ndarray((2, 8, 16), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        for h in nl.affine_range(2):
            t = nl.load_transpose2d(x[h][:, nl.ds(4, 8)], dtype=nl.bfloat16)
            nl.store(out[h], value=t)
        return out

    x = np.random.default_rng(11).standard_normal((2, 16, 20)).astype(np.float32)
    want = np.ascontiguousarray(x[:, :, 4:12].transpose(0, 2, 1)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(nki.simulate_kernel(transposed, x), want)


def test_load_transpose2d_with_a_mask_and_expressions():
    @nki.jit
    def part(x):
        out = nl.ndarray((8, 16), dtype=x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(16)[:, None], nl.arange(8)[None, :]
        t = nl.zeros((8, 16), dtype=x.dtype)
        t[...] = nl.load_transpose2d(x[i_p, i_f], mask=(i_p < 10))
        nl.store(out, value=t)
        return out

    x = np.random.default_rng(12).standard_normal((16, 8)).astype(np.float32)
    want = x.T.copy()
    want[:, 10:] = 0
    np.testing.assert_array_equal(nki.simulate_kernel(part, x), want)


def test_load_transpose2d_requires_a_2d_source():
    @nki.jit
    def bad(x):
        out = nl.ndarray((4, 4), dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load_transpose2d(x))
        return out

    with pytest.raises(InvalidValueError, match="load_transpose2d requires"):
        nki.simulate_kernel(bad, np.zeros((2, 4, 4), np.float32))


# -- tensors given by keyword; a PSUM operand of nc_matmul ---------------------------------------------------------

def test_a_tensor_given_by_keyword_is_an_input():
    """``kernel(x, bias=b)``: b is an HBM input as when passed by position (defaults fill the parameters between)."""
    @nki.jit
    def shifted(x, scale=2.0, bias=None):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.multiply(nl.load(x), scale)
        if bias is not None:
            t = nl.add(t, nl.load(bias))
        nl.store(out, value=t)
        return out

    x, b = np.ones((4, 8), np.float32), np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(nki.simulate_kernel(shifted, x, bias=b), 2 * x + b)
    np.testing.assert_array_equal(shifted(x, bias=b, scale=3.0), 3 * x + b)
    bench = nki.benchmark(shifted)
    bench(x, bias=b)
    assert bench.benchmark_result.nc_latency.get_latency_percentile(50) > 0


def test_nc_matmul_of_a_psum_transpose_copies_it_to_sbuf():
    @nki.jit
    def t_then_mm(a, b):
        out = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        at = nisa.nc_transpose(nl.load(a))  # (64, 64) on the tensor engine: PSUM
        nl.store(out, value=nisa.nc_matmul(at, nl.load(b)))
        return out

    rng = np.random.default_rng(13)
    a = rng.integers(-3, 4, (64, 64)).astype(np.float32)
    b = rng.integers(-3, 4, (64, 32)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(t_then_mm, a, b), a @ b)


def test_nl_functions_broadcast_a_one_partition_tile():
    """nl.add(x, y): "x.shape and y.shape must be broadcastable to a common shape", partitions too; the + operator
    does not broadcast partitions (NKI known issues)."""
    @nki.jit
    def plus_row(x, r):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t, row = nl.load(x), nl.load(r)
        nl.store(out, value=nl.add(row, t))
        return out

    x, r = np.ones((16, 4), np.float32), np.arange(4, dtype=np.float32).reshape(1, 4)
    np.testing.assert_array_equal(nki.simulate_kernel(plus_row, x, r), x + r)

    @nki.jit
    def operator_plus(x, r):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(x) + nl.load(r))
        return out

    with pytest.raises(InvalidValueError, match="same partitions"):
        nki.simulate_kernel(operator_plus, x, r)


def test_arange_takes_start_and_stop_and_loads_take_python_bool_masks():
    """nl.arange(start, stop) (nki.language.arange); a trace-time bool mask keeps all or nothing (the allocated
    nki-samples kernels' ``mask=(k * pmax < seqlen)``)."""
    from resize_kernels.nki.classic import language as cnl

    def kernel(x):
        out = cnl.ndarray((4, 6), dtype=x.dtype, buffer=cnl.shared_hbm)
        i_p, i_f = cnl.arange(0, 4)[:, None], cnl.arange(2, 8)[None, :]
        kept = cnl.load(x[i_p, i_f], mask=(1 < 2))
        cnl.store(out, value=kept, mask=True)
        cnl.load(x[i_p, i_f], mask=False)  # no DMA
        cnl.store(out, value=kept, mask=(3 < 2))  # no DMA
        return out
    x = np.arange(40, dtype=np.float32).reshape(4, 10)
    program = rnki.trace(kernel, x)
    assert sum(inst.opcode == "dma_copy" for inst in program.instructions) == 2
    np.testing.assert_array_equal(rnki.simulate_kernel(kernel, x), x[:, 2:8])


def _in_order_sum(y):
    """Each row's float32 sum, element by element from the left (the vector engine's order)."""
    total = np.zeros(y.shape[0], np.float32)
    for k in range(y.shape[1]):
        total = total + y[:, k]
    return total


@pytest.mark.parametrize("reduce_op, want", [(np.add, _in_order_sum), (np.maximum, lambda y: y.max(axis=1)),
                                             ("min", lambda y: y.min(axis=1))])
def test_tensor_scalar_reduce_in_both_dialects(reduce_op, want):
    """nisa.tensor_scalar_reduce (classic: returns data op0 operand0 and writes reduce_res; NKI 0.3.0: dst first):
    one vector instruction, costed max(MIN_II, N) + MIN_II as its page says."""
    from resize_kernels.machine.cost import TARGETS, engine_cycles
    from resize_kernels.nki import isa as nisa0
    from resize_kernels.nki.classic import isa as cisa
    from resize_kernels.nki.classic import language as cnl

    def classic(x):
        out = cnl.ndarray((2, 128, 96), dtype=np.float32, buffer=cnl.shared_hbm)
        t = cnl.load(x)
        res = cnl.ndarray((128, 1), dtype=np.float32)
        y = cisa.tensor_scalar_reduce(data=t, op0=np.multiply, operand0=0.5, reduce_op=reduce_op, reduce_res=res)
        cnl.store(out[0], value=y)
        cnl.store(out[1, :, 0:1], value=res)
        return out

    def new(x):
        out = nl0.ndarray((2, 128, 96), dtype=np.float32, buffer=nl0.shared_hbm)
        t = nl0.load(x)
        y, res = nl0.ndarray((128, 96), dtype=np.float32), nl0.ndarray((128, 1), dtype=np.float32)
        nisa0.tensor_scalar_reduce(y, t, nl0.multiply, 0.5, reduce_op, res)
        nl0.store(out[0], value=y)
        nl0.store(out[1, :, 0:1], value=res)
        return out

    x = np.random.default_rng(0).standard_normal((128, 96)).astype(np.float32)
    y = x * np.float32(0.5)
    for kernel in (classic, new):
        got = rnki.simulate_kernel(kernel, x)
        np.testing.assert_array_equal(got[0], y)
        np.testing.assert_array_equal(got[1, :, 0], want(y))
        program = rnki.trace(kernel, x)
        [inst] = [i for i in program.instructions if i.opcode == "tensor_scalar"]
        params = TARGETS["trn1"]
        assert engine_cycles(inst, params) == params.vector_fixed_cycles + 96 + 64


def test_a_mask_and_a_python_bool_combine():
    """``(i_f < n) & (k * 128 < seqlen)``: the mask when the bool is true, a mask keeping nothing when false."""
    from resize_kernels.nki.classic import language as cnl
    mask = cnl.arange(8)[None, :] < 5
    assert (mask & True) is mask and (True & mask) is mask
    assert (mask & False) is False and (np.bool_(False) & mask) is False


# -- tensor_tensor with a (P, 1) operand ----------------------------------------------------------------------------

def test_tensor_tensor_broadcasts_a_column_along_the_free_axis():
    """quantized_double_row_matmul multiplies a (P, N) tile by a (P, 1) scale with nisa.tensor_tensor."""
    @nki.jit
    def scale_rows(x, s):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nisa.tensor_tensor(nl.load(x), nl.load(s), nl.multiply))
        return out

    rng = np.random.default_rng(0)
    x, s = rng.standard_normal((128, 40), np.float32), rng.standard_normal((128, 1), np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(scale_rows, x, s), x * s)
    with pytest.raises(InvalidValueError, match="requires tile shapes that broadcast along free axes"):
        nki.simulate_kernel(scale_rows, x, s[:, :1].repeat(3, axis=1))

"""float8 dtypes and nc_matmul's double_row mode (issue 37: nki-samples' quantized_double_row_matmul).

Conversions are checked bit for bit against ml_dtypes, double_row matmuls against a numpy reference of the
documented arithmetic (Trainium2 architecture guide, "Double FP8 Matmul Performance"). Each kernel here is our
own, small; none is copied from a public kernel.
"""

import ml_dtypes
import numpy as np
import pytest
from conftest import assert_bits_equal

import resize_kernels as rk
from resize_kernels.errors import InvalidValueError
from resize_kernels.machine import cost, dtypes
from resize_kernels.machine.simulator import run
from resize_kernels.nki import classic, trace
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.nki.promotion import promote_types

E4M3, E5M2, E4M3FN = (np.dtype(t) for t in (ml_dtypes.float8_e4m3, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn))
FLOAT8 = (E4M3, E5M2, E4M3FN)
BF16, F32 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)
DOUBLE_ROW = nisa.matmul_perf_mode.double_row


def simulate(kernel, *arrays):
    program = trace(kernel, *arrays)
    outs = run(program, list(arrays))
    return program, (outs[0] if len(outs) == 1 else outs)


def float32_probes() -> np.ndarray:
    """float32 values that exercise every rounding case of an 8-bit float: each float8 value of every format,
    the midpoints between neighbours (ties), values just either side of them, subnormals, the formats' largest
    finite values and past them, infinities, NaN and both zeros."""
    every = np.concatenate([np.arange(256, dtype=np.uint8).view(t).astype(np.float32) for t in FLOAT8])
    every = np.unique(every[np.isfinite(every)])
    mids = (every[:-1] + every[1:]) / 2
    near = np.concatenate([np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 240, 247.9, 248, 256, 448, 464, 57344, 61440, 1e6],
                       np.float32)
    return np.concatenate([every, mids, near, special, -special]).astype(np.float32)


# -- dtypes ------------------------------------------------------------------------------------------------------

def test_nl_names_the_float8_dtypes_as_ml_dtypes_types():
    assert (nl.float8_e4m3, nl.float8_e5m2, nl.float8_e4m3fn) == FLOAT8
    assert (classic.language.float8_e4m3, classic.language.float8_e5m2) == (E4M3, E5M2)
    assert nl.finfo(nl.float8_e4m3).max == 240 and nl.finfo(nl.float8_e4m3fn).max == 448  # legacy and OCP
    assert nl.finfo(nl.float8_e5m2).max == 57344
    assert [dtypes.as_dtype(name) for name in ("float8_e4m3", "float8_e5m2", "float8_e4m3fn")] == list(FLOAT8)
    assert all(dtypes.is_float(t) for t in FLOAT8) and not dtypes.is_float(np.uint8)


@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_the_engines_output_cast_to_float8_is_ml_dtypes_bit_for_bit(dtype):
    x = float32_probes()
    assert_bits_equal(dtypes.cast(x, dtype), x.astype(dtype))


@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_a_tensor_copy_into_a_float8_tile_and_back_matches_ml_dtypes(dtype):
    """float32 -> float8 on the vector engine (round to nearest even; past the range inf, or NaN in e4m3fn), and
    float8 -> float32 (exact), each compared bit for bit with ml_dtypes."""
    x = float32_probes()
    x = np.pad(x, (0, -len(x) % 128)).reshape(128, -1)

    def kernel(a):
        src = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=src, src=a)
        small = nl.ndarray(a.shape, dtype=dtype, buffer=nl.sbuf)
        nisa.tensor_copy(small, src)
        back = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(back, small)
        out8 = nl.ndarray(a.shape, dtype=dtype, buffer=nl.shared_hbm, name="out8")
        out32 = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm, name="out32")
        nisa.dma_copy(dst=out8, src=small)
        nisa.dma_copy(dst=out32, src=back)
        return out8, out32

    _, (got8, got32) = simulate(kernel, x)
    assert_bits_equal(got8, x.astype(dtype))
    assert_bits_equal(got32, x.astype(dtype).astype(np.float32))


def test_static_cast_on_the_host_rounds_once_as_ml_dtypes():
    """nl.static_cast of a float64 array (as test code casts its inputs): one rounding, not via float32."""
    x = np.array([1.0625 + 2.0**-40, 1.0625, 241.0, -0.0, 1e-300])
    assert_bits_equal(classic.language.static_cast(x, nl.float8_e4m3), x.astype(E4M3))
    assert classic.language.static_cast(x, nl.float8_e4m3)[0] == 1.125  # above the tie: up, not to even


def test_float8_promotes_as_nki_documents():
    """NKI Type Promotion: (float8_e4m3, float16) -> float16, (float8_e4m3, bfloat16) -> bfloat16,
    (float8_e4m3, float8_e5m2) -> bfloat16 (a new widened type); integers give way to the float."""
    assert promote_types(E4M3, np.float16) == np.float16
    assert promote_types(E4M3, BF16) == BF16
    assert promote_types(E4M3, E5M2) == BF16 and promote_types(E5M2, E4M3FN) == BF16
    assert promote_types(E4M3, np.int32) == E4M3 and promote_types(np.uint8, E5M2) == E5M2
    assert promote_types(E4M3, F32) == F32


# -- nc_matmul perf_mode="double_row" -------------------------------------------------------------------------

def double_row_reference(stationary: np.ndarray, moving: np.ndarray) -> np.ndarray:
    """The documented arithmetic: for each row k, the PE's two float32 products (t = 0, then 1) summed, and that
    sum added into the column's float32 running sum from +0.0, k = 0..K-1 in order."""
    s, m = stationary.astype(np.float32), moving.astype(np.float32)
    total = np.zeros((s.shape[2], m.shape[2]), np.float32)
    for k in range(s.shape[0]):
        pair = s[k, 0][:, None] * m[k, 0][None, :] + s[k, 1][:, None] * m[k, 1][None, :]
        total = total + pair
    return total


def random8(rng, shape, dtype, scale=16.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(dtype)


def double_row_kernel(s_in, m_in, accumulate_twice=False):
    """dst = stationary.T @ moving in double_row mode (stationary (K, 2, M), moving (K, 2, N)), into HBM."""
    _, _, m_size = s_in.shape
    s = nl.ndarray(s_in.shape, dtype=s_in.dtype, buffer=nl.sbuf)
    mv = nl.ndarray(m_in.shape, dtype=m_in.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=s_in)
    nisa.dma_copy(dst=mv, src=m_in)
    acc = nl.ndarray((m_size, m_in.shape[2]), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, s, mv, perf_mode=DOUBLE_ROW)
    if accumulate_twice:
        nisa.nc_matmul(acc, s, mv, perf_mode=DOUBLE_ROW)  # accumulate=None: the second adds
    res = nl.ndarray(acc.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(res, acc)
    out = nl.ndarray(acc.shape, dtype=nl.float32, buffer=nl.shared_hbm, name="out")
    nisa.dma_copy(dst=out, src=res)
    return out


@pytest.mark.parametrize("k, m, n", [(128, 128, 512), (5, 3, 7), (1, 1, 1), (64, 100, 33)])
@pytest.mark.parametrize("s_dtype, m_dtype", [(E4M3, E4M3), (E5M2, E5M2), (E4M3, E5M2)], ids=str)
def test_double_row_is_the_pe_pairs_summed_into_float32_in_order(rng, k, m, n, s_dtype, m_dtype):
    stationary, moving = random8(rng, (k, 2, m), s_dtype), random8(rng, (k, 2, n), m_dtype)
    _, got = simulate(double_row_kernel, stationary, moving)
    assert_bits_equal(got, double_row_reference(stationary, moving))
    # the layout: [k, t] is contraction index t * K + k, so the halves are x's and y's two K-slices
    x = np.concatenate([stationary[:, 0], stationary[:, 1]]).astype(np.float64)  # (2K, M)
    y = np.concatenate([moving[:, 0], moving[:, 1]]).astype(np.float64)  # (2K, N)
    np.testing.assert_allclose(got, x.T @ y, rtol=1e-5, atol=1e-3)


def test_the_pair_is_summed_before_the_running_sum(rng):
    """Rounding shows the order: 2**24 + 1 + 1 is 2**24 summed one by one, 2**24 + 2 with the pair first."""
    s = np.zeros((2, 2, 1), np.float32)
    m = np.zeros((2, 2, 1), np.float32)
    s[0, 0], m[0, 0] = 2.0**12, 2.0**12  # row 0: 2**24
    s[1, :], m[1, :] = 1.0, 1.0  # row 1: its pair 1 + 1
    stationary, moving = s.astype(E5M2), m.astype(E5M2)
    _, got = simulate(double_row_kernel, stationary, moving)
    assert got[0, 0] == 2.0**24 + 2  # not 2**24, which adding the two products one at a time would give
    assert_bits_equal(got, double_row_reference(stationary, moving))


def test_double_row_accumulates_into_psum(rng):
    stationary, moving = random8(rng, (16, 2, 8), E4M3), random8(rng, (16, 2, 32), E5M2)
    _, got = simulate(lambda a, b: double_row_kernel(a, b, accumulate_twice=True), stationary, moving)
    once = double_row_reference(stationary, moving)
    assert_bits_equal(got, once + once)


def test_classic_double_row_gen3_gives_the_same_product(rng):
    stationary, moving = random8(rng, (32, 2, 16), E4M3), random8(rng, (32, 2, 64), E4M3)
    cnl, cnisa = classic.language, classic.isa

    @classic.jit(platform_target="trn2")
    def kernel(a, b):
        out = cnl.ndarray((a.shape[2], b.shape[2]), dtype=cnl.float32, buffer=cnl.shared_hbm)
        product = cnisa.nc_matmul(cnl.load(a), cnl.load(b), perf_mode="double_row_gen3")
        assert product.shape == (16, 64)
        cnl.store(out, value=product)
        return out

    got = classic.simulate_kernel(kernel, stationary, moving)
    assert_bits_equal(got, double_row_reference(stationary, moving))


def test_float8_matmul_without_perf_mode_is_a_plain_matmul(rng):
    """float8 inputs also take the ordinary mode (nki.isa.nc_matmul's input types): products over K rows."""
    stationary, moving = random8(rng, (64, 16), E4M3), random8(rng, (64, 40), BF16)

    def kernel(a, b):
        s = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        mv = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=s, src=a)
        nisa.dma_copy(dst=mv, src=b)
        acc = nl.ndarray((16, 40), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(acc, s, mv)
        res = nl.ndarray(acc.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(res, acc)
        out = nl.ndarray(acc.shape, dtype=nl.float32, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=res)
        return out

    _, got = simulate(kernel, stationary, moving)
    s, m = stationary.astype(np.float32), moving.astype(np.float32)
    want = np.zeros((16, 40), np.float32)
    for k in range(64):
        want = want + s[k][:, None] * m[k][None, :]
    assert_bits_equal(got, want)


# -- what double_row does not take: clear errors ------------------------------------------------------------------

def traced_matmul(s_shape, m_shape, s_dtype=E4M3, m_dtype=E4M3, d_shape=None, **options):
    def kernel(a, b):
        s = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        mv = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=s, src=a)
        nisa.dma_copy(dst=mv, src=b)
        acc = nl.ndarray(d_shape or (s_shape[-1], m_shape[-1]), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(acc, s, mv, **options)
        res = nl.ndarray(acc.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(res, acc)
        out = nl.ndarray(acc.shape, dtype=nl.float32, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=res)
        return out
    return trace(kernel, np.zeros(s_shape, s_dtype), np.zeros(m_shape, m_dtype))


@pytest.mark.parametrize("s_shape, m_shape, s_dtype, m_dtype, options, message", [
    ((128, 2, 128), (128, 2, 512), BF16, BF16, {},
     (r"perf_mode='double_row' requires stationary and moving of float8_e4m3 or float8_e5m2, got stationary "
      r"bfloat16 and moving bfloat16; cast both to a float8 dtype first")),
    ((128, 2, 128), (128, 2, 512), E4M3, BF16, {}, r"got stationary float8_e4m3 and moving bfloat16"),
    ((128, 2, 128), (128, 2, 512), E4M3FN, E4M3, {},
     (r"requires stationary of float8_e4m3, float8_e5m2, bfloat16, float16 or float32, got .* of float8_e4m3fn "
      r"\(a NeuronCore-v4 input")),
    ((128, 256), (128, 2, 512), E4M3, E4M3, {"d_shape": (128, 512)},
     r"requires stationary of shape \(K, 2, M\) .*got .* of shape \(128, 256\); index it as \[k, t, m\]"),
    ((128, 3, 64), (128, 3, 512), E4M3, E4M3, {}, r"requires stationary of shape \(K, 2, M\)"),
    ((128, 2, 128), (128, 2, 513), E4M3, E4M3, {},
     (r"at most 128 elements per partition of stationary and 512 of moving in each half \(t = 0, 1\) of the "
      r"double row, got 128 and 513")),
    ((64, 2, 64), (64, 2, 512), E4M3, E4M3, {"tile_position": (0, 0), "tile_size": (64, 64)},
     r"requires the full 128 PE columns \(it does not combine with column tiling\), got tile_size \(64, 64\)"),
])
def test_double_row_rejects_what_it_does_not_take(s_shape, m_shape, s_dtype, m_dtype, options, message):
    with pytest.raises(InvalidValueError, match=message):
        traced_matmul(s_shape, m_shape, s_dtype, m_dtype, perf_mode=DOUBLE_ROW, **options)


def test_double_row_with_row_tiling_is_fine():
    traced_matmul((64, 2, 64), (64, 2, 512), perf_mode=DOUBLE_ROW, tile_position=(64, 0), tile_size=(64, 128))


def test_an_unknown_perf_mode_is_named():
    with pytest.raises(InvalidValueError, match=r"nisa.nc_matmul requires perf_mode one of "
                                                r"nisa.matmul_perf_mode.none, nisa.matmul_perf_mode.double_row, "
                                                r"got 'quad_row'"):
        traced_matmul((128, 2, 128), (128, 2, 512), perf_mode="quad_row")


def test_classic_perf_mode_takes_double_row_gen3_only():
    cnl, cnisa = classic.language, classic.isa

    @classic.jit
    def kernel(a, b):
        out = cnl.ndarray((8, 8), dtype=cnl.float32, buffer=cnl.shared_hbm)
        cnl.store(out, value=cnisa.nc_matmul(cnl.load(a), cnl.load(b), perf_mode="double_row"))
        return out

    a = np.zeros((16, 2, 8), E4M3)
    with pytest.raises(InvalidValueError, match=r"classic nisa.nc_matmul requires perf_mode 'double_row_gen3' "
                                                r"\(NeuronCore-v3's double FP8 mode\) or none, got 'double_row'"):
        classic.simulate_kernel(kernel, a, a)


# -- cost ----------------------------------------------------------------------------------------------------------

def matmul_cycles(program, target):
    (inst,) = [i for i in program.instructions if i.opcode == "nc_matmul"]
    return cost.engine_cycles(inst, cost.TARGETS[target])


@pytest.mark.parametrize("s_shape, m_shape, cycles", [
    ((128, 2, 128), (128, 2, 512), 512),  # as bf16 (128, 128) x (128, 512): max(min(64, 128), 512)
    ((128, 2, 32), (128, 2, 16), 32),  # max(min(64, 32), 16)
    ((16, 2, 100), (16, 2, 10), 64),  # max(min(64, 100), 10)
])
def test_a_double_row_matmul_costs_a_bf16_one_of_half_the_contraction_on_trn2(s_shape, m_shape, cycles):
    """Trainium2 guide: the double FP8 sequence with a 256 contraction "takes the same amount of time as the
    regular BF16/FP16 ... with a 128 contraction"; twice the FLOPs in bf16's cycles."""
    program = traced_matmul(s_shape, m_shape, perf_mode=DOUBLE_ROW)
    assert matmul_cycles(program, "trn2") == cycles
    same_work_bf16 = traced_matmul((s_shape[0], s_shape[2]), (m_shape[0], m_shape[2]), BF16, BF16)
    assert matmul_cycles(same_work_bf16, "trn2") == cycles


def test_a_float8_matmul_without_perf_mode_costs_as_bf16():
    program = traced_matmul((128, 128), (128, 512))
    assert matmul_cycles(program, "trn1") == matmul_cycles(program, "trn2") == 512


def test_costing_double_row_on_trn1_is_an_error():
    program = traced_matmul((128, 2, 128), (128, 2, 512), perf_mode=DOUBLE_ROW)
    with pytest.raises(cost.TargetFeatureError, match=r"nc_matmul perf_mode='double_row' requires NeuronCore-v3 or "
                                                      r"newer \(trn2\), got trn1 \(NeuronCore-v2, which has no "
                                                      r"performance mode\); cost it on trn2"):
        cost.program_cost(program, "trn1")
    assert cost.program_cost(program, "trn2").modelled_us > 0


# -- the resize moves float8 bits, as it moves every machine dtype's ----------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_resize_nearest_moves_every_float8_bit_pattern_exactly(dtype):
    x = np.arange(4 * 5 * 16 * 4, dtype=np.uint32).astype(np.uint8).view(dtype).reshape(1, 4 * 4, 5, 16)
    y = rk.resize_nearest(x, (21, 7))
    rows, cols = np.arange(21) * 16 // 21, np.arange(7) * 5 // 7
    assert_bits_equal(y, x[:, rows][:, :, cols])

"""The tensor engine: nc_matmul and nc_transpose records, their arithmetic, PSUM rules, costs and the tensor lane."""

import json

import ml_dtypes
import numpy as np
import pytest

from resize_kernels.errors import InvalidValueError
from resize_kernels.machine import cost, timeline
from resize_kernels.machine.isa import NcMatmul, NcTranspose, TensorCopy, TensorScalar

from engine_harness import Build, bits_equal

BF16, F16, F32 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16), np.dtype(np.float32)
TRN1, TRN2 = cost.TARGETS["trn1"], cost.TARGETS["trn2"]


def matmul_reference(stationary: np.ndarray, moving: np.ndarray) -> np.ndarray:
    """The documented arithmetic: float32 products summed over the contraction in order, from +0.0."""
    s = stationary.astype(np.float32).reshape(stationary.shape[0], -1)
    m = moving.astype(np.float32).reshape(moving.shape[0], -1)
    total = np.zeros((s.shape[1], m.shape[1]), np.float32)
    for k in range(s.shape[0]):
        total = total + s[k][:, None] * m[k][None, :]
    return total


def random(rng, shape, dtype):
    return (rng.standard_normal(shape) * 4).astype(dtype)


def run_matmul(stationary, moving, accumulate_onto=None):
    b = Build()
    s, m = b.load(stationary), b.load(moving)
    if accumulate_onto is not None:
        dst = b.load(accumulate_onto, "psum")
    else:
        dst = b.tile((stationary.shape[1], moving.shape[1]), F32, "psum")
    b.emit(NcMatmul(dst, s, m, accumulate=accumulate_onto is not None))
    b.store(dst)
    inputs = [stationary, moving] + ([accumulate_onto] if accumulate_onto is not None else [])
    return b.run(*inputs)[0]


# -- arithmetic --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [BF16, F16, F32])
@pytest.mark.parametrize("k, m, n", [(128, 128, 512), (7, 3, 5), (64, 128, 33), (1, 1, 1), (100, 17, 256)])
def test_matmul_is_float32_products_summed_in_order(rng, dtype, k, m, n):
    stationary, moving = random(rng, (k, m), dtype), random(rng, (k, n), dtype)
    got = run_matmul(stationary, moving)
    assert bits_equal(got, matmul_reference(stationary, moving))
    exact = stationary.astype(np.float64).T @ moving.astype(np.float64)
    assert np.allclose(got, exact, rtol=1e-4, atol=1e-3 * k)  # a matmul, to float32 rounding


def test_bf16_products_are_exact_so_the_order_alone_rounds(rng):
    """bf16 x bf16 fits float32's 24 bits: a contraction of 1 is exact, and one of 2 rounds once."""
    s, m = random(rng, (1, 8), BF16), random(rng, (1, 16), BF16)
    got = run_matmul(s, m)
    assert np.array_equal(got, s.astype(np.float64).T @ m.astype(np.float64))


def test_free_axes_are_flattened(rng):
    stationary, moving = random(rng, (16, 2, 3), BF16), random(rng, (16, 4, 5), BF16)
    b = Build()
    s, m = b.load(stationary), b.load(moving)
    dst = b.tile((6, 4, 5), F32, "psum")
    b.emit(NcMatmul(dst, s, m))
    b.store(dst)
    (got,) = b.run(stationary, moving)
    assert bits_equal(got, matmul_reference(stationary, moving).reshape(6, 4, 5))


def test_accumulate_adds_the_product_to_psum_in_float32(rng):
    stationary, moving, before = random(rng, (32, 8), F16), random(rng, (32, 64), F16), random(rng, (8, 64), F32)
    got = run_matmul(stationary, moving, accumulate_onto=before)
    assert bits_equal(got, before + matmul_reference(stationary, moving))


def test_successive_matmuls_form_an_accumulation_group(rng):
    """A contraction of 256 in two matmuls: each sums its 128 from +0.0, PSUM adds the second to the first."""
    a, b_ = random(rng, (256, 64), BF16), random(rng, (256, 128), BF16)
    b = Build()
    dst = b.tile((64, 128), F32, "psum")
    for half, accumulate in ((slice(0, 128), False), (slice(128, 256), True)):
        s, m = b.load(a[half]), b.load(b_[half])
        b.emit(NcMatmul(dst, s, m, accumulate=accumulate))
    b.store(dst)
    (got,) = b.run(a[:128], b_[:128], a[128:], b_[128:])
    assert bits_equal(got, matmul_reference(a[:128], b_[:128]) + matmul_reference(a[128:], b_[128:]))


def test_overwrite_ignores_what_psum_held(rng):
    b = Build()
    s, m = b.load(random(rng, (4, 4), F32)), b.load(random(rng, (4, 4), F32))
    stale = b.load(np.full((4, 4), np.nan, np.float32), "psum")
    b.emit(NcMatmul(stale, s, m, accumulate=False))
    b.store(stale)
    (got,) = b.run(*[np.eye(4, dtype=np.float32)] * 2, np.full((4, 4), np.nan, np.float32))
    assert np.array_equal(got, np.eye(4, dtype=np.float32))


def test_onezero_hint_is_checked_when_it_runs(rng):
    b = Build()
    s, m = b.load(random(rng, (4, 4), F32)), b.load(np.eye(4, dtype=np.float32))
    dst = b.tile((4, 4), F32, "psum")
    b.emit(NcMatmul(dst, s, m, is_moving_onezero=True))  # true of moving
    b.emit(NcMatmul(dst, s, m, is_stationary_onezero=True))  # false of stationary
    b.store(dst)
    with pytest.raises(InvalidValueError, match="is_stationary_onezero says stationary holds only 0 and 1"):
        b.run(random(rng, (4, 4), F32) + 3, np.eye(4, dtype=np.float32))


@pytest.mark.parametrize("dtype", [F32, BF16, np.dtype(np.int32), np.dtype(np.uint8)])
@pytest.mark.parametrize("engine, shape", [("tensor", (128, 128)), ("tensor", (128, 64)), ("tensor", (3, 100)),
                                           ("vector", (32, 32)), ("vector", (32, 2)), ("vector", (5, 7))])
def test_transpose_moves_bits(dtype, engine, shape):
    raw = np.random.default_rng(7).integers(0, 256, (*shape, dtype.itemsize), dtype=np.uint8)
    x = raw.view(dtype).reshape(shape)  # every bit pattern: NaNs and -0.0 among the floats
    b = Build()
    src = b.load(x, "sbuf")
    dst = b.tile(shape[::-1], dtype, "psum" if engine == "tensor" else "sbuf")
    b.emit(NcTranspose(dst, src, engine))
    b.store(dst)
    (got,) = b.run(x)
    assert bits_equal(got, np.ascontiguousarray(x.T))


def test_vector_transpose_reads_and_writes_psum_too():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = Build()
    src = b.load(x, "psum")
    dst = b.tile((4, 3), F32, "psum")
    b.emit(NcTranspose(dst, src, "vector"))
    b.store(dst)
    assert np.array_equal(b.run(x)[0], x.T)


# -- what the records refuse ---------------------------------------------------------------------------

def records():
    b = Build()
    t = {name: b.tile(shape, dtype, memory) for name, shape, dtype, memory in [
        ("s", (128, 128), BF16, "sbuf"), ("m", (128, 512), BF16, "sbuf"), ("d", (128, 512), F32, "psum"),
        ("s32", (128, 128), F32, "sbuf"), ("sp", (128, 128), BF16, "psum"), ("ds", (128, 512), F32, "sbuf"),
        ("d16", (128, 512), BF16, "psum"), ("m64", (64, 512), BF16, "sbuf"), ("s129", (128, 129), BF16, "sbuf"),
        ("m513", (128, 513), BF16, "sbuf"), ("wide", (128, 1024), F32, "psum"), ("x", (33, 32), F32, "sbuf"),
        ("xt", (32, 33), F32, "sbuf"), ("xp", (64, 64), F32, "psum"), ("xs", (64, 64), BF16, "sbuf"),
        ("s64", (64, 128), BF16, "sbuf")]}
    return t


def _slice(ap, lo, hi):
    from resize_kernels.machine.access import AccessPattern
    return AccessPattern(ap.tensor, (ap.pattern[0], (1, hi - lo)), ap.offset + lo)


@pytest.mark.parametrize("make, message", [
    (lambda t: NcMatmul(t["ds"], t["s"], t["m"]), "requires a PSUM tile"),
    (lambda t: NcMatmul(t["d"], t["sp"], t["m"]), "requires an SBUF tile"),
    (lambda t: NcMatmul(t["d"], t["s32"], t["m"]), "float32 only with float32"),
    (lambda t: NcMatmul(t["d16"], t["s"], t["m"]), "requires a float32 dst"),
    (lambda t: NcMatmul(t["d"], t["s"], t["m64"]), "one number of partitions"),
    (lambda t: NcMatmul(t["d"], t["s129"], t["m"]), "at most 128 elements per partition of stationary"),
    (lambda t: NcMatmul(t["d"], t["s"], t["m513"]), "and 512 of moving"),
    (lambda t: NcMatmul(_slice(t["wide"], 256, 768), t["s"], t["m"]), "spans banks 0..1"),
    (lambda t: NcMatmul(t["d"], t["s"], t["m"], tile_position=(0, 0), tile_size=(64, 128)), "must fit tile_size"),
    (lambda t: NcMatmul(t["d"], t["s"], t["m"], tile_position=(16, 0), tile_size=(128, 128)), "multiples of 32"),
    (lambda t: NcTranspose(t["x"], t["xt"], "vector"), "at most 32 x 32"),
    (lambda t: NcTranspose(t["xp"], t["xs"], "tensor"), "dst of data's dtype"),
    (lambda t: NcTranspose(t["xt"], t["x"], "tensor"), "requires a PSUM tile"),
    (lambda t: NcTranspose(t["xp"], t["xp"], "gpsimd"), "tensor or the vector engine"),
])
def test_the_documented_limits_are_enforced(make, message):
    with pytest.raises(InvalidValueError, match=message):
        make(records()).validate("instruction 0")


def test_a_bank_sized_slice_at_a_bank_and_a_fitting_pe_tile_are_fine():
    t = records()
    NcMatmul(_slice(t["wide"], 512, 1024), t["s"], t["m"]).validate("instruction 0")
    NcMatmul(t["d"], t["s64"], t["m64"], tile_position=(64, 0), tile_size=(64, 128)).validate("instruction 0")


# -- costs (E7) ------------------------------------------------------------------------------------------

def matmul(s_shape, m_shape, dtype=BF16, **flags):
    b = Build()
    s, m = b.tile(s_shape, dtype), b.tile(m_shape, dtype)
    d = b.tile((s_shape[1], m_shape[1]), F32, "psum")
    return NcMatmul(d, s, m, **flags)


@pytest.mark.parametrize("s_shape, m_shape, dtype, cycles", [
    ((128, 128), (128, 512), BF16, 512),  # max(min(64, 128), 512)
    ((128, 128), (128, 512), F16, 512),
    ((128, 128), (128, 512), F32, 4 * 512),  # float32: 4x
    ((128, 32), (128, 16), BF16, 32),  # max(min(64, 32), 16)
    ((128, 100), (128, 10), BF16, 64),  # max(min(64, 100), 10)
    ((4, 128), (4, 128), F32, 4 * 128),
])
def test_matmul_cycles_follow_the_documented_formula(s_shape, m_shape, dtype, cycles):
    inst = matmul(s_shape, m_shape, dtype)
    assert cost.engine_cycles(inst, TRN1) == cycles
    assert TRN1.us(cycles, "tensor") == pytest.approx(cycles / 2800)  # 2.8 GHz on trn1
    assert TRN2.us(cycles, "tensor") == pytest.approx(cycles / 2400)  # 2.4 GHz on trn2


def test_a_onezero_hint_halves_a_float32_matmul():
    assert cost.engine_cycles(matmul((128, 128), (128, 512), F32, is_stationary_onezero=True), TRN1) == 2 * 512
    assert cost.engine_cycles(matmul((128, 128), (128, 512), BF16, is_moving_onezero=True), TRN1) == 512


@pytest.mark.parametrize("shape, engine, cycles", [
    ((128, 128), "tensor", 128), ((128, 64), "tensor", 128), ((16, 100), "tensor", 64), ((16, 8), "tensor", 16),
    ((32, 32), "vector", 80 + 64), ((8, 4), "vector", 80 + 64),
])
def test_transpose_cycles(shape, engine, cycles):
    b = Build()
    x = b.tile(shape, F32)
    d = b.tile(shape[::-1], F32, "psum" if engine == "tensor" else "sbuf")
    assert cost.engine_cycles(NcTranspose(d, x, engine), TRN1) == cycles


# -- the tensor lane: schedule, report, timeline ---------------------------------------------------------

def matmul_program(n_matmuls=2):
    """Independent matmuls into separate banks, each evicted by the vector engine, and an independent vector op."""
    b = Build("mm")
    s, m = b.tile((128, 128), BF16), b.tile((128, 512), BF16)
    b.emit(TensorScalar(s, s, "multiply", 1.0))
    b.emit(TensorScalar(m, m, "multiply", 1.0))
    outs = []
    for _ in range(n_matmuls):
        d = b.tile((128, 512), F32, "psum")
        b.emit(NcMatmul(d, s, m))
        e = b.tile((128, 512), F32)
        b.emit(TensorCopy(e, d))
        outs.append(e)
    other = b.tile((128, 64), F32)
    b.emit(TensorScalar(other, other, "add", 1.0))
    return b.finish()


def test_matmuls_queue_on_the_tensor_engine_and_evictions_wait_for_them():
    report = cost.program_cost(matmul_program())
    e = report.events
    mm1, copy1, mm2, copy2, other = e[2], e[3], e[4], e[5], e[6]
    assert mm1.engine == mm2.engine == "tensor"
    assert mm1.end_us - mm1.start_us == pytest.approx(512 / 2800)
    assert mm1.start_us == pytest.approx(e[1].end_us)  # after its inputs are written
    assert mm2.start_us == pytest.approx(mm1.end_us)  # one at a time on the PE array
    assert copy1.start_us >= mm1.end_us and copy2.start_us >= mm2.end_us  # the eviction reads PSUM after it
    assert other.start_us < mm2.end_us  # the vector engine works meanwhile on other tiles


def test_an_accumulating_matmul_waits_for_the_last_write_to_its_psum():
    b = Build()
    s, m = b.tile((128, 128), BF16), b.tile((128, 512), BF16)
    d = b.tile((128, 512), F32, "psum")
    b.emit(NcMatmul(d, s, m))
    b.emit(TensorScalar(d, d, "multiply", 2.0))  # the vector engine scales the partial sum
    b.emit(NcMatmul(d, s, m, accumulate=True))
    report = cost.program_cost(b.finish())
    assert report.events[2].start_us == pytest.approx(report.events[1].end_us)


def test_reports_and_timelines_show_the_tensor_engine():
    report = cost.program_cost(matmul_program(3), "trn2")
    assert report.instructions["tensor"] == 3
    assert report.cycles["tensor"] == 3 * 512
    assert report.busy_us["tensor"] == pytest.approx(3 * 512 / 2400)
    assert "  tensor        3 instructions" in str(report) and "at 2.4 GHz" in str(report)
    assert "tensor" in report._repr_html_()
    lanes = timeline.lanes(report)
    assert lanes[0] == "tensor"
    rows = [r for r in report.timeline() if r[0] == "tensor"]
    assert [r[1] for r in rows] == ["nc_matmul"] * 3
    trace = timeline.chrome_trace(report)
    names = [ev["args"]["name"] for ev in trace["traceEvents"] if ev["name"] == "thread_name"]
    assert names == lanes
    json.dumps(trace)


def test_a_program_without_the_tensor_engine_reports_as_before():
    b = Build()
    t = b.tile((128, 64), F32)
    b.emit(TensorScalar(t, t, "add", 1.0))
    report = cost.program_cost(b.finish())
    assert set(report.instructions) == {"vector", "gpsimd", "scalar", "dma"}
    assert set(report.cycles) == {"vector", "gpsimd", "scalar"}
    assert "tensor" not in timeline.lanes(report) and "tensor" not in str(report)

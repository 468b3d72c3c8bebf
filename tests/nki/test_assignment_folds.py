"""How results reach the tiles a kernel names: casting DMAs, assignments into another dtype, in-place updates,
``psum += nc_matmul(...)`` accumulation, masked-out statements, and the platform a kernel is compiled for.

Each kernel here is our own, small, with numpy as the oracle.
"""

import ml_dtypes
import numpy as np
import pytest

from resize_kernels.errors import InvalidValueError
from resize_kernels.nki import classic as nki
import resize_kernels.nki as rnki

nl, nisa = nki.language, nki.isa


def opcodes(program) -> list:
    return [inst.opcode for inst in program.instructions]


def test_a_dma_between_two_dtypes_casts_through_float32():
    """"Casting ... is performed by first casting the source type to FP32, before finally casting to the
    destination type" (Introduction to DMA with NKI): round to nearest even, integers saturate."""
    rl, risa = rnki.language, rnki.isa

    @rnki.jit
    def cast(x):
        out_bf16 = rl.ndarray(x.shape, dtype=rl.bfloat16, buffer=rl.shared_hbm)
        out_i8 = rl.ndarray(x.shape, dtype=rl.int8, buffer=rl.shared_hbm)
        t = rl.ndarray(x.shape, dtype=rl.bfloat16, buffer=rl.sbuf)
        risa.dma_copy(dst=t, src=x)
        risa.dma_copy(dst=out_bf16, src=t)
        risa.dma_copy(dst=out_i8, src=x)
        return out_bf16, out_i8

    x = np.array([[1 + 2 ** -8, 1 + 3 * 2 ** -8, 300.7, -1.5, -2.5, -1000.0]], np.float32)
    program = rnki.trace(cast, x)
    assert opcodes(program) == ["dma_copy"] * 3
    got_bf16, got_i8 = rnki.simulate(cast)(x)
    np.testing.assert_array_equal(got_bf16, x.astype(ml_dtypes.bfloat16))
    np.testing.assert_array_equal(got_i8, np.array([[1, 1, 127, -2, -2, -128]], np.int8))


def test_load_with_a_dtype_is_one_casting_dma():
    @nki.jit
    def widen(x):
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(x, dtype=nl.float32))
        return out

    x = (np.arange(128 * 8, dtype=np.float32).reshape(128, 8) / 7).astype(np.float16)
    assert opcodes(nki.trace(widen, x)) == ["dma_copy", "dma_copy"]
    np.testing.assert_array_equal(nki.simulate_kernel(widen, x), x.astype(np.float32))


def test_an_assignment_into_another_dtype_is_the_producer_writing_that_dtype():
    """``act_f32[...] = nisa.activation(op=nl.square, data=f16_tile)``: the engine casts its float32 result to
    the destination's dtype, with no float16 result in between (300**2 overflows float16, not float32)."""
    @nki.jit
    def square(x):
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        act = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        act[...] = nisa.activation(op=nl.square, data=nl.load(x))
        nl.store(out, value=act)
        return out

    x = np.full((4, 8), 300.0, np.float16)
    assert opcodes(nki.trace(square, x)) == ["dma_copy", "activation", "dma_copy"]
    np.testing.assert_array_equal(nki.simulate_kernel(square, x), np.full((4, 8), 90000.0, np.float32))


def test_an_in_place_update_writes_the_tile_it_reads():
    @nki.jit
    def scale(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        s = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        s[...] = nl.load(x)
        s[...] = nisa.tensor_scalar(s[...], np.multiply, 3.0, op1=np.add, operand1=1.0)
        nl.store(out, value=s)
        return out

    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    assert opcodes(nki.trace(scale, x)) == ["dma_copy", "tensor_scalar", "dma_copy"]
    np.testing.assert_array_equal(nki.simulate_kernel(scale, x), x * 3 + 1)


def _accumulating(init: str):
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        if init == "zeros":
            res = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.psum)
        else:
            res = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(3):
            res += nisa.nc_matmul(nl.load(a[k]), nl.load(b[k]))
        res += nisa.nc_matmul(nl.load(a[0]), nl.load(b[0]), mask=(k > 5))  # masked out: adds nothing
        nl.store(out, value=nl.copy(res))
        return out
    return kernel


@pytest.mark.parametrize("init", ["zeros", "uninitialized"])
def test_psum_plus_equals_nc_matmul_accumulates_on_the_tensor_engine(init):
    """Classic ``res += nisa.nc_matmul(...)``: the matmuls accumulate into res (no vector-engine add); on a tile
    nothing wrote yet the first one overwrites, as an accumulation group starts."""
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (3, 32, 128)).astype(np.float32)
    b = rng.integers(-3, 4, (3, 32, 64)).astype(np.float32)
    kernel = _accumulating(init)
    program = nki.trace(kernel, a, b)
    matmuls = [inst for inst in program.instructions if inst.opcode == "nc_matmul"]
    assert "tensor_tensor" not in opcodes(program) and len(matmuls) == 3
    assert [m.accumulate for m in matmuls] == ([True] * 3 if init == "zeros" else [False, True, True])
    want = sum(a[k].T @ b[k] for k in range(3))
    np.testing.assert_array_equal(nki.simulate_kernel(kernel, a, b), want)


def test_a_masked_out_load_assigned_into_a_tile_leaves_it():
    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        t[...] = nl.load(x)
        for i in nl.affine_range(2):
            t[...] = nl.load(x, mask=(i * 128 > 100), dtype=nl.float32)  # i = 0 only: the second is masked out
        nl.store(out, value=t)
        return out

    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    program = nki.trace(kernel, x)
    assert opcodes(program) == ["dma_copy", "dma_copy", "dma_copy"]
    np.testing.assert_array_equal(nki.simulate_kernel(kernel, x), x)


def test_the_environment_names_the_platform_as_nki_reads_it(monkeypatch):
    """NEURON_PLATFORM_TARGET_OVERRIDE sets the target a kernel without platform_target compiles for: its SBUF,
    nisa.get_nc_version() and the cost model ``nki.benchmark`` reports."""
    seen = []

    def kernel(x):
        seen.append(nisa.get_nc_version())
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(x))
        return out

    x = np.ones((128, 8), np.float32)
    bench = nki.benchmark(nki.jit(kernel))
    bench(x)
    assert bench.benchmark_result.target == "trn1" and seen[-1] == nisa.nc_version.gen2
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    bench(x)
    assert bench.benchmark_result.target == "trn2" and seen[-1] == nisa.nc_version.gen3
    assert bench.benchmark_result.program.sbuf_partition_bytes == 224 * 1024
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn9")
    with pytest.raises(InvalidValueError, match="NEURON_PLATFORM_TARGET_OVERRIDE requires one of .*got 'trn9'"):
        bench(x)

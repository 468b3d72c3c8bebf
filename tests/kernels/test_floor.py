"""floor_nisa_kernel and floor_by_cast compute floor exactly, where a single cast does not."""

import numpy as np
import pytest

from resize_kernels.kernels.helpers import floor_by_cast, floor_nisa_kernel
from resize_kernels.machine.simulator import run
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.nki import trace


def _probe_values() -> np.ndarray:
    """Every integer and half-integer in a wide range, negatives included, and their float32 neighbours."""
    base = np.concatenate([np.arange(-300, 300, 0.5), [2.0**k for k in range(10, 31)], [-(2.0**k) for k in range(10, 31)],
                           np.arange(2**22 - 4, 2**22 + 4, 0.5), np.arange(2**23 - 4, 2**23 + 4, 1.0),
                           np.arange(2**24 - 4, 2**24 + 4, 2.0)]).astype(np.float32)
    return np.unique(np.concatenate([base, np.nextafter(base, np.float32(np.inf)),
                                     np.nextafter(base, np.float32(-np.inf)), [0.0, -0.0, 1e-30, -1e-30]]))


def _floor_program(n_free):
    def kernel(a):
        p, f = a.shape
        a_sb = nl.ndarray((p, f), dtype=nl.float32)
        nisa.dma_copy(dst=a_sb, src=a)
        out_sb = nl.ndarray((p, f), dtype=nl.int32)
        floor_nisa_kernel(a_sb, out_sb, p, f)
        out = nl.ndarray((p, f), dtype=nl.int32, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=out_sb)
        return out
    return kernel


def _pad(values, p=128):
    f = -(-len(values) // p)
    padded = np.zeros(p * f, np.float32)
    padded[:len(values)] = values
    return padded.reshape(p, f)


def test_floor_nisa_kernel_equals_numpy_floor():
    a = _pad(_probe_values())
    kernel = _floor_program(a.shape[1])
    (got,) = run(trace(kernel, a), [a])
    np.testing.assert_array_equal(got, np.floor(a).astype(np.int64))


def test_floor_nisa_kernel_is_eight_vector_instructions():
    a = np.zeros((4, 1), np.float32)
    program = trace(_floor_program(1), a)
    assert [i.opcode for i in program.instructions[1:-1]] == [
        "tensor_copy", "tensor_copy", "tensor_scalar", "tensor_tensor", "tensor_scalar",
        "tensor_tensor", "tensor_tensor", "tensor_tensor"]


def test_a_single_cast_is_not_floor():
    a = _pad(_probe_values())

    def cast_only(a):
        t = nl.ndarray(a.shape, dtype=nl.float32)
        nisa.dma_copy(dst=t, src=a)
        r = nl.ndarray(a.shape, dtype=nl.int32)
        nisa.tensor_copy(dst=r, src=t)
        out = nl.ndarray(a.shape, dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out
    (got,) = run(trace(cast_only, a), [a])
    wrong = got != np.floor(a)
    assert wrong.any()
    assert got[a == 2.5].tolist() == [2] and got[a == 0.5].tolist() == [0] and got[a == 1.5].tolist() == [2]


def _floor_by_cast_program(scale, bias, scratch):
    def kernel(d):
        p, f = d.shape
        d_sb = nl.ndarray((p, f), dtype=nl.int32)
        nisa.dma_copy(dst=d_sb, src=d)
        out_sb = nl.ndarray((p, f), dtype=nl.int32)
        floor_by_cast(out_sb, d_sb, scale, bias, scratch=nl.ndarray((p, f), dtype=nl.float32) if scratch else None)
        out = nl.ndarray((p, f), dtype=nl.int32, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=out_sb)
        return out
    return kernel


@pytest.mark.parametrize("seed", range(6))
def test_floor_by_cast_is_the_float32_floor_of_the_scaled_position(seed):
    """floor(float32(d) * float32(scale) + float32(bias)) bit for bit, for positions and scales as the index graphs
    use them: the in/out ratios of random sides (products landing on integers, halves and just below them) and the
    flat-row maps' 1/out + 0.5/out."""
    rng = np.random.default_rng(seed)
    in_size, out_size = (int(v) for v in rng.integers(1, 5000, 2))
    flat = seed % 2 == 1
    scale, bias = (1.0 / out_size, 0.5 / out_size) if flat else (in_size / out_size, 0.0)
    d = _pad(rng.integers(0, max(out_size, 2) * (64 if flat else 1), 128 * 64)).astype(np.int32)
    (got,) = run(trace(_floor_by_cast_program(scale, bias, seed % 3 == 0), d), [d])
    want = np.floor(d.astype(np.float32) * np.float32(scale) + np.float32(bias))
    np.testing.assert_array_equal(got, want.astype(np.int64))


def test_floor_by_cast_is_four_documented_instructions():
    program = trace(_floor_by_cast_program(0.75, 0.0, False), np.zeros((4, 1), np.int32))
    assert [i.opcode for i in program.instructions[1:-1]] == ["activation", "tensor_copy", "tensor_tensor",
                                                              "tensor_tensor"]
    assert program.instructions[1].func == "copy"  # nl.copy, the identity NKI 0.3.0 documents; not nl.floor

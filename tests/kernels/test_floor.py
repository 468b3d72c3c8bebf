"""floor_nisa_kernel computes floor exactly, where a single cast does not."""

import numpy as np

from resize_kernels.kernels.helpers import floor_nisa_kernel
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

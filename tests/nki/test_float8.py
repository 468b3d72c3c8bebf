"""float8 dtypes and nc_matmul's double_row mode (issue 37: nki-samples' quantized_double_row_matmul).

Conversions are checked bit for bit against ml_dtypes, double_row matmuls against a numpy reference of the
documented arithmetic (Trainium2 architecture guide, "Double FP8 Matmul Performance"). Each kernel here is our
own, small; none is copied from a public kernel.
"""

import ml_dtypes
import numpy as np
import pytest
from conftest import assert_bits_equal

from resize_kernels.machine import dtypes
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

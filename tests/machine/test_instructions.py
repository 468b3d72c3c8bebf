"""Instruction-level behaviour of the simulated NeuronCore, through kernels traced with the nki API."""

import math

import ml_dtypes
import numpy as np
import pytest

from resize_kernels.machine import errors
from resize_kernels.machine.memory import SBUF_PARTITION_BYTES
from resize_kernels.machine.simulator import run
from resize_kernels.nki import TensorSpec, trace
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl

from conftest import assert_bits_equal, bits


def simulate(kernel, *inputs, **kwargs):
    program = trace(kernel, *inputs, **kwargs)
    outs = run(program, list(inputs))
    return outs[0] if len(outs) == 1 else outs


def store(tile, dtype=None):
    """Copy a whole SBUF tile out to a new HBM tensor (the kernel's output)."""
    out = nl.ndarray(tile.shape, dtype=tile.dtype, buffer=nl.shared_hbm, name="out")
    nisa.dma_copy(dst=out, src=tile)
    return out


def test_iota_values():
    def k():
        t = nl.ndarray((5, 2, 3), dtype=nl.int32)
        nisa.iota(t, pattern=[[10, 2], [1, 3]], offset=7, channel_multiplier=100)
        return store(t)
    p, a, b = np.ogrid[:5, :2, :3]
    np.testing.assert_array_equal(simulate(k), 7 + 100 * p + 10 * a + b)


def test_iota_computes_in_float32():
    def k():
        t = nl.ndarray((2, 1), dtype=nl.int32)
        nisa.iota(t, pattern=[[1, 1]], offset=2**24 + 1, channel_multiplier=2)
        return store(t)
    np.testing.assert_array_equal(simulate(k)[:, 0], [2**24, 2**24 + 4])  # 2**24+1 and +3 round to even


def _load(x):
    t = nl.ndarray(x.shape, dtype=x.dtype)
    nisa.dma_copy(dst=t, src=x)
    return t


def test_tensor_scalar_two_ops_and_reverse():
    x = np.array([[1.0, 2.0, -3.0, 8.0]], np.float32)

    def k(x, reverse0, reverse1):
        t = _load(x)
        r = nl.ndarray(x.shape, dtype=nl.float32)
        nisa.tensor_scalar(r, t, op0=nl.subtract, operand0=10.0, reverse0=reverse0,
                           op1=nl.divide, operand1=4.0, reverse1=reverse1)
        return store(r)
    np.testing.assert_array_equal(simulate(k, x, reverse0=False, reverse1=False), (x - 10) / 4)
    np.testing.assert_array_equal(simulate(k, x, reverse0=True, reverse1=False), (10 - x) / 4)
    np.testing.assert_array_equal(simulate(k, x, reverse0=True, reverse1=True), 4 / (10 - x))


def test_tensor_scalar_operand_is_float32():
    x = np.array([[3.0]], np.float32)

    def k(x):
        t = _load(x)
        r = nl.ndarray((1, 1), dtype=nl.float32)
        nisa.tensor_scalar(r, t, op0=nl.multiply, operand0=0.1)  # 0.1 as float32, product in float32
        return store(r)
    assert simulate(k, x)[0, 0] == np.float32(3.0) * np.float32(0.1)


@pytest.mark.parametrize("op, want", [
    (nl.add, lambda a, b: a + b), (nl.subtract, lambda a, b: a - b), (nl.multiply, lambda a, b: a * b),
    (nl.maximum, np.maximum), (nl.minimum, np.minimum),
    (nl.greater, lambda a, b: (a > b) * 1.0), (nl.less_equal, lambda a, b: (a <= b) * 1.0),
    (nl.equal, lambda a, b: (a == b) * 1.0), (nl.logical_xor, lambda a, b: ((a != 0) ^ (b != 0)) * 1.0)])
def test_tensor_tensor(op, want):
    a = np.array([[0.0, 1.0, 2.5, -3.0, 7.0, 0.0]], np.float32)
    b = np.array([[0.0, 2.0, 2.5, 4.0, -1.0, 1.0]], np.float32)

    def k(a, b):
        r = nl.ndarray(a.shape, dtype=nl.float32)
        nisa.tensor_tensor(r, _load(a), _load(b), op=op)
        return store(r)
    np.testing.assert_array_equal(simulate(k, a, b), want(a, b).astype(np.float32))


def test_int_arithmetic_goes_through_float32():
    a = np.array([[2**24 + 1, 7]], np.int32)

    def k(a):
        r = nl.ndarray(a.shape, dtype=nl.int32)
        nisa.tensor_scalar(r, _load(a), op0=nl.add, operand0=0)
        return store(r)
    np.testing.assert_array_equal(simulate(k, a), [[2**24, 7]])


def test_tensor_copy_casts_with_rne_and_saturation():
    x = np.array([[0.5, 1.5, -2.5, 300.0, -300.0, np.nan]], np.float32)

    def k(x, dtype):
        r = nl.ndarray(x.shape, dtype=dtype)
        nisa.tensor_copy(dst=r, src=_load(x))
        return store(r)
    np.testing.assert_array_equal(simulate(k, x, dtype=nl.int8), [[0, 2, -2, 127, -128, 0]])
    np.testing.assert_array_equal(simulate(k, x, dtype=nl.uint8), [[0, 2, 0, 255, 0, 0]])


def test_tensor_copy_same_dtype_is_bit_exact():
    x = np.array([[0x7FC12345, 0xFFC00001, 0x80000000, 0x00000001]], np.uint32).view(np.float32)  # NaNs, -0, subnormal

    def k(x):
        r = nl.ndarray(x.shape, dtype=nl.float32)
        nisa.tensor_copy(dst=r, src=_load(x))
        return store(r)
    assert_bits_equal(simulate(k, x), x)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.float16])
def test_dma_copies_bits(dtype):
    width = np.dtype(dtype).itemsize * 8
    special = [0x7FC12345, 0xFFC00001, 0x80000000, 0x7F800000, 0xFF800000, 0x00000001] if width == 32 else \
        [0x7FC1, 0xFFC3, 0x8000, 0x7F80 if dtype is ml_dtypes.bfloat16 else 0x7C00, 0x0001]
    x = np.array([special], {32: np.uint32, 16: np.uint16}[width]).view(dtype)

    def k(x):
        return store(_load(x))
    assert_bits_equal(simulate(k, x), x)


def test_strided_access_patterns():
    x = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)

    def k(x):
        t = nl.ndarray((3, 2), dtype=nl.float32)
        # rows 0..2 of the 4x6 storage, every other column starting at 1
        nisa.dma_copy(dst=t, src=x.ap(pattern=[[6, 3], [2, 2]], offset=1))
        out = nl.ndarray((2, 3), dtype=nl.float32, buffer=nl.shared_hbm, name="out")
        # transpose on the way out: element (i, j) of the tile goes to out[j, i]
        nisa.dma_copy(dst=out.ap(pattern=[[1, 3], [3, 2]], offset=0), src=t)
        return out
    np.testing.assert_array_equal(simulate(k, x), x[0:3, 1:4:2].T)


def test_indirect_gather():
    x = np.arange(5 * 4, dtype=np.int16).reshape(5, 4)
    idx = np.array([[3], [0], [3], [4]], np.int32)

    def k(x, idx):
        i = _load(idx)
        t = nl.ndarray((4, 3), dtype=nl.int16)
        nisa.dma_copy(dst=t, src=x.ap(pattern=[[999, 4], [1, 3]], offset=1, vector_offset=i, indirect_dim=0))
        return store(t)
    np.testing.assert_array_equal(simulate(k, x, idx), x[idx[:, 0], 1:4])


def test_indirect_gather_general_pattern():
    x = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    idx = np.array([[3], [1]], np.int32)

    def k(x, idx):
        t = nl.ndarray((2, 2, 2), dtype=nl.float32)
        nisa.dma_copy(dst=t.ap(pattern=[[4, 2], [2, 2], [1, 2]]),
                      src=x.ap(pattern=[[0, 2], [9, 2], [3, 2]], offset=0, vector_offset=_load(idx), indirect_dim=0))
        return store(t)
    want = np.stack([x.reshape(-1)[r * 8 + np.array([[0, 3], [9, 12]])] for r in idx[:, 0]])
    np.testing.assert_array_equal(simulate(k, x, idx), want)


def test_indirect_out_of_bounds_names_instruction_partition_and_address():
    x = np.zeros((5, 4), np.float32)
    idx = np.array([[1], [5], [0]], np.int32)

    def k(x, idx):
        i = _load(idx)
        t = nl.ndarray((3, 4), dtype=nl.float32)
        nisa.dma_copy(dst=t, src=x.ap(pattern=[[4, 3], [1, 4]], vector_offset=i, indirect_dim=0))
        return store(t)
    with pytest.raises(errors.OutOfBoundsError, match=r"instruction 1 .*partition 1 reads elements 20\.\.23 "):
        simulate(k, x, idx)


def test_negative_index_is_out_of_bounds():
    x = np.zeros((5, 4), np.float32)
    idx = np.array([[-1]], np.int32)

    def k(x, idx):
        t = nl.ndarray((1, 4), dtype=nl.float32)
        nisa.dma_copy(dst=t, src=x.ap(pattern=[[4, 1], [1, 4]], vector_offset=_load(idx), indirect_dim=0))
        return store(t)
    with pytest.raises(errors.OutOfBoundsError, match=r"partition 0 reads elements -4\.\.-1 "):
        simulate(k, x, idx)


def test_static_out_of_bounds_fails_at_trace():
    def k(x):
        t = nl.ndarray((2, 4), dtype=nl.float32)
        nisa.dma_copy(dst=t, src=x.ap(pattern=[[4, 2], [1, 4]], offset=13))
        return store(t)
    with pytest.raises(errors.OutOfBoundsError, match=r"instruction 0 \(dma_copy\).*element 20"):
        trace(k, TensorSpec((4, 5), np.float32))


def test_sbuf_capacity_error_names_tile_and_bytes():
    def k():
        big = nl.ndarray((128, 40000), dtype=nl.float32, name="big")  # 160000 bytes per partition: fits
        too_much = nl.ndarray((128, 10000), dtype=nl.float32, name="too_much")  # 40000 more: only when big is dead
        nisa.memset(big, 0.0)
        nisa.memset(too_much, 1.0)
        nl.add(big[:, 0:10000], too_much)  # NKI gives tiles storage while they live: big is, at the memset
    with pytest.raises(errors.SbufCapacityError, match=r"requires 200,000 bytes .*'too_much.0'.*other tiles in use then: 160,000\), got 196,608"):
        trace(k)
    # the 224 KiB SBUF of trn2 holds both
    trace(lambda: [nl.ndarray((128, 40000), nl.float32), nl.ndarray((128, 10000), nl.float32)] and None
          or nl.ndarray((1,), nl.float32, buffer=nl.shared_hbm),
          sbuf_partition_bytes=SBUF_PARTITION_BYTES["trn2"])


@pytest.mark.parametrize("loop, buffers", [(nl.affine_range, nl.ROTATING_BUFFERS), (nl.sequential_range, 1),
                                           (nl.static_range, 1)])
def test_loops_free_tiles_of_each_iteration_into_their_buffers(loop, buffers):
    addresses = []

    def k():
        for _ in loop(100):
            addresses.append(nl.ndarray((128, 10000), dtype=nl.float32).storage.address)  # 40 KB, 4 MB in all
        return nl.ndarray((1,), nl.float32, buffer=nl.shared_hbm)
    program = trace(k)
    assert program.sbuf_high_water == 40000 * buffers  # affine_range rotates double buffers; the others reuse one
    assert addresses[:4] == [40000 * (n % buffers) for n in range(4)]


def test_affine_range_rotates_only_as_many_buffers_as_fit():
    def k():
        for _ in nl.affine_range(4):
            nl.ndarray((128, 30000), dtype=nl.float32)  # 120 KB: two do not fit in 192 KiB
        return nl.ndarray((1,), nl.float32, buffer=nl.shared_hbm)
    assert trace(k).sbuf_high_water == 120000


def test_poison_shows_on_uninitialised_read():
    def k():
        t = nl.ndarray((2, 3), dtype=nl.float32)
        u = nl.ndarray((2, 3), dtype=nl.int32)
        return store(t), store(u)
    f, i = simulate(k)
    assert np.isnan(f).all() and (bits(f) == 0xFFFFFFFF).all()
    assert (i == -1).all()


def test_unwritten_output_is_poisoned():
    def k():
        return nl.ndarray((3,), nl.bfloat16, buffer=nl.shared_hbm)
    assert np.isnan(simulate(k).astype(np.float32)).all()


def test_engine_shape_mismatch_is_an_error():
    def k():
        a = nl.ndarray((4, 2), nl.float32)
        b = nl.ndarray((4, 3), nl.float32)
        nisa.tensor_copy(dst=a, src=b)
    with pytest.raises(ValueError, match=r"instruction 0 \(tensor_copy\): tensor_copy requires operands of the destination's shape"):
        trace(k)


def test_a_dma_casts_but_an_accumulating_dma_does_not():
    """A plain DMA casts between dtypes (NKI DMA overview); the read-modify-write one adds in one dtype."""
    def k(x):
        out = nl.ndarray(x.shape, nl.float16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=x)
        return out
    assert trace(k, TensorSpec((2, 2), np.float32)).instructions[0].dst.dtype == np.float16

    def rmw(x):
        out = nl.ndarray(x.shape, nl.float16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=x, dst_rmw_op=nl.add)
        return out
    with pytest.raises(ValueError, match="dma_copy with dst_rmw_op moves bits and cannot cast"):
        trace(rmw, TensorSpec((2, 2), np.float32))


def test_program_listing_and_summary():
    def k(x):
        return store(_load(x))
    program = trace(k, TensorSpec((3, 5), np.float32))
    text = str(program)
    assert "input  x: f32[3,5]" in text and "dma_copy" in text and len(program.instructions) == 2
    assert "2 instructions" in program.summary() and f"{2 * 3 * 5 * 4:,} bytes" in program.summary()
    assert math.prod(program.inputs[0].shape) == 15

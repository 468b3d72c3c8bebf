"""Direct allocation (ncc.sbuf/psum.alloc and mod_alloc): where each block goes, as the nki.compiler pages
and the NKI Direct Allocation Developer Guide state it."""

import pytest

from resize_kernels.errors import InvalidValueError, NotSimulatedError
from resize_kernels.nki import allocation
from resize_kernels.nki.classic import compiler as ncc

SBUF = 192 * 1024


def test_sbuf_mod_alloc_is_the_pages_double_buffering_table():
    buffer = ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,))  # (4, par_dim(128), 512) bfloat16
    assert [buffer.offset((i,), 128, 1024, SBUF) for i in range(4)] == [0, 1024, 0, 1024]


def test_sbuf_mod_alloc_without_counts_puts_every_block_at_the_base():
    buffer = ncc.sbuf.mod_alloc(base_addr=260)
    assert {buffer.offset((i, j), 128, 64, SBUF) for i in range(3) for j in range(2)} == {260}
    assert buffer.offset((), 128, 64, SBUF) == 260  # a tensor without block dimensions


def test_sbuf_mod_alloc_linearises_block_indices_row_major():
    buffer = ncc.sbuf.mod_alloc(base_addr=4096, num_free_tiles=(2, 3))
    assert buffer.offset((1, 2), 128, 100, SBUF) == 4096 + (1 * 3 + 2) * 100
    assert buffer.offset((3, 4), 128, 100, SBUF) == 4096 + (1 * 3 + 1) * 100  # (3 % 2, 4 % 3)


def test_psum_mod_alloc_rotates_banks():
    buffer = ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2,))
    assert [buffer.offset((i,), 128, 2048, SBUF) // 2048 for i in range(4)] == [0, 1, 0, 1]
    buffer = ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2, 4))
    assert buffer.offset((1, 6), 128, 2048, SBUF) // 2048 == 1 * 4 + 2


def test_the_function_is_called_by_keyword_so_partials_work():
    """allocated_attention's ``ncc.psum.alloc(functools.partial(psum_addr, bank_map=...))`` with
    ``psum_addr(bank_map, idx, pdim_size, fdim_size)``."""
    import functools

    def psum_addr(bank_map, idx, pdim_size, fdim_size):
        return (bank_map[idx], 0, 0)
    buffer = ncc.psum.alloc(functools.partial(psum_addr, bank_map={(0,): 2, (1,): 7}))
    assert [buffer.offset((i,), 128, 512, SBUF) for i in range(2)] == [2 * 2048, 7 * 2048]


def test_alloc_takes_the_kernels_function():
    buffer = ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: (0, idx[0] * fdim_size))
    assert [buffer.offset((i,), 128, 1024, SBUF) for i in range(4)] == [0, 1024, 2048, 3072]
    banks = {(0,): 1, (1,): 5}
    buffer = ncc.psum.alloc(lambda idx, pdim_size, fdim_size: (banks[idx], 0, 0))
    assert [buffer.offset((i,), 128, 512, SBUF) for i in range(2)] == [1 * 2048, 5 * 2048]


@pytest.mark.parametrize("buffer, args, message", [
    (ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: (0, -64)), ((0,), 128, 64), "0 <= byte_addr"),
    (ncc.sbuf.mod_alloc(base_addr=SBUF - 16 * 1024), ((), 128, 64), "less the compiler's 16384"),
    (ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: 0), ((0,), 128, 64), "must return \\(start_partition, byte_addr\\)"),
    (ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: (64, 0)), ((0,), 128, 64), "must start at one of \\(0,\\)"),
    (ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: (16, 0)), ((0,), 32, 64), "one of \\(0, 32, 64, 96\\)"),
    (ncc.psum.mod_alloc(base_bank=7, num_bank_tiles=(2,)), ((1,), 128, 2048), "banks 0..7"),
    (ncc.psum.mod_alloc(base_bank=0), ((), 128, 4096), "at most 2048 bytes"),
    (ncc.psum.alloc(lambda idx, pdim_size, fdim_size: (0, 0, 512)), ((0,), 128, 512), "both to be 0"),
    (ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)), ((0, 1), 128, 64), "one per block dimension"),
])
def test_bad_placements_are_clear_errors(buffer, args, message):
    with pytest.raises(InvalidValueError, match=message):
        buffer.offset(*args, SBUF)


def test_a_tile_past_partition_0_is_not_simulated():
    with pytest.raises(NotSimulatedError, match="start it at partition 0"):
        ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: (32, 0)).offset((0,), 32, 64, SBUF)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(InvalidValueError, match="requires a callable"):
        ncc.sbuf.alloc(3)
    with pytest.raises(InvalidValueError, match="tuple of positive integers"):
        ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=2)
    with pytest.raises(NotSimulatedError, match="ncc.force_auto_alloc is not simulated"):
        ncc.force_auto_alloc  # noqa: B018


def test_auto_alloc_is_the_plain_buffer():
    assert ncc.sbuf.auto_alloc() == "sbuf" and ncc.psum.auto_alloc() == "psum"
    assert allocation.COMPILER_RESERVED_SBUF_BYTES == 16 * 1024


# -- kernels with direct allocation (classic dialect, as the allocated nki-samples kernels write them) -----------

import numpy as np  # noqa: E402

from resize_kernels.machine.simulator import run  # noqa: E402
from resize_kernels.nki import trace  # noqa: E402
from resize_kernels.nki.classic import isa as nisa  # noqa: E402
from resize_kernels.nki.classic import language as nl  # noqa: E402


def simulate(kernel, *arrays):
    program = trace(kernel, *arrays)
    return program, run(program, list(arrays))[0]


def double_buffered_exp(x):
    """(4 * 128, 512) float32: each 128-row block loaded into one of two physical tiles, exp, stored."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((4, nl.par_dim(128), 512), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0,
                                                                                       num_free_tiles=(2,)))
    e = nl.ndarray((4, nl.par_dim(128), 512), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=4096,
                                                                                       num_free_tiles=(2,)))
    for i in nl.affine_range(4):
        t[i] = nl.load(x[i * 128:(i + 1) * 128, :])
        e[i] = nl.exp(t[i])
        nl.store(out[i * 128:(i + 1) * 128, :], value=e[i])
    return out


def test_blocks_live_where_mod_alloc_puts_them_and_compute_right():
    x = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    program, got = simulate(double_buffered_exp, x)
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)
    loads = [inst for inst in program.instructions if inst.dst.is_sbuf and inst.opcode == "dma_copy"]
    assert [inst.dst.tensor.address for inst in loads] == [0, 2048, 0, 2048]  # 512 float32 = 2048 bytes


def matmul_through_psum(a_t, b):
    """a_t (128, 128), b (128, 512) float32: a_t.T @ b in two 256-column halves, PSUM banks 0 and 1."""
    out = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.shared_hbm)
    sa = nl.ndarray((nl.par_dim(128), 128), dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    sb = nl.ndarray((nl.par_dim(128), 512), dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=512))
    ps = nl.ndarray((2, nl.par_dim(128), 256), dtype=np.float32, buffer=ncc.psum.mod_alloc(base_bank=0,
                                                                                          num_bank_tiles=(2,)))
    res = nl.ndarray((nl.par_dim(128), 512), dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=4096))
    sa[...] = nl.load(a_t)
    sb[...] = nl.load(b)
    for h in nl.affine_range(2):
        ps[h] = nisa.nc_matmul(sa, sb[:, h * 256:(h + 1) * 256])
        res[:, h * 256:(h + 1) * 256] = nl.copy(ps[h])
    nl.store(out, value=res)
    return out


def test_psum_blocks_take_their_banks():
    rng = np.random.default_rng(1)
    a_t, b = rng.standard_normal((128, 128)).astype(np.float32), rng.standard_normal((128, 512)).astype(np.float32)
    program, got = simulate(matmul_through_psum, a_t, b)
    np.testing.assert_allclose(got, a_t.T.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    matmuls = [inst for inst in program.instructions if inst.opcode == "nc_matmul"]
    sbuf_bytes = program.sbuf_partition_bytes
    assert [inst.dst.tensor.address - sbuf_bytes for inst in matmuls] == [0, 2048]


def test_an_instruction_result_left_to_the_allocator_is_refused():
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((nl.par_dim(128), 64), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
        t[...] = nl.load(x)
        nl.store(out, value=nl.exp(t))  # nl.exp's result: a tensor the kernel did not allocate
        return out
    with pytest.raises(InvalidValueError, match="direct allocation"):
        trace(kernel, np.zeros((128, 64), np.float32))


def test_blocks_alive_at_once_on_one_physical_tile_are_a_lifetime_conflict():
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((4, nl.par_dim(128), 64), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0,
                                                                                         num_free_tiles=(2,)))
        e = nl.ndarray((4, nl.par_dim(128), 64), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=1024,
                                                                                         num_free_tiles=(4,)))
        for i in nl.affine_range(4):
            t[i] = nl.load(x[i * 128:(i + 1) * 128, :])
        for i in nl.affine_range(4):  # all four loaded blocks are needed here: two physical tiles hold two
            e[i] = nl.exp(t[i])
            nl.store(out[i * 128:(i + 1) * 128, :], value=e[i])
        return out
    with pytest.raises(InvalidValueError, match="lifetime conflict"):
        trace(kernel, np.zeros((512, 64), np.float32))


def test_ndarray_address_places_one_tile_where_nki_0_3_0_says():
    """nl.ndarray(..., address=(partition_offset, free_offset)): an SBUF tile at that byte, a PSUM tile at a bank's
    start spanning the banks it needs; anything else refused with what to change."""
    import numpy as np

    from resize_kernels.errors import InvalidTypeError
    from resize_kernels.nki import language as nl
    from resize_kernels.nki.tracer import trace

    from resize_kernels.nki import isa as nisa

    def placed(address, buffer=nl.sbuf):
        seen = {}

        def k(x):  # every tile placed directly, as NKI requires of a kernel that places any
            seen["tile"] = t = nl.ndarray((128, 640), dtype=nl.float32, buffer=buffer, address=address)
            nisa.memset(dst=t, value=0.0)
            staged = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, address=(0, 100_000))
            out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=staged, src=x)
            nisa.dma_copy(dst=out, src=staged)
            return out
        program = trace(k, np.zeros((4, 4), np.float32))
        return seen["tile"].storage.address - (program.sbuf_partition_bytes if buffer == nl.psum else 0)

    assert placed((0, 4096)) == 4096
    assert placed((0, 2048), nl.psum) == 2048  # 2,560 bytes: two banks from bank 1
    with pytest.raises(InvalidValueError, match="a free_offset at a bank's start"):
        placed((0, 100), nl.psum)
    with pytest.raises(InvalidTypeError, match=r"address=\(partition_offset, free_offset\), two integers"):
        placed(4096)
    with pytest.raises(InvalidValueError, match="one SBUF or PSUM tile"):
        placed((0, 0), nl.shared_hbm)
    with pytest.raises(InvalidValueError, match="at most 2048 bytes per partition from bank 7"):
        placed((0, 7 * 2048), nl.psum)

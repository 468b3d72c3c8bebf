"""Allocation past capacity: blocks live in trace order beyond SBUF are spilled to HBM and reloaded by DMAs
the Program shows (``_spill_*`` tensors, ``_reload_*`` tiles), bit-exactly; tiles of a plain Python loop get
storage while they live; what cannot fit (one instruction's operands, PSUM) is refused saying what to change."""

import numpy as np
import pytest

from resize_kernels.machine.errors import SbufCapacityError
from resize_kernels.machine.memory import (
    DEFAULT_SBUF_PARTITION_BYTES,
    OVERWRITES,
    READS,
    Lifetime,
    plan_spills,
)
from resize_kernels.machine.simulator import run
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.nki import trace

F32 = np.float32
P, F = 2, 4096  # a block: 16 KiB per partition; 12 fill the 192 KiB of a trn1 partition


def two_loops(blocks: int):
    """Blocks written in one loop and read, two at a time in another order, in a later one."""
    def kernel(a):
        out = nl.ndarray((blocks, P, F), dtype=nl.float32, buffer=nl.shared_hbm, name="out")
        t = nl.ndarray((blocks, nl.par_dim(P), F), dtype=nl.float32, buffer=nl.sbuf, name="t")
        i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
        for i in nl.affine_range(blocks):
            t[i, i_p, i_f] = nl.load(a[i, i_p, i_f])
        for i in nl.affine_range(blocks):
            nl.store(out[i, i_p, i_f], value=nl.add(t[i, i_p, i_f], t[blocks - 1 - i, i_p, i_f]))
        return out
    return kernel


def data(*shape):
    return np.random.default_rng(7).standard_normal(shape).astype(F32)


def spill_dmas(program):
    stores = [d for d in program.dmas() if d.dst.tensor.name.startswith("_spill_")]
    reloads = [d for d in program.dmas() if d.dst.tensor.name.startswith("_reload_")]
    return stores, reloads


def test_blocks_over_capacity_are_spilled_and_reloaded_bit_exactly():
    x = data(16, P, F)  # 16 blocks of 16 KiB live at once in trace order: 256 KiB
    program = trace(two_loops(16), x)
    np.testing.assert_array_equal(run(program, [x])[0], x + x[::-1])
    stores, reloads = spill_dmas(program)
    assert stores and reloads
    assert {d.src.tensor.name for d in reloads} <= {t.name for t in program.internal}  # from the spill tensors
    assert all(d.src.size == d.dst.size == P * F for d in stores + reloads)  # whole blocks
    assert program.sbuf_high_water <= DEFAULT_SBUF_PARTITION_BYTES
    # each reload comes before the instruction that reads its tile, after the store of what it reloads
    position = {id(inst): n for n, inst in enumerate(program.instructions)}
    for reload in reloads:
        tile, spill = reload.dst.tensor, reload.src.tensor
        readers = [n for n, inst in enumerate(program.instructions) if any(ap.tensor is tile for ap in inst.sources())]
        stored = [position[id(d)] for d in stores if d.dst.tensor is spill]
        assert stored and max(stored) < position[id(reload)] < min(readers)


def test_a_kernel_within_capacity_has_no_spills():
    x = data(8, P, F)  # 128 KiB
    program = trace(two_loops(8), x)
    np.testing.assert_array_equal(run(program, [x])[0], x + x[::-1])
    assert spill_dmas(program) == ([], []) and not program.internal


def test_a_partly_written_block_is_spilled_whole_and_read_back_where_written():
    blocks = 14

    def kernel(a):
        out = nl.ndarray((blocks, P, F // 2), dtype=nl.float32, buffer=nl.shared_hbm, name="out")
        t = nl.ndarray((blocks, nl.par_dim(P), F), dtype=nl.float32, buffer=nl.sbuf, name="t")
        i_p, i_h = nl.arange(P)[:, None], nl.arange(F // 2)[None, :]
        for i in nl.affine_range(blocks):
            t[i, i_p, i_h] = nl.load(a[i, i_p, i_h])  # the first half only
        for i in nl.affine_range(blocks):
            nl.store(out[i, i_p, i_h], value=nl.multiply(t[i, i_p, i_h], 3.0))
        return out

    x = data(blocks, P, F // 2)
    program = trace(kernel, x)
    np.testing.assert_array_equal(run(program, [x])[0], x * F32(3.0))
    assert all(spill_dmas(program))


def test_a_block_overwritten_whole_is_not_reloaded():
    blocks = 14

    def kernel(a):
        out = nl.ndarray((blocks, P, F), dtype=nl.float32, buffer=nl.shared_hbm, name="out")
        t = nl.ndarray((blocks, nl.par_dim(P), F), dtype=nl.float32, buffer=nl.sbuf, name="t")
        i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
        for i in nl.affine_range(blocks):
            nisa.memset(t[i, i_p, i_f], 5.0)
        for i in nl.affine_range(blocks):  # a fresh value for every block: what it held is dead
            t[i, i_p, i_f] = nl.load(a[i, i_p, i_f])
            nl.store(out[i, i_p, i_f], value=t[i, i_p, i_f])
        return out

    x = data(blocks, P, F)
    program = trace(kernel, x)
    np.testing.assert_array_equal(run(program, [x])[0], x)
    assert spill_dmas(program) == ([], [])  # the memsets' values are never read: nothing to keep


def test_one_instruction_needing_more_than_capacity_says_what_to_change():
    def kernel(a):
        t = nl.ndarray((2, nl.par_dim(P), 25_000), dtype=nl.float32, buffer=nl.sbuf, name="wide")  # 100 KB each
        for i in nl.affine_range(2):
            nisa.memset(t[i], 1.0)
        nl.add(t[0], t[1])  # both blocks and the result: 300 KB at once
        return nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)

    with pytest.raises(SbufCapacityError, match=r"instruction \d+ \(tensor_tensor.* requires 300,096 bytes .*'wide.0\[0\]'.*got "
                                                r"196,608 even with every other block spilled.*split the blocks' free "
                                                r"dimension"):
        trace(kernel, data(1, 1))


def test_psum_blocks_over_capacity_are_refused_as_psum_cannot_be_spilled():
    def kernel(a):
        acc = nl.ndarray((9, nl.par_dim(P), 512), dtype=nl.float32, buffer=nl.psum)  # 9 banks of 2 KiB: 8 exist
        for i in nl.affine_range(9):
            nisa.memset(acc[i], 1.0)
        out = nl.ndarray((9, P, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        for i in nl.affine_range(9):
            nl.store(out[i], value=nl.copy(acc[i]))
        return out

    with pytest.raises(SbufCapacityError, match=r"PSUM blocks need 18,432 bytes.*cannot be spilled to HBM"):
        trace(kernel, data(1, 1))


def test_tiles_of_a_plain_python_loop_get_storage_while_they_live():
    """A Python ``range`` loop frees nothing on the stack; NKI gives each tile storage from its first write to
    its last use, so twenty iterations of 32 KiB tiles fit in 192 KiB."""
    def kernel(a):
        out = nl.ndarray((20, P, 8192), dtype=nl.float32, buffer=nl.shared_hbm)
        for i in range(20):
            t = nl.load(a[i])
            nl.store(out[i], value=nl.multiply(t, 2.0))
        return out

    x = data(20, P, 8192)
    program = trace(kernel, x)
    np.testing.assert_array_equal(run(program, [x])[0], x * F32(2.0))
    assert spill_dmas(program) == ([], []) and program.sbuf_high_water <= DEFAULT_SBUF_PARTITION_BYTES


def test_plan_spills_evicts_the_block_used_furthest_ahead():
    # three blocks of 10 bytes, room for two: a (0, 3), b (1, 2), c written at 2 and read at 4
    uses = [[(0, OVERWRITES), (3, READS)], [(1, OVERWRITES), (2, READS)], [(2, OVERWRITES), (4, READS)]]
    cuts = plan_spills(20, [], uses, [10, 10, 10])
    assert cuts == [[1], [], []]  # a (next used at 3) goes at 2 rather than b (used at 2); it comes back at 3
    fixed = [Lifetime(15, 0, 4, 0)]
    with pytest.raises(SbufCapacityError, match=r"instruction 2 requires 35 bytes .*got 30"):
        plan_spills(30, fixed, uses, [10, 10, 10])

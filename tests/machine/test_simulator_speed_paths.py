"""The simulator's speed paths agree bit for bit with the general semantics they stand in for.

From a Program's third run on, gathers copy rows in slices (``_row_copies``),
large copies with a short inner axis are split along it, engine steps on small
tiles are memoized, copies between tiles read through a second mapping of the
SBUF, and only what the Program can read before writing is poisoned
(``_poison_plan``). Gathers remember their last checked index in every run. An output's storage is used again
once nobody holds the array a run returned.
"""

import multiprocessing
import os

import ml_dtypes
import numpy as np
import pytest

import resize_kernels as rk
from resize_kernels import api
from resize_kernels.machine import errors, simulator
from resize_kernels.machine.access import AccessPattern
from resize_kernels.machine.memory import MAX_POISON_RUNS, POISON_BYTE, HbmTensor, SbufTile, aliased_storage, poisoner
from resize_kernels.machine.simulator import (Executable, _copy_parts, _may_overlap, _row_copies, _short_inner_axis,
                                              run)
from resize_kernels.nki import trace
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl

from conftest import assert_bits_equal, bits, random_data

#: Bit patterns that a float round trip could change: NaN payloads (quiet and signalling), -0.0, subnormals, inf.
SPECIAL_BITS = {np.dtype(np.float32): [0x7FC12345, 0xFFC00001, 0x7F800001, 0x80000000, 0x00000001, 0x807FFFFF,
                                       0xFF800000],
                np.dtype(np.float16): [0x7E01, 0xFC01, 0x7C01, 0x8000, 0x0001, 0x83FF, 0xFC00],
                np.dtype(ml_dtypes.bfloat16): [0x7FC1, 0xFF81, 0x7F81, 0x8000, 0x0001, 0x807F, 0xFF80]}


def data(rng, shape, dtype):
    """Random bits, with the special float patterns sprinkled in."""
    x = random_data(rng, shape, dtype)
    special = SPECIAL_BITS.get(np.dtype(dtype))
    if special:
        flat = bits(x).reshape(-1).copy()
        flat[rng.integers(0, flat.size, 4 * len(special))] = np.resize(special, 4 * len(special))
        x = flat.view(dtype).reshape(shape)
    return x


def _load(x):
    t = nl.ndarray(x.shape, dtype=x.dtype)
    nisa.dma_copy(dst=t, src=x)
    return t


@pytest.fixture(autouse=True, params=["as one gather", "instruction by instruction"])
def repeated_runs(request, monkeypatch):
    """Every test twice: a Program that only moves bits runs repeatedly as one gather (copy_plan), and, with
    that off, on the instruction speed paths (which the other Programs take)."""
    if request.param == "instruction by instruction":
        monkeypatch.setattr(simulator._Gather, "of", classmethod(lambda cls, program: None))


def simulate(kernel, x):
    """The output of a first run (plain paths) and of later runs (speed paths) of one Executable, which agree."""
    ex = Executable(trace(kernel, x))
    first, *later = [ex.run([x])[0] for _ in range(5)]
    for out in later:
        assert_bits_equal(out, first)
    return first


def store(tile, name="out"):
    out = nl.ndarray(tile.shape, dtype=tile.dtype, buffer=nl.shared_hbm, name=name)
    nisa.dma_copy(dst=out, src=tile)
    return out


# -- gathers ------------------------------------------------------------------------------------

ROW_MAPS = {
    "identity": np.arange(128), "upsample 2x": np.arange(128) // 2, "0.7x down": (np.arange(128) * 10) // 7,
    "0.7x down, two batches": np.r_[(np.arange(70) * 10) // 7, 100 + (np.arange(58) * 10) // 7],
    "59 from 30": np.floor(np.arange(59, dtype=np.float32) * np.float32(30 / 59)).astype(int),
    "backwards": np.arange(40)[::-1], "one row": np.zeros(17, int), "single": np.array([5]),
    "random": np.random.default_rng(3).integers(0, 90, 128), "stairs": np.repeat(np.arange(0, 60, 3), 5)}


@pytest.mark.parametrize("name", ROW_MAPS)
def test_row_copies_are_the_fancy_index(name):
    idx = ROW_MAPS[name].astype(np.intp)
    rows = np.random.default_rng(0).standard_normal((int(idx.max()) + 1, 3, 5))
    out = np.full((len(idx), 3, 5), np.nan)
    parts = _row_copies(idx)
    for part, source in parts:
        out[part] = rows[source]
    assert_bits_equal(out, rows[idx])
    assert len(parts) <= len(idx)


def test_row_copies_find_periodic_maps():
    assert len(_row_copies(ROW_MAPS["0.7x down"].astype(np.intp))) == 7  # 10 source rows for every 7
    assert len(_row_copies(ROW_MAPS["upsample 2x"].astype(np.intp))) == 2
    assert len(_row_copies(ROW_MAPS["identity"].astype(np.intp))) == 1


def gather_kernel(pattern, offset, tile_shape, to_hbm=False):
    """A gather from x of shape (rows, row size) (the row size of the gather) into a tile, or straight to HBM."""
    def k(x, idx):
        src = x.ap(pattern=pattern, offset=offset, vector_offset=_load(idx), indirect_dim=0)
        if to_hbm:
            out = nl.ndarray(tile_shape, dtype=x.dtype, buffer=nl.shared_hbm, name="out")
            nisa.dma_copy(dst=out, src=src)
            return out
        t = nl.ndarray(tile_shape, dtype=x.dtype)
        nisa.dma_copy(dst=t, src=src)
        return store(t)
    return k


def gathered(x, idx, pattern, offset, row_size):
    """The general semantics: partition i reads flat elements offset + idx[i] * row_size + free offsets."""
    free = np.zeros(1, np.int64)
    for step, num in pattern[1:]:
        free = (free[:, None] + step * np.arange(num)).reshape(-1)
    addr = offset + idx[:, :1].astype(np.int64) * row_size + free[None, :]
    return x.reshape(-1)[addr].reshape(len(idx), *[n for _, n in pattern[1:]])


# (pattern, offset, row size, rows of the input, to HBM): every partition gathers the free pairs from its row's start
GATHERS = {
    "large contiguous runs (slice copies)": ([[0, 1], [64, 25], [1, 64]], 96, 6400, 60, False),
    "rows of rows (slice copies)": ([[0, 1], [4000, 2], [1, 2000]], 0, 4000, 40, False),
    "small rows (one fancy index)": ([[0, 1], [1, 24]], 5, 40, 60, False),
    "strided small rows": ([[0, 1], [3, 4], [1, 2]], 1, 30, 50, False),
    "whole rows to HBM (np.take)": ([[0, 1], [1, 40]], 0, 40, 40, True),
    "large whole rows to HBM": ([[0, 1], [1, 3000]], 0, 3000, 30, True),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.uint8])
@pytest.mark.parametrize("case", GATHERS)
def test_gathers_match_the_general_addressing_over_repeated_runs(case, dtype):
    pattern, offset, row_size, n_rows, to_hbm = GATHERS[case]
    rng = np.random.default_rng(7)
    maps = [ROW_MAPS["0.7x down"][:20], ROW_MAPS["upsample 2x"][:20], rng.integers(0, 20, 20),
            ROW_MAPS["0.7x down"][:20], np.full(20, 3)]
    pattern = [[0, 20], *pattern[1:]]
    x = data(rng, (n_rows, row_size), dtype)
    idx0 = maps[0].astype(np.int32)[:, None]
    tile_shape = (20, *[n for _, n in pattern[1:]])
    ex = Executable(trace(gather_kernel(pattern, offset, tile_shape, to_hbm), x, idx0))
    for row_map in maps:  # each run with its own index, and some repeated (the remembered index)
        idx = row_map.astype(np.int32)[:, None]
        assert_bits_equal(ex.run([x, idx])[0], gathered(x, idx, pattern, offset, row_size))
        assert_bits_equal(run(ex.program, [x, idx])[0], gathered(x, idx, pattern, offset, row_size))


def test_a_remembered_gather_index_is_checked_again_when_it_changes():
    pattern, offset, row_size, n_rows, _ = GATHERS["large contiguous runs (slice copies)"]
    pattern = [[0, 4], *pattern[1:]]
    x = np.zeros((n_rows, row_size), np.float16)
    good = np.array([[0], [1], [2], [3]], np.int32)
    ex = Executable(trace(gather_kernel(pattern, offset, (4, 25, 64)), x, good))
    ex.run([x, good])
    ex.run([x, good])
    bad = good + n_rows - 3  # the last partition's row runs past the end
    with pytest.raises(errors.OutOfBoundsError, match=r"partition 3 reads elements"):
        ex.run([x, bad])
    with pytest.raises(errors.OutOfBoundsError, match=r"partition 3 reads elements"):
        ex.run([x, bad])
    ex.run([x, good])


# -- copies split along a short inner axis ----------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8])
def test_copies_split_along_a_short_inner_axis_are_the_broadcast(dtype):
    # the mask kernel's column upsample: each source pixel twice, at a stride of 3 pixels (the third from elsewhere)
    x = data(np.random.default_rng(1), (128, 512), dtype)

    def k(x):
        src = _load(x)
        mid = nl.ndarray((128, 768), dtype=x.dtype)
        nisa.tensor_copy(dst=mid.ap(pattern=[[768, 128], [3, 256], [1, 2], [1, 1]]),
                         src=src.ap(pattern=[[512, 128], [2, 256], [0, 2], [1, 1]]), engine=nisa.gpsimd_engine)
        nisa.tensor_copy(dst=mid.ap(pattern=[[768, 128], [3, 256], [1, 1]], offset=2),
                         src=src.ap(pattern=[[512, 128], [2, 256], [1, 1]], offset=1))
        out = nl.ndarray((128, 256, 3, 2), dtype=x.dtype, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out.ap(pattern=[[1536, 128], [6, 256], [2, 3], [1, 2]]),  # DMA: each pixel twice again
                      src=mid.ap(pattern=[[768, 128], [3, 256], [1, 3], [0, 2]]))
        return out
    want = np.empty((128, 256, 3), x.dtype)
    want[:, :, 0] = want[:, :, 1] = x[:, 0::2]
    want[:, :, 2] = x[:, 1::2]
    assert_bits_equal(simulate(k, x), np.repeat(want[..., None], 2, axis=3))
    assert len(_copy_parts((128, 256, 2, 1), (768 * 4, 12, 4, 4), (512 * 4, 8, 0, 4))) == 2
    assert len(_copy_parts((128, 256, 3, 2), (6144, 24, 8, 4), (3072, 12, 4, 0))) == 2  # then 3 x 2 merge


@pytest.mark.parametrize("channels", [3, 4])
def test_copies_split_along_several_short_axes(channels):
    # an RGB(A) column upsample: every pixel twice, its channels the innermost axis
    x = data(np.random.default_rng(2), (128, 64 * channels), np.uint8)

    def k(x):
        out = nl.ndarray((128, 64, 2, channels), dtype=x.dtype)
        pattern = [[64 * channels, 128], [channels, 64], [0, 2], [1, channels]]
        nisa.tensor_copy(dst=out, src=_load(x).ap(pattern=pattern))
        return store(out)
    want = np.repeat(x.reshape(128, 64, 1, channels), 2, axis=2)
    assert_bits_equal(simulate(k, x), want)
    assert len(_copy_parts((128, 64, 2, channels), (8192, 2 * channels, channels, 1), (8192, channels, 0, 1))) == \
        2 * channels


@pytest.mark.parametrize("shape, dst, src, axis", [
    ((128, 256, 2), (3072, 12, 4), (2048, 8, 0), 2),  # a short inner axis
    ((128, 256, 2), (2048, 8, 4), (2048, 8, 4), None),  # contiguous across it: numpy merges the axes
    ((128, 3, 128), (46336, 256, 2), (46336, 768, 2), None),  # a long inner axis
    ((4, 2), (12, 4), (8, 0), None),  # too small to pay for a split
    ((4096, 2), (8, 4), (8, 0), 1), ((2, 4096), (8, 16384), (8, 16384), 0),
    ((2, 4096), (32768, 8), (32768, 8), None)])
def test_short_inner_axis(shape, dst, src, axis):
    assert _short_inner_axis(shape, dst, src) == axis


# -- poisoning only what a run reads first ---------------------------------------------------------------

def poison_bits(shape, dtype):
    return np.full(shape, POISON_BYTE, np.uint8).view(dtype) if np.dtype(dtype).itemsize == 1 else \
        np.full((*shape, np.dtype(dtype).itemsize), POISON_BYTE, np.uint8).view(dtype).reshape(shape)


def test_repeated_runs_poison_sbuf_read_before_it_is_written():
    def k(x):
        t = nl.ndarray((4, 6), dtype=x.dtype)
        early = store(t, "early")  # reads t before this run writes it
        nisa.dma_copy(dst=t, src=x)
        late = store(t, "late")
        return early, late
    x = np.zeros((4, 6), np.float32)
    ex = Executable(trace(k, x))
    for seed in range(4):
        x = data(np.random.default_rng(seed), (4, 6), np.float32)
        early, late = ex.run([x])
        assert_bits_equal(early, poison_bits((4, 6), np.float32))
        assert_bits_equal(late, x)
    assert ex._plan is not None and ex._plan["sbuf"] is not None


def test_repeated_runs_poison_output_elements_never_written():
    def k(x):
        out = nl.ndarray((4, 6), dtype=x.dtype, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out.ap(pattern=[[6, 2], [2, 3]], offset=7), src=_load(x))
        return out
    x = data(np.random.default_rng(0), (2, 3), np.float16)
    ex = Executable(trace(k, x))
    for _ in range(5):
        got = ex.run([x])[0]
        want = poison_bits((4, 6), np.float16)
        want.reshape(-1)[7 + np.array([[0, 2, 4], [6, 8, 10]])] = x
        assert_bits_equal(got, want)


def test_repeated_runs_poison_internal_hbm_read_before_it_is_written():
    def k(x):
        h = nl.ndarray((4, 6), dtype=x.dtype, buffer=nl.hbm, name="scratch")
        nisa.dma_copy(dst=h.ap(pattern=[[6, 2], [1, 6]]), src=_load(x))  # rows 0 and 1 only
        t = nl.ndarray((4, 6), dtype=x.dtype)
        nisa.dma_copy(dst=t, src=h)  # all four rows
        nisa.dma_copy(dst=h, src=t)  # now written whole
        return store(t)
    x = data(np.random.default_rng(0), (2, 6), np.int16)
    ex = Executable(trace(k, x))
    for _ in range(5):
        got = ex.run([x])[0]
        assert_bits_equal(got[:2], x)
        assert (got[2:] == -1).all()


def test_repeated_runs_accumulate_into_poison():
    def k(x):
        out = nl.ndarray((2, 3), dtype=x.dtype, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out.ap(pattern=[[3, 1], [1, 3]]), src=_load(x[0:1]))  # row 0 written, row 1 not
        nisa.dma_copy(dst=out, src=_load(x), dst_rmw_op=nl.add)
        return out
    x = np.array([[1.5, -2.0, 0.25], [3.0, 4.0, 5.0]], np.float32)
    ex = Executable(trace(k, x))
    for _ in range(5):
        got = ex.run([x])[0]
        np.testing.assert_array_equal(got[0], 2 * x[0])
        assert np.isnan(got[1]).all()


@pytest.mark.parametrize("kernel", ["auto", "exact", "public", "seed"])
@pytest.mark.parametrize("shapes, dtype", [(((1, 5, 7, 3), (9, 4)), np.float16), (((2, 6, 4, 8), (3, 11)), np.uint8)])
def test_repeated_resize_runs_match_a_fresh_run(kernel, shapes, dtype):
    in_shape, out_hw = shapes
    program = rk.trace_resize(in_shape, out_hw, dtype=np.dtype(dtype).name, kernel=kernel)
    ex = Executable(program)
    for seed in range(5):
        x = data(np.random.default_rng(seed), in_shape, dtype)
        assert_bits_equal(ex.run([x])[0], run(program, [x])[0])


def test_a_resize_program_run_often_needs_no_poisoning():
    x = np.zeros((1, 30, 20, 64), np.float16)
    ex = api.executable("resize_nearest", x.shape, (1, 59, 38, 64), np.dtype(np.float16), "auto")
    plan = ex._poison_plan()  # (the Program runs as one gather from its third run: copy_plan)
    assert plan is not None and not any(plan.values())


def test_poisoner_fills_the_marked_bytes_and_merges_many_runs():
    assert poisoner(np.zeros(10, bool)) is None
    mask = np.zeros(40, bool)
    mask[[1, 2, 3, 9, 30]] = True
    flat = np.zeros(80, np.uint8)
    poisoner(mask, itemsize=2)(flat)
    np.testing.assert_array_equal(flat == POISON_BYTE, np.repeat(mask, 2))
    mask = np.random.default_rng(0).random(10_000) < 0.3  # thousands of runs
    flat = np.zeros(10_000, np.uint8)
    poisoner(mask)(flat)
    hit = flat == POISON_BYTE
    assert hit[mask].all() and hit.sum() < mask.size
    assert np.count_nonzero(np.diff(hit.astype(np.int8)) == 1) + hit[0] <= MAX_POISON_RUNS


def test_overlapping_copies_read_everything_before_writing():
    # a tensor_copy within one tile whose destination overlaps its source: never split into parts
    x = data(np.random.default_rng(4), (128, 800), np.float32)

    def k(x):
        t = _load(x)
        nisa.tensor_copy(dst=t.ap(pattern=[[800, 128], [3, 256], [1, 2]], offset=1),
                         src=t.ap(pattern=[[800, 128], [2, 256], [0, 2]]))
        return store(t)
    want = x.copy()
    dst = np.lib.stride_tricks.as_strided(want[:, 1:], (128, 256, 2), (3200, 12, 4))
    dst[...] = np.lib.stride_tricks.as_strided(x, (128, 256, 2), (3200, 8, 0)).copy()
    assert_bits_equal(simulate(k, x), want)


def test_a_gather_into_its_own_source_reads_every_row_first():
    x = data(np.random.default_rng(5), (40, 3000), np.float16)
    idx = (np.arange(20) // 2 + 1).astype(np.int32)[:, None]  # rows 1, 1, 2, 2, ...: row 1 is read, then written

    def k(x, idx):
        h = nl.ndarray((40, 3000), dtype=x.dtype, buffer=nl.hbm, name="h")
        nisa.dma_copy(dst=h, src=x)
        nisa.dma_copy(dst=h.ap(pattern=[[3000, 20], [1, 3000]]),
                      src=h.ap(pattern=[[0, 20], [1, 3000]], vector_offset=_load(idx), indirect_dim=0))
        out = nl.ndarray((40, 3000), dtype=x.dtype, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=h)
        return out
    want = x.copy()
    want[:20] = x[idx[:, 0]]
    ex = Executable(trace(k, x, idx))
    for _ in range(4):
        assert_bits_equal(ex.run([x, idx])[0], want)


def test_may_overlap_compares_tiles_columns_and_hbm_tensors():
    a, b = SbufTile("a", 128, (16,), np.dtype(np.float32), 0), SbufTile("b", 64, (8,), np.dtype(np.int32), 64)
    c = SbufTile("c", 4, (40,), np.dtype(np.uint8), 60)  # bytes 60..99: meets a (0..63) and b (64..95)
    h, g = HbmTensor("h", (8, 8), np.dtype(np.float32)), HbmTensor("g", (8, 8), np.dtype(np.float32))
    ap = lambda t, pattern: AccessPattern(t, pattern)  # noqa: E731
    assert not _may_overlap(ap(a, ((16, 128), (1, 16))), ap(b, ((8, 64), (1, 8))))
    assert _may_overlap(ap(a, ((16, 2), (1, 4))), ap(c, ((40, 4), (1, 40))))
    assert _may_overlap(ap(b, ((8, 64), (1, 8))), ap(c, ((40, 4), (1, 40))))
    assert _may_overlap(ap(h, ((8, 8), (1, 4))), ap(h, ((8, 8), (1, 4))))
    assert not _may_overlap(ap(h, ((8, 8), (1, 4))), ap(g, ((8, 8), (1, 4))))
    assert not _may_overlap(ap(h, ((8, 8), (1, 4))), ap(a, ((16, 8), (1, 4))))


# -- memoized engine instructions ---------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # NaN inputs, as intended
def test_memoized_engine_instructions_follow_their_sources_over_repeated_runs():
    # index arithmetic on an iota (the same in every run) next to arithmetic on data (new in every run)
    def k(x):
        i = nl.ndarray((16, 4), dtype=nl.int32)
        nisa.iota(i, pattern=[[1, 4]], channel_multiplier=4)
        f = nl.ndarray((16, 4), dtype=nl.float32)
        nisa.activation(dst=f, op=nl.floor, data=i, scale=0.7)
        t = _load(x)
        y = nl.ndarray((16, 4), dtype=nl.float16)
        nisa.tensor_scalar(y, t, op0=nl.multiply, operand0=1.0)  # float32 round trip: NaN payloads quieted, -0 kept
        z = nl.ndarray((16, 4), dtype=nl.float32)
        nisa.tensor_tensor(dst=z, data1=t, data2=f, op=nl.add)
        c = nl.ndarray((16, 4), dtype=nl.int8)
        nisa.tensor_copy(dst=c, src=z)
        return store(f, "f"), store(y, "y"), store(z, "z"), store(c, "c")
    x0 = np.zeros((16, 4), np.float16)
    program = trace(k, x0)
    ex = Executable(program)
    inputs = [data(np.random.default_rng(s), (16, 4), np.float16) for s in range(3)]
    for x in inputs + inputs[::-1] + [inputs[1], inputs[1]]:
        for got, want in zip(ex.run([x]), run(program, [x])):
            assert_bits_equal(got, want)


# -- the SBUF's second mapping ---------------------------------------------------------------------------

def test_aliased_storage_is_one_memory_at_two_addresses():
    first, second = aliased_storage((4, 100))
    if second is None:
        pytest.skip("this system cannot map memory twice")
    first[1, 5] = 7
    second[2, 9] = 11
    assert second[1, 5] == 7 and first[2, 9] == 11
    assert not np.may_share_memory(first, second)  # what numpy sees: so copies between them take one pass


def tile_shuffle_kernel(x):
    """Copies between tiles (tensor_copy and an SBUF-to-SBUF DMA), then out."""
    a = _load(x)
    b = nl.ndarray(x.shape, dtype=x.dtype)
    nisa.tensor_copy(dst=b.ap(pattern=[[x.shape[1], 128], [2, x.shape[1] // 2], [1, 2]]),
                     src=a.ap(pattern=[[x.shape[1], 128], [1, x.shape[1] // 2], [0, 2]]))
    c = nl.ndarray(x.shape, dtype=x.dtype)
    nisa.dma_copy(dst=c, src=b)
    return store(c)


def shuffled(x):
    return np.repeat(x[:, :x.shape[1] // 2], 2, axis=1)


def test_a_program_run_again_copies_between_tiles_through_the_second_mapping_and_forks_safely():
    x = data(np.random.default_rng(0), (128, 512), np.float32)
    ex = Executable(trace(tile_shuffle_kernel, x))
    assert_bits_equal(ex.run([x])[0], shuffled(x))
    assert ex._sbuf_alias is None  # a first run: a plain array
    for seed in range(3):
        x = data(np.random.default_rng(seed), (128, 512), np.float32)
        assert_bits_equal(ex.run([x])[0], shuffled(x))
    if ex._sbuf_alias is None:
        pytest.skip("this system cannot map memory twice")
    storage = ex.sbuf
    ex._pid = -1  # as in a child process forked after the Executable was made
    assert_bits_equal(ex.run([x])[0], shuffled(x))
    assert ex.sbuf is not storage and ex._sbuf_alias is not None


_INHERITED = {}  # what forked workers find in their copy of this module


def _run_many(seed, runs):
    """Run the inherited Executable on inputs of its own; the number of wrong results."""
    ex, wrong = _INHERITED["ex"], 0
    for k in range(runs):
        x = data(np.random.default_rng(seed * 1000 + k), (128, 512), np.float32)
        wrong += not np.array_equal(bits(ex.run([x])[0]), bits(shuffled(x)))
    return wrong


@pytest.mark.skipif(not hasattr(os, "fork") or aliased_storage((1, 1))[1] is None, reason="needs fork and memfd")
def test_forked_processes_running_one_executable_at_once_do_not_share_its_sbuf(monkeypatch):
    monkeypatch.setattr(simulator._Gather, "of", classmethod(lambda cls, program: None))  # the SBUF path, not one gather
    x = np.zeros((128, 512), np.float32)
    _INHERITED["ex"] = Executable(trace(tile_shuffle_kernel, x))
    for _ in range(3):  # run often: now with the SBUF mapped twice, and shared by the forked workers
        _INHERITED["ex"].run([x])
    assert _INHERITED["ex"]._sbuf_alias is not None
    try:
        with multiprocessing.get_context("fork").Pool(2) as pool:  # the workers inherit the Executable
            children = [pool.apply_async(_run_many, (seed, 200)) for seed in (1, 2)]
            assert _run_many(3, 200) == 0
            assert [c.get(timeout=120) for c in children] == [0, 0]
    finally:
        _INHERITED.clear()


def test_an_output_storage_is_reused_only_when_nobody_holds_it(rng):
    """Kept results (or any view of them) keep their bits whatever later runs write; a dropped one's storage
    is taken again (no fresh pages to zero), and unwritten elements are still poisoned."""
    in_shape, out_hw = (2, 9, 13, 5), (17, 6)
    executable = api.executable("resize_nearest", in_shape, (2, *out_hw, 5), np.dtype(np.float32), "rows")
    inputs = [data(rng, in_shape, np.float32) for _ in range(8)]
    kept, views = [], []
    for n, x in enumerate(inputs):
        (out,) = executable.run([x])
        if n % 3 == 0:
            kept.append((x, out))
        elif n % 3 == 1:
            views.append((x, out[1, 2:]))  # only a view of the result survives
        del out
    for x, out in kept:
        assert_bits_equal(out, rk.semantics.resize_nearest_reference(x, out_hw))
    for x, view in views:
        assert_bits_equal(view, rk.semantics.resize_nearest_reference(x, out_hw)[1, 2:])
    first = executable.run([inputs[0]])[0].__array_interface__["data"][0]  # dropped at once ...
    again = executable.run([inputs[1]])
    assert again[0].__array_interface__["data"][0] == first  # ... so its storage serves the next run
    assert_bits_equal(again[0], rk.semantics.resize_nearest_reference(inputs[1], out_hw))

"""The gradient's rows kernel (dx rows on partitions, sums in PSUM) and auto, against the reference, bit for bit."""

import math
from unittest import mock

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import api, semantics
from resize_kernels.errors import InvalidValueError
from resize_kernels.kernels import grad_rows
from resize_kernels.kernels.grad_rows import grad_rows_applies, resize_nearest_grad_rows_kernel
from resize_kernels.kernels.plan import plan_resize
from resize_kernels.machine.cost import PARTITIONS_PER_DMA_ENGINE, program_cost, target_params
from resize_kernels.machine.memory import SBUF_PARTITION_BYTES
from resize_kernels.machine.simulator import run
from resize_kernels.nki.tracer import trace
from resize_kernels.verifier import GRAD, sweep

from conftest import assert_bits_equal, bits, random_data

FLOATS = [np.float32, np.float16, ml_dtypes.bfloat16]
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-40, 3.0, -2.5, 65504.0], np.float32)


def any_bits(rng, shape, dtype):
    """random_data (subnormals, infinities, NaNs: nearly every bit pattern) with every 17th element -0.0, so that no
    two different NaNs meet in a sum: which one an add returns is numpy's choice, and the reference's loops and the
    simulator's choose differently. So every NaN takes one payload, every infinity is +inf and no magnitude reaches
    2**100 (no sum overflows to an infinity of either sign, whose difference would make another NaN)."""
    x = random_data(rng, shape, dtype)
    x.reshape(-1)[::17] = -0.0
    wide = x.astype(np.float32)
    huge = np.isfinite(wide) & (np.abs(wide) >= 2.0**100)
    x[huge] = (wide[huge] * np.float32(2.0**-64)).astype(dtype)  # exact: a smaller exponent
    x[np.isneginf(wide)] = np.inf
    payload = {np.dtype(np.float32): 0x7FD50000, np.dtype(np.float16): 0x7EA8, np.dtype(ml_dtypes.bfloat16): 0x7FD5}
    bits(x)[np.isnan(wide)] = payload[x.dtype]  # a quiet NaN, its payload in the bits every dtype keeps
    return x


def check(dy, in_hw, kernel):
    assert_bits_equal(rk.resize_nearest_grad(dy, in_hw, kernel=kernel), semantics.resize_nearest_grad_reference(dy, in_hw))


@pytest.mark.parametrize("kernel", ["rows", "general"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dy_shape, in_hw", [
    ((2, 59, 38, 8), (30, 20)),  # SD2's ratio: the last dx row of each batch takes one dy row, not two
    ((1, 11, 13, 3), (5, 7)),
    ((1, 4, 5, 2), (9, 9)),  # a downsample: dx rows and columns no dy pixel reads stay +0.0
    ((1, 401, 61, 2), (200, 30)),  # dx rows past 128: tiles of one batch; runs of 2 and 3 dy rows
    ((3, 20, 9, 1), (7, 5)),  # whole batches per tile, channel blocks of 1
    ((1, 5, 7, 3000), (2, 3)),  # channels past an accumulator's 2048: chunks
])
def test_equals_the_reference_bit_for_bit(dy_shape, in_hw, dtype, kernel, rng):
    for dy in (rng.standard_normal(dy_shape).astype(dtype), rng.choice(SPECIALS, size=dy_shape).astype(dtype)):
        check(dy, in_hw, kernel)  # random rounding (order matters); infinities, -0.0, subnormals


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 40), st.integers(1, 140), st.integers(1, 40), st.integers(1, 140),
       st.sampled_from([1, 3, 8, 130]), st.sampled_from(FLOATS), st.integers(0, 2**32 - 1))
def test_random_shapes_equal_the_reference(n, in_h, out_h, in_w, out_w, c, dtype, seed):
    dy = np.random.default_rng(seed).standard_normal((n, out_h, out_w, c)).astype(dtype)
    plan = plan_resize((n, in_h, in_w, c), (n, out_h, out_w, c))
    if grad_rows_applies(plan, np.dtype(dtype).itemsize):
        check(dy, (in_h, in_w), "rows")
    else:  # a dx pixel's dy pixels pass the tile (97 x 127 float32, say): refused, pointing to the general kernel
        with pytest.raises(InvalidValueError, match="requires a dx pixel's dy pixels .* use kernel='general'"):
            check(dy, (in_h, in_w), "rows")


def test_sd2_program_is_direct_dmas_and_psum_adds():
    program = api.trace_resize_grad((2, 59, 38, 1280), (30, 20), "bfloat16", kernel="rows")
    assert not any(d.is_indirect for d in program.dmas())  # no scatter, no descriptors for GpSimd to write
    adds = [i for i in program.instructions if i.opcode == "tensor_tensor"]
    assert adds and all(i.dst.tensor.memory == "psum" for i in adds)  # one SBUF stream per add (cost model E2)


def test_a_run_too_long_for_the_tile_is_the_general_kernels():
    with pytest.raises(InvalidValueError, match="requires a dx pixel's dy pixels .* use kernel='general'"):
        api.trace_resize_grad((1, 300, 300, 1), (1, 1), kernel="rows")
    dy = np.random.default_rng(0).standard_normal((1, 300, 300, 1)).astype(np.float32)
    check(dy, (1, 1), None)  # auto: general here
    assert api.trace_resize_grad((1, 300, 300, 1), (1, 1)).counts()["dma_copy_add"] > 0


@pytest.mark.parametrize("axis", ["h", "w"])
def test_per_axis_sweep_1_to_32(axis):  # CI sweeps it over 1..96
    result = sweep(32, axis, "rows", jobs=2, op=GRAD)
    assert not result.failures and not result.not_applicable, result.summary()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dy_shape, in_hw", [
    ((2, 30, 20, 1280), (15, 10)),  # SD2: 30 rows x 4 channel blocks, a load per row, five pieces of columns
    ((1, 401, 61, 640), (200, 30)),  # two row tiles, their 30 pieces one pipeline
    ((1, 6, 3, 1280), (8, 40)),  # dx wider than dy: pieces of dx columns no dy column reads (nothing to load)
    ((1, 3, 6, 2053), (1, 3)),  # dy tiles of 48 KiB (float32: 3 rows x 2 columns x 2048 channels), three in turn
])
def test_pipelined_pieces_equal_the_reference_on_any_bits(dy_shape, in_hw, dtype, rng):
    with np.errstate(all="ignore"):
        check(any_bits(rng, dy_shape, dtype), in_hw, "rows")


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 30), st.integers(1, 90), st.integers(1, 30), st.integers(1, 90),
       st.sampled_from([1, 3, 8, 130]), st.sampled_from(FLOATS), st.sampled_from([1, 2, 3]),
       st.sampled_from([2, 7, 100]), st.integers(0, 2**32 - 1))
def test_any_pieces_and_buffers_equal_the_reference(n, in_h, out_h, in_w, out_w, c, dtype, buffers, pieces, seed):
    """Pieces of one column (or of a few), and one to three dy tiles in turn, on small shapes: exact."""
    dy = any_bits(np.random.default_rng(seed), (n, out_h, out_w, c), dtype)
    with mock.patch.multiple(grad_rows, DY_BUFFERS=buffers, PIECES=pieces, MIN_PIECE_ELEMENTS=1):
        program = trace(resize_nearest_grad_rows_kernel, dy, in_shape=(n, in_h, in_w, c), sources=False)
    with np.errstate(all="ignore"):
        assert_bits_equal(run(program, [dy])[0], semantics.resize_nearest_grad_reference(dy, (in_h, in_w)))


def test_sd2_small_shape_pipelines_pieces_over_every_partition_and_meets_the_goal():
    dy_shape, in_hw = (2, 30, 20, 1280), (15, 10)
    program = api.trace_resize_grad(dy_shape, in_hw, "bfloat16", kernel="rows")
    assert program.counts()["activation"] >= 4  # pieces, so that loads, adds and stores of successive ones overlap
    loads = [d for d in program.dmas() if d.dst.is_sbuf]
    free = loads[0].dst.tensor.free_size
    assert all(d.dst.pattern[0][0] == free for d in loads)  # consecutive partitions: no load waits for another
    first_add = next(i for i, inst in enumerate(program.instructions) if inst.engine == "vector")
    ahead = [inst for inst in program.instructions[:first_add] if inst.opcode == "dma_copy"]
    assert len({d.dst.tensor.name for d in ahead}) == grad_rows.DY_BUFFERS  # loads issued ahead, into each dy tile
    first_piece = [d for d in ahead if d.dst.tensor is loads[0].dst.tensor]
    partitions = sorted(d.dst.offset // free + k for d in first_piece for k in range(d.dst.shape[0]))
    assert partitions == list(range(120))  # 30 rows x 4 channel blocks, each load on its own partitions
    assert {p // PARTITIONS_PER_DMA_ENGINE for p in partitions} == set(range(15))
    for target in ("trn1", "trn2"):  # the goal of benchmarks/grad_panel.py: 2 x roofline + launch, load, store
        params = target_params(target)
        nbytes = (math.prod(dy_shape) + math.prod(dy_shape) // 4) * 2  # dy read once, dx written once
        goal = 2 * nbytes / (params.peak_dma_gbps * 1e3) + params.launch_us + 2 * params.dma_latency_us
        assert program_cost(program, target).modelled_us <= goal, target


@pytest.mark.parametrize("in_w, out_w, c", [(10, 20, 320), (30, 61, 2), (39, 78, 640), (27, 149, 130), (40, 8, 1280),
                                            (7, 7, 3000)])
def test_pieces_cut_columns_only_and_cover_each_once(in_w, out_w, c):
    plan = plan_resize((1, 4, in_w, c), (1, 8, out_w, c))
    whole = grad_rows._column_chunks(plan, 2, c, 2)  # what grad_rows_is_short (auto's choice) counts
    cut = grad_rows._column_chunks(plan, 2, c, 2, grad_rows.PIECES)
    assert {ch[6] for ch in cut} == {ch[6] for ch in whole}  # the channels per piece: each descriptor as long
    assert len(whole) <= len(cut)
    covered = sorted((j, c0 + k) for j0, nj, _, _, _, c0, cc, _ in cut for j in range(j0, j0 + nj) for k in range(cc))
    assert covered == [(j, k) for j in range(in_w) for k in range(c)]


def test_dy_tiles_fit_trn1_sbuf_at_their_largest():
    program = api.trace_resize_grad((1, 3, 6, 2053), (1, 3), "float32", kernel="rows")  # six pieces of 48 KiB
    assert grad_rows.DY_BUFFERS * grad_rows.DY_TILE_BYTES <= program.sbuf_high_water <= SBUF_PARTITION_BYTES["trn1"]

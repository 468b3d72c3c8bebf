"""The faster kernels (batched, rowreuse, strided, twopass) and the "auto" default: exact, cheaper, chosen per shape."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics
from resize_kernels.kernels.batched import batched_dma_count
from resize_kernels.kernels.dispatch import SMALL_OUTPUT_BYTES, candidate_times
from resize_kernels.kernels.plan import plan_resize
from resize_kernels.kernels import (
    DEFAULT_FORWARD, FORWARD_KERNELS, forward_kernel_for, resize_nearest_auto_kernel, resize_nearest_batched_kernel,
    resize_nearest_row_reuse_kernel, resize_nearest_strided_kernel,
)
from resize_kernels.semantics import integer_ratio
from resize_kernels.kernels.dma import CHUNK_BYTES
from resize_kernels.nki.language import ROTATING_BUFFERS
from resize_kernels.nki import TensorSpec, trace
from resize_kernels.verifier import sweep, verify

from conftest import DTYPES, assert_bits_equal, random_data

NEW = ["batched", "rowreuse", "twopass", "auto"]  # "strided" takes integer ratios only: checked on those below
SD2_IN, SD2_OUT = (10, 30, 20, 1280), (10, 59, 38, 1280)


def check(x, out_hw, kernel):
    assert_bits_equal(rk.resize_nearest(x, out_hw, kernel=kernel), semantics.resize_nearest_reference(x, out_hw))


@pytest.mark.parametrize("axis", ["h", "w"])
@pytest.mark.parametrize("kernel", NEW)
def test_per_axis_sweep_1_to_32(kernel, axis):  # CI sweeps each over 1..192
    result = sweep(32, axis, kernel, jobs=2)
    assert not result.failures, result.summary()


@pytest.mark.parametrize("axis", ["h", "w"])
def test_strided_is_exact_on_every_integer_ratio_pair_up_to_64(axis):
    pairs = [(i, o) for i in range(1, 65) for o in range(1, 65) if integer_ratio(i, o)]
    assert len(pairs) > 400
    for i, o in pairs:
        shapes = ((1, i, 3, 1), (1, o, 6, 1)) if axis == "h" else ((2, 2, i, 1), (2, 4, o, 1))
        report = verify(*shapes, kernel="strided")
        assert report.ok, report


@settings(max_examples=60, deadline=None)
@given(kernel=st.sampled_from(NEW), n=st.integers(1, 3), in_h=st.integers(1, 40), in_w=st.integers(1, 70),
       out_h=st.integers(1, 60), out_w=st.sampled_from([41, 47, 64, 128, 129, 257]) | st.integers(1, 140),
       c=st.integers(1, 5), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_random_shapes_equal_reference(kernel, n, in_h, in_w, out_h, out_w, c, dtype, seed):
    check(random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dtype), (out_h, out_w), kernel)


INTEGER_RATIOS = [  # (in_hw, out_hw)
    ((5, 7), (10, 14)),  # 2x up
    ((5, 7), (15, 21)),  # 3x up
    ((10, 14), (5, 7)),  # 2x down
    ((15, 21), (5, 7)),  # 3x down
    ((5, 21), (10, 7)),  # 2x up in h, 3x down in w
    ((5, 7), (5, 28)),  # ratio 1 in h, 4x up in w
    ((12, 7), (4, 7)),  # 3x down in h, ratio 1 in w
    ((6, 9), (6, 9)),  # identity
]


@pytest.mark.parametrize("in_hw, out_hw", INTEGER_RATIOS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8])
def test_integer_ratios_take_strided_dmas_and_are_exact(in_hw, out_hw, dtype, rng):
    x = random_data(rng, (3, *in_hw, 5), dtype)
    program = rk.trace_resize(x.shape, out_hw, dtype, kernel="strided")
    assert program.counts() == {"dma_copy": len(program.instructions)}  # no index graph
    assert not any(d.is_indirect for d in program.dmas())
    check(x, out_hw, None)
    check(x, out_hw, "strided")


def test_strided_rejects_other_ratios_with_a_pointer_to_auto():
    with pytest.raises(ValueError, match="integer ratio on each axis.*use kernel 'auto'"):
        rk.trace_resize((1, 30, 20, 4), (59, 40), kernel="strided")


def test_more_than_2_24_output_pixels_is_exact():
    assert 4099 * 4097 > 2**24
    assert verify((1, 2049, 2047, 1), (1, 4099, 4097, 1), kernel="rowreuse").ok
    assert verify((1, 2048, 2049, 1), (1, 4096, 4098, 1), kernel="auto").ok  # 2x up in h, 2x up in w: strided


@pytest.mark.parametrize("kernel, out_hw", [("rowreuse", (3, 2)), ("batched", (3, 2)), ("strided", (4, 6)),
                                            ("strided", (1, 3))])
def test_channels_far_beyond_sbuf_are_chunked(kernel, out_hw, rng):
    c = 200_000  # 800 KB of float32 per pixel: four times a partition's SBUF
    x = random_data(rng, (1, 2, 3, c), np.float32)
    program = trace(FORWARD_KERNELS[kernel], x, out_shape=(1, *out_hw, c))
    assert program.sbuf_high_water <= ROTATING_BUFFERS * (CHUNK_BYTES + 4096)  # a chunk's tiles, double-buffered
    check(x, out_hw, kernel)


@pytest.mark.parametrize("in_h, out_h", [(30, 59), (59, 30), (7, 20), (20, 7), (9, 9), (5, 16)])
def test_row_reuse_tiles_split_rows_and_batches(in_h, out_h, rng):
    # int8 with 30,000 channels: two (batch, row) pairs per 64 KiB tile, so groups of rows and batches are cut
    x = random_data(rng, (3, in_h, 4, 30_000), np.int8)
    check(x, (out_h, 5), "rowreuse")


# -- the dispatch and what it buys ------------------------------------------------------------------

DISPATCH_SHAPES = [  # (NHWC in, NHWC out, itemsize): every output at least SMALL_OUTPUT_BYTES
    ((8, 64, 64, 256), (8, 128, 128, 256), 4),
    ((8, 192, 192, 256), (8, 64, 64, 256), 4),
    ((2, 30, 20, 1280), (2, 59, 38, 1280), 2),
    ((2, 15, 10, 1280), (2, 30, 20, 1280), 2),
    ((1, 300, 4, 64), (1, 1000, 7, 64), 4),
    ((4, 100, 100, 128), (4, 70, 70, 128), 2),
    ((1, 256, 256, 3), (1, 511, 383, 3), 1),
    ((2, 512, 3, 64), (2, 99, 25, 64), 4),
]


@pytest.mark.parametrize("in_shape, out_shape, itemsize", DISPATCH_SHAPES)
def test_auto_picks_the_candidate_with_the_lowest_modelled_time(in_shape, out_shape, itemsize):
    times = candidate_times(in_shape, out_shape, itemsize)
    assert {"rows", "twopass"} <= times.keys()  # within the budget on these shapes
    assert ("strided" in times) == (plan_resize(in_shape, out_shape).integer_ratios is not None)
    picked = forward_kernel_for(in_shape, out_shape, itemsize)
    assert times[picked] == min(times.values())
    dtype = {1: "uint8", 2: "float16", 4: "float32"}[itemsize]
    for name in times:  # the times dispatch compares are the candidates' own modelled times
        assert times[name] == pytest.approx(rk.cost(in_shape, out_shape, kernel=name, dtype=dtype).modelled_us)
    assert rk.cost(in_shape, out_shape, dtype=dtype).modelled_us == pytest.approx(times[picked])


def test_small_outputs_take_rows_without_tracing_the_others():
    assert candidate_times((1, 30, 20, 4), (1, 59, 38, 4)) == {}  # 36 KB of output: below SMALL_OUTPUT_BYTES
    assert forward_kernel_for((1, 30, 20, 4), (1, 59, 38, 4)) == "rows"
    assert 59 * 38 * 4 * 4 < SMALL_OUTPUT_BYTES
    assert candidate_times((1, 30, 20, 8), (1, 59, 38, 8)) != {}  # 72 KB: compared


@pytest.mark.parametrize("in_shape, out_shape", [((1, 300, 3, 1), (1, 256, 1, 1)), ((1, 255, 8, 3), (1, 99, 5, 3)),
                                                 ((4, 100, 100, 128), (4, 70, 70, 128))])
def test_batched_dma_count_is_the_kernels_own(in_shape, out_shape):
    plan = plan_resize(in_shape, out_shape)
    program = rk.trace_resize(in_shape, out_shape[1:3], kernel="batched")
    assert batched_dma_count(plan, 4) == len(program.dmas())  # the count dispatch budgets with


def test_auto_is_the_default_and_every_variant_stays_selectable():
    assert DEFAULT_FORWARD == "auto" and FORWARD_KERNELS["auto"] is resize_nearest_auto_kernel
    assert {"exact", "seed", "public", "strided", "rowreuse", "batched"} <= set(FORWARD_KERNELS)
    assert FORWARD_KERNELS["strided"] is resize_nearest_strided_kernel
    assert FORWARD_KERNELS["rowreuse"] is resize_nearest_row_reuse_kernel
    from resize_kernels.compiler.registry import registry
    assert registry["ResizeNearest"].kernel_func is resize_nearest_auto_kernel


def test_auto_traces_to_the_chosen_kernel():
    spec = TensorSpec(SD2_IN, np.dtype("float32"))
    auto = trace(resize_nearest_auto_kernel, spec, out_shape=SD2_OUT)
    chosen = trace(FORWARD_KERNELS[forward_kernel_for(SD2_IN, SD2_OUT)], spec, out_shape=SD2_OUT)
    assert [i.listing() for i in auto.instructions] == [i.listing() for i in chosen.instructions]


def test_sd2_default_uses_fewer_instructions_and_dmas_and_moves_fewer_bytes():
    default = rk.trace_resize(SD2_IN, SD2_OUT[1:3])
    exact = rk.trace_resize(SD2_IN, SD2_OUT[1:3], kernel="exact")
    assert len(default.instructions) < len(exact.instructions)
    assert len(default.dmas()) < 0.75 * len(exact.dmas())
    assert default.counts().get("iota", 0) <= 1  # at most one index graph for the whole resize (none: direct loads)
    # each source row (or each output row's source row) moved once, not each output pixel's source pixel
    assert sum(d.nbytes for d in default.dmas()) < 0.85 * sum(d.nbytes for d in exact.dmas())


def test_batched_index_work_does_not_grow_with_the_output():
    def index_instructions(out_hw):
        p = trace(resize_nearest_batched_kernel, TensorSpec((1, 30, 20, 8), np.dtype("float32")), out_shape=(1, *out_hw, 8))
        return len(p.instructions) - len(p.dmas())
    assert index_instructions((59, 38)) == index_instructions((590, 38))  # multi-row tiles
    assert index_instructions((59, 300)) == index_instructions((590, 3000))  # column tiles



"""The rows kernel (whole output rows on partitions) and the column groups it moves columns by."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics
from resize_kernels.kernels.plan import (MAX_PERIOD, AxisPlan, _PeriodicStretches, _ScannedStretches, column_groups,
                                         split_runs)
from resize_kernels.errors import InvalidValueError
from resize_kernels.kernels.columns import TILE_BYTES
from resize_kernels.kernels.rows import DEFAULT_SCHEDULE, TILINGS, resize_nearest_rows_kernel
from resize_kernels.kernels.schedule import CHUNK_FACTORS
from resize_kernels.machine.cost import program_cost, target_params
from resize_kernels.machine.simulator import run
from resize_kernels.nki.tensor import TensorSpec
from resize_kernels.nki.tracer import trace
from resize_kernels.verifier import axis_shapes, sweep

from conftest import DTYPES, assert_bits_equal, random_data


def check(x, out_hw):
    assert_bits_equal(rk.resize_nearest(x, out_hw, kernel="rows"), semantics.resize_nearest_reference(x, out_hw))


def expand(groups, n):
    """The map the groups describe: out[d] = source column, -1 where no group writes (each written once)."""
    out = np.full(n, -1)
    for g in groups:
        for k in range(g.count):
            o = g.out0 + k * g.out_step
            assert (out[o:o + g.repeat] == -1).all(), "two groups write one output column"
            out[o:o + g.repeat] = g.src0 + k * g.src_step
    return out


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 2000), st.integers(1, 2000))
def test_column_groups_describe_the_map_exactly(in_size, out_size):
    axis = AxisPlan(in_size, out_size)
    assert (expand(column_groups(axis.runs), out_size) == axis.src).all()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4096), st.integers(1, 4096), st.data())
def test_periodic_stretches_found_with_numpy_equal_the_scanned_ones(in_size, out_size, data):
    runs = AxisPlan(in_size, out_size).runs
    scanned, vectorized = _ScannedStretches(runs), _PeriodicStretches(runs)
    for _ in range(20):
        i, t = data.draw(st.integers(0, len(runs) - 1)), data.draw(st.integers(1, MAX_PERIOD))
        assert vectorized(i, t) == scanned(i, t)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 700), st.integers(1, 700), st.integers(1, 64), st.data())
def test_split_runs_cut_the_map_into_chunks(in_size, out_size, max_repeat, data):
    axis = AxisPlan(in_size, out_size)
    first = data.draw(st.integers(0, out_size - 1))
    stop = data.draw(st.integers(first + 1, out_size))
    runs = split_runs(axis.runs, first, stop, max_repeat)
    assert all(r.repeat <= max_repeat for r in runs)
    covered = np.concatenate([np.full(r.repeat, r.src) for r in runs])
    assert (covered == axis.src[first:stop]).all()


@pytest.mark.parametrize("in_size, out_size, most", [(512, 768, 2), (256, 383, 6), (100, 70, 7), (20, 38, 4),
                                                     (512, 1024, 1), (192, 64, 1)])
def test_periodic_maps_take_a_few_groups_not_one_per_column(in_size, out_size, most):
    assert len(column_groups(AxisPlan(in_size, out_size).runs)) <= most


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_shape, out_hw", [
    ((2, 30, 20, 8), (59, 38)),  # up, whole batches per tile, two copies of the index on partitions
    ((2, 5, 7, 3), (11, 13)),  # narrow pixels: copies on chip
    ((1, 200, 7, 2), (130, 5)),  # tall: an index column per 128 rows, a partial last tile
    ((3, 9, 9, 600), (4, 17)),  # wide pixels (2.4 KB float32): columns repeated in the stores
    ((1, 4, 4, 1), (300, 2)),  # several rows per partition
    ((1, 7, 100, 1), (3, 70)),  # a shrinking width: each group gathered straight into output order
    ((2, 3, 1, 9000), (5, 1)),  # pixels wider than a tile: channel chunks
    ((40, 2, 3, 1), (3, 5)),  # many small batches per tile
    ((3, 1000, 3, 1), (2, 2)),  # a deep downsample
    ((4, 100, 9, 2), (70, 7)),  # batches packed into balanced tiles of flat rows (280 rows: 3 x 94)
    ((3, 40, 5, 1), (301, 4)),  # flat tiles across batch boundaries, several rows per partition
])
def test_equals_the_reference_bit_for_bit(in_shape, out_hw, dtype, rng):
    check(random_data(rng, in_shape, dtype), out_hw)  # random bits: NaN payloads, -0.0 and subnormals among them


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_shape, out_hw", [((1, 2, 300, 1), (3, 437)), ((2, 3, 97, 3), (5, 131)),
                                             ((1, 200, 61, 2), (150, 89)), ((3, 40, 37, 1), (70, 101))])
def test_irregular_widths_gather_their_columns_bit_for_bit(in_shape, out_hw, dtype, rng):
    program = rk.trace_resize(in_shape, out_hw, np.dtype(dtype).name if dtype is not DTYPES[1] else "bfloat16",
                              kernel="rows")
    assert program.counts().get("nc_n_gather", 0) >= 1  # many column groups: one in-partition gather per row
    assert not [i for i in program.instructions if i.opcode == "tensor_copy" and i.src.dtype == i.dst.dtype]  # casts only
    check(random_data(rng, in_shape, dtype), out_hw)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 150), st.integers(1, 40), st.integers(1, 150), st.integers(1, 40),
       st.sampled_from([1, 3, 130, 700]), st.sampled_from(["float32", "bfloat16", "uint8"]), st.integers(0, 2**32 - 1))
def test_random_shapes_equal_the_reference(n, in_h, in_w, out_h, out_w, c, dtype, seed):
    x = random_data(np.random.default_rng(seed), (n, in_h, in_w, c), np.dtype(rk.machine.dtypes.as_dtype(dtype)))
    check(x, (out_h, out_w))


@pytest.mark.parametrize("axis", ["h", "w"])
def test_per_axis_sweep_1_to_32(axis):  # CI sweeps the default, rows here, over 1..320
    result = sweep(32, axis, "rows", jobs=2)
    assert not result.failures, result.summary()


def test_transfers_span_all_partitions_and_tiles_stay_in_budget():
    program = rk.trace_resize((1, 512, 512, 1), (1024, 768), kernel="rows")
    dmas = program.dmas()
    assert all(d.dst.shape[0] == 128 for d in dmas)  # every DMA on all 16 DMA engines
    assert program.sbuf_high_water <= 4 * TILE_BYTES + 4096  # source and output tiles, double-buffered


def test_batches_pack_into_balanced_or_whole_tiles():
    def tiles(schedule):
        program = trace(resize_nearest_rows_kernel, TensorSpec((4, 100, 100, 128), np.float16), out_shape=(4, 70, 70, 128),
                        schedule=schedule)  # 280 output rows
        return sorted(d.src.shape[0] for d in program.dmas() if not d.dst.is_sbuf)
    assert tiles(("balanced", 1)) == [92, 94, 94]  # not 8 tiles of 35 rows
    assert tiles(("whole", 1)) == [24, 128, 128]  # whole tiles, the rest in a piece of at most 64
    assert tiles(("whole", 2)) == [24, 24, 128, 128, 128, 128]  # two column chunks each


def test_the_schedule_is_chosen_by_modelled_time():
    """Large outputs take the schedule with the lowest modelled time (trn1 and trn2), small ones the default."""
    assert rk.trace_resize((1, 30, 20, 8), (59, 38), kernel="rows").selection.setting == DEFAULT_SCHEDULE  # 72 KB
    shapes = ((4, 100, 100, 128), (4, 70, 70, 128))
    chosen = rk.trace_resize(shapes[0], shapes[1][1:3], "float16", kernel="rows").selection.setting

    def score(schedule):
        program = trace(resize_nearest_rows_kernel, TensorSpec(shapes[0], np.float16), out_shape=shapes[1],
                        schedule=schedule)
        return sum(program_cost(program, t).modelled_us * target_params(t).peak_dma_gbps for t in ("trn1", "trn2"))
    assert score(chosen) == min(score((t, f)) for t in TILINGS for f in CHUNK_FACTORS)
    assert chosen != DEFAULT_SCHEDULE  # here whole tiles in column chunks beat the balanced tiles


def test_a_schedule_outside_the_knobs_is_refused():
    with pytest.raises(InvalidValueError, match=r"resize_nearest_rows_kernel requires a schedule .* got \('tall', 1\)"):
        trace(resize_nearest_rows_kernel, TensorSpec((1, 4, 4, 1), np.float32), out_shape=(1, 8, 8, 1),
              schedule=("tall", 1))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 90), st.integers(1, 40), st.integers(1, 300), st.integers(1, 60),
       st.sampled_from([1, 3, 130, 700]), st.sampled_from(TILINGS), st.sampled_from(CHUNK_FACTORS),
       st.sampled_from(["float32", "bfloat16", "uint8"]), st.integers(0, 2**32 - 1))
def test_every_schedule_equals_the_reference(n, in_h, in_w, out_h, out_w, c, tiling, factor, dtype, seed):
    """Every schedule is exact, not only the ones the small shapes of the sweeps take (the default)."""
    dt = np.dtype(rk.machine.dtypes.as_dtype(dtype))
    x = random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dt)
    program = trace(resize_nearest_rows_kernel, x, out_shape=(n, out_h, out_w, c), schedule=(tiling, factor),
                    sources=False)
    assert_bits_equal(run(program, [x])[0], semantics.resize_nearest_reference(x, (out_h, out_w)))


def test_few_rows_rotate_over_partition_ranges():
    program = rk.trace_resize((2, 15, 10, 1280), (30, 20), kernel="rows")  # 60 output rows: partitions 0-59
    first = {d.dst.offset // d.dst.tensor.free_size for d in program.dmas() if d.dst.is_sbuf}
    assert first == {0, 64}  # successive chunks take partitions 0-59 and 64-123: all 16 DMA engines


def test_the_defaults_sweeps_prove_rows_and_windows():
    """CI's sweep of the default kernel is the rows kernel's on the w axis and below 256 output rows on the h axis,
    the windows kernel's from 256 rows (one-pixel rows, two or more per partition): every sweep shape is small
    enough that the default takes the first that fits by rank. .ci/run sweeps rows by name on the h axis too."""
    for axis in ("h", "w"):
        for in_size, out_size in [(1, 1), (4096, 4096), (1, 4096), (4096, 1), (512, 513), (300, 255), (3, 256)]:
            in_shape, out_shape = axis_shapes(axis, in_size, out_size)
            want = "windows" if axis == "h" and out_size >= 256 else "rows"
            assert rk.trace_resize(in_shape, out_shape[1:3], "int32").selection.kernel == want, (axis, in_shape)

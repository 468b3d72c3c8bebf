"""The windows kernel: m output rows per partition, their source rows gathered as one window, picked by nc_n_gather."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics
from resize_kernels.errors import InvalidValueError
from resize_kernels.kernels import FORWARD, record
from resize_kernels.kernels.plan import plan_resize
from resize_kernels.kernels.windows import ROWS_PER_PARTITION, resize_nearest_windows_kernel
from resize_kernels.machine.cost import program_cost
from resize_kernels.machine.simulator import run
from resize_kernels.nki.tracer import trace
from resize_kernels.verifier import sweep

from conftest import DTYPES, assert_bits_equal, random_data


def refusal(shape, out_hw, item, convention=semantics.COMPILER):
    """Why the windows kernel's record says it does not take the shape (None: it does)."""
    return record(FORWARD, "windows").applies(plan_resize(shape, (shape[0], *out_hw, shape[3]), convention), item)


def check(x, out_hw, **kw):
    assert_bits_equal(rk.resize_nearest(x, out_hw, kernel="windows", **kw), semantics.resize_nearest_reference(x, out_hw))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_shape, out_hw", [
    ((6, 99, 23, 1), (241, 7)),  # many rows per partition, narrow pixels, windows across batch boundaries
    ((4, 27, 12, 1), (49, 8)),  # a last tile of a few partitions, a last partition of fewer rows
    ((3, 7, 5, 2), (300, 9)),  # deep upsample: windows of one or two rows
    ((2, 300, 40, 3), (120, 13)),  # a downsample: windows hold rows no output reads
    ((1, 60, 200, 1), (400, 30)),  # the columns read are under half a row: windows of that span, a row at a time
    ((5, 40, 3, 4), (51, 3)),  # the last windows clamped to end at the last source row
])
def test_equals_the_reference_bit_for_bit(in_shape, out_hw, dtype, rng):
    check(random_data(rng, in_shape, dtype), out_hw)  # random bits: NaN payloads, -0.0 and subnormals among them


@pytest.mark.parametrize("m", ROWS_PER_PARTITION)
def test_every_setting_is_exact(m, rng):
    x = random_data(rng, (3, 90, 17, 2), np.dtype("float16"))
    program = trace(lambda t: resize_nearest_windows_kernel(t, (3, 260, 11, 2), schedule=m), x)
    assert program.counts()["nc_n_gather"] == -(-3 * 260 // (128 * m))  # one per tile
    (got,) = run(program, [x])
    assert_bits_equal(got, semantics.resize_nearest_reference(x, (260, 11)))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 200), st.integers(1, 40), st.integers(1, 400), st.integers(1, 40),
       st.sampled_from([1, 2, 3, 8]), st.sampled_from(["float32", "bfloat16", "uint8", "int16"]),
       st.integers(0, 2**32 - 1))
def test_random_shapes_equal_the_reference(n, in_h, in_w, out_h, out_w, c, dtype, seed):
    dt = np.dtype(rk.machine.dtypes.as_dtype(dtype))
    assume(refusal((n, in_h, in_w, c), (out_h, out_w), dt.itemsize) is None)
    check(random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dt), (out_h, out_w))


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_takes_the_monotone_conventions_as_tables(dtype, rng):
    x = random_data(rng, (2, 40, 13, 3), np.dtype(dtype))
    taken = 0
    for convention in semantics.conventions():
        if refusal(x.shape, (301, 7), x.dtype.itemsize, convention) is not None:
            continue
        taken += 1
        got = rk.resize_nearest(x, (301, 7), kernel="windows", convention=convention)
        assert_bits_equal(got, semantics.convention_reference(x, (301, 7), convention))
    assert taken >= 10


def test_refuses_a_map_that_steps_back_and_a_window_past_its_budget():
    stepping = semantics.IndexConvention("half_pixel", "round_prefer_floor", "onnx")  # 7 -> 17 reads 3, 2, 3
    assert "requires a monotone height map" in refusal((1, 7, 4, 1), (17, 4), 4, stepping)
    assert "requires a tile of" in refusal((1, 10, 4000, 64), (40, 4000), 4)  # rows of 1 MiB
    with pytest.raises(InvalidValueError, match="resize_nearest_windows_kernel requires a tile of .*use kernel 'auto'"):
        rk.resize_nearest(np.zeros((1, 10, 4000, 64), np.float32), (40, 4000), kernel="windows")
    with pytest.raises(InvalidValueError, match=r"requires a schedule m, .*\(4, 8\) here\), got 0"):
        trace(lambda t: resize_nearest_windows_kernel(t, (1, 600, 5, 1), schedule=0), np.zeros((1, 60, 5, 1), np.int8))


def test_many_narrow_rows_take_two_dmas_per_tile_instead_of_one_per_row():
    """6x999x238x1 -> 2419x72 float16: 114 rows per partition, gathered one per DMA by the rows kernel; the default
    now takes the windows kernel, several times faster on the model."""
    shape, out_hw = (6, 999, 238, 1), (2419, 72)
    program = rk.trace_resize(shape, out_hw, "float16")
    assert program.selection.kernel == "windows"
    rows = rk.trace_resize(shape, out_hw, "float16", kernel="rows")
    assert len(program.dmas()) < len(rows.dmas()) // 5
    for target in ("trn1", "trn2"):
        assert program_cost(program, target).modelled_us < program_cost(rows, target).modelled_us / 2


@pytest.mark.parametrize("axis", ["h", "w"])
def test_per_axis_sweep_1_to_40(axis):  # CI sweeps it over 1..192
    result = sweep(40, axis, "windows", jobs=2)
    assert not result.failures, result.summary()

"""Index conventions other than the compiler's: each map against its oracle, bit for bit, and the kernels that
take them against the maps.

Oracles: onnx.reference's Resize (a one-node model) for ONNX's pairs; for tf_half_pixel_for_nn (which the reference
no longer implements: opset 13 dropped it) and TensorFlow's modes, a scalar re-computation of the formula each
documents, one element at a time in that framework's arithmetic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import semantics as S
from resize_kernels.errors import InvalidValueError
from resize_kernels.kernels.rows import resize_nearest_rows_kernel
from resize_kernels.machine.simulator import Executable
from resize_kernels.nki import trace

onnx = pytest.importorskip("onnx", reason="the ONNX oracle needs the test extra: pip install -e '.[test]'")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402
from onnx.reference.ops.op_resize import _interpolate_1d_with_x, _nearest_coeffs  # noqa: E402  (opset 11's mode: not in the evaluator)

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)
#: The pairs onnx.reference implements (tf_half_pixel_for_nn is opset 11 only).
REFERENCE_MODES = [m for m in S.COORDINATE_MODES if m != "tf_half_pixel_for_nn"]
ONNX_PAIRS = [(c, n) for c in S.COORDINATE_MODES for n in S.NEAREST_MODES]
TF = [S.IndexConvention(c, n, "tensorflow") for c, n in S.ARITHMETIC_PAIRS["tensorflow"]]


def onnx_resize_index(in_size: int, out_size: int, mode: str, nearest: str, scale: float | None = None) -> np.ndarray:
    """The source index of each output of a one-node ONNX Resize (opset 19) on a width-``in_size`` ramp."""
    x = np.arange(in_size, dtype=np.float32).reshape(1, 1, 1, in_size)
    if scale is None:
        inputs, init = ["X", "", "", "sizes"], helper.make_tensor("sizes", TensorProto.INT64, [4], [1, 1, 1, out_size])
    else:
        inputs, init = ["X", "", "scales"], helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 1, scale])
    node = helper.make_node("Resize", inputs, ["Y"], mode="nearest", coordinate_transformation_mode=mode,
                            nearest_mode=nearest)
    graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return ReferenceEvaluator(model).run(None, {"X": x})[0].reshape(-1).astype(np.int64)


@pytest.mark.parametrize("mode", REFERENCE_MODES)
@pytest.mark.parametrize("nearest", S.NEAREST_MODES)
def test_onnx_pairs_equal_the_reference_on_every_small_pair(mode, nearest):
    convention = S.IndexConvention(mode, nearest, "onnx")
    for i in range(1, 13):
        for o in range(1, 13):
            assert np.array_equal(S.convention_index(i, o, convention), onnx_resize_index(i, o, mode, nearest)), (i, o)


@SETTINGS
@given(st.sampled_from([(c, n) for c in REFERENCE_MODES for n in S.NEAREST_MODES]), st.integers(1, 600),
       st.integers(1, 600))
def test_onnx_pairs_equal_the_reference(pair, i, o):
    assert np.array_equal(S.convention_index(i, o, S.IndexConvention(*pair, "onnx")), onnx_resize_index(i, o, *pair))


@SETTINGS
@given(st.sampled_from([(c, n) for c in REFERENCE_MODES for n in S.NEAREST_MODES]), st.integers(1, 300),
       st.floats(0.0625, 8.0, width=32))
def test_onnx_scales_equal_the_reference(pair, i, scale):
    o = S.scaled_size(i, scale)
    if o < 1:
        with pytest.raises(InvalidValueError, match="positive sizes"):
            S.convention_index(i, o, S.IndexConvention(*pair, "onnx", (scale, scale)), scale)
        return
    got = S.convention_index(i, o, S.IndexConvention(*pair, "onnx", (scale, scale)), scale)
    assert np.array_equal(got, onnx_resize_index(i, o, *pair, scale=scale))


def _round_pick(x: float, nearest: str) -> int:
    """ONNX's nearest rounding of a float64 coordinate, one element at a time (an integer stays itself)."""
    lower = math.floor(x)
    if x == lower:
        return lower
    frac = x - lower
    return lower + {"floor": 0, "ceil": 1, "round_prefer_floor": frac > 0.5, "round_prefer_ceil": frac >= 0.5}[nearest]


def opset_11_tf_half_pixel_for_nn(i: int, o: int, nearest: str) -> list[int]:
    """x = (d + 0.5) / scale, scale = out / in, then the reference's rounding and neighbour search (float64, its
    padded axis included): onnx.reference's asymmetric transform of d + 0.5, on a ramp of i values."""
    ramp = np.arange(i, dtype=np.float64)
    coeffs = lambda ratio, scale: _nearest_coeffs(ratio, nearest)  # noqa: E731
    return [int(_interpolate_1d_with_x(ramp, o / i, o, d + 0.5, coeffs, coordinate_transformation_mode="asymmetric"))
            for d in range(o)]


@pytest.mark.parametrize("nearest, i, o", [("round_prefer_floor", 150, 55), ("round_prefer_floor", 14, 17)])
def test_tf_half_pixel_for_nn_ties_take_the_references_padded_neighbour(nearest, i, o):
    """(5 + 0.5) / (55 / 150) is 15.000000000000002, but the reference's padded axis rounds it to 16.0 exactly
    (x + 1), so the neighbour search takes source 14: the map follows the reference, not the naive formula."""
    got = S.convention_index(i, o, S.IndexConvention("tf_half_pixel_for_nn", nearest, "onnx")).tolist()
    assert got == opset_11_tf_half_pixel_for_nn(i, o, nearest)
    assert got != [min(max(_round_pick((d + 0.5) / (o / i), nearest), 0), i - 1) for d in range(o)]


@SETTINGS
@given(st.sampled_from(S.NEAREST_MODES), st.integers(1, 700), st.integers(1, 700))
def test_tf_half_pixel_for_nn_is_opset_11s_formula(nearest, i, o):
    """x = (d + 0.5) / scale, scale = out / in (float64, as the reference computes its other modes)."""
    got = S.convention_index(i, o, S.IndexConvention("tf_half_pixel_for_nn", nearest, "onnx"))
    assert got.tolist() == opset_11_tf_half_pixel_for_nn(i, o, nearest)


@SETTINGS
@given(st.sampled_from(TF), st.integers(1, 700), st.integers(1, 700))
def test_tensorflow_maps_are_its_float32_formulas(convention, i, o):
    """resize_nearest_neighbor_op.cc: scale = float(in - 1) / (out - 1) with align_corners (out > 1), else
    float(in) / out; roundf(d * scale), floorf((d + 0.5f) * scale) or floorf(d * scale); clamped to 0..in-1."""
    f32 = np.float32
    mode = convention.coordinate_transformation_mode
    scale = f32(i - 1) / f32(o - 1) if mode == "align_corners" and o > 1 else f32(i) / f32(o)
    want = []
    for d in range(o):
        if mode == "align_corners":
            p = float(f32(d) * scale)
            v = math.floor(p) + (p - math.floor(p) >= 0.5)  # roundf: ties away from zero
        elif mode == "tf_half_pixel_for_nn":
            v = math.floor(float((f32(d) + f32(0.5)) * scale))
        else:
            v = math.floor(float(f32(d) * scale))
        want.append(min(max(v, 0), i - 1))
    assert S.convention_index(i, o, convention).tolist() == want


def test_tensorflow_plain_map_is_the_compilers():
    plain = S.IndexConvention("asymmetric", "floor", "tensorflow")
    for i in range(1, 80):
        for o in range(1, 80):
            assert np.array_equal(S.convention_index(i, o, plain), S.source_index(i, o))


@pytest.mark.parametrize("pair", ONNX_PAIRS)
def test_maps_differ_from_exact_arithmetic_only_near_ties(pair):
    """Where the float64 map and the exact-rational one disagree, the exact coordinate sits on a rounding boundary
    (an integer, or a half for the round modes): float64 rounding moved it across. Counted, so the README's figures
    stay true."""
    convention = S.IndexConvention(*pair, "onnx")
    for i in range(1, 40):
        for o in range(1, 40):
            for d in S.convention_differences(i, o, convention):
                exact = S.convention_index_exact(i, o, convention)[d]
                assert abs(int(S.convention_index(i, o, convention)[d]) - int(exact)) == 1


def test_the_default_is_the_compilers_map_and_a_named_onnx_pair_is_not():
    assert S.COMPILER.is_default and S.IndexConvention().is_default
    onnx_floor = S.IndexConvention("asymmetric", "floor", "onnx")
    differs = [(i, o) for i in range(1, 60) for o in range(1, 60)
               if not np.array_equal(S.convention_index(i, o, onnx_floor), S.source_index(i, o))]
    assert differs, "the float64 and float32 asymmetric floor maps should differ somewhere in 1..59"


def test_bad_conventions_name_the_choices():
    with pytest.raises(InvalidValueError, match="coordinate_transformation_mode one of 'half_pixel'"):
        S.IndexConvention("bogus", "floor", "onnx")
    with pytest.raises(InvalidValueError, match="nearest_mode one of"):
        S.IndexConvention("half_pixel", "nearest", "onnx")
    with pytest.raises(InvalidValueError, match="arithmetic one of"):
        S.IndexConvention(arithmetic="numpy")
    with pytest.raises(InvalidValueError, match="arithmetic='onnx' takes every pair"):
        S.IndexConvention("half_pixel", "floor", "tensorflow")
    with pytest.raises(InvalidValueError, match="positive finite scales"):
        S.IndexConvention("half_pixel", "floor", "onnx", (0.0, 1.0))
    with pytest.raises(InvalidValueError, match="takes sizes, not scales"):
        S.IndexConvention("asymmetric", "floor", "tensorflow", (2.0, 2.0))
    with pytest.raises(InvalidValueError, match=r"floor\(in_size \* scale\)"):
        S.convention_index(7, 5, S.IndexConvention("half_pixel", "floor", "onnx", (0.5, 0.5)), 0.5)


# -- kernels ------------------------------------------------------------------------------------------

def _labels(shape) -> np.ndarray:
    return np.arange(math.prod(shape), dtype=np.int32).reshape(shape)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.sampled_from(ONNX_PAIRS), st.sampled_from(["auto", "rows", "rowreuse", "exact"]), st.integers(1, 3),
       st.integers(1, 40),
       st.integers(1, 300), st.integers(1, 40), st.integers(1, 300), st.integers(1, 5))
def test_kernels_follow_each_onnx_pair(pair, kernel, n, in_h, in_w, out_h, out_w, c):
    x = _labels((n, in_h, in_w, c))
    y = rk.resize_nearest(x, (out_h, out_w), kernel, coordinate_transformation_mode=pair[0], nearest_mode=pair[1])
    assert np.array_equal(y, S.convention_reference(x, (out_h, out_w), S.IndexConvention(*pair, "onnx")))


@pytest.mark.parametrize("convention", TF, ids=lambda c: c.describe())
def test_kernels_follow_tensorflows_maps(convention):
    for in_hw, out_hw in [((5, 7), (9, 13)), ((9, 13), (5, 7)), ((1, 1), (3, 200)), ((37, 53), (101, 97))]:
        x = _labels((2, *in_hw, 3))
        for kernel in ("auto", "rows", "rowreuse", "exact"):
            y = rk.resize_nearest(x, out_hw, kernel, convention=convention)
            assert np.array_equal(y, S.convention_reference(x, out_hw, convention)), (in_hw, out_hw, kernel)


@pytest.mark.parametrize("shape, out_hw", [((1, 30, 20, 64), (59, 38)), ((2, 30, 20, 8), (59, 38)),
                                           ((1, 300, 4, 4), (1000, 7)), ((4, 37, 53, 6), (101, 97)),
                                           ((1, 256, 256, 3), (511, 383)), ((1, 200, 150, 1), (300, 130))])
def test_the_rows_kernel_takes_tables_on_each_of_its_tilings(shape, out_hw):
    """Whole batches per tile, flat rows (both tilings), tiles of one batch's rows; column chunks that repeat by
    nc_n_gather (narrow pixels) read their column index from a table too."""
    convention = S.IndexConvention("half_pixel", "round_prefer_ceil", "onnx")
    x = _labels(shape)
    want = S.convention_reference(x, out_hw, convention)
    for schedule in [None, ("whole", 2), ("balanced", 4)]:
        program = trace(resize_nearest_rows_kernel, x, out_shape=(shape[0], *out_hw, shape[3]), schedule=schedule,
                        convention=convention)
        assert program.constants and not any(i.opcode == "activation" for i in program.instructions)
        (y,) = Executable(program).run([x])
        assert np.array_equal(y, want), schedule


@pytest.mark.parametrize("dtype", ["float32", "float16", "uint8"])
def test_conventions_move_bits_exactly(dtype):
    """NaN payloads, -0.0 and subnormals arrive unchanged: the kernel only moves bytes."""
    rng = np.random.default_rng(3)
    item = np.dtype(dtype).itemsize
    raw = rng.integers(0, 256, size=(2, 11, 17, 4 * item), dtype=np.uint8)
    x = raw.view(dtype).reshape(2, 11, 17, 4)
    convention = S.IndexConvention("pytorch_half_pixel", "round_prefer_ceil", "onnx")
    y = rk.resize_nearest(x, (23, 8), convention=convention)
    want = S.convention_reference(x, (23, 8), convention)
    assert y.dtype == x.dtype and np.array_equal(y.view(np.uint8), want.view(np.uint8))


def test_onnx_scales_reach_the_kernel():
    x = _labels((1, 4, 6, 2))
    y = rk.resize_nearest(x, (6, 10), coordinate_transformation_mode="asymmetric", nearest_mode="floor",
                          scales=(1.7, 1.7))
    want = S.convention_reference(x, (6, 10), S.IndexConvention("asymmetric", "floor", "onnx", (1.7, 1.7)))
    assert np.array_equal(y, want)
    assert y[0, :, 0, 0].tolist() != rk.resize_nearest(x, (6, 10))[0, :, 0, 0].tolist()  # 4 -> 6 at 1.7 is not 4/6


def test_a_mode_left_out_takes_onnxs_default():
    x = _labels((1, 9, 9, 1))
    got = rk.resize_nearest(x, (4, 20), nearest_mode="floor")
    assert np.array_equal(got, S.convention_reference(x, (4, 20), S.IndexConvention("half_pixel", "floor", "onnx")))


def test_conventions_api_errors():
    x = _labels((1, 4, 4, 1))
    with pytest.raises(InvalidValueError, match="kernel 'sourcerows' computes the compiler's map on chip.*'auto', 'windows', 'rows'"):
        rk.resize_nearest(x, (8, 8), "sourcerows", nearest_mode="ceil")
    with pytest.raises(InvalidValueError, match="either convention or ONNX's mode names"):
        rk.resize_nearest(x, (8, 8), nearest_mode="ceil", convention=S.COMPILER)
    with pytest.raises(InvalidValueError, match="scales only with ONNX's"):
        rk.resize_nearest(x, (8, 8), scales=(2.0, 2.0))
    with pytest.raises(InvalidValueError, match="convention 'jax', a key such as 'onnx/half_pixel/floor' or an "
                                                "IndexConvention, got 'half_pixel'"):
        rk.resize_nearest(x, (8, 8), convention="half_pixel")  # a name is 'jax' or a key
    with pytest.raises(InvalidValueError, match="it would be 9"):
        rk.resize_nearest(x, (8, 8), coordinate_transformation_mode="half_pixel", scales=(2.3, 2.3))


def test_a_convention_kernel_reads_its_column_map_from_one_constant():
    program = rk.trace_resize((1, 5, 300, 2), (7, 410), "float32", "rowreuse",
                              convention=S.IndexConvention("half_pixel", "round_prefer_floor", "onnx"))
    assert len(program.constants) == 1 and program.constants[0].shape == (128, 4)
    assert "const" in program.listing(limit=0)
    default = rk.trace_resize((1, 5, 300, 2), (7, 410), "float32", "rowreuse")
    assert not default.constants


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.sampled_from(ONNX_PAIRS), st.sampled_from(["auto", "general", "rows"]),
       st.sampled_from(["float32", "float16", "bfloat16"]), st.integers(1, 2), st.integers(1, 30), st.integers(1, 150),
       st.integers(1, 30), st.integers(1, 150))
def test_gradients_follow_each_onnx_pair(pair, kernel, dtype, n, in_h, in_w, out_h, out_w):
    """dx is the convention's reference gradient bit for bit (float32 sums in row-major order, cast once)."""
    import ml_dtypes

    convention = S.IndexConvention(*pair, "onnx")
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    dy = np.random.default_rng(in_h * out_w).standard_normal((n, out_h, out_w, 2)).astype(np_dtype)
    try:
        dx = rk.resize_nearest_grad(dy, (in_h, in_w), kernel, convention=convention)
    except InvalidValueError as e:  # "rows" takes shapes whose dx pixels' dy pixels fit its tile
        assert kernel == "rows" and "fit" in str(e)
        return
    want = S.resize_nearest_grad_reference(dy, (in_h, in_w), convention)
    assert np.array_equal(dx.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("pair", [("half_pixel", "round_prefer_floor"), ("align_corners", "ceil")])
def test_the_exact_kernel_takes_conventions(pair):
    convention = S.IndexConvention(*pair, "onnx")
    for in_hw, out_hw in [((5, 7), (9, 13)), ((3, 200), (7, 300)), ((40, 3), (130, 5))]:
        x = _labels((2, *in_hw, 3))
        assert np.array_equal(rk.resize_nearest(x, out_hw, "exact", convention=convention),
                              S.convention_reference(x, out_hw, convention))


def test_gradient_conventions_api():
    dy = np.ones((1, 8, 8, 1), np.float32)
    with pytest.raises(InvalidValueError, match="reduce_window' is the compiler's path"):
        rk.resize_nearest_grad(dy, (4, 4), "reduce_window", nearest_mode="ceil")
    got = rk.resize_nearest_grad(dy, (4, 4), coordinate_transformation_mode="align_corners", nearest_mode="floor")
    want = S.resize_nearest_grad_reference(dy, (4, 4), S.IndexConvention("align_corners", "floor", "onnx"))
    assert np.array_equal(got, want) and got.sum() == 64


# -- the verifier ---------------------------------------------------------------------------------------

ALL_CONVENTIONS = [S.IndexConvention(*pair, "onnx") for pair in ONNX_PAIRS] + TF


@pytest.mark.parametrize("convention", ALL_CONVENTIONS, ids=lambda c: c.key)
def test_the_default_kernel_is_exact_on_every_small_pair_of_each_convention(convention):
    from resize_kernels.verifier import sweep

    for axis in ("w", "h"):
        result = sweep(9, axis, convention=convention)
        assert not result.failures and not result.not_applicable, result.summary()
        assert result.convention == convention.key and convention.key in result.summary()


@pytest.mark.parametrize("convention", [ALL_CONVENTIONS[0], TF[1]], ids=lambda c: c.key)
def test_gradient_sweeps_take_conventions(convention):
    from resize_kernels.verifier import GRAD, sweep

    for kernel in ("general", "rows"):
        result = sweep(7, "w", kernel, op=GRAD, convention=convention)
        assert not result.failures, result.summary()


def test_verify_names_the_convention_and_a_kernel_that_does_not_take_it():
    from resize_kernels.verifier import verify

    report = verify((1, 5, 7, 2), (9, 13), "rows", coordinate_transformation_mode="align_corners")
    assert report.ok and "onnx align_corners/round_prefer_floor" in str(report)
    refused = verify((1, 5, 7, 2), (9, 13), "sourcerows", coordinate_transformation_mode="align_corners")
    assert not refused.applicable and "computes the compiler's map on chip" in refused.not_applicable


def test_a_sweep_checkpoint_keeps_conventions_apart(tmp_path):
    from resize_kernels.verifier import Checkpoint, sweep

    path = tmp_path / "sweep.jsonl"
    one = S.IndexConvention("half_pixel", "ceil", "onnx")
    first = sweep(6, "w", convention=one, checkpoint=path)
    assert not first.failures
    chunks = Checkpoint(path).load()
    assert chunks and all(c.convention == one.key for c in chunks)
    other = sweep(6, "w", checkpoint=path)  # the compiler's map: nothing of the first sweep counts for it
    assert not other.failures and len(Checkpoint(path).load()) == 2 * len(chunks)


def test_the_command_line_proves_a_convention(capsys):
    from resize_kernels.cli import main

    assert main(["verify", "--sweep", "6", "--coordinate-transformation-mode", "pytorch_half_pixel",
                 "--nearest-mode", "round_prefer_ceil", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("(onnx/pytorch_half_pixel/round_prefer_ceil)") == 2 and out.count("all exact") == 2
    assert main(["verify", "--in", "1x5x7x2", "--out", "9x13", "--tensorflow-mode", "align_corners"]) == 0
    assert "tensorflow align_corners" in capsys.readouterr().out
    assert main(["verify", "--in", "1x5x7x2", "--out", "9x13", "--tensorflow-mode", "align_corners",
                 "--nearest-mode", "floor"]) == 1
    assert "one way of naming the map" in capsys.readouterr().err
    assert main(["verify", "--sweep", "5", "--convention", "torch/half_pixel/round_prefer_ceil/indexed",
                 "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("(torch/half_pixel/round_prefer_ceil/indexed)") == 2 and out.count("all exact") == 2
    assert main(["verify", "--sweep", "5", "--convention", "torch/half_pixel"]) == 1
    assert "arithmetic/coordinate mode/nearest mode" in capsys.readouterr().err


def test_conventions_lists_every_map_once():
    listed = S.conventions()
    assert len({c.key for c in listed}) == len(listed) == 20 + 3 + 1 + len(S.TORCH_PATHS)  # onnx, tf, jax, torch
    assert all(S.IndexConvention.from_key(c.key) == c and not c.is_default for c in listed)


@pytest.mark.parametrize("axis", [1, 2])
def test_a_map_that_steps_back_has_an_exact_gradient(axis):
    """onnx.reference's 7 -> 17 half_pixel / round_prefer_floor reads sources 3, 2, 3 at outputs 7, 8, 9: the
    reference sums each source's outputs wherever they are (checked against a plain loop in row-major order),
    auto's gradient (general) matches it, and rows, which needs one run per source, declines."""
    c = S.IndexConvention("half_pixel", "round_prefer_floor", "onnx")
    src = S.convention_index(7, 17, c)
    assert src[7:10].tolist() == [3, 2, 3]
    in_hw, dy_shape = ((7, 1), (2, 17, 1, 3)) if axis == 1 else ((1, 7), (2, 1, 17, 3))
    dy = np.random.default_rng(0).standard_normal(dy_shape, dtype=np.float32)
    want = np.zeros((2, *in_hw, 3), np.float32)
    for d in range(17):  # the definition: dx[src(d)] += dy[d], one float32 add at a time, in order
        at = (slice(None), src[d], 0) if axis == 1 else (slice(None), 0, src[d])
        want[at] += dy[(slice(None), d, 0) if axis == 1 else (slice(None), 0, d)]
    ref = S.resize_nearest_grad_reference(dy, in_hw, c)
    assert np.array_equal(ref.view(np.uint32), want.view(np.uint32))
    got = rk.resize_nearest_grad(dy, in_hw, convention=c)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    with pytest.raises(ValueError, match="monotone forward map"):
        rk.resize_nearest_grad(dy, in_hw, kernel="rows", convention=c)

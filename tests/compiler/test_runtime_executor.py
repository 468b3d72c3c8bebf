"""The executor: ordinary HLO ops in numpy, kernels on the simulator, clear errors for what it cannot run."""

import ml_dtypes
import numpy as np
import pytest

from resize_kernels.compiler.hlo import parse_hlo_module
from resize_kernels import compile_hlo
from resize_kernels.runtime import ExecutionError, Executor, executor, random_arguments

from conftest import assert_bits_equal
from hlo_texts import custom_call_module, resize_module


def module(*lines: str, extra: str = "") -> str:
    body = "".join(f"  {line}\n" for line in lines)
    return f"HloModule m\n\n{extra}ENTRY main {{\n{body}}}\n"


def run(text: str, *args):
    return Executor(parse_hlo_module(text), {})(*args)


ADD = "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
MAX = "max_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(b, a)\n}\n\n"
X23 = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_transpose_reshape_copy():
    text = module("x = f32[2,3]{1,0} parameter(0)", "t = f32[3,2]{0,1} transpose(x), dimensions={1,0}",
                  "r = f32[6] reshape(t)", "ROOT c = f32[6] copy(r)")
    assert_bits_equal(run(text, X23), X23.T.reshape(6))


@pytest.mark.parametrize("opcode, expected", [("add", X23 + 1), ("subtract", X23 - 1), ("multiply", X23 * 1),
                                              ("divide", X23 / 1), ("maximum", np.maximum(X23, 1)),
                                              ("minimum", np.minimum(X23, 1))])
def test_elementwise_with_a_broadcast_scalar(opcode, expected):
    text = module("x = f32[2,3] parameter(0)", "one = f32[] constant(1)",
                  "b = f32[2,3] broadcast(one), dimensions={}", f"ROOT r = f32[2,3] {opcode}(x, b)")
    assert_bits_equal(run(text, X23), expected)


def test_broadcast_maps_operand_dims_to_the_given_result_dims():
    v = np.array([1, 2, 3], np.float32)
    text = module("v = f32[3] parameter(0)", "ROOT b = f32[2,3,4] broadcast(v), dimensions={1}")
    assert_bits_equal(run(text, v), np.broadcast_to(v[None, :, None], (2, 3, 4)))
    text = module("x = f32[2,3] parameter(0)", "ROOT b = f32[3,5,2] broadcast(x), dimensions={2,0}")
    assert_bits_equal(run(text, X23), np.broadcast_to(X23.T[:, None, :], (3, 5, 2)))


def test_integer_divide_truncates_and_division_by_zero_gives_minus_one():
    a, b = np.array([7, -7, 7, -7, 5], np.int32), np.array([2, 2, -2, -2, 0], np.int32)
    text = module("a = s32[5] parameter(0)", "b = s32[5] parameter(1)", "ROOT d = s32[5] divide(a, b)")
    assert_bits_equal(run(text, a, b), np.array([3, -3, -3, 3, -1], np.int32))


def test_convert_float_to_int_truncates_saturates_and_maps_nan_to_zero():
    x = np.array([1.7, -1.7, 1e10, -1e10, np.nan, 300.0], np.float32)
    text = module("x = f32[6] parameter(0)", "ROOT c = s32[6] convert(x)")
    assert_bits_equal(run(text, x), np.array([1, -1, 2**31 - 1, -2**31, 0, 300], np.int32))
    text = module("x = f32[6] parameter(0)", "ROOT c = u8[6] convert(x)")
    assert_bits_equal(run(text, x), np.array([1, 0, 255, 0, 0, 255], np.uint8))


def test_convert_between_floats_and_to_pred():
    x = np.array([1.00390625, -0.0, np.nan], np.float32)
    text = module("x = f32[3] parameter(0)", "b = bf16[3] convert(x)", "p = pred[3] convert(x)",
                  "ROOT t = (bf16[3], pred[3]) tuple(b, p)")
    b, p = run(text, x)
    assert_bits_equal(b, x.astype(ml_dtypes.bfloat16))
    assert_bits_equal(p, np.array([True, False, True]))


def test_tuples_and_get_tuple_element():
    text = module("p = (f32[2,3], s32[]) parameter(0)", "a = f32[2,3] get-tuple-element(p), index=0",
                  "i = s32[] get-tuple-element(p), index=1", "ROOT t = (s32[], f32[2,3]) tuple(i, a)")
    i, a = run(text, (X23, np.int32(4)))
    assert_bits_equal(a, X23)
    assert_bits_equal(i, np.array(4, np.int32))


def test_reduce_window_sum_with_an_add_body():
    x = np.arange(24, dtype=np.float32).reshape(1, 4, 6, 1)
    text = module("x = f32[1,4,6,1] parameter(0)", "zero = f32[] constant(0)",
                  "ROOT r = f32[1,2,3,1] reduce-window(x, zero), window={size=1x2x2x1 stride=1x2x2x1}, "
                  "to_apply=add_f32",
                  extra=ADD)
    assert_bits_equal(run(text, x), x.reshape(1, 2, 2, 3, 2, 1).sum(axis=(2, 4)))


def test_reduce_window_max_pads_with_the_init_value():
    x = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    text = module("x = f32[3,3] parameter(0)", "low = f32[] constant(-inf)",
                  "ROOT r = f32[2,2] reduce-window(x, low), window={size=3x3 stride=2x2 pad=1_1x1_1}, to_apply=max_f32",
                  extra=MAX)
    assert_bits_equal(run(text, x), np.array([[5, 6], [8, 9]], np.float32))


def test_reduce_window_with_another_body_is_refused():
    body = "mul {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] multiply(a, b)\n}\n\n"
    text = module("x = f32[4] parameter(0)", "one = f32[] constant(1)",
                  "ROOT r = f32[2] reduce-window(x, one), window={size=2 stride=2}, to_apply=mul", extra=body)
    with pytest.raises(ExecutionError) as info:
        run(text, np.ones(4, np.float32))
    assert str(info.value) == ("reduce-window 'r' requires to_apply to compute add, maximum, minimum of its two "
                               "parameters, got mul whose root is multiply")


def test_constants_are_shared_and_read_only():
    text = module("ROOT c = f32[2] constant({1, 2})")
    ex = Executor(parse_hlo_module(text), {})
    assert ex() is ex() and not ex().flags.writeable


def test_an_unlowered_custom_call_is_a_clear_error():
    compiled = compile_hlo(custom_call_module(attributes='custom_call_target="MyKernel"'))
    with pytest.raises(ExecutionError) as info:
        compiled(np.zeros((1, 4, 4, 8), np.float32))
    assert str(info.value) == (
        'custom-call \'rn\' (custom_call_target="MyKernel") was not lowered by the compiler; '
        "the executor runs kernels only as the InternalNativeNkiKernel instructions that compile_hlo traced")


def test_an_unknown_opcode_lists_what_runs():
    text = module("x = f32[2] parameter(0)", "ROOT n = f32[2] erf(x)")
    with pytest.raises(ExecutionError, match=r"^the executor cannot run erf 'n'; it runs abs, add, and, atan2, "):
        run(text, np.ones(2, np.float32))


def test_wrong_operand_count():
    with pytest.raises(ExecutionError, match=r"^transpose 't' takes 1 operand\(s\), got 2$"):
        run(module("x = f32[2] parameter(0)", "ROOT t = f32[2] transpose(x, x), dimensions={0}"))


def test_arguments_are_checked():
    compiled = compile_hlo(resize_module("new"))
    with pytest.raises(ExecutionError) as info:
        compiled()
    assert str(info.value) == ("module jit_upsample takes 1 argument(s) (x.1: f32[1,8,30,20]{3,2,1,0}), got 0")
    with pytest.raises(ExecutionError) as info:
        compiled(np.zeros((1, 8, 30, 20)))
    assert str(info.value) == ("argument 0 (x.1) must be a float32 array of shape (1, 8, 30, 20), got float64 "
                               "array of shape (1, 8, 30, 20)")


def test_a_declared_shape_that_does_not_match_is_caught_at_its_instruction():
    text = module("x = f32[2,3] parameter(0)", "ROOT t = f32[2,3] transpose(x), dimensions={1,0}")
    with pytest.raises(ExecutionError) as info:
        run(text, X23)
    assert str(info.value) == ("transpose 't' computed float32 array of shape (3, 2), but the HLO declares "
                               "f32[2,3]; fix the instruction's shape or its attributes")


def test_a_failing_numpy_op_is_reported_for_its_instruction():
    text = module("x = f32[2,3] parameter(0)", "ROOT t = f32[2,3] transpose(x), dimensions={0,1,2}")
    with pytest.raises(ExecutionError, match=r"^transpose 't' failed on float32 array of shape \(2, 3\): "):
        run(text, X23)


def test_kernel_programs_run_on_one_cached_executable(monkeypatch, rng):
    made = []
    real = executor.Executable
    monkeypatch.setattr(executor, "Executable", lambda program: made.append(program) or real(program))
    compiled = compile_hlo(resize_module("old"))
    x = rng.standard_normal((1, 8, 30, 20), dtype=np.float32)
    compiled(x), compiled(x)
    assert made == list(compiled.programs.values())


def test_random_arguments_fit_the_parameters_and_are_seeded():
    text = module("p = (f32[2,3], s8[4]) parameter(0)", "q = pred[5] parameter(1)", "ROOT r = bf16[] parameter(2)")
    m = parse_hlo_module(text)
    (f, s), q, r = random_arguments(m, seed=1)
    assert (f.dtype, f.shape, s.dtype, q.dtype, r.dtype, r.shape) == (
        np.float32, (2, 3), np.int8, np.bool_, ml_dtypes.bfloat16, ())
    assert_bits_equal(random_arguments(m, seed=1)[0][0], f)
    Executor(m, {})(*random_arguments(m))

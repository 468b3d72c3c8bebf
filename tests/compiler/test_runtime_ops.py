"""The executor's ops beyond data movement: compare, select, clamp, slice, pad, iota, concatenate, reduce and the
elementwise ops, against numpy / ml_dtypes and the bits XLA:CPU computes; then JAX-made modules around a resize
(data_runtime/, written by data_runtime/make.py) against XLA's own values for them.

Where a value below is written as bits, it is what XLA:CPU (jax 0.10.2) computes for that op, which is where
numpy differs (NaN signs and payloads, -0 against +0, integer edge cases).
"""

import math
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from resize_kernels import compile_hlo
from resize_kernels.compiler.hlo import parse_hlo_module
from resize_kernels.runtime import ExecutionError, Executor

from conftest import assert_bits_equal, bits
from hlo_texts import ROOT

# The numpy references below meet NaN, infinities and overflow on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BF16 = ml_dtypes.bfloat16
DATA = ROOT / "tests" / "compiler" / "data_runtime"
TYPES = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(BF16): "bf16", np.dtype(np.float64): "f64",
         np.dtype(np.int32): "s32", np.dtype(np.int8): "s8", np.dtype(np.uint8): "u8", np.dtype(np.int64): "s64",
         np.dtype(np.int16): "s16", np.dtype(np.uint32): "u32", np.dtype(np.bool_): "pred"}


def module(*lines: str, extra: str = "") -> str:
    body = "".join(f"  {line}\n" for line in lines)
    return f"HloModule m\n\n{extra}ENTRY main {{\n{body}}}\n"


def run(text: str, *args):
    return Executor(parse_hlo_module(text), {})(*args)


def t(x: np.ndarray) -> str:
    """The HLO shape of array x."""
    return f"{TYPES[x.dtype]}[{','.join(map(str, x.shape))}]"


def op(opcode: str, *args: np.ndarray, result=None, attributes: str = "") -> np.ndarray:
    """``opcode`` applied to the arrays (parameters), its result of the first one's shape (or `result`)."""
    params = [f"p{i} = {t(a)} parameter({i})" for i, a in enumerate(args)]
    names = ", ".join(f"p{i}" for i in range(len(args)))
    shape = result or t(args[0])
    return run(module(*params, f"ROOT r = {shape} {opcode}({names}){attributes}"), *args)


def f32(*hexes: int) -> np.ndarray:
    return np.array(hexes, np.uint32).view(np.float32)


def f16(*hexes: int) -> np.ndarray:
    return np.array(hexes, np.uint16).view(np.float16)


def b16(*hexes: int) -> np.ndarray:
    return np.array(hexes, np.uint16).view(BF16)


def refused(text: str, *args) -> str:
    with pytest.raises(ExecutionError) as info:
        run(text, *args)
    return str(info.value)


ONE, MINUS_ONE, ZERO, MINUS_ZERO = 0x3F800000, 0xBF800000, 0x00000000, 0x80000000
NAN3, MINUS_NAN5, SNAN, MINUS_INF, INF = 0x7FC00003, 0xFFC00005, 0x7F800001, 0xFF800000, 0x7F800000
GRID = [ONE, MINUS_ONE, ZERO, MINUS_ZERO, NAN3, MINUS_NAN5, SNAN, MINUS_INF]


# ----- maximum, minimum, clamp: NaN propagates, -0 < +0 ---------------------------------------------

# XLA:CPU's maximum / minimum of every pair of GRID, row = first operand.
XLA_MAX = [
    [ONE, ONE, ONE, ONE, NAN3, 0x7FC00005, SNAN, ONE],
    [ONE, MINUS_ONE, ZERO, MINUS_ZERO, NAN3, MINUS_NAN5, SNAN, MINUS_ONE],
    [ONE, ZERO, ZERO, ZERO, NAN3, 0x7FC00005, SNAN, ZERO],
    [ONE, MINUS_ZERO, ZERO, MINUS_ZERO, NAN3, MINUS_NAN5, SNAN, MINUS_ZERO],
    [NAN3] * 8, [MINUS_NAN5] * 8, [SNAN] * 8,
    [ONE, MINUS_ONE, ZERO, MINUS_ZERO, NAN3, MINUS_NAN5, SNAN, MINUS_INF]]
XLA_MIN = [
    [ONE, MINUS_ONE, ZERO, MINUS_ZERO, NAN3, MINUS_NAN5, SNAN, MINUS_INF],
    [MINUS_ONE, MINUS_ONE, MINUS_ONE, MINUS_ONE, 0xFFC00003, MINUS_NAN5, 0xFF800001, MINUS_INF],
    [ZERO, MINUS_ONE, ZERO, MINUS_ZERO, NAN3, MINUS_NAN5, SNAN, MINUS_INF],
    [MINUS_ZERO, MINUS_ONE, MINUS_ZERO, MINUS_ZERO, 0xFFC00003, MINUS_NAN5, 0xFF800001, MINUS_INF],
    [NAN3] * 8, [MINUS_NAN5] * 8, [SNAN] * 8,
    [MINUS_INF, MINUS_INF, MINUS_INF, MINUS_INF, 0xFFC00003, MINUS_NAN5, 0xFF800001, MINUS_INF]]


@pytest.mark.parametrize("opcode, table", [("maximum", XLA_MAX), ("minimum", XLA_MIN)])
def test_float32_maximum_and_minimum_are_xlas_bit_for_bit(opcode, table):
    a = f32(*[x for x in GRID for _ in GRID])
    b = f32(*[y for _ in GRID for y in GRID])
    assert_bits_equal(op(opcode, a, b), f32(*[v for row in table for v in row]))


def test_half_maximum_works_on_the_bits_of_float16_and_through_float32_for_bfloat16():
    one = np.ones(5, np.float16)
    assert_bits_equal(op("maximum", one, f16(0x7E01, 0x7C01, 0xFE03, 0x3C00, 0x8000)),
                      f16(0x7E01, 0x7C01, 0x7E03, 0x3C00, 0x3C00))
    one = np.ones(5, BF16)
    assert_bits_equal(op("maximum", one, b16(0x7FC1, 0x7F81, 0xFFC3, 0x3F80, 0x8000)),
                      b16(0x7FC0, 0x7FC0, 0x7FC0, 0x3F80, 0x3F80))  # a canonical NaN, as XLA:CPU makes it
    assert_bits_equal(op("minimum", b16(0xFFC3, 0x8000), b16(0x3F80, 0x0000)), b16(0xFFC0, 0x8000))


def test_integer_maximum_and_minimum():
    a, b = np.array([-128, 127, 0, 5], np.int8), np.array([127, -128, -1, 5], np.int8)
    assert_bits_equal(op("maximum", a, b), np.maximum(a, b))
    assert_bits_equal(op("minimum", a.view(np.uint8), b.view(np.uint8)), np.minimum(a.view(np.uint8), b.view(np.uint8)))
    p, q = np.array([True, False, True]), np.array([False, False, True])
    assert_bits_equal(op("maximum", p, q), p | q)


def test_clamp_keeps_a_nans_sign_as_xla_does():
    """jax.lax.clamp on XLA:CPU (jax 0.10.2): minimum(maximum(low, x), high) in that operand order."""
    nan, minus_nan = 0x7FC00002, 0xFFC00002
    x = f32(nan, minus_nan, MINUS_ZERO, ZERO, 0x7FC00000)
    text = module("lo = f32[] parameter(0)", "x = f32[5] parameter(1)", "hi = f32[] parameter(2)",
                  "ROOT c = f32[5] clamp(lo, x, hi)")
    assert_bits_equal(run(text, f32(MINUS_ZERO)[0], x, f32(MINUS_ZERO)[0]),
                      f32(nan, minus_nan, MINUS_ZERO, MINUS_ZERO, 0x7FC00000))
    assert_bits_equal(run(text, np.float32(-1), x, np.float32(0.5)), f32(nan, minus_nan, MINUS_ZERO, ZERO, 0x7FC00000))
    lo_nan = f32(0xFFC00003)[0]
    assert_bits_equal(run(text, lo_nan, f32(ONE, MINUS_ZERO, ZERO, ONE, ONE), np.float32(2)), f32(*[0xFFC00003] * 5))
    assert_bits_equal(run(text, np.float32(0), f32(ONE, MINUS_ZERO, ZERO, ONE, ONE), lo_nan), f32(*[0xFFC00003] * 5))


def test_clamp_is_minimum_of_high_and_maximum_of_low_and_x():
    x = f32(MINUS_ZERO, ZERO, 0x7FC00002, 0xFFC00002, ONE, MINUS_ONE, INF, MINUS_INF)
    low, high = np.float32(0), np.float32(0.5)
    text = module("lo = f32[] parameter(0)", "x = f32[8] parameter(1)", "hi = f32[] parameter(2)",
                  "ROOT c = f32[8] clamp(lo, x, hi)")
    assert_bits_equal(run(text, low, x, high), f32(ZERO, ZERO, 0x7FC00002, 0x7FC00002, 0x3F000000, ZERO, 0x3F000000,
                                                   ZERO))
    assert_bits_equal(run(text, np.float32(-1), x, high),
                      f32(MINUS_ZERO, ZERO, 0x7FC00002, 0xFFC00002, 0x3F000000, MINUS_ONE, 0x3F000000, MINUS_ONE))
    ints = np.array([-7, 0, 9], np.int32)
    text = module("lo = s32[3] parameter(0)", "x = s32[3] parameter(1)", "hi = s32[] parameter(2)",
                  "ROOT c = s32[3] clamp(lo, x, hi)")
    assert_bits_equal(run(text, np.array([-5, 2, 20], np.int32), ints, np.int32(4)), np.array([-5, 2, 4], np.int32))


def test_clamp_bounds_must_be_scalars_or_of_the_result_dimensions():
    text = module("lo = f32[2] parameter(0)", "x = f32[3] parameter(1)", "ROOT c = f32[3] clamp(lo, x, x)")
    assert refused(text, np.zeros(2, np.float32), np.zeros(3, np.float32)) == (
        "clamp 'c' requires an operand of the result's dimensions [3] and scalar bounds or bounds of those "
        "dimensions, got f32[2], f32[3], f32[3]")


# ----- compare and select --------------------------------------------------------------------------

VALUES = f32(MINUS_NAN5, MINUS_INF, MINUS_ONE, MINUS_ZERO, ZERO, ONE, INF, NAN3)


@pytest.mark.parametrize("direction, ufunc", [("EQ", np.equal), ("NE", np.not_equal), ("LT", np.less),
                                              ("LE", np.less_equal), ("GT", np.greater), ("GE", np.greater_equal)])
def test_float_compare_is_ieee_nan_unordered_and_zeros_equal(direction, ufunc):
    a = np.repeat(VALUES, len(VALUES))
    b = np.tile(VALUES, len(VALUES))
    assert_bits_equal(op("compare", a, b, result="pred[64]", attributes=f", direction={direction}"), ufunc(a, b))
    for cast in (BF16, np.float16):
        assert_bits_equal(op("compare", a.astype(cast), b.astype(cast), result="pred[64]",
                             attributes=f", direction={direction}"), ufunc(a, b))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.float64])
def test_totalorder_compare_orders_every_bit_pattern(dtype):
    """-NaN < -inf < -1 < -0 < +0 < 1 < inf < +NaN; NaNs by payload."""
    ordered = VALUES.astype(np.float64)
    ordered = np.concatenate([ordered[:1], ordered]).astype(dtype)  # two -NaN: equal to each other
    rank = np.array([0, 0, 1, 2, 3, 4, 5, 6, 7])
    a, b = np.repeat(ordered, len(ordered)), np.tile(ordered, len(ordered))
    ra, rb = np.repeat(rank, len(rank)), np.tile(rank, len(rank))
    got = op("compare", a, b, result=f"pred[{a.size}]", attributes=", direction=LT, type=TOTALORDER")
    assert_bits_equal(got, ra < rb)
    got = op("compare", a, b, result=f"pred[{a.size}]", attributes=", direction=EQ, type=TOTALORDER")
    assert_bits_equal(got, ra == rb)


def test_integer_compare_is_signed_or_unsigned_by_type():
    a, b = np.array([-56, 100, -1], np.int8), np.array([100, -56, -1], np.int8)
    assert_bits_equal(op("compare", a, b, result="pred[3]", attributes=", direction=LT"), a < b)
    ua, ub = a.view(np.uint8), b.view(np.uint8)
    assert_bits_equal(op("compare", ua, ub, result="pred[3]", attributes=", direction=LT"), ua < ub)
    p, q = np.array([False, True, True]), np.array([True, False, True])
    assert_bits_equal(op("compare", p, q, result="pred[3]", attributes=", direction=GE"), p >= q)


@pytest.mark.parametrize("attributes, message", [
    ("", "compare 'r' requires direction= one of EQ, NE, LT, LE, GT, GE, got none"),
    (", direction=BIGGER", "compare 'r' requires direction= one of EQ, NE, LT, LE, GT, GE, got direction=BIGGER"),
    (", direction=LT, type=SIGNED", "compare 'r' requires type= one of FLOAT, TOTALORDER, got type=SIGNED"),
])
def test_a_compare_needs_a_direction_and_a_type_that_fits(attributes, message):
    with pytest.raises(ExecutionError) as info:
        op("compare", VALUES, VALUES, result="pred[8]", attributes=attributes)
    assert str(info.value) == message


def test_select_keeps_every_bit_and_takes_a_scalar_predicate():
    on_true, on_false = f32(NAN3, MINUS_ZERO, SNAN), f32(MINUS_NAN5, ZERO, ONE)
    predicate = np.array([True, False, True])
    assert_bits_equal(op("select", predicate, on_true, on_false, result="f32[3]"), f32(NAN3, ZERO, SNAN))
    text = module("p = pred[] parameter(0)", "a = bf16[3] parameter(1)", "b = bf16[3] parameter(2)",
                  "ROOT s = bf16[3] select(p, a, b)")
    a, b = b16(0x7FC1, 0x8000, 1), b16(2, 3, 4)
    assert_bits_equal(run(text, np.bool_(True), a, b), a)
    assert_bits_equal(run(text, np.bool_(False), a, b), b)
    text = module("p = s32[3] parameter(0)", "a = f32[3] parameter(1)", "ROOT s = f32[3] select(p, a, a)")
    assert refused(text, np.zeros(3, np.int32), on_true) == (
        "select 's' requires element type pred throughout, got s32[3]; HLO does not convert implicitly: convert first")


# ----- unary ops -----------------------------------------------------------------------------------

def test_negate_abs_and_sign_of_floats_move_sign_bits_as_xla():
    x = f32(MINUS_ZERO, ZERO, 0x7FC00000, 0xFFC00000, ONE, MINUS_ONE, INF, MINUS_INF, 0x7FC00001)
    assert_bits_equal(op("negate", x), f32(ZERO, MINUS_ZERO, 0xFFC00000, 0x7FC00000, MINUS_ONE, ONE, MINUS_INF, INF,
                                           0xFFC00001))
    assert_bits_equal(op("abs", x), f32(ZERO, ZERO, 0x7FC00000, 0x7FC00000, ONE, ONE, INF, INF, 0x7FC00001))
    assert_bits_equal(op("sign", x), f32(MINUS_ZERO, ZERO, 0x7FC00000, 0xFFC00000, ONE, MINUS_ONE, ONE, MINUS_ONE,
                                         0x7FC00001))  # numpy's sign(-0.0) is +0.0
    h = f16(0x7E01, 0x7C01, 0xFE03, 0x3E00, 0x8000)
    assert_bits_equal(op("negate", h), f16(0xFE01, 0xFC01, 0x7E03, 0xBE00, 0x0000))
    assert_bits_equal(op("sign", h), f16(0x7E01, 0x7C01, 0xFE03, 0x3C00, 0x8000))
    b = b16(0x7FC1, 0x7F81, 0xFFC3, 0x3F80, 0x8000)
    assert_bits_equal(op("negate", b), b16(0xFFC0, 0xFFC0, 0x7FC0, 0xBF80, 0x0000))
    assert_bits_equal(op("abs", b), b16(0x7FC0, 0x7FC0, 0x7FC0, 0x3F80, 0x0000))
    assert_bits_equal(op("sign", b), b16(0x7FC0, 0x7FC0, 0xFFC0, 0x3F80, 0x8000))


def test_negate_abs_sign_and_not_of_integers_wrap():
    s = np.array([-128, 127, 0, -1, 5], np.int8)
    assert_bits_equal(op("negate", s), np.array([-128, -127, 0, 1, -5], np.int8))
    assert_bits_equal(op("abs", s), np.array([-128, 127, 0, 1, 5], np.int8))
    assert_bits_equal(op("sign", s), np.array([-1, 1, 0, -1, 1], np.int8))
    assert_bits_equal(op("not", s), ~s)
    u = np.array([0, 1, 255], np.uint8)
    assert_bits_equal(op("negate", u), np.array([0, 255, 1], np.uint8))
    assert_bits_equal(op("sign", u), np.array([0, 1, 1], np.uint8))
    assert_bits_equal(op("not", np.array([True, False])), np.array([False, True]))


ROUNDING = np.array([0.49999997, 0.5, 1.5, 2.5, -0.5, -2.5, -0.3, 0.7, -0.0, 8388609.0, np.inf, np.nan], np.float32)
ROUNDERS = {"floor": np.floor, "ceil": np.ceil, "round-nearest-even": np.rint,
            "round-nearest-afz": lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x)}  # exact in float64


@pytest.mark.parametrize("opcode", sorted(ROUNDERS))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
def test_rounding_ops(opcode, dtype):
    x = ROUNDING.astype(dtype)
    want = ROUNDERS[opcode](x.astype(np.float64)).astype(dtype)  # an integer or ±0: no rounding on the way back
    assert_bits_equal(op(opcode, x), want)


def test_round_half_away_from_zero_and_ceil_keep_the_sign_of_zero():
    assert_bits_equal(op("round-nearest-afz", np.float32([-0.3, 0.3])), np.float32([-0.0, 0.0]))
    assert_bits_equal(op("ceil", np.float32([-0.5])), np.float32([-0.0]))


def test_is_finite():
    assert_bits_equal(op("is-finite", VALUES, result="pred[8]"), np.isfinite(VALUES))
    assert_bits_equal(op("is-finite", VALUES.astype(BF16), result="pred[8]"), np.isfinite(VALUES))


def test_sqrt_is_correctly_rounded_with_xlas_nans():
    rng = np.random.default_rng(0)
    x = np.abs(rng.standard_normal(1000).astype(np.float32)) * np.float32(100)
    assert_bits_equal(op("sqrt", x), np.sqrt(x))  # IEEE sqrt, as XLA's
    assert_bits_equal(op("sqrt", np.float32([-1.0, -0.0, -np.inf])), f32(0xFFC00000, MINUS_ZERO, 0xFFC00000))
    h = x.astype(np.float16)
    assert_bits_equal(op("sqrt", h), np.sqrt(h.astype(np.float32)).astype(np.float16))


TRANSCENDENTAL = {"exponential": np.exp, "log": np.log, "tanh": np.tanh, "rsqrt": lambda x: 1 / np.sqrt(x),
                  "logistic": lambda x: 1 / (1 + np.exp(-x)), "exponential-minus-one": np.expm1,
                  "log-plus-one": np.log1p, "cbrt": np.cbrt, "sine": np.sin, "cosine": np.cos, "tan": np.tan}


@pytest.mark.parametrize("opcode", sorted(TRANSCENDENTAL))
def test_transcendental_ops_are_float64_rounded_once_and_near_float32_libm(opcode):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(2000) * 4).astype(np.float32)
    if opcode in ("log", "rsqrt", "log-plus-one"):
        x = np.abs(x)
    x[:4] = [np.nan, np.inf, -np.inf, 0.0]
    with np.errstate(all="ignore"):
        want = TRANSCENDENTAL[opcode](x.astype(np.float64)).astype(np.float32)
        near = TRANSCENDENTAL[opcode](x)
    got = op(opcode, x)
    assert_bits_equal(got, want)
    ordered = lambda v: np.where(v.view(np.int32) < 0, -(v.view(np.int32) & 0x7FFFFFFF), v.view(np.int32))
    finite = np.isfinite(near) & np.isfinite(got)
    assert np.abs(ordered(got)[finite].astype(np.int64) - ordered(near)[finite]).max() <= 4
    for half in (np.float16, BF16):  # float32's value rounded once more, as XLA computes half types
        with np.errstate(all="ignore"):
            want = TRANSCENDENTAL[opcode](x.astype(half).astype(np.float64)).astype(np.float32).astype(half)
        assert_bits_equal(op(opcode, x.astype(half)), want)


def test_unary_ops_check_their_element_types():
    assert refused(module("x = f32[2] parameter(0)", "ROOT n = f32[2] not(x)"), np.zeros(2, np.float32)) == (
        "not 'n' takes pred or signed integer or unsigned integer operands, got f32[2]")
    assert refused(module("x = s32[2] parameter(0)", "ROOT n = s32[2] exponential(x)"), np.zeros(2, np.int32)) == (
        "exponential 'n' takes floating-point operands, got s32[2]")
    assert refused(module("x = f32[2] parameter(0)", "ROOT n = f16[2] negate(x)"), np.zeros(2, np.float32)) == (
        "negate 'n' requires element type f32 throughout, got f32[2], f16[2]; HLO does not convert implicitly: "
        "convert first")


# ----- binary ops ----------------------------------------------------------------------------------

def test_float_power_and_remainder():
    base = np.float32([2, np.nan, 1, -8, 0, -0.0, 0, -2, 10])
    exponent = np.float32([0.5, 0, np.nan, 1 / 3, -1, -1, 0, 3, 38.6])
    with np.errstate(all="ignore"):
        assert_bits_equal(op("power", base, exponent), np.power(base.astype(np.float64), exponent).astype(np.float32))
    got = op("power", base, exponent)
    assert got[1] == 1 and got[2] == 1 and np.isnan(got[3]) and got[4] == np.inf and got[5] == -np.inf
    assert got[8] == np.inf  # 10 ** 38.6 overflows float32
    a, b = np.float32([7.5, -7.5, 7.5, -0.0, 5, np.inf, 1]), np.float32([2, 2, -2, 3, 0, 1, np.inf])
    assert_bits_equal(op("remainder", a, b), np.fmod(a, b))  # the sign of the dividend, -0 kept, x % 0 NaN
    h = np.float16([7.5, -7.5, 1000, 0.1])
    assert_bits_equal(op("remainder", h, np.float16([2, 0.3, 3.3, 0.03])), np.fmod(h, np.float16([2, 0.3, 3.3, 0.03])))


@pytest.mark.parametrize("dtype, base, exponent, want", [
    # XLA:CPU's values: squaring over the exponent's low 6 bits, wrapping; a negative exponent gives 0 but for
    # a base of 1 or -1 (all bits set, also unsigned).
    (np.int8, [2, 3, -1, -1, 1, 2, 2, 0, 0], [7, 64, -3, -4, -100, 65, -128, 0, -1], [-128, 1, -1, 1, 1, 2, 0, 1, 0]),
    (np.uint8, [2, 3, 1, 2, 2, 0, 3, 255, 255, 255, 254], [7, 64, 200, 255, 128, 0, 129, 129, 130, 1, 129],
     [128, 1, 1, 0, 0, 1, 0, 255, 1, 255, 0]),
    (np.int32, [2, 2, 3, -3, 1, -1, 0, -1, 2, 5, 2, 3], [31, 32, 64, 65, -1, -1, -1, -2, -2**31, 63, 2**30, 127],
     [-2**31, 0, 1, -3, 1, -1, 0, 1, 0, 1501274061, 1, 2111105451]),
    (np.int64, [3, 3, 2], [64, 127, 63], [1, -3237885987332494933, -2**63]),
])
def test_integer_power_is_xlas(dtype, base, exponent, want):
    assert_bits_equal(op("power", np.array(base, dtype), np.array(exponent, dtype)), np.array(want, dtype))


def test_integer_divide_and_remainder_truncate_and_define_zero_divisors():
    a = np.array([7, -7, 7, -7, 5, -2**31, -2**31], np.int32)
    b = np.array([2, 2, -2, -2, 0, -1, 0], np.int32)
    assert_bits_equal(op("remainder", a, b), np.array([1, -1, 1, -1, 5, 0, -2**31], np.int32))
    assert_bits_equal(op("divide", a, b), np.array([3, -3, -3, 3, -1, -2**31, -1], np.int32))
    u, v = np.array([7, 5, 255], np.uint8), np.array([2, 0, 16], np.uint8)
    assert_bits_equal(op("remainder", u, v), np.array([1, 5, 15], np.uint8))
    assert_bits_equal(op("divide", u, v), np.array([3, 255, 15], np.uint8))


@pytest.mark.parametrize("opcode, dtype, x, n, want", [  # XLA:CPU's values
    ("shift-left", np.int32, [1, 1, 1, 1], [31, 32, -1, 33], [-2**31, 0, 0, 0]),
    ("shift-right-arithmetic", np.int32, [-8, -8, 8, -8], [1, 32, 40, -1], [-4, -1, 0, -1]),
    ("shift-right-logical", np.int32, [-8, -8, 8, -8], [1, 32, 40, -1], [2147483644, 0, 0, 0]),
    ("shift-right-arithmetic", np.uint8, [0x80, 0x80, 0x80, 0x40], [1, 7, 8, 200], [192, 255, 255, 0]),
    ("shift-left", np.int8, [1, 1, -1, 3], [7, 8, -1, 6], [-128, 0, 0, -64]),
    ("shift-right-logical", np.int8, [-128, -1, -1, 3], [7, 8, -1, 1], [1, 0, 0, 1]),
])
def test_shifts_saturate_from_the_bit_width(opcode, dtype, x, n, want):
    assert_bits_equal(op(opcode, np.array(x, dtype), np.array(n, dtype)), np.array(want, dtype))


@pytest.mark.parametrize("opcode, ufunc", [("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)])
def test_and_or_xor_are_logical_for_pred_and_bitwise_for_integers(opcode, ufunc):
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert_bits_equal(op(opcode, p, q), ufunc(p, q))
    a, b = np.array([-1, 0x55, -128, 7], np.int8), np.array([0x0F, 0x0F, 1, -8], np.int8)
    assert_bits_equal(op(opcode, a, b), ufunc(a, b))
    assert_bits_equal(op(opcode, a.view(np.uint8), b.view(np.uint8)), ufunc(a, b).view(np.uint8))


def test_atan2_is_float64_rounded_once():
    y, x = np.float32([1, -1, 0, -0.0, 1, np.nan]), np.float32([1, -1, -1, -1, 0, 1])
    assert_bits_equal(op("atan2", y, x), np.arctan2(y.astype(np.float64), x).astype(np.float32))


def test_binary_ops_check_their_types():
    text = module("a = f32[2] parameter(0)", "b = f16[2] parameter(1)", "ROOT p = f32[2] power(a, b)")
    assert refused(text, np.zeros(2, np.float32), np.zeros(2, np.float16)) == (
        "power 'p' requires element type f32 throughout, got f32[2], f32[2], f16[2]; HLO does not convert "
        "implicitly: convert first")
    text = module("a = f32[2] parameter(0)", "ROOT s = f32[2] shift-left(a, a)")
    assert refused(text, np.zeros(2, np.float32)) == (
        "shift-left 's' takes signed integer or unsigned integer operands, got f32[2]")


def test_elementwise_ops_do_not_broadcast():
    text = module("a = f32[2] parameter(0)", "b = f32[] parameter(1)", "ROOT p = f32[2] remainder(a, b)")
    assert refused(text, np.zeros(2, np.float32), np.float32(1)).startswith(
        "remainder 'p' requires operands of its result's dimensions [2]")


# ----- convert between floats: NaNs come out quiet -----------------------------------------------------

@pytest.mark.parametrize("source, result, x, want", [  # XLA:CPU's values
    ("f16", "f32", f16(0x7C01, 0xFE03), f32(0x7FC02000, 0xFFC06000)),
    ("bf16", "f16", b16(0x7F81, 0xFFC3), f16(0x7E08, 0xFE18)),
    ("bf16", "f32", b16(0x7F81, 0xFFC3), f32(0x7F810000, 0xFFC30000)),
    ("f32", "f16", f32(0x7F800001, 0xFFC00001, 0x7FA00000), f16(0x7E00, 0xFE00, 0x7F00)),
    ("f32", "bf16", f32(0x7F800001, 0xFFC00001, 0x7FA00000), b16(0x7FC0, 0xFFC0, 0x7FC0)),
    ("f16", "bf16", f16(0x7C01, 0xFE03), b16(0x7FC0, 0xFFC0)),
])
def test_float_conversions_quiet_nans_as_xla(source, result, x, want):
    assert_bits_equal(op("convert", x, result=f"{result}[{x.size}]"), want)


def test_float_conversions_round_to_nearest_even():
    x = np.float32([1.00390625, 1.01171875, 65520.0, 3.0e-6, -0.0])
    assert_bits_equal(op("convert", x, result="bf16[5]"), x.astype(BF16))
    assert_bits_equal(op("convert", x, result="f16[5]"), x.astype(np.float16))


# ----- slice, pad, iota, concatenate ---------------------------------------------------------------

X = np.arange(24, dtype=np.float32).reshape(4, 6)


@pytest.mark.parametrize("ranges, want", [("{[0:4:1], [1:5:2]}", X[0:4:1, 1:5:2]), ("{[1:4], [0:6:4]}", X[1:4, ::4]),
                                          ("{[2:2], [0:6]}", X[2:2, :]), ("{[3:4:5], [5:6]}", X[3:4, 5:6])])
def test_slice(ranges, want):
    text = module("x = f32[4,6] parameter(0)", f"ROOT s = {t(want)} slice(x), slice={ranges}")
    assert_bits_equal(run(text, X), want)


@pytest.mark.parametrize("attribute, message", [
    ("slice={[0:4], [1:7]}", "slice 's' requires one range 0 <= start <= limit <= size with a stride of at least 1 "
                             "per dimension of f32[4,6], got slice={[0:4], [1:7]}"),
    ("slice={[0:4]}", "slice 's' requires one range 0 <= start <= limit <= size with a stride of at least 1 per "
                      "dimension of f32[4,6], got slice={[0:4]}"),
    ("slice={[0:2], [0:3]}", "slice 's' computes [2, 3] from f32[4,6] and slice={[0:2], [0:3]}, but the HLO "
                             "declares f32[4,2]; fix the result shape or the attribute"),
    ("foo=1", "slice 's' requires slice={[start:limit:stride], ...}, got none"),
])
def test_a_slice_out_of_range_or_of_another_shape_is_refused(attribute, message):
    assert refused(module("x = f32[4,6] parameter(0)", f"ROOT s = f32[4,2] slice(x), {attribute}"), X) == message


@pytest.mark.parametrize("padding, dims", [("0_0x1_1", (4, 8)), ("1_2_1x0_0_2", (10, 16)), ("-1_1x-2_-1", (4, 3)),
                                           ("0_-3_1x2_0", (4, 8)), ("1_0x0_2", (5, 8))])
def test_pad_with_interior_and_negative_padding(padding, dims):
    text = module("x = f32[4,6] parameter(0)", "v = f32[] parameter(1)",
                  f"ROOT p = f32[{dims[0]},{dims[1]}] pad(x, v), padding={padding}")
    got = run(text, X, np.float32(-0.5))
    # Reference: interior, then edges, one dimension at a time; a negative edge cuts.
    want = X
    for axis, part in enumerate(padding.split("x")):
        lo, hi, *interior = map(int, part.split("_"))
        gap = interior[0] if interior else 0
        n = want.shape[axis]
        spread = np.full(want.shape[:axis] + (n + max(n - 1, 0) * gap,) + want.shape[axis + 1:], -0.5, np.float32)
        index = [slice(None)] * want.ndim
        index[axis] = slice(None, None, gap + 1)
        spread[tuple(index)] = want
        pads = [(0, 0)] * want.ndim
        pads[axis] = (max(lo, 0), max(hi, 0))
        spread = np.pad(spread, pads, constant_values=np.float32(-0.5))
        index[axis] = slice(max(-lo, 0), spread.shape[axis] - max(-hi, 0))
        want = spread[tuple(index)]
    assert_bits_equal(got, np.ascontiguousarray(want))


def test_pad_refuses_a_padding_that_does_not_fit():
    text = module("x = f32[4,6] parameter(0)", "v = f32[] parameter(1)", "ROOT p = f32[4,8] pad(x, v), padding=0_0")
    assert refused(text, X, np.float32(0)) == (
        "pad 'p' requires a scalar padding value and padding=low_high[_interior] for each of the 2 dimension(s) of "
        "f32[4,6] (e.g. 0_0x1_1_0), got f32[] and padding=0_0")
    text = module("x = f32[4,6] parameter(0)", "v = f32[] parameter(1)", "ROOT p = f32[4,8] pad(x, v), padding=0_0x1_2")
    assert refused(text, X, np.float32(0)) == (
        "pad 'p' computes [4, 9] from f32[4,6], f32[] and padding=0_0x1_2, but the HLO declares f32[4,8]; fix the "
        "result shape or the attribute")


def test_iota_counts_along_its_dimension_and_converts():
    assert_bits_equal(run(module("ROOT i = s32[2,3] iota(), iota_dimension=1")),
                      np.broadcast_to(np.arange(3, dtype=np.int32), (2, 3)))
    assert_bits_equal(run(module("ROOT i = f32[3,2] iota(), iota_dimension=0")),
                      np.broadcast_to(np.arange(3, dtype=np.float32)[:, None], (3, 2)))
    got = run(module("ROOT i = bf16[300] iota(), iota_dimension=0"))
    assert_bits_equal(got[255:262], np.array([255, 256, 256, 258, 260, 260, 260], BF16))  # XLA's, to nearest even
    assert_bits_equal(run(module("ROOT i = s8[300] iota(), iota_dimension=0"))[125:130],
                      np.array([125, 126, 127, -128, -127], np.int8))
    assert refused(module("ROOT i = f32[3] iota(), iota_dimension=1")) == (
        "iota 'i' requires iota_dimension from 0 to 0 for f32[3], got 1")
    assert refused(module("ROOT i = f32[3] iota()")) == "iota 'i' requires iota_dimension=<an integer>, got none"


def test_concatenate():
    a, b = X[:, :2], X[:, 2:]
    text = module("a = f32[4,2] parameter(0)", "b = f32[4,4] parameter(1)",
                  "ROOT c = f32[4,8] concatenate(a, b, a), dimensions={1}")
    assert_bits_equal(run(text, np.ascontiguousarray(a), np.ascontiguousarray(b)), np.concatenate([a, b, a], axis=1))
    text = module("a = f32[4,2] parameter(0)", "b = f32[4,4] parameter(1)",
                  "ROOT c = f32[8,4] concatenate(a, b), dimensions={0}")
    assert refused(text, np.ascontiguousarray(a), np.ascontiguousarray(b)) == (
        "concatenate 'c' requires operands of the result's rank, equal but along one dimension given as "
        "dimensions={d}, got f32[4,2], f32[4,4] and dimensions={0}")


# ----- reduce --------------------------------------------------------------------------------------

def body(opcode: str, element: str = "f32", swapped: bool = False) -> str:
    operands = "b, a" if swapped else "a, b"
    return (f"body {{\n  a = {element}[] parameter(0)\n  b = {element}[] parameter(1)\n"
            f"  ROOT r = {element}[] {opcode}({operands})\n}}\n\n")


def reduce(x: np.ndarray, init, dims, opcode: str, swapped: bool = False) -> np.ndarray:
    kept = [n for d, n in enumerate(x.shape) if d not in dims]
    element = TYPES[x.dtype]
    text = module(f"x = {t(x)} parameter(0)", f"i = {element}[] parameter(1)",
                  f"ROOT r = {element}[{','.join(map(str, kept))}] reduce(x, i), "
                  f"dimensions={{{','.join(map(str, dims))}}}, to_apply=body", extra=body(opcode, element, swapped))
    return run(text, x, np.asarray(init, x.dtype))


def xla_extreme(a: np.ndarray, b: np.ndarray, maximum: bool) -> np.ndarray:
    """The elementwise executor op, checked against XLA's bits above."""
    return op("maximum" if maximum else "minimum", a, b)


def left_fold(x: np.ndarray, init, dims, combine) -> np.ndarray:
    """acc = combine(acc, element) over the reduced dimensions in row-major order, one element at a time (for
    every result element at once)."""
    kept = [d for d in range(x.ndim) if d not in dims]
    moved = np.transpose(x, kept + sorted(dims))
    shape = moved.shape[:len(kept)]
    rows = moved.reshape(math.prod(shape), -1)
    acc = np.full(len(rows), init, x.dtype)
    for column in range(rows.shape[1]):
        acc = combine(acc, np.ascontiguousarray(rows[:, column]))
    return acc.reshape(shape)


def test_a_float_sum_is_a_left_fold_in_row_major_order():
    x = np.float32([[1e8, 1, -1e8, 1, 0.25], [3, 1e-8, -3, 1e-8, 7]])
    for dims in ([1], [0], [0, 1]):
        with np.errstate(all="ignore"):
            want = left_fold(x, np.float32(0.5), dims, np.add)
        assert_bits_equal(reduce(x, 0.5, dims, "add"), want)
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((3, 4, 5, 6)) * 1e3).astype(np.float32)
    assert_bits_equal(reduce(x, 0, [0, 2], "add"), left_fold(x, 0, [0, 2], np.add))
    assert_bits_equal(reduce(x, 1, [3, 1], "multiply"), left_fold(x, 1, [1, 3], np.multiply))


def test_half_sums_round_every_step():
    x = np.array([[1, 1 / 256, 1 / 256, 1 / 256, 1 / 256]], BF16)  # 1 + 1/256 rounds back to 1 each time
    assert_bits_equal(reduce(x, 0, [1], "add"), np.array([1], BF16))
    h = (np.random.default_rng(3).standard_normal((4, 50)) * 30).astype(np.float16)
    assert_bits_equal(reduce(h, 0, [1], "add"), left_fold(h, 0, [1], np.add))


def test_integer_reductions_wrap():
    x = np.array([[100, 100, 100], [-128, -1, 1]], np.int8)
    assert_bits_equal(reduce(x, 0, [1], "add"), np.array([44, -128], np.int8))
    assert_bits_equal(reduce(x, 1, [1], "multiply"), np.array([64, -128], np.int8))
    assert_bits_equal(reduce(x, -128, [0], "maximum"), np.array([100, 100, 100], np.int8))
    assert_bits_equal(reduce(x, 0, [0, 1], "xor"), np.array(100 ^ 100 ^ 100 ^ -128 ^ -1 ^ 1, np.int8))
    assert_bits_equal(reduce(x.view(np.uint8), 255, [1], "and"), np.bitwise_and.reduce(x.view(np.uint8), axis=1))
    p = np.array([[True, False], [True, True]])
    assert_bits_equal(reduce(p, True, [1], "and"), np.array([False, True]))
    assert_bits_equal(reduce(p, False, [0], "or"), np.array([True, True]))


@pytest.mark.parametrize("opcode", ["maximum", "minimum"])
@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
def test_float_maximum_and_minimum_reductions_fold_xlas_op(opcode, swapped, dtype):
    """NaNs of both signs and payloads, and zeros of both signs: the result is the fold of the elementwise op,
    body(accumulator, element) or body(element, accumulator) as the body names its parameters."""
    rng = np.random.default_rng(4)
    specials = f32(NAN3, MINUS_NAN5, ZERO, MINUS_ZERO, INF, MINUS_INF, 0x7FC00011, 0xFFC00021)
    x = rng.choice(np.concatenate([specials, np.float32([1, -1, 2, -2])]), size=(6, 5, 7))
    x[0] = 0.0
    x[1] = -0.0
    x[2, :, ::2] = -0.0
    x = x.astype(dtype)
    for init in (np.float32(-np.inf) if opcode == "maximum" else np.float32(np.inf), np.float32(-0.0), f32(NAN3)[0]):
        init = np.asarray(init).astype(dtype)
        for dims in ([2], [1, 2], [0]):
            if swapped:
                combine = lambda acc, e: xla_extreme(e, acc, opcode == "maximum")  # noqa: E731
            else:
                combine = lambda acc, e: xla_extreme(acc, e, opcode == "maximum")  # noqa: E731
            assert_bits_equal(reduce(x, init, dims, opcode, swapped), left_fold(x, init, dims, combine))


def test_reduce_of_nothing_gives_the_init_value_and_no_dimensions_combines_once():
    x = np.zeros((3, 0), np.float32)
    assert_bits_equal(reduce(x, 2.5, [1], "add"), np.full(3, 2.5, np.float32))
    x = np.float32([[1, 2], [3, 4]])
    assert_bits_equal(reduce(x, 10, [], "add"), x + 10)


def test_reduce_refuses_other_bodies_and_variadic_reductions():
    x = np.float32([1, 2])
    text = module("x = f32[2] parameter(0)", "i = f32[] parameter(1)",
                  "ROOT r = f32[] reduce(x, i), dimensions={0}, to_apply=body", extra=body("subtract"))
    assert refused(text, x, np.float32(0)) == (
        "reduce 'r' requires to_apply to compute add, multiply, maximum, minimum, and, or, xor of its two "
        "parameters, got body whose root is subtract")
    text = module("x = f32[2] parameter(0)", "i = f32[] parameter(1)",
                  "ROOT r = f32[] reduce(x, i), dimensions={0}, to_apply=body", extra=body("and", "f32"))
    assert refused(text, x, np.float32(0)) == "reduce 'r': and does not apply to f32[2]"
    pair = ("pair {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n"
            "  d = s32[] parameter(3)\n  ROOT t = (f32[], s32[]) tuple(a, b)\n}\n\n")
    text = module("x = f32[2] parameter(0)", "y = s32[2] parameter(1)", "i = f32[] parameter(2)",
                  "j = s32[] parameter(3)", "ROOT r = (f32[], s32[]) reduce(x, y, i, j), dimensions={0}, to_apply=pair",
                  extra=pair)
    assert refused(text, x, np.int32([1, 2]), np.float32(0), np.int32(0)) == (
        "reduce 'r' reduces one operand from one init value; a variadic reduce (4 operands, e.g. an argmax) is not "
        "run")


def test_reduce_window_maximum_orders_minus_zero_below_plus_zero():
    x = np.float32([-0.0, 0.0, -0.0, -0.0, np.nan, -1.0]).reshape(1, 6)
    text = module("x = f32[1,6] parameter(0)", "i = f32[] constant(-inf)",
                  "ROOT r = f32[1,3] reduce-window(x, i), window={size=1x2 stride=1x2}, to_apply=body",
                  extra=body("maximum"))
    assert_bits_equal(run(text, x), np.float32([[0.0, -0.0, np.nan]]))


# ----- JAX modules around a resize, against XLA's values --------------------------------------------

def test_the_ops_mix_fixture_runs_from_hlo_and_stablehlo_to_the_same_bits(rng):
    """data_stablehlo/ops_mix (made by data_stablehlo/make.py): compare, select, clamp, slice, pad, iota,
    concatenate, reduce, exponential, converts; its exact outputs against numpy."""
    x = (rng.standard_normal((4, 30)) * 2).astype(np.float32)
    y = (rng.standard_normal((4, 8)) * 2).astype(np.float32)
    x[0, :4] = [np.nan, -0.0, np.inf, 300.0]
    stablehlo = ROOT / "tests" / "compiler" / "data_stablehlo"
    runs = [compile_hlo((stablehlo / f"ops_mix.{form}").read_text())(x, y) for form in ("hlo", "mlir")]
    assert [bits(a).view(np.uint8).tobytes() for a in runs[0]] == [bits(a).view(np.uint8).tobytes() for a in runs[1]]
    c, b, _, flags, u8, half, inverse = runs[0]
    table = np.linspace(-1, 1, 120, dtype=np.float32).reshape(4, 30)
    clipped = x > 0.5  # there a is clip(x, -1, 1) + table, exactly
    assert_bits_equal(c[:4][clipped], np.minimum(x, 1)[clipped] + table[clipped])
    assert_bits_equal(c[4], np.arange(30, dtype=np.float32))
    assert_bits_equal(b, np.pad(y[:, 1:5:2], ((1, 0), (0, 2))))
    assert_bits_equal(flags, (x[:, :8] < 0) & (y > 0))
    assert_bits_equal(u8, np.clip(np.nan_to_num(np.trunc(x * np.float32(255)), nan=0), 0, 255).astype(np.uint8))
    assert_bits_equal(half, np.array([1.5, -0.0, np.inf, np.nan], BF16))
    assert_bits_equal(inverse, np.float16(1) / y.astype(np.float16))


NAMES = ["jax_resize_float_ops", "jax_resize_int_ops", "jax_resize_half_ops"]
def load_npz(path):
    """The inputs, XLA's outputs and the checks of a data_runtime/ module."""
    with np.load(path) as data:
        bfloat16 = set(data["bfloat16"].tolist())
        arrays = {key: data[key].view(BF16) if key in bfloat16 else data[key] for key in data.files}

    def numbered(prefix):
        return [arrays[f"{prefix}{i}"] for i in range(sum(key.startswith(prefix) for key in arrays))]

    return numbered("arg"), numbered("out"), [str(check) for check in arrays["check"]]


def ordered(x: np.ndarray) -> np.ndarray:
    """Float bits as integers in the floats' order (adjacent floats differ by 1), as int64."""
    signed = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    raw = np.ascontiguousarray(x).view(signed).astype(np.int64)
    return np.where(raw < 0, -(raw & np.iinfo(signed).max), raw)


def agree(got: np.ndarray, want: np.ndarray, check: str, bound: np.ndarray | None) -> np.ndarray:
    """Where `got` passes `check` against XLA's `want`. A NaN produced by arithmetic may have any sign and payload
    (IEEE leaves them open, and LLVM uses that), so two NaNs agree; every other value compares by its bits."""
    same = bits(got) == bits(want)
    if got.dtype.kind in "iub":
        return same
    same |= np.isnan(got) & np.isnan(want)
    if check.startswith("ulp:"):  # XLA:CPU flushes subnormal results to zero
        tiny = np.float32(ml_dtypes.finfo(got.dtype).smallest_normal)
        flushed = np.where(np.abs(got.astype(np.float32)) < tiny, np.float32(0), got.astype(np.float32))
        same |= np.abs(ordered(got) - ordered(want)) <= int(check[4:])
        same |= (flushed == 0) & (want == 0)
    if check.startswith("sum:"):
        same |= np.abs(got.astype(np.float64) - want.astype(np.float64)) <= bound
    return same


def fold_bound(compiled, values: dict, index: int) -> np.ndarray:
    """The largest difference between two orders of a float reduction: 2 (n - 1) eps sum|terms| for a sum,
    2 (n - 1) eps prod|terms| for a product, from the terms this run reduced."""
    inst = compiled.module.entry.root.operands[index]
    assert inst.opcode == "reduce"
    terms = np.abs(values[inst.operands[0].name].astype(np.float64))
    dims = tuple(inst.dimensions)
    count = math.prod(terms.shape[d] for d in dims)
    eps = float(ml_dtypes.finfo(values[inst.name].dtype).eps)
    total = terms.sum(axis=dims) if inst.to_apply.root.opcode == "add" else terms.prod(axis=dims)
    return 2 * (count - 1) * eps * total


@pytest.mark.parametrize("form", ["hlo", "mlir", "pb"])
@pytest.mark.parametrize("name", NAMES)
def test_jax_modules_around_a_resize_run_to_xlas_values(name, form):
    compiled = compile_hlo((DATA / f"{name}.{form}").read_bytes())
    assert compiled.programs and [c for c in compiled.module.computations if any(
        inst.opcode == "call" for inst in c.instructions)] == []
    args, outs, checks = load_npz(DATA / f"{name}.npz")
    values = compiled.values(*args)
    got = values[compiled.module.entry.root.name]
    assert len(got) == len(outs) == len(checks)
    for index, (g, w, check) in enumerate(zip(got, outs, checks)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), index
        bound = fold_bound(compiled, values, index) if check.startswith("sum:") else None
        ok = agree(g, w, check, bound)
        assert ok.all(), (index, check, np.argwhere(~ok)[:3].tolist(), g[~ok][:3], w[~ok][:3])


def test_the_three_forms_run_to_the_same_bits():
    for name in NAMES:
        args, _, _ = load_npz(DATA / f"{name}.npz")
        forms = ("hlo", "mlir", "pb") if name == "jax_resize_int_ops" else ("hlo", "mlir")
        runs = [compile_hlo((DATA / f"{name}.{form}").read_bytes())(*args) for form in forms]
        for other in runs[1:]:
            assert [bits(a).view(np.uint8).tobytes() for a in other] == [
                bits(a).view(np.uint8).tobytes() for a in runs[0]], name


def test_make_writes_the_committed_files(tmp_path):
    """In a subprocess: JAX starts threads, and other tests fork. jax is in the test extra (not a dependency).

    The modules and inputs must come out bit for bit. XLA's outputs too, except those whose check is "ulp:N":
    XLA:CPU's transcendental functions differ by an ulp between CPUs (the committed files were made on an Intel
    CPU; on an AMD EPYC out22 of jax_resize_float_ops comes out 1 ulp away in 160 elements), so those agree as
    the runtime tests compare them, within N ulps."""
    subprocess.run([sys.executable, str(DATA / "make.py"), "--out", str(tmp_path)], check=True, capture_output=True)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(p.name for p in DATA.iterdir() if p.suffix in (".hlo", ".mlir", ".pb", ".npz"))
    for name in written:
        if name.endswith(".npz"):  # a zip archive holds times: compare what it holds
            made, committed = np.load(tmp_path / name), np.load(DATA / name)
            assert made.files == committed.files, name
            (_, made_outs, made_checks), (_, outs, checks) = load_npz(tmp_path / name), load_npz(DATA / name)
            assert made_checks == checks, name
            for key in [k for k in made.files if not k.startswith("out")]:
                assert made[key].dtype == committed[key].dtype and made[key].tobytes() == committed[key].tobytes()
            for index, (m, c, check) in enumerate(zip(made_outs, outs, checks)):
                assert m.dtype == c.dtype and m.shape == c.shape, (name, index)
                if check.startswith("ulp:"):
                    assert agree(m, c, check, None).all(), (name, index)
                else:
                    assert m.tobytes() == c.tobytes(), (name, index)
        else:
            assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


@pytest.mark.parametrize("element, dtype, nan, want", [("f16", np.float16, 0x7E01, 0x7E01),
                                                        ("bf16", ml_dtypes.bfloat16, 0x7FC1, 0x7FC0)])
def test_clamp_keeps_a_nans_sign_in_the_half_types(element, dtype, nan, want):
    """jax.lax.clamp(-0, x, -0) on XLA:CPU (jax 0.10.2) keeps both NaNs' signs; bf16 comes back with XLA's
    canonical payload (its computation goes through f32), f16 with its own."""
    bits = np.array([nan, nan | 0x8000], np.uint16).view(dtype)
    text = module(f"lo = {element}[] parameter(0)", f"x = {element}[2] parameter(1)", f"hi = {element}[] parameter(2)",
                  f"ROOT c = {element}[2] clamp(lo, x, hi)")
    minus_zero = np.array(-0.0, dtype)
    assert_bits_equal(run(text, minus_zero, bits, minus_zero), np.array([want, want | 0x8000], np.uint16).view(dtype))

"""Tile operators (``a + b``, ``tile * 3``, ``tile < 0.5``, ``-tile``): the nl elementwise functions with NKI's
type promotion, bit-exact against numpy float32 arithmetic (the engines compute in float32)."""

import operator

import ml_dtypes
import numpy as np
import pytest

from resize_kernels.errors import InvalidTypeError, InvalidValueError
from resize_kernels.machine.simulator import run
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.nki import promotion, trace
from resize_kernels.nki import typing as nt

from conftest import assert_bits_equal

F32, BF16, F16 = np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
I32, I16, I8, U8 = np.dtype(np.int32), np.dtype(np.int16), np.dtype(np.int8), np.dtype(np.uint8)

# symbol -> (Python operator, nl function, numpy float32 arithmetic of the engines)
BINARY = {
    "+": (operator.add, nl.add, np.add),
    "-": (operator.sub, nl.subtract, np.subtract),
    "*": (operator.mul, nl.multiply, np.multiply),
    "/": (operator.truediv, nl.divide, np.divide),
    "%": (operator.mod, nl.mod, np.fmod),  # nl.mod is the engines' fmod: the sign of the dividend
    "<": (operator.lt, nl.less, np.less),
    "<=": (operator.le, nl.less_equal, np.less_equal),
    ">": (operator.gt, nl.greater, np.greater),
    ">=": (operator.ge, nl.greater_equal, np.greater_equal),
    "==": (operator.eq, nl.equal, np.equal),
    "!=": (operator.ne, nl.not_equal, np.not_equal),
}


def simulate(fn, *arrays):
    """fn applied to SBUF tiles of ``arrays`` (scalars pass through), traced and run: (Program, result)."""
    tensors = [a for a in arrays if isinstance(a, np.ndarray)]

    def kernel(*xs):
        xs = iter(xs)
        operands = []
        for a in arrays:
            if isinstance(a, np.ndarray):
                x = next(xs)
                tile = nl.ndarray(x.shape, x.dtype, name="in")
                nisa.dma_copy(dst=tile, src=x)
                operands.append(tile)
            else:
                operands.append(a)
        result = fn(*operands)
        out = nl.ndarray(result.shape, result.dtype, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=result)
        return out
    program = trace(kernel, *tensors)
    (out,) = run(program, tensors)
    return program, out


def same_instructions(p1, p2) -> bool:
    """The two Programs issue the same instructions (their source lines differ: different code issued them)."""
    return [i.listing() for i in p1.instructions] == [i.listing() for i in p2.instructions]


def engine_result(np_op, a, b, dtype) -> np.ndarray:
    """numpy float32 arithmetic on float32 operands, then the engines' output cast to ``dtype``: round to
    nearest even (integers also saturate)."""
    a = np.asarray(a).astype(np.float32) if isinstance(a, np.ndarray) else np.float32(a)
    b = np.asarray(b).astype(np.float32) if isinstance(b, np.ndarray) else np.float32(b)
    with np.errstate(all="ignore"):
        y = np.asarray(np_op(a, b)).astype(np.float32)
    if not promotion.is_float(dtype):
        info = np.iinfo(dtype)
        y = np.clip(np.rint(y), info.min, info.max)
    return y.astype(dtype)


def data(rng, dtype, shape=(16, 6), nonzero=False):
    dtype = np.dtype(dtype)
    if promotion.is_float(dtype):
        x = (rng.standard_normal(shape) * 8).astype(np.float32)
        x[0, :3] = [0.0, -0.0, 2.0]
    else:
        lo = 0 if dtype.kind == "u" else -60
        x = rng.integers(lo, 60, shape)
    if nonzero:
        x = np.where(x == 0, 3, x)
    return x.astype(dtype)


@pytest.mark.parametrize("symbol", list(BINARY))
@pytest.mark.parametrize("da, db, want", [(F32, F32, F32), (I32, I32, I32), (I32, F32, F32), (F16, BF16, F32),
                                          (I8, U8, I16), (BF16, BF16, BF16), (I16, F16, F16)])
def test_tile_op_tile_values_and_dtype(symbol, da, db, want, rng):
    py_op, _, np_op = BINARY[symbol]
    if symbol == "/" and not promotion.is_float(want):
        want = F32  # true division: int / int -> float32
    a, b = data(rng, da), data(rng, db, nonzero=symbol in "/%")
    b[1] = a[1].astype(db)  # some equal pairs, for the comparisons
    _, got = simulate(py_op, a, b)
    assert got.dtype == want
    assert_bits_equal(got, engine_result(np_op, a, b, want))


@pytest.mark.parametrize("symbol", list(BINARY))
@pytest.mark.parametrize("dtype, scalar, want", [(F32, 2.5, F32), (F32, 3, F32), (I32, 3, I32), (I32, 0.5, F32),
                                                 (I8, 2, I32), (F16, 1.25, F32), (BF16, 2, BF16),
                                                 (F16, np.float16(2), F16), (I8, np.int8(3), I8)])
def test_tile_op_scalar_both_sides(symbol, dtype, scalar, want, rng):
    py_op, _, np_op = BINARY[symbol]
    if symbol == "/" and not promotion.is_float(want):
        want = F32
    a = data(rng, dtype, nonzero=True)
    a[2] = np.asarray(scalar).astype(dtype)  # some equal pairs, for the comparisons
    a = np.where(a == 0, 3, a).astype(dtype)  # no division by zero either way round
    _, got = simulate(lambda t: py_op(t, scalar), a)
    assert got.dtype == want
    assert_bits_equal(got, engine_result(np_op, a, scalar, want))
    _, got = simulate(lambda t: py_op(scalar, t), a)  # the reflected form
    assert got.dtype == want
    assert_bits_equal(got, engine_result(np_op, scalar, a, want))


@pytest.mark.parametrize("dtype", [F32, BF16, F16, I32, I16, I8])
def test_unary_minus_keeps_the_dtype(dtype, rng):
    a = data(rng, dtype)
    _, got = simulate(operator.neg, a)
    assert got.dtype == dtype
    want = -a.astype(np.float32)
    assert_bits_equal(got, want.astype(dtype))
    if promotion.is_float(dtype):
        assert np.signbit(got[0, 0]) and not np.signbit(got[0, 1])  # -(0.0) is -0.0 and -(-0.0) is 0.0


def test_integer_true_division_is_float32_so_floor_is_exact(rng):
    """The sample's nl.floor(iota / w, dtype=nl.int32): an int32 quotient would round 5/2 up before the floor."""
    pos = np.arange(128, dtype=np.int32).reshape(128, 1)
    _, got = simulate(lambda t: nl.floor(t / 41, dtype=nl.int32), pos)
    np.testing.assert_array_equal(got, pos // 41)


# Python has no reflected comparisons: ``3 < tile`` runs ``tile > 3``
SWAPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


@pytest.mark.parametrize("symbol", list(BINARY))
def test_operators_emit_what_the_nl_functions_emit(symbol):
    py_op, nl_fn, _ = BINARY[symbol]
    a, b = np.ones((4, 3), np.int32), np.ones((4, 3), np.float16)
    for x, y, dt in [(a, b, F16), (a, 3, I32), (3, a, I32), (a, 0.5, F32), (np.float16(2), b, F16)]:
        if symbol == "/" and not promotion.is_float(dt):
            dt = F32
        p1, _ = simulate(py_op, x, y)
        if symbol in SWAPPED and not isinstance(x, np.ndarray):
            p2, _ = simulate(lambda u, v: BINARY[SWAPPED[symbol]][1](v, u, dtype=dt), x, y)
        else:
            p2, _ = simulate(lambda u, v: nl_fn(u, v, dtype=dt), x, y)
        assert same_instructions(p1, p2)


def test_sample_expression_matches_the_public_kernel_form():
    """src_h_idx * in_w + src_w_idx is nl.add(nl.multiply(h, in_w, dtype=int32), w, dtype=int32), as kernels/baselines/public_sample.py."""
    h, w = np.arange(8, dtype=np.int32).reshape(8, 1), np.arange(8, dtype=np.int32).reshape(8, 1)
    p1, y1 = simulate(lambda a, b: a * 20 + b, h, w)
    p2, y2 = simulate(lambda a, b: nl.add(nl.multiply(a, 20, dtype=nl.int32), b, dtype=nl.int32), h, w)
    assert same_instructions(p1, p2) and y1.dtype == I32
    np.testing.assert_array_equal(y1, h * 20 + w)


@pytest.mark.parametrize("a, b, want", [
    (F32, BF16, F32), (F16, BF16, F32), (BF16, F16, F32), (F16, F32, F32), (I32, F16, F16), (U8, BF16, BF16),
    (I16, I32, I32), (I8, U8, I16), (U8, I16, I16), (I8, I8, I8), (U8, U8, U8)])
def test_promotion_table(a, b, want):
    assert promotion.promote_types(a, b) == want
    assert promotion.promote_types(b, a) == want


def test_promotion_of_weak_scalars():
    assert promotion.scalar_dtype(3) == I32 and promotion.scalar_dtype(0.5) == F32
    assert promotion.scalar_dtype(True) == U8 and promotion.scalar_dtype(np.int16(2)) == I16
    assert promotion.scalar_dtype(np.float64(2.0)) == F32  # not a machine dtype: counts as a Python float


def hbm_kernel(fn):
    def kernel(x):
        fn(x)
        return nl.ndarray((1, 1), nl.float32, buffer=nl.shared_hbm)
    return kernel


@pytest.mark.parametrize("fn, symbol", [(lambda x: x + 1, "+"), (lambda x: 2 * x, "*"), (lambda x: x / 2, "/"),
                                        (lambda x: x < 1, "<"), (lambda x: -x, "unary -"),
                                        (lambda x: x == 1, "==")])
def test_operators_on_hbm_tensors_raise(fn, symbol):
    with pytest.raises(InvalidTypeError, match=rf"operator {symbol}.*HBM tensor.*x.*nl.load"):
        trace(hbm_kernel(fn), np.zeros((4, 3), np.float32))


def test_operators_reject_other_operands_and_mismatched_shapes():
    def kernel(x):
        t, u = nl.ndarray((4, 3), nl.float32), nl.ndarray((8, 3), nl.float32)
        with pytest.raises(InvalidTypeError, match=r"operator \+.*nisa.iota"):
            t + nl.arange(4)[:, None]
        with pytest.raises(InvalidTypeError, match=r"operator \*.*str 'a'"):
            t * "a"
        with pytest.raises(InvalidValueError, match=r"operator - requires tiles with the same partitions"):
            t - u
        with pytest.raises(InvalidValueError, match=r"operator \+ requires tile shapes that broadcast"):
            t + nl.ndarray((4, 2), nl.float32)
        return nl.ndarray((1, 1), nl.float32, buffer=nl.shared_hbm)
    trace(kernel, np.zeros((4, 3), np.float32))


def test_tiles_stay_hashable():
    def kernel(x):
        t = nl.ndarray((4, 3), nl.float32)
        assert {t: 1}[t] == 1
        return nl.ndarray((1, 1), nl.float32, buffer=nl.shared_hbm)
    trace(kernel, np.zeros((4, 3), np.float32))


def test_par_dim_in_shapes():
    def kernel(x):
        t = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
        z = nl.zeros((nl.par_dim(4), 3), dtype=nl.float32)
        h = nl.ndarray((nl.par_dim(4), 3), dtype=nl.float32, buffer=nl.shared_hbm)
        assert t.shape == (128, 512) and z.shape == (4, 3) and h.shape == (4, 3)
        assert all(type(n) is int for n in t.shape + z.shape + h.shape)
        with pytest.raises(InvalidValueError, match="par_dim marks the one partition dimension"):
            nl.ndarray((nl.par_dim(4), nl.par_dim(3)), dtype=nl.float32)
        nisa.dma_copy(dst=h, src=z)
        return h
    program = trace(kernel, np.zeros((1, 1), np.float32))
    (out,) = run(program, [np.zeros((1, 1), np.float32)])
    assert_bits_equal(out, np.zeros((4, 3), np.float32))
    with pytest.raises(InvalidValueError):
        nl.par_dim(0)
    assert nl.par_dim(7) == 7 and repr(nl.par_dim(7)) == "nl.par_dim(7)"


def test_typing_annotations():
    def kernel(x: nt.tensor, y: nt.tensor[(4, 3), nl.float32]) -> nt.mutable_tensor:
        assert isinstance(x, nt.tensor) and isinstance(x, nt.mutable_tensor)
        out = nl.ndarray((4, 3), nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=y)
        return out
    trace(kernel, np.zeros((4, 3), np.float32), np.zeros((4, 3), np.float32))
    assert not isinstance(3, nt.tensor)
    assert "tensor[(4, 3)" in repr(nt.tensor[(4, 3), nl.float32])

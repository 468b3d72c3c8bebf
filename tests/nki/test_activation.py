"""nisa.activation: dst = op(data * scale + bias) on the scalar engine, every step rounded to float32 (NKI's
documented semantics), then cast to dst's dtype; the exact kernels floor their scaled positions with it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resize_kernels.errors import InvalidValueError
from resize_kernels.machine.simulator import run
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.nki import trace


def activation_program(x: np.ndarray, op, out_dtype, **kw):
    def kernel(t):
        tile = nl.ndarray(t.shape, t.dtype, name="in")
        nisa.dma_copy(dst=tile, src=t)
        res = nl.ndarray(t.shape, out_dtype, name="res")
        nisa.activation(res, op, tile, **kw)
        out = nl.ndarray(t.shape, out_dtype, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=res)
        return out
    return trace(kernel, x)


floats = st.floats(-1e6, 1e6, allow_nan=False, width=32)


@settings(max_examples=60, deadline=None)
@given(st.lists(floats, min_size=1, max_size=128), floats, floats)
def test_floor_with_scale_and_bias_is_float32_arithmetic(values, scale, bias):
    x = np.array(values, np.float32).reshape(-1, 1)
    program = activation_program(x, nl.floor, np.float32, scale=scale, bias=bias)
    (got,) = run(program, [x])
    want = np.floor(x * np.float32(scale) + np.float32(bias))  # float32 product, float32 sum
    assert np.array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2**24 - 1), st.integers(1, 2**24 - 1))
def test_floor_of_scaled_int_positions_is_the_reference_map(out_size, in_size):
    """What ``helpers.scaled_floor`` relies on: floor(float32(d) * float32(in/out)) into int32, exactly."""
    d = np.unique(np.linspace(0, out_size - 1, 100).astype(np.int32)).reshape(-1, 1)
    program = activation_program(d, "floor", np.int32, scale=in_size / out_size)
    (got,) = run(program, [d])
    want = np.floor(d.astype(np.float32) * np.float32(in_size / out_size)).astype(np.int32)
    assert np.array_equal(got, want)


def test_listing_shows_scale_and_bias_only_when_used():
    x = np.zeros((4, 2), np.float32)
    plain = activation_program(x, nl.floor, np.float32).instructions[1].listing()
    scaled = activation_program(x, nl.floor, np.float32, scale=0.5, bias=0.25).instructions[1].listing()
    assert plain.endswith("<- floor(in.0[0:4, 0:2])")
    assert scaled.endswith("<- floor(in.0[0:4, 0:2] * 0.5 + 0.25)")


@pytest.mark.parametrize("kw, message", [
    ({"op": "softmax"}, "nisa.activation has no function 'softmax'"),  # nl.softmax is several instructions
    ({"op": nl.floor, "scale": np.ones((4, 1))}, "requires a Python number as scale"),
    ({"op": nl.floor, "bias": "1"}, "requires a Python number as bias"),
])
def test_bad_arguments_name_the_problem(kw, message):
    op = kw.pop("op")
    with pytest.raises(InvalidValueError, match=message):
        activation_program(np.zeros((4, 2), np.float32), op, np.float32, **kw)


def test_floor_of_minus_zero_times_one_plus_zero_is_plus_zero():
    """x * 1.0 + 0.0 is made even when it looks like the identity: -0.0 * 1 + 0 = +0.0, whose floor is +0.0."""
    x = np.array([[-0.0], [0.0], [-1.5]], np.float32)
    (got,) = run(activation_program(x, nl.floor, np.float32, scale=1.0, bias=0.0), [x])
    assert got.view(np.uint32).tolist() == np.array([[0.0], [0.0], [-2.0]], np.float32).view(np.uint32).tolist()

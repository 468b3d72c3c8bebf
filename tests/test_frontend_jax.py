"""The JAX front end: resize_nearest and its gradient as pure callbacks into the simulated NeuronCore, under every
transformation (eager, jit, grad, vmap), bit for bit equal to the semantics references."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resize_kernels import api, semantics
from resize_kernels.frontends.jax import resize_nearest, resize_nearest_grad

from conftest import assert_bits_equal, random_data

FLOAT_DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]
SETTINGS = settings(max_examples=50, deadline=None, derandomize=True)


@st.composite
def cases(draw):
    """(NHWC shape, output (h, w), dtype, rng): N <= 2, H, W <= 12 in, <= 16 out, C <= 3."""
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 12)), draw(st.integers(1, 12)), draw(st.integers(1, 3)))
    size = (draw(st.integers(1, 16)), draw(st.integers(1, 16)))
    dtype = np.dtype(draw(st.sampled_from(FLOAT_DTYPES)))
    return shape, size, dtype, np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


def finite(rng, shape, dtype) -> np.ndarray:
    """Random finite values of ``dtype`` spread over many exponents (gradients: NaN payloads of a sum are not
    specified bit for bit)."""
    return (rng.standard_normal(shape) * 2.0 ** rng.integers(-6, 7, shape)).astype(dtype)


def loss(x, size, g):
    """sum(resize(x) * g) in float32: its gradient is resize_nearest_grad of g (g exact in x's dtype)."""
    return jnp.sum(resize_nearest(x, size).astype(jnp.float32) * g.astype(jnp.float32))


@SETTINGS
@given(case=cases(), as_list=st.booleans())
def test_eager_equals_reference(case, as_list):
    shape, size, dtype, rng = case
    x = random_data(rng, shape, dtype)  # every bit pattern, NaN payloads included: the data is only moved
    y = resize_nearest(jnp.asarray(x), list(size) if as_list else size)
    assert isinstance(y, jax.Array)
    assert_bits_equal(np.asarray(y), semantics.resize_nearest_reference(x, size))


@SETTINGS
@given(case=cases())
def test_jit_equals_reference(case):
    shape, size, dtype, rng = case
    x = random_data(rng, shape, dtype)
    y = jax.jit(resize_nearest, static_argnums=1)(x, size)
    assert_bits_equal(np.asarray(y), semantics.resize_nearest_reference(x, size))


@SETTINGS
@given(case=cases())
def test_grad_and_vjp_equal_reference(case):
    shape, size, dtype, rng = case
    x, g = finite(rng, shape, dtype), finite(rng, (shape[0], *size, shape[3]), dtype)
    want = semantics.resize_nearest_grad_reference(g, shape[1:3])  # float32 sums, cast once to dtype
    dx = jax.jit(jax.grad(loss), static_argnums=1)(x, size, g)
    assert_bits_equal(np.asarray(dx), want)
    _, vjp = jax.vjp(lambda t: resize_nearest(t, size), x)
    assert_bits_equal(np.asarray(vjp(jnp.asarray(g))[0]), want)


@SETTINGS
@given(case=cases(), batch=st.integers(1, 3))
def test_vmap_and_vmap_of_grad_equal_per_example(case, batch):
    shape, size, dtype, rng = case
    x, g = random_data(rng, (batch, *shape), dtype), finite(rng, (batch, shape[0], *size, shape[3]), dtype)
    both = jax.jit(lambda x, t, g: (jax.vmap(lambda e: resize_nearest(e, size))(x),  # one compilation per case
                                    jax.vmap(jax.grad(loss), in_axes=(0, None, 0))(t, size, g)))
    y, dx = both(x, finite(rng, x.shape, dtype), g)
    assert_bits_equal(np.asarray(y), np.stack([semantics.resize_nearest_reference(e, size) for e in x]))
    assert_bits_equal(np.asarray(dx), np.stack([semantics.resize_nearest_grad_reference(e, shape[1:3]) for e in g]))


def count_calls(monkeypatch, name):
    """Count the simulator runs of api.<name> (the front end looks it up when it traces)."""
    calls = []
    real = getattr(api, name)
    monkeypatch.setattr(api, name, lambda a, size, **kw: calls.append(a.shape) or real(a, size, **kw))
    return calls


def test_vmap_folds_every_mapped_axis_into_one_run(monkeypatch, rng):
    """Nested vmaps, a mapped axis that is not the first, and jit: one simulator run on the folded batch."""
    x = random_data(rng, (2, 1, 5, 4, 3, 2), np.float32)  # vmapped over axes 0 and (inner) 3
    calls = count_calls(monkeypatch, "resize_nearest")
    f = jax.jit(jax.vmap(jax.vmap(lambda t: resize_nearest(t, (7, 2)), in_axes=3)))
    y = np.asarray(f(x))
    assert calls == [(6, 5, 4, 2)]  # 2 x 3 examples of batch 1, as one batch of 6
    assert y.shape == (2, 3, 1, 7, 2, 2)
    for i in range(2):
        for j in range(3):
            assert_bits_equal(y[i, j], semantics.resize_nearest_reference(x[i, :, :, :, j], (7, 2)))


def test_vmap_of_grad_runs_the_gradient_once(monkeypatch, rng):
    x, g = finite(rng, (4, 1, 3, 5, 2), np.float16), finite(rng, (4, 1, 7, 4, 2), np.float16)
    calls = count_calls(monkeypatch, "resize_nearest_grad")
    dx = jax.vmap(jax.grad(loss), in_axes=(0, None, 0))(x, (7, 4), g)
    assert calls == [(4, 7, 4, 2)]
    assert_bits_equal(np.asarray(dx), np.stack([semantics.resize_nearest_grad_reference(e, (3, 5)) for e in g]))


@pytest.mark.parametrize("dtype, small", [(ml_dtypes.bfloat16, 2.0**-8), (np.float16, 2.0**-11)])
def test_half_gradients_sum_in_float32_and_round_once(dtype, small):
    """1 + s + s with s half an ulp of 1: summed in the half type it stays 1 (ties to even, twice); summed in
    float32 and rounded once it is 1 + 2s, representable: the gradient is the latter, in dy's dtype."""
    x = jnp.zeros((1, 1, 1, 1), dtype)
    g = jnp.asarray(np.array([1.0, small, small], np.float32).reshape(1, 1, 3, 1).astype(dtype))
    _, vjp = jax.vjp(lambda t: resize_nearest(t, (1, 3)), x)
    (dx,) = vjp(g)
    assert dx.dtype == dtype and float(dx[0, 0, 0, 0]) == 1 + 2 * small
    assert_bits_equal(np.asarray(dx), semantics.resize_nearest_grad_reference(np.asarray(g), (1, 1)))
    assert_bits_equal(np.asarray(resize_nearest_grad(g, (1, 1))), np.asarray(dx))


def test_second_order_reverse_mode(rng):
    """The gradient's vjp is the forward resize, so grad of grad works; small integers make every sum exact."""
    size, in_hw = (7, 3), (4, 5)
    x = rng.integers(-8, 9, (2, *in_hw, 3)).astype(np.float32)
    g = rng.integers(-8, 9, (2, *size, 3)).astype(np.float32)
    v = rng.integers(-8, 9, x.shape).astype(np.float32)
    square = lambda t: 0.5 * jnp.sum(resize_nearest(t, size) ** 2)  # noqa: E731 grad: G(R(t))
    hvp = jax.grad(lambda t: jnp.vdot(jax.grad(square)(t), v))(x)  # G(R(v))
    want = semantics.resize_nearest_grad_reference(semantics.resize_nearest_reference(v, size), in_hw)
    assert_bits_equal(np.asarray(hvp), want)
    _, vjp = jax.vjp(lambda d: resize_nearest_grad(d, in_hw), g)
    assert_bits_equal(np.asarray(vjp(jnp.asarray(x))[0]), semantics.resize_nearest_reference(x, size))


def test_int_size_means_square_and_numpy_inputs(rng):
    x = random_data(rng, (1, 3, 5, 2), ml_dtypes.bfloat16)
    want = semantics.resize_nearest_reference(x, (4, 4))
    for size in (4, np.int64(4), (np.int32(4), 4)):
        assert_bits_equal(np.asarray(resize_nearest(x, size)), want)
    assert_bits_equal(np.asarray(resize_nearest_grad(want.astype(np.float32), 3)),
                      semantics.resize_nearest_grad_reference(want.astype(np.float32), (3, 3)))


def test_empty_batch():
    x = jnp.zeros((0, 3, 4, 2), jnp.float16)
    assert resize_nearest(x, (5, 6)).shape == (0, 5, 6, 2)
    assert jax.jit(resize_nearest, static_argnums=1)(x, 5).dtype == jnp.float16
    assert jax.grad(lambda t: jnp.sum(resize_nearest(t, (5, 6))))(x).shape == (0, 3, 4, 2)
    assert jax.vmap(lambda t: resize_nearest(t, 2))(jnp.zeros((0, 1, 3, 3, 1))).shape == (0, 1, 2, 2, 1)


def test_forward_mode_is_not_supported():
    """A custom_vjp has no jvp: jax.jvp / jacfwd raise JAX's own error (reverse mode works)."""
    x = jnp.zeros((1, 2, 2, 1))
    with pytest.raises(TypeError, match="forward-mode autodiff"):
        jax.jvp(lambda t: resize_nearest(t, 3), (x,), (x,))


X = jnp.zeros((1, 4, 4, 2))
TRACED = ("resize_nearest requires size as an int or a pair of ints (height, width), got a jax array; the size "
          "sets the result's shape, so it must be static: pass Python ints (under jax.jit, mark the argument static "
          "with static_argnums)")


@pytest.mark.parametrize("call, exc, message", [
    (lambda: resize_nearest(np.zeros((1, 4, 4, 2)), (8, 8)), TypeError,
     "resize_nearest requires a float32, float16 or bfloat16 array, got float64; the NeuronCore has no float64: "
     "cast it with .astype(jnp.float32)"),
    (lambda: resize_nearest(np.zeros((1, 4, 4, 2), np.int64), 8), TypeError,
     "resize_nearest requires a float32, float16 or bfloat16 array, got int64; cast it with .astype(jnp.float32)"),
    (lambda: resize_nearest(X.astype(jnp.complex64), 8), TypeError,
     "resize_nearest requires a float32, float16 or bfloat16 array, got complex64; cast it with .astype(jnp.float32)"),
    (lambda: jax.jit(lambda t: resize_nearest(t, 8))(X.astype(jnp.int32)), TypeError,
     "resize_nearest requires a float32, float16 or bfloat16 array, got int32; cast it with .astype(jnp.float32)"),
    (lambda: resize_nearest(X[0], (8, 8)), ValueError,
     "resize_nearest requires an NHWC array of rank 4 (batch, height, width, channels), got shape (4, 4, 2)"),
    (lambda: jax.vmap(lambda t: resize_nearest(t, 8))(X), ValueError,
     "resize_nearest requires an NHWC array of rank 4 (batch, height, width, channels), got shape (4, 4, 2)"),
    (lambda: resize_nearest([[1.0]], 8), TypeError, "resize_nearest requires a jax array in NHWC layout, got list"),
    (lambda: resize_nearest(X, (8.0, 8)), TypeError,
     "resize_nearest requires size as an int or a pair of ints (height, width), got (8.0, 8)"),
    (lambda: resize_nearest(X, (8, 8, 8)), TypeError,
     "resize_nearest requires size as an int or a pair of ints (height, width), got (8, 8, 8)"),
    (lambda: resize_nearest(X, True), TypeError,
     "resize_nearest requires size as an int or a pair of ints (height, width), got True"),
    (lambda: jax.jit(resize_nearest)(X, 8), TypeError, TRACED),
    (lambda: resize_nearest(X, jnp.array([8, 8])), TypeError, TRACED),
    (lambda: resize_nearest(X, (0, 8)), ValueError, "resize_nearest requires positive sizes, got output size 0"),
    (lambda: resize_nearest(X, (8, 1 << 24)), ValueError,
     "resize_nearest requires every size below 2**24 = 16777216 (float32 positions stop being exact there), got "
     "output size 16777216; split the resize into smaller pieces"),
    (lambda: resize_nearest(jnp.zeros((1, 4, 4, 0)), 8), ValueError,
     "resize_nearest requires at least one batch and one channel, got in_shape (1, 4, 4, 0)"),
    (lambda: resize_nearest_grad(X.astype(jnp.int8), (2, 2)), TypeError,
     "resize_nearest_grad requires a float32, float16 or bfloat16 array, got int8; cast it with .astype(jnp.float32)"),
    (lambda: resize_nearest_grad(X, [2]), TypeError,
     "resize_nearest_grad requires size as an int or a pair of ints (in_h, in_w), got [2]"),
    (lambda: resize_nearest_grad(X, (-1, 2)), ValueError,
     "resize_nearest_grad requires positive sizes, got input size -1"),
])
def test_bad_input_gets_a_clear_error_when_traced(call, exc, message):
    with pytest.raises(exc) as info:
        call()
    # under jit and vmap JAX appends a note on its filtered traceback: the message is what precedes it
    assert str(info.value).split("\n--------------------\n")[0] == message


def jax_image_map(in_size: int, out_size: int) -> np.ndarray:
    """The source index jax.image.resize(method="nearest") picks on one axis."""
    x = jnp.arange(in_size, dtype=jnp.float32).reshape(1, in_size, 1, 1)
    return np.asarray(jax.image.resize(x, (1, out_size, 1, 1), method="nearest")).ravel().astype(np.int64)


@pytest.mark.parametrize("in_hw, out_hw, rows, cols, pixels", [
    ((30, 20), (59, 38), 15, 10, 1010),  # SD2's odd upsample: 1,010 of 2,242 output pixels (45%) differ
    ((30, 20), (60, 40), 0, 0, 0),  # an exact 2x: the two conventions agree
])
def test_jax_image_resize_nearest_is_a_different_convention(in_hw, out_hw, rows, cols, pixels):
    """jax.image.resize samples at half-pixel centres; ours (PyTorch's, the Neuron compiler's) does not.
    The counts are measured here: rows / columns whose source differs, and output pixels that differ."""
    assert (jax_image_map(in_hw[0], out_hw[0]) != semantics.source_index(in_hw[0], out_hw[0])).sum() == rows
    assert (jax_image_map(in_hw[1], out_hw[1]) != semantics.source_index(in_hw[1], out_hw[1])).sum() == cols
    index = jnp.broadcast_to(jnp.arange(in_hw[0] * in_hw[1], dtype=jnp.float32).reshape(1, *in_hw, 1), (1, *in_hw, 3))
    ours = np.asarray(resize_nearest(index, out_hw))  # flat source indices, exact in float32
    assert_bits_equal(ours, np.repeat(semantics.index_map(in_hw, out_hw)[None, :, :, None], 3, 3).astype(np.float32))
    theirs = np.asarray(jax.image.resize(index, (1, *out_hw, 3), method="nearest"))
    assert (ours != theirs).any(axis=3).sum() == pixels


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.bfloat16, jnp.float16])
def test_the_jax_convention_is_jax_image_resize_under_jit_grad_and_vmap(dtype):
    x = jnp.asarray(np.random.default_rng(3).standard_normal((2, 13, 9, 4)), dtype)
    out = (2, 31, 20, 4)

    def ours(v):
        return resize_nearest(v, out[1:3], convention="jax")

    def theirs(v):
        return jax.image.resize(v, out, "nearest")

    assert_bits_equal(jax.jit(ours)(x), theirs(x))
    assert_bits_equal(jax.vmap(ours)(x[:, None]),
                      jax.vmap(lambda v: jax.image.resize(v, (1, *out[1:]), "nearest"))(x[:, None]))
    loss = lambda f: lambda v: (f(v).astype(jnp.float32) * jnp.arange(4.0)).sum()  # noqa: E731
    want = jax.grad(loss(theirs))(x.astype(jnp.float32))  # float32 sums: no scatter-order rounding to compare
    got = jax.grad(loss(ours))(x.astype(jnp.float32))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_every_convention_the_numpy_api_names_is_taken():
    x = jnp.asarray(np.random.default_rng(4).standard_normal((1, 7, 5, 2)), jnp.float32)
    for convention in semantics.conventions():
        want = api.resize_nearest(np.asarray(x), (11, 3), convention=convention)
        assert_bits_equal(resize_nearest(x, (11, 3), convention=convention), want)
        dy = jnp.ones((1, 11, 3, 2), jnp.float32)
        assert_bits_equal(resize_nearest_grad(dy, (7, 5), convention=convention),
                          api.resize_nearest_grad(np.asarray(dy), (7, 5), convention=convention))
    assert_bits_equal(resize_nearest(x, (11, 3), coordinate_transformation_mode="half_pixel"),
                      api.resize_nearest(np.asarray(x), (11, 3), coordinate_transformation_mode="half_pixel"))

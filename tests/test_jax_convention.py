"""``semantics.JAX`` is ``jax.image.resize(..., method="nearest")``'s map, bit for bit (the oracle is JAX itself),
and the numpy API, its kernels and the gradient follow it."""

import numpy as np
import pytest

import resize_kernels as rk
from resize_kernels import semantics

jax = pytest.importorskip("jax", reason="the oracle is JAX: pip install -e '.[test]'")
jnp = jax.numpy


def jax_index(in_size: int, out_size: int) -> np.ndarray:
    """The source index jax.image.resize gives each output position of one axis (float32 holds them exactly)."""
    return np.asarray(jax.image.resize(jnp.arange(in_size, dtype=jnp.float32), (out_size,), "nearest")).astype(int)


def test_the_map_is_jax_image_resizes_on_every_small_pair():
    for i in range(1, 25):  # one XLA compilation per pair
        for o in range(1, 25):
            np.testing.assert_array_equal(semantics.convention_index(i, o, semantics.JAX), jax_index(i, o),
                                          err_msg=f"{i} -> {o}")


@pytest.mark.parametrize("seed", range(4))
def test_the_map_is_jax_image_resizes_on_random_sizes(seed):
    rng = np.random.default_rng(seed)
    for i, o in rng.integers(1, 1 << rng.integers(4, 21), size=(20, 2)):
        np.testing.assert_array_equal(semantics.convention_index(int(i), int(o), semantics.JAX),
                                      jax_index(int(i), int(o)), err_msg=f"{i} -> {o}")


def test_the_map_differs_from_tensorflows_half_pixel_centers_and_from_exact_arithmetic_somewhere():
    """JAX rounds (d + 0.5) * in, then divides by out; TensorFlow multiplies by float32(in / out): not one map."""
    tf = semantics.TENSORFLOW_MODES["half_pixel_centers"]
    pairs = [(i, o) for i in range(1, 200) for o in range(1, 200)]
    assert any(not np.array_equal(semantics.convention_index(i, o, semantics.JAX), semantics.convention_index(i, o, tf))
               for i, o in pairs)
    assert semantics.JAX in semantics.conventions() and semantics.JAX.describe() == "jax image.resize nearest"
    assert semantics.IndexConvention.from_key(semantics.JAX.key) == semantics.JAX


@pytest.mark.parametrize("in_shape, out_hw, dtype", [
    ((2, 30, 20, 8), (59, 38), "float32"),      # the SD2 upsample's ratios
    ((1, 17, 23, 3), (7, 61), "bfloat16"),
    ((3, 9, 40, 5), (26, 13), "uint8"),
    ((1, 64, 48, 16), (96, 100), "float16"),
])
def test_resize_nearest_with_the_jax_convention_equals_jax_image_resize(in_shape, out_hw, dtype):
    rng = np.random.default_rng(sum(in_shape))
    x = rng.integers(0, 255, in_shape).astype(dtype) if dtype == "uint8" else \
        rng.standard_normal(in_shape).astype(jnp.dtype(dtype))
    want = np.asarray(jax.image.resize(jnp.asarray(x), (in_shape[0], *out_hw, in_shape[3]), "nearest"))
    for convention in ("jax", semantics.JAX):
        got = rk.resize_nearest(x, out_hw, convention=convention)
        assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_the_gradient_with_the_jax_convention_equals_jaxs():
    x = np.random.default_rng(0).standard_normal((2, 13, 9, 4)).astype(np.float32)
    dy = np.random.default_rng(1).standard_normal((2, 31, 20, 4)).astype(np.float32)
    _, vjp = jax.vjp(lambda v: jax.image.resize(v, dy.shape, "nearest"), jnp.asarray(x))
    (want,) = vjp(jnp.asarray(dy))
    got = rk.resize_nearest_grad(dy, (13, 9), convention="jax")
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-6, atol=1e-6)  # JAX's scatter-add order is its own
    np.testing.assert_array_equal(got, semantics.resize_nearest_grad_reference(dy, (13, 9), semantics.JAX))


def test_the_jax_convention_takes_no_scales_and_a_bad_name_says_which_it_knows():
    with pytest.raises(ValueError, match="takes sizes, not scales"):
        semantics.IndexConvention("tf_half_pixel_for_nn", "floor", "jax", scales=(2.0, 2.0))
    with pytest.raises(ValueError, match="'jax'"):
        rk.resize_nearest(np.zeros((1, 2, 2, 1), np.float32), (3, 3), convention="jaxx")

"""``frontends.jax.resize`` is ``jax.image.resize`` for method "nearest", bit for bit, on the simulated NeuronCore
(the oracle is JAX itself), and ``patch_image_resize`` runs a model's calls through it unchanged."""

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="the oracle is JAX: pip install -e '.[test]'")
jnp = jax.numpy

from resize_kernels.errors import InvalidTypeError  # noqa: E402
from resize_kernels.frontends.jax import patch_image_resize, resize  # noqa: E402

DTYPES = [jnp.float32, jnp.bfloat16, jnp.float16, jnp.int32, jnp.int16, jnp.int8, jnp.uint8]


def bits(a) -> np.ndarray:
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def random_case(rng):
    """An image of rank 1-4 and an output shape resizing a random subset of its axes (1..40 per side)."""
    rank = int(rng.integers(1, 5))
    shape = tuple(int(n) for n in rng.integers(1, 12, rank))
    out = tuple(int(rng.integers(1, 41)) if rng.random() < 0.6 else n for n in shape)
    dtype = DTYPES[int(rng.integers(len(DTYPES)))]
    x = rng.standard_normal(shape) * 50
    return jnp.asarray(x, dtype), out


@pytest.mark.parametrize("seed", range(30))
def test_nearest_is_jax_image_resize_bit_for_bit(seed):
    x, out = random_case(np.random.default_rng(seed))
    want = jax.image.resize(x, out, "nearest")
    got = resize(x, out, "nearest")
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(bits(got), bits(want), err_msg=f"{x.shape} -> {out} {x.dtype}")
    np.testing.assert_array_equal(bits(jax.jit(lambda v: resize(v, out, jax.image.ResizeMethod.NEAREST))(x)),
                                  bits(want))


@pytest.mark.parametrize("seed", range(12))
def test_the_float32_gradient_is_jaxs_bit_for_bit_under_jit_and_vmap(seed):
    rng = np.random.default_rng(100 + seed)
    x, out = random_case(rng)
    x = x.astype(jnp.float32)
    weights = jnp.asarray(rng.standard_normal(out), jnp.float32)

    def loss(f):
        return lambda v: (f(v, out, "nearest") * weights).sum()

    np.testing.assert_array_equal(np.asarray(jax.jit(jax.grad(loss(resize)))(x)),
                                  np.asarray(jax.grad(loss(jax.image.resize))(x)))
    stacked = jnp.stack([x, -x])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda v: resize(v, out, "nearest"))(stacked)),
                                  np.asarray(jax.vmap(lambda v: jax.image.resize(v, out, "nearest"))(stacked)))


def test_other_methods_and_dtypes_are_jaxs_own():
    x = jnp.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(resize(x, (2, 5, 7), "linear"), jax.image.resize(x, (2, 5, 7), "linear"))
    with pytest.raises(InvalidTypeError, match="requires one of float32.*got bool.*jax.image.resize"):
        resize(jnp.zeros((2, 3), bool), (4, 3), "nearest")
    with pytest.raises(ValueError):  # JAX's own error for a shape of another rank
        resize(x, (5, 7), "nearest")


def test_patch_image_resize_counts_what_it_took_and_passed():
    x = jnp.ones((1, 4, 4, 2), jnp.float32)
    stock = jax.image.resize
    with patch_image_resize() as outer:
        jax.image.resize(x, (1, 8, 8, 2), "nearest")
        with patch_image_resize() as inner:
            jax.image.resize(x, (1, 8, 8, 2), "bilinear")
            jax.image.resize(x.astype(bool), (1, 8, 8, 2), "nearest")  # no NeuronCore bool: JAX's
        assert jax.image.resize is not stock
    assert jax.image.resize is stock
    assert (outer.taken, outer.passed, inner.taken, inner.passed) == (1, 2, 0, 2)
    assert repr(outer) == "<patch_image_resize: 1 call taken, 2 passed to jax>"


def _decoder(params, z):
    """A Flax-style UNet decoder in jax.numpy: conv, upsample by jax.image.resize (nearest), conv, a skip, upsample
    to an odd size (the SD2 UNet's 30x20 -> 59x38 kind), conv."""
    def conv(w, v):
        return jax.lax.conv_general_dilated(v, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    h = jax.nn.silu(conv(params["w1"], z))
    n, ih, iw, c = h.shape
    up = jax.image.resize(h, (n, 2 * ih, 2 * iw, c), "nearest")
    h = jax.nn.silu(conv(params["w2"], up)) + up
    h = jax.image.resize(h, (n, 2 * h.shape[1] - 1, 2 * h.shape[2] - 2, c), "nearest")
    return conv(params["w3"], h)


def test_a_patched_unet_decoder_runs_forward_and_backward_bit_for_bit():
    keys = jax.random.split(jax.random.key(0), 4)
    params = {"w1": jax.random.normal(keys[0], (3, 3, 4, 8)) * 0.2, "w2": jax.random.normal(keys[1], (3, 3, 8, 8)) * 0.2,
              "w3": jax.random.normal(keys[2], (3, 3, 8, 3)) * 0.2}
    z = jax.random.normal(keys[3], (2, 8, 6, 4))
    loss = jax.jit(jax.value_and_grad(lambda p, v: (_decoder(p, v) ** 2).mean(), argnums=(0, 1)))
    want = loss(params, z)
    with patch_image_resize() as calls:
        got = jax.jit(jax.value_and_grad(lambda p, v: (_decoder(p, v) ** 2).mean(), argnums=(0, 1)))(params, z)
    assert calls.taken == 2 and calls.passed == 0
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))

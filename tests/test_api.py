"""The public API: results, caching, and a clear error for every kind of bad input."""

import ml_dtypes
import numpy as np
import pytest
import torch

import resize_kernels as rk
from resize_kernels import api, semantics

from conftest import assert_bits_equal, random_data


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int8])
def test_resize_nearest_equals_reference(dtype, rng):
    x = random_data(rng, (2, 7, 5, 3), dtype)
    assert_bits_equal(rk.resize_nearest(x, (11, 13)), semantics.resize_nearest_reference(x, (11, 13)))
    assert_bits_equal(rk.resize_nearest(x, (3, 2), kernel="seed"), semantics.resize_nearest_reference(x, (3, 2)))


def test_non_contiguous_input(rng):
    x = random_data(rng, (1, 6, 4, 5), np.float32)[:, :, :, 1:4]
    assert_bits_equal(rk.resize_nearest(x, (9, 9)), semantics.resize_nearest_reference(x, (9, 9)))


def test_programs_are_traced_once(rng):
    api.executable.cache_clear()
    x = random_data(rng, (1, 4, 4, 2), np.float32)
    rk.resize_nearest(x, (6, 6))
    rk.resize_nearest(x + 0, (6, 6))
    info = api.executable.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    assert rk.trace_resize(x.shape, (6, 6)) is rk.trace_resize(x.shape, (6, 6), kernel="auto")


def test_index_map():
    np.testing.assert_array_equal(rk.index_map((2, 3), (4, 3)), [[0, 1, 2], [0, 1, 2], [3, 4, 5], [3, 4, 5]])


X = np.zeros((1, 4, 4, 2), np.float32)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: rk.resize_nearest(X[0], (8, 8)), ValueError, r"requires an NHWC array of rank 4.*got shape \(4, 4, 2\)"),
    (lambda: rk.resize_nearest(X[None], (8, 8)), ValueError, "rank 4"),
    (lambda: rk.resize_nearest(np.zeros((0, 4, 4, 2), np.float32), (8, 8)), ValueError, "at least one batch"),
    (lambda: rk.resize_nearest(np.zeros((1, 0, 4, 2), np.float32), (8, 8)), ValueError, "positive sizes, got input size 0"),
    (lambda: rk.resize_nearest(X, (0, 8)), ValueError, "positive sizes, got output size 0"),
    (lambda: rk.resize_nearest(X, (8, -3)), ValueError, "positive sizes, got output size -3"),
    (lambda: rk.resize_nearest(X, (8, 1 << 24)), ValueError, "below 2\\*\\*24"),
    (lambda: rk.resize_nearest(X, (8.0, 8)), TypeError, "integer sizes"),
    (lambda: rk.resize_nearest(X, 8.0), TypeError, "output size as a pair"),
    (lambda: rk.resize_nearest(X, True), TypeError, "output size as a pair"),
    (lambda: rk.resize_nearest(X.astype(np.float64), (8, 8)), TypeError, "dtypes float32.*got float64"),
    (lambda: rk.resize_nearest(X.astype(np.complex64), (8, 8)), TypeError, "got complex64"),
    (lambda: rk.resize_nearest(X.tolist(), (8, 8)), TypeError, "requires a numpy array.*got list"),
    (lambda: rk.resize_nearest(torch.zeros(1, 4, 4, 2), (8, 8)), TypeError, "got Tensor; convert a torch tensor"),
    (lambda: rk.resize_nearest(X, (8, 8), kernel="fast"), ValueError, "no kernel 'fast'; choose one of 'auto', 'windows', 'rows', "),
    (lambda: rk.index_map((4,), (8, 8)), TypeError, "pair"),
    # empty names are no names: not ONNX's defaults (issue 40.11); garbage arguments (40.12)
    (lambda: rk.resize_nearest(X, (8, 8), coordinate_transformation_mode=""), ValueError,
     "requires coordinate_transformation_mode one of .*got ''"),
    (lambda: rk.resize_nearest(X, (8, 8), nearest_mode=""), ValueError, "requires nearest_mode one of .*got ''"),
    (lambda: rk.resize_nearest(X, (8, 8), nearest_mode="floor", scales=1.5), TypeError,
     r"requires scales as a pair \(height, width\) of numbers, as ONNX gives them, got 1.5"),
    (lambda: rk.cost(X.shape, (8, 8), target=[]), TypeError, "cost requires target as a name, 'trn1' or 'trn2', got list"),
    (lambda: rk.resize_nearest(X, (8, 8), kernel=[]), ValueError, r"has no kernel \[\]; choose one of"),
    (lambda: rk.resize_nearest(X, (8, 8), kernel=np.array(["rows"])), ValueError, "has no kernel array"),
    (lambda: rk.compile_hlo("HloModule m", kernel=["auto"]), ValueError, r"has no kernel \['auto'\]"),
])
def test_bad_input_gets_a_clear_error(call, exc, match):
    with pytest.raises(exc, match=match) as info:
        call()
    assert isinstance(info.value, rk.errors.ResizeKernelsError)


def test_too_many_channels_for_sbuf():
    from resize_kernels.machine.errors import SbufCapacityError
    with pytest.raises(SbufCapacityError, match="loaded_tile_sbuf"):  # the seed's tiles hold every channel
        rk.trace_resize((1, 2, 2, 60000), (3, 3), kernel="seed")


def test_an_int_size_means_square_as_torch_takes_it():
    x = np.arange(2 * 3 * 5 * 2, dtype=np.float32).reshape(2, 3, 5, 2)
    assert_bits_equal(rk.resize_nearest(x, 7), semantics.resize_nearest_reference(x, (7, 7)))
    dy = np.ones((2, 7, 7, 2), np.float32)
    assert_bits_equal(rk.resize_nearest_grad(dy, np.int64(4)), rk.resize_nearest_grad(dy, (4, 4)))


def test_size_names_say_whose_size_it_is():
    """The forward's size is the output's (torch's size=); the gradient's is the forward input's, named in_size in
    every front end."""
    import inspect

    from resize_kernels.frontends import jax as rk_jax
    from resize_kernels.frontends import torch as rk_torch
    for forward, grad in ((rk.resize_nearest, rk.resize_nearest_grad), (rk_jax.resize_nearest, rk_jax.resize_nearest_grad)):
        assert list(inspect.signature(forward).parameters)[1] == "size"
        assert list(inspect.signature(grad).parameters)[1] == "in_size"
    assert "SymInt[] in_size" in str(rk_torch.resize_nearest_grad._schema)
    dy = np.ones((1, 6, 4, 1), np.float32)
    assert_bits_equal(rk.resize_nearest_grad(dy, in_size=(3, 2)), semantics.resize_nearest_grad_reference(dy, (3, 2)))

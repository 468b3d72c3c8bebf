"""The reference gradient is a sum over the forward map, summed in the documented order (PyTorch's)."""

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from resize_kernels import semantics

from conftest import assert_bits_equal


def torch_grad_nhwc(dy: np.ndarray, in_hw, channels_last: bool) -> np.ndarray:
    """dx of F.interpolate(mode="nearest") by torch autograd, for an NHWC float32 dy."""
    n, _, _, c = dy.shape
    x = torch.zeros(n, c, *in_hw, requires_grad=True)
    xin = x.to(memory_format=torch.channels_last) if channels_last else x
    y = torch.nn.functional.interpolate(xin, size=dy.shape[1:3], mode="nearest")
    y.backward(torch.from_numpy(np.ascontiguousarray(dy)).permute(0, 3, 1, 2))
    return x.grad.permute(0, 2, 3, 1).contiguous().numpy()


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 2), in_h=st.integers(1, 30), in_w=st.integers(1, 30), out_h=st.integers(1, 70),
       out_w=st.integers(1, 70), c=st.integers(1, 3), channels_last=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_reference_equals_torch_autograd_bits(n, in_h, in_w, out_h, out_w, c, channels_last, seed):
    # Same order of float32 additions as PyTorch's CPU backward, so equal bits on random data.
    dy = np.random.default_rng(seed).standard_normal((n, out_h, out_w, c)).astype(np.float32)
    assert_bits_equal(semantics.resize_nearest_grad_reference(dy, (in_h, in_w)),
                      torch_grad_nhwc(dy, (in_h, in_w), channels_last))


def test_gradient_is_a_sum_not_a_mean():
    dy = np.ones((1, 6, 9, 1), np.float32)
    np.testing.assert_array_equal(semantics.resize_nearest_grad_reference(dy, (2, 3))[0, :, :, 0], np.full((2, 3), 9.0))


def test_downsample_leaves_skipped_sources_zero():
    dy = np.arange(1, 7, dtype=np.float32).reshape(1, 2, 3, 1)
    dx = semantics.resize_nearest_grad_reference(dy, (4, 7))[0, :, :, 0]
    want = np.zeros((4, 7), np.float32)
    want[np.ix_(semantics.source_index(4, 2), semantics.source_index(7, 3))] = dy[0, :, :, 0]
    np.testing.assert_array_equal(dx, want)


def test_accumulates_in_float32_in_row_major_order():
    # 2**24 + 1 + 1 in float32 left to right stays 2**24; any other order reaches 2**24 + 2.
    dy = np.array([2.0**24, 1.0, 1.0], np.float32).reshape(1, 1, 3, 1)
    assert semantics.resize_nearest_grad_reference(dy, (1, 1))[0, 0, 0, 0] == 2.0**24
    # bfloat16: 256 + 1 + 1 is exact in float32 and rounds once at the end (258 is a bfloat16)
    dyb = np.array([256.0, 1.0, 1.0], ml_dtypes.bfloat16).reshape(1, 1, 3, 1)
    dxb = semantics.resize_nearest_grad_reference(dyb, (1, 1))
    assert dxb.dtype == dyb.dtype and float(dxb[0, 0, 0, 0]) == 258.0


def test_source_runs_cover_every_output_once():
    for in_size, out_size in [(30, 59), (20, 38), (59, 30), (7, 7), (1, 9), (9, 1), (2, 82)]:
        first, count = semantics.source_runs(in_size, out_size)
        assert count.sum() == out_size
        src = semantics.source_index(in_size, out_size)
        for i in range(in_size):
            assert (src[first[i]:first[i] + count[i]] == i).all()


def test_reference_rejects_integer_dy():
    with pytest.raises(TypeError, match="float32, float16, bfloat16, got int32"):
        semantics.resize_nearest_grad_reference(np.zeros((1, 2, 2, 1), np.int32), (1, 1))

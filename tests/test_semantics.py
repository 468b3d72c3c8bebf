"""The reference map is PyTorch's F.interpolate(mode="nearest"), bit for bit."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from resize_kernels import semantics

from conftest import assert_bits_equal, random_data


def torch_nearest_nhwc(x: np.ndarray, out_hw) -> np.ndarray:
    t = torch.from_numpy(np.ascontiguousarray(x)).permute(0, 3, 1, 2)
    return torch.nn.functional.interpolate(t, size=out_hw, mode="nearest").permute(0, 2, 3, 1).numpy()


sizes = st.integers(1, 300)


@settings(max_examples=300, deadline=None)
@given(in_h=sizes, in_w=sizes, out_h=sizes, out_w=sizes)
def test_index_map_equals_torch(in_h, in_w, out_h, out_w):
    x = np.arange(in_h * in_w, dtype=np.float32).reshape(1, in_h, in_w, 1)  # pixel = its own flat index
    want = torch_nearest_nhwc(x, (out_h, out_w))[0, :, :, 0].astype(np.int64)
    np.testing.assert_array_equal(semantics.index_map((in_h, in_w), (out_h, out_w)), want)


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 3), in_h=st.integers(1, 40), in_w=st.integers(1, 40), out_h=st.integers(1, 90),
       out_w=st.integers(1, 90), c=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_reference_resize_equals_torch_bits(n, in_h, in_w, out_h, out_w, c, seed):
    x = random_data(np.random.default_rng(seed), (n, in_h, in_w, c), np.float32)  # NaN payloads included
    assert_bits_equal(semantics.resize_nearest_reference(x, (out_h, out_w)), torch_nearest_nhwc(x, (out_h, out_w)))


def test_large_axes_equal_torch():
    for in_size, out_size in [(4097, 9000), (9000, 4097), (30000, 65537), (65537, 30000), (1, 100000)]:
        x = np.arange(in_size, dtype=np.float32).reshape(1, 1, in_size, 1)
        want = torch_nearest_nhwc(x, (1, out_size))[0, 0, :, 0].astype(np.int64)
        np.testing.assert_array_equal(semantics.source_index(in_size, out_size), want)


def test_float32_is_not_exact_rational():
    # Where float32 and exact arithmetic part: 2 -> 82 at oh = 41: float32 gives 0, exact floor(41*2/82) = 1.
    assert semantics.source_index(2, 82)[41] == 0
    assert semantics.source_index_exact(2, 82)[41] == 1
    assert 41 in semantics.map_differences(2, 82)


def test_about_two_percent_of_axis_pairs_differ_from_exact():
    pairs = [(i, o) for i in range(1, 129) for o in range(1, 129)]
    differing = sum(len(semantics.map_differences(i, o)) > 0 for i, o in pairs)
    assert 0.005 < differing / len(pairs) < 0.05


def test_same_size_and_double_are_identity_and_halving():
    np.testing.assert_array_equal(semantics.source_index(37, 37), np.arange(37))
    np.testing.assert_array_equal(semantics.source_index(37, 74), np.arange(74) // 2)


def test_clamp_never_exceeds_input():
    for i in range(1, 60):
        for o in range(1, 60):
            assert semantics.source_index(i, o).max() <= i - 1


@pytest.mark.parametrize("bad, exc", [((0, 5), ValueError), ((5, -1), ValueError), ((1 << 24, 5), ValueError),
                                      ((5, 1 << 24), ValueError), ((5.0, 5), TypeError), ((True, 5), TypeError)])
def test_axis_rejects_bad_sizes(bad, exc):
    with pytest.raises(exc, match="requires"):
        semantics.source_index(*bad)

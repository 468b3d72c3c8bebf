"""semantics.torch_index against F.interpolate itself: the known hard cases and a hypothesis sample
(the exhaustive 1..300 sweep: benchmarks/torch_index_sweep.py)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

from resize_kernels import semantics as S
from resize_kernels.frontends.torch import _generic_path


def torch_map(i, o, scale, mode, route):
    kw = dict(mode=mode, **({"size": o} if scale is None else {"scale_factor": scale}))
    if route == "rank3":
        return F.interpolate(torch.arange(i, dtype=torch.float32).reshape(1, 1, i), **kw)[0, 0].long().numpy()
    x = torch.arange(i, dtype=torch.float32).reshape(1, 1, i, 1)
    if route == "indexed":
        x = x.expand(1, 4, i, 1).contiguous(memory_format=torch.channels_last)
    kw.update(size=(o, 129)) if scale is None else kw.update(scale_factor=(scale, 129.0))
    return F.interpolate(x, **kw)[0, -1, :, 0].long().numpy()


def ours(i, o, scale, mode, route):
    # the generic path as this machine's torch build computes it (fused or not: frontends.torch._generic_path)
    return S.torch_index(i, o, mode == "nearest-exact", scale, "indexed" if route == "indexed" else _generic_path())


HARD = [(2, 141, None, "nearest-exact"), (2, 159, None, "nearest-exact"), (2, 209, None, "nearest-exact"),
        (2, 41, None, "nearest-exact"), (2, 47, None, "nearest-exact"), (3, 6, 2.017, "nearest"),
        (102, 204, 2.0094, "nearest"), (188, 188, 1.0022, "nearest"), (4, 6, 1.7, "nearest"),
        (20, 20, 1.00001, "nearest-exact"), (20, 40, 2.00001, "nearest-exact")]


@pytest.mark.parametrize("route", ["rank3", "generic", "indexed"])
@pytest.mark.parametrize("i, o, scale, mode", HARD)
def test_hard_cases(i, o, scale, mode, route):
    assert np.array_equal(ours(i, o, scale, mode, route), torch_map(i, o, scale, mode, route))


def test_scale_factor_is_not_the_size_ratio():
    assert S.convention_index(4, 6, S.IndexConvention(scales=(1.7, 1.7)), 1.7).tolist() == [0, 0, 1, 1, 2, 2]
    assert S.source_index(4, 6).tolist() == [0, 0, 1, 2, 2, 3]


@settings(max_examples=150, deadline=None)
@given(i=st.integers(1, 300), o=st.integers(1, 300), mode=st.sampled_from(["nearest", "nearest-exact"]),
       route=st.sampled_from(["rank3", "generic", "indexed"]))
def test_sizes_sample(i, o, mode, route):
    assert np.array_equal(ours(i, o, None, mode, route), torch_map(i, o, None, mode, route))


@settings(max_examples=150, deadline=None)
@given(i=st.integers(1, 300), scale=st.floats(0.2, 8.0), mode=st.sampled_from(["nearest", "nearest-exact"]),
       route=st.sampled_from(["rank3", "generic", "indexed"]))
def test_scales_sample(i, scale, mode, route):
    o = S.scaled_size(i, scale)
    if o >= 1:
        assert np.array_equal(ours(i, o, scale, mode, route), torch_map(i, None, scale, mode, route))


def test_convention_fields():
    c = S.IndexConvention("half_pixel", "round_prefer_ceil", "torch", (1.5, None), "indexed")
    assert c.describe() == "torch nearest-exact (indexed path) scales (1.5, None)"
    assert S.IndexConvention.from_key(c.key) == S.IndexConvention("half_pixel", "round_prefer_ceil", "torch",
                                                                  path="indexed")
    assert S.IndexConvention(path="indexed") == S.COMPILER  # nearest on sizes: one map on every path
    with pytest.raises(ValueError, match="path only with torch"):
        S.IndexConvention("half_pixel", "floor", "onnx", path="indexed")
    with pytest.raises(ValueError, match="path one of"):
        S.IndexConvention(path="fast")

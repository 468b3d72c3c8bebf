"""patch_interpolate: a small UNet of diffusers-style blocks (whose Upsample2D calls
F.interpolate(hidden_states, scale_factor=2.0, mode="nearest")) runs on the simulated NeuronCore unchanged,
forward and backward bit-equal to the unpatched model."""

from unittest import mock

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from resize_kernels.frontends import torch as front


class ResnetBlock2D(nn.Module):
    def __init__(self, cin, cout, groups=4):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(groups, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.norm2, self.conv2 = nn.GroupNorm(groups, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        return self.skip(x) + self.conv2(F.silu(self.norm2(h)))


class Downsample2D(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x)


class Upsample2D(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, hidden_states):
        return self.conv(F.interpolate(hidden_states, scale_factor=2.0, mode="nearest"))


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(3, 8, 3, padding=1)
        self.down1, self.ds1 = ResnetBlock2D(8, 8), Downsample2D(8)
        self.down2, self.ds2 = ResnetBlock2D(8, 16), Downsample2D(16)
        self.mid = ResnetBlock2D(16, 16)
        self.us2, self.up2 = Upsample2D(16), ResnetBlock2D(32, 8)
        self.us1, self.up1 = Upsample2D(8), ResnetBlock2D(16, 8)
        self.conv_out = nn.Sequential(nn.GroupNorm(4, 8), nn.SiLU(), nn.Conv2d(8, 3, 3, padding=1))

    def forward(self, x):
        s1 = self.down1(self.conv_in(x))
        s2 = self.down2(self.ds1(s1))
        h = self.mid(self.ds2(s2))
        h = self.up2(torch.cat([self.us2(h), s2], 1))
        h = self.up1(torch.cat([self.us1(h), s1], 1))
        return self.conv_out(h)


def run(model, x):
    model.zero_grad()
    x = x.detach().requires_grad_()
    y = model(x)
    y.square().mean().backward()
    return [y, x.grad] + [p.grad for p in model.parameters()]


@pytest.mark.parametrize("channels_last", [False, True])
def test_patched_unet_is_bit_equal(channels_last):
    torch.manual_seed(0)
    model, x = TinyUNet(), torch.randn(2, 3, 16, 12)
    if channels_last:
        model, x = model.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
    want = run(model, x)
    original = F.interpolate
    with mock.patch.object(front.api, "resize_nearest", wraps=front.api.resize_nearest) as forward, \
            mock.patch.object(front.api, "resize_nearest_grad", wraps=front.api.resize_nearest_grad) as backward:
        with front.patch_interpolate():
            assert F.interpolate is not original
            got = run(model, x)
    assert F.interpolate is original
    assert forward.call_count == 2 and backward.call_count == 2  # both Upsample2D, both ways, on the simulator
    for g, w in zip(got, want):
        assert torch.equal(g.contiguous().view(torch.int32), w.contiguous().view(torch.int32))


def test_patch_leaves_other_calls_to_torch():
    x = torch.randn(1, 2, 4, 4)
    with mock.patch.object(front.api, "resize_nearest", wraps=front.api.resize_nearest) as forward:
        with front.patch_interpolate():
            F.interpolate(x, scale_factor=2, mode="bilinear")
            F.interpolate(x.double(), scale_factor=2)
            nn.Upsample(scale_factor=2)(x)
    assert forward.call_count == 1

"""interpolate_nearest against F.interpolate: torch's OpInfo samples and ported upstream test_upsamplingNearest*
tests (test/test_nn.py), forward and backward, bit for bit; compile, export and opcheck with the new arguments."""

import inspect
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from resize_kernels.frontends import torch as front
from resize_kernels.frontends.torch import ResizeNearest, TrainiumScaleMapWarning, interpolate_nearest, resize_nearest

MODES = ["nearest", "nearest-exact"]
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.uint8]
FORMATS = [torch.contiguous_format, torch.channels_last]


def bits(t):
    return t.contiguous().view({4: torch.int32, 2: torch.int16, 1: torch.uint8}[t.element_size()])


def check(x, **kw):
    """Forward (and, for floats, backward with a random upstream gradient) equal to F.interpolate's bits."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainiumScaleMapWarning)
        y = interpolate_nearest(x, **kw)
    want = F.interpolate(x, **kw)
    assert torch.equal(bits(y), bits(want)) and y.dtype == want.dtype
    assert _format(y) == _format(want)
    if x.requires_grad and y.numel():
        g = torch.randn(y.shape).to(y.dtype)
        (got,), (ref,) = torch.autograd.grad(y, x, g), torch.autograd.grad(want, x, g)
        assert torch.equal(bits(got), bits(ref)) and _format(got) == _format(ref)
    return y


def _format(t):
    return t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous()


# -- OpInfo ---------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def interpolate_ops():
    from torch.testing._internal.common_methods_invocations import op_db
    return {op.variant_test_name: op for op in op_db
            if op.name == "nn.functional.interpolate" and op.variant_test_name in MODES}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", MODES)
def test_opinfo_samples(interpolate_ops, mode, dtype):
    op = interpolate_ops[mode]
    names = list(inspect.signature(F.interpolate).parameters)
    ran = 0
    for sample in op.sample_inputs("cpu", dtype, requires_grad=dtype.is_floating_point):
        if sample.input.dim() == 5:  # volumetric: out of this front end's scope
            continue
        kw = dict(zip(names[1:], sample.args), **sample.kwargs)
        assert kw.pop("align_corners", None) is None and not kw.pop("antialias", False)
        check(sample.input, **kw)
        ran += 1
    assert ran == (14 if dtype.is_floating_point else 12)  # every 3-D and 4-D sample of torch 2.13


# -- upstream test_upsamplingNearest* (test/test_nn.py), in float32 (no float64 on a NeuronCore) ----------------------

def grid(*shape):
    """Values on a 1/16 grid: finite differences with eps 1/16 are exact, so gradcheck takes atol = rtol = 0."""
    return (torch.randint(-16, 17, shape).float() / 16).requires_grad_()


def exact_gradcheck(fn, x):
    v = grid(*fn(x).shape)
    assert torch.autograd.gradcheck(fn, (x,), eps=1 / 16, atol=0, rtol=0)
    assert torch.autograd.gradgradcheck(fn, (x,), (v,), eps=1 / 16, atol=0, rtol=0)


@pytest.mark.filterwarnings("ignore:Input #.* is not a double precision")
@pytest.mark.parametrize("mode", MODES)
def test_upsampling_nearest1d(mode):
    m = ResizeNearest(size=4, mode=mode)
    assert torch.equal(m(torch.ones(1, 1, 2)), torch.ones(1, 1, 4))
    assert torch.equal(m(torch.ones(1, 1, 2, dtype=torch.uint8)), torch.ones(1, 1, 4, dtype=torch.uint8))
    exact_gradcheck(lambda t: interpolate_nearest(t, 4, mode=mode), grid(1, 1, 2))
    exact_gradcheck(lambda t: interpolate_nearest(t, 11, mode=mode), grid(1, 1, 20))


@pytest.mark.parametrize("mode, offset", [("nearest", 0.0), ("nearest-exact", 0.5)])
@pytest.mark.parametrize("isize, osize", [(20, 11), (10, 15)])
def test_upsampling_nearest1d_correctness(isize, osize, mode, offset):
    x = torch.arange(isize, dtype=torch.float).reshape(1, 1, isize)
    y = check(x, size=(osize,), recompute_scale_factor=False, mode=mode)
    scale = isize / osize
    assert y[0, 0].tolist() == [float(int((o + offset) * scale)) for o in range(osize)]  # OpenCV / scipy


def test_upsampling_nearest_exact1d_rescale():
    x = torch.arange(20, dtype=torch.float).reshape(1, 1, 20)
    assert torch.equal(check(x, scale_factor=1.00001, recompute_scale_factor=False, mode="nearest-exact"), x)
    y = check(x, scale_factor=2.00001, recompute_scale_factor=False, mode="nearest-exact")
    assert torch.equal(y, x.repeat_interleave(2, dim=-1))


@pytest.mark.filterwarnings("ignore:Input #.* is not a double precision")
@pytest.mark.parametrize("memory_format", FORMATS)
@pytest.mark.parametrize("mode", MODES)
def test_upsampling_nearest2d(memory_format, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = interpolate_nearest(torch.ones(1, 2, 2, 2).contiguous(memory_format=memory_format), size=4, mode=mode)
        y8 = interpolate_nearest(torch.ones(1, 2, 2, 2, dtype=torch.uint8).contiguous(memory_format=memory_format),
                                 size=4, mode=mode)
    assert torch.equal(y, torch.ones(1, 2, 4, 4)) and torch.equal(y8, torch.ones(1, 2, 4, 4, dtype=torch.uint8))
    assert y.is_contiguous(memory_format=memory_format)
    x = torch.ones(1, 2, 2, 1).contiguous(memory_format=memory_format).requires_grad_()
    out = check(x, size=(4, 2), mode=mode)
    assert torch.equal(out, torch.ones(1, 2, 4, 2)) and out.is_contiguous(memory_format=memory_format)
    out.backward(torch.randn_like(out))
    assert x.grad.is_contiguous(memory_format=memory_format)
    x = grid(1, 2, 2, 2).detach().contiguous(memory_format=memory_format).requires_grad_()
    assert torch.equal(interpolate_nearest(x, 4, mode=mode), interpolate_nearest(x, scale_factor=2, mode=mode))
    exact_gradcheck(lambda t: interpolate_nearest(t, 4, mode=mode), x)
    exact_gradcheck(lambda t: interpolate_nearest(t, size=(4, 2), mode=mode),
                    grid(1, 2, 2, 1).detach().contiguous(memory_format=memory_format).requires_grad_())


@pytest.mark.parametrize("memory_format", FORMATS)
@pytest.mark.parametrize("mode, offset", [("nearest", 0.0), ("nearest-exact", 0.5)])
@pytest.mark.parametrize("isize, osize", [(20, 11), (10, 15)])
def test_upsampling_nearest2d_correctness(memory_format, isize, osize, mode, offset):
    x = torch.arange(isize * isize, dtype=torch.float).reshape(1, 1, isize, isize).contiguous(
        memory_format=memory_format)
    y = check(x, size=(osize, osize), recompute_scale_factor=False, mode=mode)
    src = [int((o + offset) * isize / osize) for o in range(osize)]
    assert torch.equal(y[0, 0], x[0, 0][src][:, src])


# -- beyond the samples: scale maps, paths, dtypes, empty batches, compile / export / opcheck ----------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape, kw", [
    ((2, 5, 4, 6), dict(scale_factor=1.7)), ((3, 2, 3, 3), dict(scale_factor=(2.017, 0.7))),
    ((2, 1, 102, 3), dict(scale_factor=(2.0094, 44.0))), ((1, 4, 2, 1), dict(size=(141, 3))),
    ((2, 3, 5), dict(scale_factor=2.3)), ((2, 3, 2), dict(size=41)), ((0, 3, 4, 4), dict(scale_factor=2)),
    ((2, 3, 4, 4), dict(scale_factor=1.7, recompute_scale_factor=True)), ((1, 2, 3, 4), dict(size=np.int64(5)))])
def test_calls_match(shape, kw, mode, dtype):
    x = torch.randint(0, 200, shape).to(dtype)
    for fmt in FORMATS if len(shape) == 4 else FORMATS[:1]:
        v = x.contiguous(memory_format=fmt)
        check(v.requires_grad_() if dtype.is_floating_point else v, mode=mode, **kw)


def test_warns_once_per_shape_naming_the_fix():
    front._WARNED.clear()
    x = torch.randn(1, 2, 4, 4)
    with pytest.warns(TrainiumScaleMapWarning, match=r"maps 20 of the 36 output pixels.*pass size=\[6, 6\]"):
        interpolate_nearest(x, scale_factor=1.7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        interpolate_nearest(x, scale_factor=1.7)  # the same shape again: quiet
        interpolate_nearest(x, scale_factor=2.0)  # the same map as the sizes': quiet
        interpolate_nearest(x, scale_factor=1.7, recompute_scale_factor=True)


def test_errors_as_torch_raises_them():
    x = torch.randn(1, 2, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        interpolate_nearest(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="recompute_scale_factor only with scale_factor"):
        interpolate_nearest(x, size=3, recompute_scale_factor=True)
    with pytest.raises(ValueError, match="pair of ints"):
        interpolate_nearest(x, size=(3,))
    with pytest.raises(RuntimeError, match="at least one channel"):
        interpolate_nearest(torch.randn(2, 0, 4, 4), scale_factor=2)
    with pytest.raises(RuntimeError, match="output sizes above 0"):
        interpolate_nearest(x, scale_factor=0.1)
    with pytest.raises(ValueError, match="mode 'nearest' or 'nearest-exact'"):
        interpolate_nearest(x, size=3, mode="bilinear")
    with pytest.raises(TypeError, match="no gradient"):
        front.resize_nearest_grad(torch.zeros(1, 1, 2, 2, dtype=torch.uint8), [1, 1])


def test_opcheck_compile_export():
    x = torch.randn(2, 5, 4, 6, requires_grad=True)
    torch.library.opcheck(resize_nearest, (x, [6, 10], [1.7, 1.7], "nearest"))
    torch.library.opcheck(resize_nearest, (torch.randn(2, 3, 5, requires_grad=True), [11], [2.3], "nearest-exact"))
    torch.library.opcheck(front.resize_nearest_grad, (torch.randn(2, 5, 6, 10, requires_grad=True), [4, 6],
                                                      [1.7, 1.7], "nearest-exact"))
    fn = lambda t: interpolate_nearest(t, scale_factor=1.7, mode="nearest-exact")  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainiumScaleMapWarning)
        assert torch.equal(torch.compile(fn, fullgraph=True)(x), F.interpolate(x, scale_factor=1.7,
                                                                                mode="nearest-exact"))
        ep = torch.export.export(ResizeNearest(scale_factor=1.7, mode="nearest-exact"), (x.detach(),))
    assert torch.equal(ep.module()(x.detach()), F.interpolate(x.detach(), scale_factor=1.7, mode="nearest-exact"))

"""The torch front end: a custom op whose forward and backward run on the simulated NeuronCore."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from resize_kernels.errors import ResizeKernelsError
from resize_kernels.frontends.torch import ResizeNearest, interpolate_nearest, resize_nearest, resize_nearest_grad

FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view({4: torch.int32, 2: torch.int16}[t.element_size()])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("size", [(13, 9), (3, 2), (14, 10)])
def test_forward_and_backward_equal_f_interpolate(dtype, channels_last, size):
    x = torch.randn(2, 3, 7, 5).to(dtype)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    x.requires_grad_()
    y, want = interpolate_nearest(x, size), F.interpolate(x, size=size, mode="nearest")
    assert torch.equal(bits(y), bits(want)) and y.dtype == dtype
    assert y.is_contiguous(memory_format=torch.channels_last) == want.is_contiguous(memory_format=torch.channels_last)
    # small-integer upstream gradients: every summation order gives the same bits
    g = torch.randint(-8, 9, y.shape).to(dtype)
    (got,), (ref,) = torch.autograd.grad(y, x, g), torch.autograd.grad(want, x, g)
    assert torch.equal(bits(got), bits(ref)) and got.dtype == dtype


def torch_grad(x_shape, g):
    x = torch.zeros(x_shape, requires_grad=True)
    return torch.autograd.grad(F.interpolate(x, size=g.shape[2:], mode="nearest"), x, g)[0]


def test_backward_on_random_data_to_float32_rounding():
    """Random data, within the bound on reordering a float32 sum of k terms: 2 (k - 1) eps32 sum|terms|.

    (Our order is PyTorch's today, so the results are in fact equal; the bound is what is promised.)
    """
    x = torch.randn(2, 4, 30, 20, requires_grad=True)
    g = torch.randn(2, 4, 59, 38)
    (got,) = torch.autograd.grad(interpolate_nearest(x, (59, 38)), x, g)
    ref = torch_grad(x.shape, g)
    k, abs_sum = torch_grad(x.shape, torch.ones_like(g)), torch_grad(x.shape, g.abs())
    bound = 2 * (k - 1).clamp(min=0) * torch.finfo(torch.float32).eps * abs_sum
    assert ((got - ref).abs() <= bound).all()


@pytest.mark.filterwarnings("ignore:Input #.* is not a double precision")
@pytest.mark.parametrize("size", [(5, 7), (2, 3)])
def test_gradcheck(size):
    """gradcheck in float32 (the ops reject float64, as the NeuronCore has none), made exact.

    The op is linear. With inputs on a 1/16 grid of small values and eps = 1/16,
    x +- eps is exact in float32, so the finite-difference Jacobian is exactly
    the 0/1 selection matrix, and gradcheck can demand atol = rtol = 0 against
    the analytical (backward) Jacobian. gradgradcheck checks the backward's own
    backward (the forward resize) the same way, with grad_outputs on the grid.
    """
    x = (torch.randint(-16, 17, (1, 2, 3, 4)).float() / 16).requires_grad_()
    v = (torch.randint(-16, 17, (1, 2, *size)).float() / 16).requires_grad_()
    fn = lambda t: interpolate_nearest(t, size)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x,), eps=1 / 16, atol=0, rtol=0)
    assert torch.autograd.gradgradcheck(fn, (x,), (v,), eps=1 / 16, atol=0, rtol=0)


def test_opcheck_both_ops():
    x = torch.randn(2, 3, 4, 5, requires_grad=True)
    torch.library.opcheck(resize_nearest, (x, [7, 3]))
    torch.library.opcheck(resize_nearest, (x.detach().to(memory_format=torch.channels_last).requires_grad_(), [8, 10]))
    torch.library.opcheck(resize_nearest_grad, (torch.randn(2, 3, 7, 3, requires_grad=True), [4, 5]))


class TinyUNet(torch.nn.Module):
    """conv -> strided conv (down) -> upsample to the input size -> concat skip -> conv."""

    def __init__(self, upsample):
        super().__init__()
        self.enc = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.down = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.up = upsample
        self.dec = torch.nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, x):
        skip = torch.relu(self.enc(x))
        low = torch.relu(self.down(skip))
        return self.dec(torch.cat([self.up(low, skip.shape[2:]), skip], dim=1))


@pytest.mark.parametrize("channels_last", [False, True])
def test_unet_trains_like_f_interpolate(channels_last):
    torch.manual_seed(0)
    x, target = torch.randn(2, 3, 13, 9), torch.randn(2, 3, 13, 9)  # 13x9 -> 7x5 -> 13x9: a non-integer ratio
    ours = TinyUNet(lambda t, hw: interpolate_nearest(t, tuple(hw)))
    ref = TinyUNet(lambda t, hw: F.interpolate(t, size=tuple(hw), mode="nearest"))
    ref.load_state_dict(ours.state_dict())
    if channels_last:
        x, ours, ref = x.to(memory_format=torch.channels_last), ours.to(memory_format=torch.channels_last), \
            ref.to(memory_format=torch.channels_last)
    losses = {}
    for name, model in (("ours", ours), ("ref", ref)):
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        losses[name] = []
        for _ in range(5):
            opt.zero_grad()
            loss = F.mse_loss(model(x), target)
            loss.backward()
            opt.step()
            losses[name].append(loss.item())
    assert losses["ours"][-1] < losses["ours"][0]  # it learns
    torch.testing.assert_close(torch.tensor(losses["ours"]), torch.tensor(losses["ref"]), rtol=1e-5, atol=1e-6)


def test_module_wrapper():
    m = ResizeNearest((6, 4))
    assert "size=(6, 4)" in repr(m)
    x = torch.randn(1, 2, 3, 2)
    assert torch.equal(m(x), F.interpolate(x, size=(6, 4), mode="nearest"))
    assert torch.equal(interpolate_nearest(x, 5), F.interpolate(x, size=5, mode="nearest"))


X = torch.zeros(1, 2, 4, 4)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: interpolate_nearest(X.double(), (8, 8)), TypeError,
     r"got torch.float64; the NeuronCore has no float64: call .float\(\)"),
    (lambda: interpolate_nearest(X.int(), (8, 8)), TypeError, "float32, float16 or bfloat16 tensor, got torch.int32"),
    (lambda: interpolate_nearest(X[0], (8, 8)), ValueError, r"NCHW tensor of rank 4.*got shape \(2, 4, 4\)"),
    (lambda: interpolate_nearest(X.numpy(), (8, 8)), TypeError, "requires a torch.Tensor.*got ndarray"),
    (lambda: interpolate_nearest(X, (8.0, 8)), TypeError, "size as an int or a pair of ints"),
    (lambda: interpolate_nearest(X, (8, 8, 8)), TypeError, "size as an int or a pair of ints"),
    (lambda: interpolate_nearest(X, (0, 8)), RuntimeError, r"interpolate_nearest requires output sizes above 0, got \[0, 8\]"),
    (lambda: resize_nearest_grad(X.double(), [2, 2]), TypeError, "resize_nearest_grad requires a float32.*call .float"),
])
def test_bad_input_gets_a_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# -- what F.interpolate refuses, refused alike ----------------------------------------------------------------------

_X = torch.rand(1, 2, 4, 5)
_ARGUMENTS = {"size=True": dict(size=True), "size=(True, 3)": dict(size=(True, 3)),
              "0-d tensor scale": dict(scale_factor=torch.tensor(2.0)),
              "a tensor among scales": dict(scale_factor=(torch.tensor(2.0), 2.0)),
              "scale inf": dict(scale_factor=float("inf")), "scale nan": dict(scale_factor=float("nan")),
              "scale 1e9": dict(scale_factor=1e9), "scale -1": dict(scale_factor=-1.0), "size 0": dict(size=0),
              "size (3.0, 4)": dict(size=(3.0, 4)), "scale True": dict(scale_factor=True),
              "0-d tensor size": dict(size=torch.tensor(3)), "numpy sizes": dict(size=(np.int64(3), 4)),
              "scales (True, 2)": dict(scale_factor=(True, 2.0))}


def _outcome(f, x, **kwargs):
    try:
        return tuple(f(x, **kwargs).shape)
    except Exception as error:  # noqa: BLE001 - the outcome compared is the exception's type
        return error


@pytest.mark.parametrize("kwargs", list(_ARGUMENTS.values()), ids=list(_ARGUMENTS))
def test_what_f_interpolate_refuses_is_refused_with_its_exception_type(kwargs):
    want, got = _outcome(F.interpolate, _X, **kwargs), _outcome(interpolate_nearest, _X, **kwargs)
    if isinstance(want, Exception):
        assert isinstance(got, type(want)) and isinstance(got, ResizeKernelsError), (want, got)
    else:
        assert got == want


def test_a_sparse_tensor_is_not_implemented_as_in_torch():
    with pytest.raises(NotImplementedError):
        F.interpolate(_X.to_sparse(), size=(3, 3))
    with pytest.raises(NotImplementedError, match="requires a dense .strided. tensor, got layout torch.sparse_coo"):
        interpolate_nearest(_X.to_sparse(), size=(3, 3))


def test_overlapping_patches_in_two_threads_leave_f_interpolate_as_it_was():
    """Thread A enters, B enters, A leaves, B leaves: each restoring what it saw would leave A's patch installed."""
    import threading

    from resize_kernels.frontends.torch import patch_interpolate

    original = F.interpolate
    entered, a_left = threading.Event(), threading.Event()

    def a():
        with patch_interpolate():
            entered.set()
            b_in.wait()
        a_left.set()

    def b():
        entered.wait()
        with patch_interpolate():
            b_in.set()
            a_left.wait()
            assert F.interpolate is not original  # still patched while B's block lasts

    b_in = threading.Event()
    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert F.interpolate is original


def test_patch_interpolate_counts_the_calls_it_took_and_passed():
    from resize_kernels.frontends.torch import InterpolatePatch, patch_interpolate

    x = torch.randn(1, 3, 6, 5)
    with patch_interpolate() as outer:
        assert isinstance(outer, InterpolatePatch) and (outer.taken, outer.passed) == (0, 0)
        F.interpolate(x, size=(9, 4))  # nearest: taken
        F.interpolate(x, scale_factor=2, mode="nearest-exact")  # taken
        F.interpolate(x, size=(9, 4), mode="bilinear")  # passed
        with patch_interpolate() as inner:  # a nested block counts its own calls; the outer one counts them too
            torch.nn.Upsample(size=(12, 10))(x)  # taken (nn.Upsample calls F.interpolate)
            F.interpolate(x, size=(3, 3), mode="bicubic", align_corners=False)  # passed
            F.interpolate(x.double(), size=(3, 3))  # nearest, but float64: passed
        F.interpolate(x, size=(9, 4), mode="nearest", align_corners=None)  # taken
    assert (inner.taken, inner.passed, inner.calls) == (1, 2, 3)
    assert (outer.taken, outer.passed, outer.calls) == (4, 3, 7)
    assert repr(outer) == "<patch_interpolate: 4 calls taken, 3 passed to torch>"
    assert repr(inner) == "<patch_interpolate: 1 call taken, 2 passed to torch>"
    F.interpolate(x, size=(2, 2))  # after the block: counted nowhere
    assert (outer.taken, outer.passed) == (4, 3)
    with patch_interpolate() as again:  # a new block starts from zero
        F.interpolate(x, size=(2, 2), mode="bilinear")
    assert repr(again) == "<patch_interpolate: 0 calls taken, 1 passed to torch>"

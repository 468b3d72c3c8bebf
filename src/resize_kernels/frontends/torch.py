"""PyTorch front end: nearest resize as a torch custom op whose forward and backward run on the simulated NeuronCore.

``torch.ops.resize_kernels.resize_nearest(x, [out_h, out_w])`` takes an NCHW
tensor (contiguous or channels_last), runs ``rk.resize_nearest`` on its NHWC
view and returns a tensor in the input's memory format, like
``F.interpolate(mode="nearest")``; its backward is the custom op
``resize_kernels::resize_nearest_grad`` (``rk.resize_nearest_grad``, a sum over
the forward map), whose own backward is the forward resize again, so double
backward works. Both ops have fake (meta) implementations for torch.compile.
Supported dtypes: float32, float16, bfloat16 (passed bit for bit through
ml_dtypes); float64 has no NeuronCore equivalent and is rejected. CPU tensors only.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import torch

from .. import api, contract
from ..errors import InvalidTypeError, InvalidValueError

__all__ = ["interpolate_nearest", "ResizeNearest", "resize_nearest", "resize_nearest_grad"]

_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _check(x, what: str) -> None:
    if not isinstance(x, torch.Tensor):
        raise InvalidTypeError(f"{what} requires a torch.Tensor in NCHW layout, got {type(x).__name__}")
    if x.dim() != 4:
        raise InvalidValueError(f"{what} requires an NCHW tensor of rank 4 (batch, channels, height, width), "
                                f"got shape {tuple(x.shape)}")
    if x.dtype not in _DTYPES:
        hint = ("the NeuronCore has no float64: call .float() first (gradcheck: see the frontend tests)"
                if x.dtype == torch.float64 else "cast it with .float()")
        raise InvalidTypeError(f"{what} requires a float32, float16 or bfloat16 tensor, got {x.dtype}; {hint}")


def _nhwc_numpy(x: torch.Tensor) -> np.ndarray:
    """The NHWC numpy view of an NCHW CPU tensor (no copy; bfloat16 reinterpreted bit for bit)."""
    if x.device.type != "cpu":
        raise InvalidValueError(f"resize_kernels runs on CPU tensors, got one on {x.device}; move it with .cpu()")
    v = x.detach().permute(0, 2, 3, 1)
    if v.dtype == torch.bfloat16:
        return v.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return v.numpy()


def _nchw_tensor(a: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """An NHWC numpy result as an NCHW tensor, in the memory format ``like`` suggests."""
    t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if a.dtype == ml_dtypes.bfloat16 \
        else torch.from_numpy(a)
    return t.permute(0, 3, 1, 2).contiguous(memory_format=_memory_format(like))


def _memory_format(x: torch.Tensor) -> torch.memory_format:
    """channels_last for channels_last inputs, else contiguous (as F.interpolate chooses)."""
    return torch.channels_last if x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous() \
        else torch.contiguous_format


def _empty(x: torch.Tensor, hw) -> torch.Tensor:
    return x.new_empty((x.shape[0], x.shape[1], *hw)).contiguous(memory_format=_memory_format(x))


def _check_sizes(x: torch.Tensor, size, what: str, grad: bool = False) -> tuple:
    """The op's contract on NCHW ``x`` and ``size`` (the output's, or for the gradient the forward input's), also
    for fake tensors; an empty batch is allowed, as F.interpolate allows it. Returns ``size`` as a tuple."""
    h, w = contract.size_pair(what, size, "forward input" if grad else "output")
    n, c, x_h, x_w = x.shape
    dims = (n, c, x_h, x_w, h, w)
    if all(isinstance(d, int) for d in dims):  # symbolic sizes (torch.compile's dynamic shapes) are checked when run
        shape, other = (max(n, 1), x_h, x_w, c), (max(n, 1), h, w, c)
        (contract.grad_shapes if grad else contract.resize_shapes)(what, shape, other)
    return h, w


@torch.library.custom_op("resize_kernels::resize_nearest", mutates_args=())
def resize_nearest(x: torch.Tensor, size: list[int]) -> torch.Tensor:
    """Nearest resize of NCHW ``x`` to ``size = [out_h, out_w]`` (asymmetric, floor), on the simulated NeuronCore."""
    _check(x, "resize_nearest")
    size = _check_sizes(x, size, "resize_nearest")
    if x.shape[0] == 0:
        return _empty(x, size)
    return _nchw_tensor(api.resize_nearest(_nhwc_numpy(x), size), like=x)


@torch.library.custom_op("resize_kernels::resize_nearest_grad", mutates_args=())
def resize_nearest_grad(dy: torch.Tensor, in_size: list[int]) -> torch.Tensor:
    """Gradient of resize_nearest: NCHW ``dy`` summed onto the forward input's ``in_size = [in_h, in_w]``."""
    _check(dy, "resize_nearest_grad")
    in_size = _check_sizes(dy, in_size, "resize_nearest_grad", grad=True)
    if dy.shape[0] == 0:
        return _empty(dy, in_size)
    return _nchw_tensor(api.resize_nearest_grad(_nhwc_numpy(dy), in_size), like=dy)


@resize_nearest.register_fake
def _resize_nearest_fake(x, size):
    _check(x, "resize_nearest")
    return _empty(x, _check_sizes(x, size, "resize_nearest"))


@resize_nearest_grad.register_fake
def _resize_nearest_grad_fake(dy, in_size):
    _check(dy, "resize_nearest_grad")
    return _empty(dy, _check_sizes(dy, in_size, "resize_nearest_grad", grad=True))


def _save_size(attr):
    def setup_context(ctx, inputs, output):
        setattr(ctx, attr, list(inputs[0].shape[2:]))
    return setup_context


def _resize_nearest_backward(ctx, grad):
    return resize_nearest_grad(grad, ctx.in_size), None


def _resize_nearest_grad_backward(ctx, grad):
    return resize_nearest(grad, ctx.out_size), None  # the transpose of a transpose: the forward map


resize_nearest.register_autograd(_resize_nearest_backward, setup_context=_save_size("in_size"))
resize_nearest_grad.register_autograd(_resize_nearest_grad_backward, setup_context=_save_size("out_size"))


def _is_int(s) -> bool:
    return isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_))


def interpolate_nearest(x: torch.Tensor, size) -> torch.Tensor:
    """Drop-in for ``F.interpolate(x, size=size, mode="nearest")`` on NCHW tensors (size: int or (h, w);
    numpy integers too, as torch takes them)."""
    pair = (size, size) if _is_int(size) else size
    if not isinstance(pair, (tuple, list, torch.Size)) or len(pair) != 2 or not all(map(_is_int, pair)):
        raise InvalidTypeError(f"interpolate_nearest requires size as an int or a pair of ints (height, width), "
                               f"got {size!r}")
    _check(x, "interpolate_nearest")
    return resize_nearest(x, [int(s) for s in pair])


class ResizeNearest(torch.nn.Module):
    """``nn.Module`` form of interpolate_nearest: resizes NCHW inputs to ``size`` on the simulated NeuronCore."""

    def __init__(self, size):
        super().__init__()
        self.size = size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return interpolate_nearest(x, self.size)

    def extra_repr(self) -> str:
        return f"size={self.size}"

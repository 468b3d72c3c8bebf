"""PyTorch front end: nearest resize as a torch custom op whose forward and backward run on the simulated NeuronCore.

``interpolate_nearest(x, size=None, scale_factor=None, mode="nearest", recompute_scale_factor=None)`` is
``F.interpolate`` for modes "nearest" and "nearest-exact" on (N, C, W) and (N, C, H, W) tensors (contiguous or
channels_last), bit for bit, forward and backward: it computes torch's own source maps (``semantics.torch_index``),
including the ones a ``scale_factor`` gives (torch maps with float32(1 / scale), not in / out) and the ones its CPU
kernels compute differently: ``forward_path`` says which of torch's two index computations F.interpolate's forward
uses for a call; its backward always uses the "indexed" one, so the gradient may follow another map than the
forward (as torch's does).

The ops: ``torch.ops.resize_kernels.resize_nearest(x, size, scales=None, mode="nearest")`` runs
``rk.resize_nearest`` on the NHWC view and returns a tensor in the input's memory format; its backward is
``resize_kernels::resize_nearest_grad`` (``rk.resize_nearest_grad``, a sum over torch's backward map), whose own
backward is the forward resize again (as torch's double backward is), so double backward works. Both have fake
implementations for torch.compile and export. Dtypes: float32, float16, bfloat16 (bit for bit through ml_dtypes),
uint8 forward only; float64 has no NeuronCore equivalent and is rejected. CPU tensors only.

Trainium: torch_xla lowers every nearest upsample to a ResizeNearest custom call that carries only the output size,
so there a ``scale_factor`` call computes the size-ratio map. Where torch's map differs from it, the call warns
once per shape (``TrainiumScaleMapWarning``). ``patch_interpolate()`` routes a model's nearest ``F.interpolate``
calls through the custom op.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import threading
import warnings

import ml_dtypes
import numpy as np
import torch
from torch._prims_common import suggest_memory_format

from .. import api, contract, semantics
from ..errors import InvalidTypeError, InvalidValueError
from .patching import PatchCalls, count

__all__ = ["interpolate_nearest", "ResizeNearest", "resize_nearest", "resize_nearest_grad", "forward_path",
           "patch_interpolate", "InterpolatePatch", "TrainiumScaleMapWarning", "MODES"]

_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
_FORWARD_DTYPES = _DTYPES + (torch.uint8,)
#: F.interpolate's nearest modes this front end takes.
MODES = tuple(semantics.TORCH_MODES)


class TrainiumScaleMapWarning(UserWarning):
    """A scale_factor call whose torch map differs from the size-ratio map Trainium computes for it."""


class _SizeError(InvalidTypeError, InvalidValueError):
    """A size of the wrong length: a TypeError (this front end's rule) and a ValueError (F.interpolate's)."""


class _EmptyInputError(InvalidValueError, RuntimeError):
    """An input or output size torch's kernels refuse at run time (no channels, no width, a size of 0 or past
    int64): also the RuntimeError torch raises."""


class _LayoutError(InvalidTypeError, NotImplementedError):
    """A tensor layout torch's nearest kernels have no implementation for (sparse): also its NotImplementedError."""


# -- checks -------------------------------------------------------------------------------------------------------

def _check(x, what: str, grad: bool = False) -> None:
    if not isinstance(x, torch.Tensor):
        raise InvalidTypeError(f"{what} requires a torch.Tensor in NCHW (or NCW) layout, got {type(x).__name__}")
    if x.layout != torch.strided:
        raise _LayoutError(f"{what} requires a dense (strided) tensor, got layout {x.layout}; call .to_dense()")
    if x.dim() not in (3, 4):
        hint = "; 5-D (volumetric) resize is not supported here, call F.interpolate" if x.dim() == 5 else ""
        raise InvalidValueError(f"{what} requires an NCHW tensor of rank 4 (batch, channels, height, width) or an "
                                f"NCW tensor of rank 3, got shape {tuple(x.shape)}{hint}")
    if x.dtype not in (_DTYPES if grad else _FORWARD_DTYPES):
        if x.dtype == torch.float64:
            hint = "the NeuronCore has no float64: call .float() first (gradcheck: see the frontend tests)"
        elif x.dtype == torch.uint8:
            hint = "uint8 has no gradient; resize it forward only"
        else:
            hint = "cast it with .float()" + ("" if grad else " (uint8 is taken too, forward only)")
        raise InvalidTypeError(f"{what} requires a float32, float16 or bfloat16 tensor, got {x.dtype}; {hint}")


def _check_sizes(x: torch.Tensor, size, what: str, grad: bool = False) -> tuple:
    """The op's contract on ``x`` and ``size`` (the output's spatial size, or for the gradient the forward input's),
    also for fake tensors; an empty batch is allowed, as F.interpolate allows it. Returns (h, w) (h = 1 for NCW)."""
    k = x.dim() - 2
    if not isinstance(size, (list, tuple)) or len(size) != k:
        raise InvalidTypeError(f"{what} requires {'the forward input' if grad else 'the output'} size as {k} "
                               f"int(s), one per spatial dimension of shape {tuple(x.shape)}, got {size!r}")
    hw = contract.size_pair(what, tuple(size) if k == 2 else (1, size[0]),
                            "forward input" if grad else "output")
    n, c, x_h, x_w = x.shape if k == 2 else (x.shape[0], x.shape[1], 1, x.shape[2])
    if isinstance(c, int) and c == 0:
        raise _EmptyInputError(f"{what} requires at least one channel (F.interpolate refuses none too), "
                               f"got shape {tuple(x.shape)}")
    dims = (n, c, x_h, x_w, *hw)
    if all(isinstance(d, int) for d in dims):  # symbolic sizes (torch.compile's dynamic shapes) are checked when run
        shape, other = (max(n, 1), x_h, x_w, c), (max(n, 1), *hw, c)
        (contract.grad_shapes if grad else contract.resize_shapes)(what, shape, other)
    return hw


def _check_scales(scales, k: int, what: str) -> tuple:
    """``scales`` (None or one positive finite float per spatial dimension) as a (height, width) pair."""
    if scales is None:
        return (None, None)
    if len(scales) != k or not all(isinstance(s, float) and math.isfinite(s) and s > 0 for s in scales):
        raise InvalidValueError(f"{what} requires scales as {k} positive finite float(s) (or None), got {scales!r}")
    return tuple(scales) if k == 2 else (None, scales[0])


def _check_mode(mode, what: str) -> None:
    if mode not in MODES:
        raise InvalidValueError(f"{what} requires mode 'nearest' or 'nearest-exact', got {mode!r}; "
                                f"other modes: call F.interpolate")


# -- which map torch computes ---------------------------------------------------------------------------------------

def forward_path(x: torch.Tensor, out_hw) -> str:
    """Which of torch's CPU index computations (``semantics.TORCH_PATHS``) F.interpolate's forward uses for ``x``.

    torch 2.13, cpu/UpSampleKernel.cpp: the 1-D kernels always take the TensorIterator tables ("generic"); the 2-D
    ones (upsample_nearest2d_kernel_impl, _upsample_nearest_exact2d_kernel_impl) take the channels-last kernel,
    which calls nearest_idx / nearest_exact_idx ("indexed"), when _use_channels_last_kernel_2d holds: the input is
    channels_last-contiguous with more than 3 channels, or out_h + out_w <= 128; else "generic". The dtype does not
    matter (uint8 computes its indices in float, like the float types). Backward always takes "indexed".
    "generic" is "generic_unfused" where torch runs its DEFAULT x86 build (no FMA; ``_generic_path``).
    """
    if x.dim() == 4:
        channels_last = x.is_contiguous(memory_format=torch.channels_last) and x.shape[1] > 3
        if channels_last or out_hw[0] + out_hw[1] <= 128:
            return "indexed"
    return _generic_path()


@functools.lru_cache(maxsize=1)
def _generic_path() -> str:
    """"generic_unfused" where torch runs UpSampleKernel.cpp's DEFAULT build on x86 (compiled without FMA: the CPU
    lacks AVX2, or ATEN_CPU_CAPABILITY=default), else "generic" (AVX2 / AVX-512 builds, which fuse; ARM builds are
    assumed to fuse too, as GCC contracts there by default: not measured)."""
    import platform

    x86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
    return "generic_unfused" if x86 and torch.backends.cpu.get_cpu_capability() == "DEFAULT" else "generic"


def _convention(mode: str, scales: tuple, path: str) -> semantics.IndexConvention:
    return semantics.IndexConvention(*semantics.TORCH_MODES[mode], "torch", scales, path)


# -- the ops --------------------------------------------------------------------------------------------------------

def _nhwc_numpy(x: torch.Tensor) -> np.ndarray:
    """The NHWC numpy view of an NCHW (NCW: height 1) CPU tensor (no copy; bfloat16 reinterpreted bit for bit)."""
    if x.device.type != "cpu":
        raise InvalidValueError(f"resize_kernels runs on CPU tensors, got one on {x.device}; move it with .cpu()")
    v = (x.unsqueeze(2) if x.dim() == 3 else x).detach().permute(0, 2, 3, 1)
    if v.dtype == torch.bfloat16:
        return v.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return v.numpy()


def _torch_tensor(a: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """An NHWC numpy result as a tensor of ``like``'s rank, in the memory format ``like`` suggests."""
    t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if a.dtype == ml_dtypes.bfloat16 \
        else torch.from_numpy(a)
    t = t.permute(0, 3, 1, 2)
    t = t.squeeze(2) if like.dim() == 3 else t
    return _empty(like, t.shape[2:] if like.dim() == 4 else (1, *t.shape[2:])).copy_(t)


def _memory_format(x: torch.Tensor) -> torch.memory_format:
    """The memory format F.interpolate gives its result (and torch its gradient): the input's suggested one."""
    return suggest_memory_format(x) if x.dim() == 4 else torch.contiguous_format


def _empty(x: torch.Tensor, hw) -> torch.Tensor:
    """An uninitialized result of spatial size ``hw`` with ``x``'s batch, channels, dtype and memory format."""
    spatial = hw if x.dim() == 4 else hw[1:]
    return torch.empty((x.shape[0], x.shape[1], *spatial), dtype=x.dtype, device=x.device,
                       memory_format=_memory_format(x))


@torch.library.custom_op("resize_kernels::resize_nearest", mutates_args=())
def resize_nearest(x: torch.Tensor, size: list[int], scales: list[float] | None = None,
                   mode: str = "nearest") -> torch.Tensor:
    """F.interpolate(x, mode=mode) to ``size`` (one int per spatial dimension) of an NCHW or NCW ``x``, with the
    scale factors F.interpolate passes on (``scales``, None: the sizes' ratio), on the simulated NeuronCore."""
    _check(x, "resize_nearest")
    _check_mode(mode, "resize_nearest")
    hw = _check_sizes(x, size, "resize_nearest")
    if x.shape[0] == 0:
        return _empty(x, hw)
    convention = _convention(mode, _check_scales(scales, x.dim() - 2, "resize_nearest"), forward_path(x, hw))
    nhwc = _nhwc_numpy(x)
    for seen in _Recording.calls:  # export_model_kernels is watching
        seen.append(("forward", nhwc.shape, _as_hw(hw), nhwc.dtype.name, convention))
    return _torch_tensor(api.resize_nearest(nhwc, hw, convention=convention, layout="NHWC"), like=x)


@torch.library.custom_op("resize_kernels::resize_nearest_grad", mutates_args=())
def resize_nearest_grad(dy: torch.Tensor, in_size: list[int], scales: list[float] | None = None,
                        mode: str = "nearest") -> torch.Tensor:
    """Gradient of resize_nearest: ``dy`` summed onto the forward input's ``in_size`` over torch's backward map."""
    _check(dy, "resize_nearest_grad", grad=True)
    _check_mode(mode, "resize_nearest_grad")
    hw = _check_sizes(dy, in_size, "resize_nearest_grad", grad=True)
    if dy.shape[0] == 0:
        return _empty(dy, hw)
    convention = _convention(mode, _check_scales(scales, dy.dim() - 2, "resize_nearest_grad"), "indexed")
    nhwc = _nhwc_numpy(dy)
    for seen in _Recording.calls:  # export_model_kernels(grad=True) is watching: the forward's shapes
        seen.append(("grad", (nhwc.shape[0], *_as_hw(hw), nhwc.shape[3]), nhwc.shape[1:3], nhwc.dtype.name,
                     convention))
    return _torch_tensor(api.resize_nearest_grad(nhwc, hw, convention=convention), like=dy)


@resize_nearest.register_fake
def _resize_nearest_fake(x, size, scales=None, mode="nearest"):
    _check(x, "resize_nearest")
    _check_mode(mode, "resize_nearest")
    return _empty(x, _check_sizes(x, size, "resize_nearest"))


@resize_nearest_grad.register_fake
def _resize_nearest_grad_fake(dy, in_size, scales=None, mode="nearest"):
    _check(dy, "resize_nearest_grad", grad=True)
    _check_mode(mode, "resize_nearest_grad")
    return _empty(dy, _check_sizes(dy, in_size, "resize_nearest_grad", grad=True))


def _save_context(ctx, inputs, output):
    ctx.other_size = list(inputs[0].shape[2:])  # the input's size: the gradient's target, or its source
    ctx.scales, ctx.mode = inputs[2], inputs[3]


def _resize_nearest_backward(ctx, grad):
    return resize_nearest_grad(grad, ctx.other_size, ctx.scales, ctx.mode), None, None, None


def _resize_nearest_grad_backward(ctx, grad):
    # torch's double backward: the forward resize of the incoming gradient (on the forward's path for it)
    return resize_nearest(grad, ctx.other_size, ctx.scales, ctx.mode), None, None, None


resize_nearest.register_autograd(_resize_nearest_backward, setup_context=_save_context)
resize_nearest_grad.register_autograd(_resize_nearest_grad_backward, setup_context=_save_context)


# -- F.interpolate's front --------------------------------------------------------------------------------------------

def _is_int(s) -> bool:
    """An integer as F.interpolate takes one for a size: int, numpy integer, 0-d integer tensor; not a bool (its
    kernel refuses one)."""
    if isinstance(s, torch.Tensor):
        return s.dim() == 0 and not s.is_floating_point() and not s.is_complex() and s.dtype != torch.bool
    return isinstance(s, (int, np.integer)) and not isinstance(s, bool)


def _is_real(s) -> bool:
    """A scale factor as F.interpolate takes one: a Python or numpy number, a bool too; not a tensor (its kernel
    refuses one)."""
    return isinstance(s, (int, float, np.integer, np.floating))


def _size_error(x, size, cls=_SizeError):
    return cls(f"interpolate_nearest requires size as an int or a pair of ints (height, width) for an NCHW tensor "
               f"of rank 4, or an int or a 1-sequence (width,) for an NCW tensor of rank 3; got shape "
               f"{tuple(x.shape)} with size {size!r}")


def _output_size(x: torch.Tensor, size, scale_factor, recompute_scale_factor) -> tuple[list, list | None]:
    """(output size, scales passed on or None) as F.interpolate computes them (torch/nn/functional.py)."""
    k = x.dim() - 2
    if size is not None and scale_factor is not None:
        raise InvalidValueError("interpolate_nearest takes only one of size or scale_factor, got both; "
                                "drop one (as F.interpolate requires)")
    if size is not None:
        if recompute_scale_factor:
            raise InvalidValueError("interpolate_nearest takes recompute_scale_factor only with scale_factor, got "
                                    "it with an explicit size (F.interpolate: not meaningful); drop it")
        sizes = list(size) if isinstance(size, (list, tuple, torch.Size)) else [size] * k
        if isinstance(size, (list, tuple, torch.Size)) and len(sizes) != k:
            raise _size_error(x, size)
        if not all(map(_is_int, sizes)):
            raise _size_error(x, size, InvalidTypeError)
        return _check_output([int(s) for s in sizes], x, f"size {size!r}"), None
    if scale_factor is None:
        raise InvalidValueError("interpolate_nearest requires size or scale_factor, got neither")
    factors = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * k
    if len(factors) != k:
        raise InvalidValueError(f"interpolate_nearest requires scale_factor as a number or a sequence of {k} "
                                f"(one per spatial dimension of shape {tuple(x.shape)}), got {scale_factor!r}")
    if not all(map(_is_real, factors)):
        raise InvalidTypeError(f"interpolate_nearest requires scale_factor as real numbers, got {scale_factor!r}")
    factors = [float(s) for s in factors]
    if not all(math.isfinite(s) for s in factors):
        raise _EmptyInputError(f"interpolate_nearest requires finite scale factors, got {scale_factor!r}")
    out = [math.floor(n * s) for n, s in zip(x.shape[2:], factors)]  # F.interpolate's and ATen's floor(in * s)
    return _check_output(out, x, f"scale_factor {scale_factor!r}"), (None if recompute_scale_factor else factors)


def _check_output(out: list, x: torch.Tensor, given: str) -> list:
    """The output sizes, if torch's kernels take them (above 0); else the RuntimeError they raise, as a project
    error. Sizes from 2**24 on: a project error too (float32 positions stop being exact there)."""
    if not all(o > 0 for o in out):
        raise _EmptyInputError(f"interpolate_nearest requires output sizes above 0, got {out} from input "
                               f"{list(x.shape[2:])} and {given}; use a larger one")
    if any(o >= semantics.MAX_DIM for o in out):
        raise _EmptyInputError(f"interpolate_nearest requires output sizes below 2**24, got {out} from input "
                               f"{list(x.shape[2:])} and {given}; use a smaller one")
    return out


#: The (mode, path, input size, output size, scales) whose differences have been reported.
_WARNED: set = set()


@functools.lru_cache(maxsize=4096)
def _differing_pixels(mode: str, path: str, in_hw: tuple, out_hw: tuple, scales: tuple) -> int:
    """Output pixels (of one image) where torch's map with ``scales`` differs from the size-ratio map."""
    exact = mode == "nearest-exact"
    same = [int(np.sum(semantics.torch_index(i, o, exact, s, path) == semantics.torch_index(i, o, exact, None, path)))
            for i, o, s in zip(in_hw, out_hw, scales)]
    return math.prod(out_hw) - math.prod(same)


def _warn_scale_map(x: torch.Tensor, out: list, scales: list | None, mode: str) -> None:
    """Warn once per shape where this scale_factor call's map differs from the size ratio's (Trainium's)."""
    if scales is None or torch.compiler.is_compiling() or not all(isinstance(d, int) for d in (*x.shape, *out)):
        return
    key = (mode, forward_path(x, out if len(out) == 2 else (1, *out)), tuple(x.shape[2:]), tuple(out), tuple(scales))
    if key in _WARNED:
        return
    _WARNED.add(key)
    n = _differing_pixels(*key)
    if n:
        warnings.warn(
            f"interpolate_nearest: scale_factor={scales} maps {n} of the {math.prod(out)} output pixels of "
            f"{list(x.shape[2:])} -> {out} to other sources than the size ratio does. torch_xla lowers nearest "
            f"resize to a ResizeNearest custom call that carries only the output size, so on Trainium this call "
            f"computes the size-ratio map; pass size={out} (or recompute_scale_factor=True) for one result on both.",
            TrainiumScaleMapWarning, stacklevel=3)


def interpolate_nearest(x: torch.Tensor, size=None, scale_factor=None, mode: str = "nearest",
                        recompute_scale_factor: bool | None = None) -> torch.Tensor:
    """Drop-in for ``F.interpolate(x, size, scale_factor, mode, recompute_scale_factor=...)`` with mode "nearest"
    or "nearest-exact" on NCHW and NCW tensors: same sizes, maps, dtypes and gradients, on the simulated
    NeuronCore. Warns (``TrainiumScaleMapWarning``) where a scale factor gives another map than the sizes would."""
    _check(x, "interpolate_nearest")
    _check_mode(mode, "interpolate_nearest")
    out, scales = _output_size(x, size, scale_factor, recompute_scale_factor)
    _warn_scale_map(x, out, scales, mode)
    return resize_nearest(x, out, scales, mode)


class ResizeNearest(torch.nn.Module):
    """``nn.Upsample`` for modes "nearest" and "nearest-exact", on the simulated NeuronCore (interpolate_nearest)."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest"):
        super().__init__()
        _check_mode(mode, "ResizeNearest")
        if (size is None) == (scale_factor is None):
            raise InvalidValueError(f"ResizeNearest requires exactly one of size or scale_factor, got size={size!r} "
                                    f"and scale_factor={scale_factor!r}")
        self.size, self.scale_factor, self.mode = size, scale_factor, mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return interpolate_nearest(x, self.size, self.scale_factor, self.mode)

    def extra_repr(self) -> str:
        what = f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode!r}"


# -- a model's F.interpolate ------------------------------------------------------------------------------------------

def _routable(x) -> bool:
    return (isinstance(x, torch.Tensor) and not torch.overrides.has_torch_function_unary(x) and x.dim() in (3, 4)
            and x.layout == torch.strided
            and x.dtype in _FORWARD_DTYPES and x.device.type == "cpu" and not (x.requires_grad and x.dtype == torch.uint8))


class _Patch:
    """The one process-wide patch of F.interpolate: installed by the first block entered, removed by the last one
    left, whatever the threads (two threads' overlapping blocks each restoring what it saw left it patched)."""

    lock = threading.Lock()
    depth = 0
    original = None
    handles: list = []  # the blocks open now: each counts the calls made while it lasts


class InterpolatePatch(PatchCalls):
    """What ``patch_interpolate()`` yields: the eager F.interpolate calls made while its block lasted (from any
    thread, as the patch is process-wide), ``taken`` (run on the simulated NeuronCore) and ``passed`` (to torch)."""

    patch, framework = "patch_interpolate", "torch"


def _count(kind: str) -> None:
    if torch.compiler.is_compiling():  # a compiled graph's replays do not run this: count eager calls only
        return
    count(_Patch.handles, _Patch.lock, kind == "taken")


def _patched_interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                         recompute_scale_factor=None, antialias=False):
    if mode in MODES and align_corners is None and not antialias and _routable(input):
        _count("taken")
        return interpolate_nearest(input, size, scale_factor, mode, recompute_scale_factor)
    _count("passed")
    return _Patch.original(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)


@contextlib.contextmanager
def patch_interpolate():
    """Within the block, ``torch.nn.functional.interpolate`` (which modules reach as ``F.interpolate``, and
    ``nn.Upsample``) sends its "nearest" and "nearest-exact" calls on CPU NCW / NCHW dense tensors of a NeuronCore
    dtype to ``interpolate_nearest``; every other call goes to F.interpolate itself. Process-wide while any block
    lasts (not per thread: blocks may nest and overlap across threads); a name bound before the block
    (``from torch.nn.functional import interpolate``) is not patched. Yields an ``InterpolatePatch`` counting the
    calls it took and those it passed to torch: ``with patch_interpolate() as p: ...; print(p)``."""
    handle = InterpolatePatch()
    with _Patch.lock:
        if _Patch.depth == 0:
            _Patch.original = torch.nn.functional.interpolate
            functools.update_wrapper(_patched_interpolate, _Patch.original)
            torch.nn.functional.interpolate = _patched_interpolate
        _Patch.depth += 1
        _Patch.handles.append(handle)
    try:
        yield handle
    finally:
        with _Patch.lock:
            _Patch.handles.remove(handle)
            _Patch.depth -= 1
            if _Patch.depth == 0:
                torch.nn.functional.interpolate = _Patch.original


# -- a model's resizes as NKI source ------------------------------------------------------------------------------

def _as_hw(size) -> tuple:
    """An op's spatial ``size`` as NHWC's (H, W) (an NCW size is one row)."""
    return tuple(size[-2:]) if len(size) > 1 else (1, size[0])


class _Recording:
    """The forward resizes export_model_kernels watches for (one list per active call)."""

    calls: list = []


def export_model_kernels(model, example_input, directory, grad: bool = False) -> list[dict]:
    """Run ``model`` on ``example_input`` (a tensor or a tuple of them) with its F.interpolate nearest calls on the
    simulated NeuronCore (and with ``grad``, backward from the outputs' sum), and write one NKI 0.3.0 file per
    distinct (kernel, shape, dtype, map) they saw into ``directory`` (``export.export_nki``; NHWC, as the exported
    kernels take it), with ``index.json`` listing each file, its direction, shapes, map, kernel and how many
    calls it serves. Returns the index."""
    import json
    from pathlib import Path

    from .. import export

    directory = Path(directory)
    if not directory.is_dir():
        raise InvalidValueError(f"export_model_kernels requires an existing directory, got {str(directory)!r}; "
                                f"create it first")
    inputs = example_input if isinstance(example_input, tuple) else (example_input,)
    if grad:  # the gradient reaches every resize only if the inputs ask for it too
        inputs = tuple(x.detach().requires_grad_(x.is_floating_point()) if isinstance(x, torch.Tensor) else x
                       for x in inputs)
    seen = []
    _Recording.calls.append(seen)
    try:
        with patch_interpolate(), torch.set_grad_enabled(grad):
            out = model(*inputs)
            if grad:
                outs = out if isinstance(out, (tuple, list)) else (out,)
                sum(o.float().sum() for o in outs if isinstance(o, torch.Tensor) and o.requires_grad).backward()
    finally:
        _Recording.calls.remove(seen)
    index = {}
    for key in seen:
        if key in index:
            index[key]["calls"] += 1
            continue
        direction, shape, out_hw, dtype, convention = key
        name = f"resize{'_grad' if direction == 'grad' else ''}_{'x'.join(map(str, shape))}_to_" \
               f"{out_hw[0]}x{out_hw[1]}_{dtype}"
        taken = {entry["file"] for entry in index.values()}
        name = next(f"{name}{suffix}.py" for suffix in ("", *(f"_{k}" for k in range(2, len(seen) + 2)))
                    if f"{name}{suffix}.py" not in taken)  # another map of the same shapes: its own file
        text = export.export_nki(shape, out_hw, dtype, convention=convention, grad=direction == "grad")
        (directory / name).write_text(text)
        index[key] = {"file": name, "direction": direction,
                      "kernel": re.search(r"^def (\w+)\(", text, re.M).group(1), "nhwc_in": list(shape),
                      "out_hw": list(out_hw), "dtype": dtype, "map": convention.describe(), "calls": 1}
    entries = list(index.values())
    (directory / "index.json").write_text(json.dumps(entries, indent=2) + "\n")
    return entries

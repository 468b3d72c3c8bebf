"""The public entry points: resize on the simulated NeuronCore, with traced Programs cached."""

from __future__ import annotations

import functools

import numpy as np

from . import semantics
from .kernels import DEFAULT_FORWARD, FORWARD_KERNELS
from .kernels import GRAD_KERNELS
from .compiler.passes import block_factors
from .compiler.pipeline import CompiledModule, compile_hlo
from .machine import dtypes
from .machine.isa import Program
from .machine.simulator import Executable
from .nki import TensorSpec, trace


def kernel_name(kernel: str | None) -> str:
    """The registered forward kernel variant ``kernel`` names (None: the default)."""
    name = DEFAULT_FORWARD if kernel is None else kernel
    if name not in FORWARD_KERNELS:
        raise ValueError(f"resize_nearest has no kernel {kernel!r}; choose one of {', '.join(map(repr, FORWARD_KERNELS))}")
    return name


def _check_size(size, in_hw, what):
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise TypeError(f"{what} requires the output size as a pair (height, width), got {size!r}")
    for i, o in zip(in_hw, size):
        semantics.check_axis(i, o, what)
    return int(size[0]), int(size[1])


def _check_nhwc(x, what, allowed=None):
    """x is a numpy NHWC array of a machine dtype (of a dtype named in ``allowed``, if given)."""
    if not isinstance(x, np.ndarray):
        hint = "; convert a torch tensor with .numpy() (or use resize_kernels.frontends.torch)" \
            if type(x).__module__.startswith("torch") else ""
        raise TypeError(f"{what} requires a numpy array in NHWC layout, got {type(x).__name__}{hint}")
    if x.ndim != 4:
        raise ValueError(f"{what} requires an NHWC array of rank 4 (batch, height, width, channels), "
                         f"got shape {x.shape}")
    if x.shape[0] == 0 or x.shape[3] == 0:
        raise ValueError(f"{what} requires at least one batch and one channel, got shape {x.shape}")
    if allowed is not None and x.dtype.name not in allowed:
        hint = "cast it with .astype(np.float32)" if x.dtype.kind in "fc" else "a gradient is real-valued"
        raise TypeError(f"{what} requires an array of dtype {', '.join(allowed)}, got {x.dtype}; {hint}")
    dtypes.as_dtype(x.dtype, what)


def check_shape_pair(what: str, in_shape, out_shape) -> tuple[tuple, tuple]:
    """The NHWC input and output shapes of one resize as int tuples; ValueError unless they are four
    positive integers each with equal batch and channels."""
    for name, s in (("in_shape", in_shape), ("out_shape", out_shape)):
        if not isinstance(s, (tuple, list)) or len(s) != 4 or not all(
                isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d > 0 for d in s):
            raise ValueError(f"{what} requires {name} as four positive integers (N, H, W, C), got {s!r}")
    if in_shape[0] != out_shape[0] or in_shape[3] != out_shape[3]:
        raise ValueError(f"{what} requires equal batch and channels in and out (a resize changes only H and W), "
                         f"got {tuple(in_shape)} -> {tuple(out_shape)}")
    return tuple(map(int, in_shape)), tuple(map(int, out_shape))


def trace_resize(in_shape, out_hw, dtype="float32", kernel: str | None = None) -> Program:
    """The Program a forward kernel traces to for an NHWC input of ``in_shape`` resized to ``out_hw``."""
    return _program(tuple(in_shape), tuple(out_hw), dtypes.as_dtype(dtype, "trace_resize"), kernel_name(kernel))


@functools.lru_cache(maxsize=64)
def _program(in_shape, out_hw, dtype, name) -> Program:
    n, _, _, c = in_shape
    return trace(FORWARD_KERNELS[name], TensorSpec(in_shape, dtype), out_shape=(n, *out_hw, c))


@functools.lru_cache(maxsize=64)
def resize_executable(in_shape, out_hw, dtype, name: str) -> Executable:
    """The cached, prepared Program of kernel variant ``name`` for this shape and dtype."""
    return Executable(_program(in_shape, out_hw, np.dtype(dtype), name))


def resize_nearest(x: np.ndarray, size, kernel: str | None = None) -> np.ndarray:
    """Nearest-neighbour resize of an NHWC array to ``size = (out_h, out_w)`` on the simulated NeuronCore.

    Same result as ``torch.nn.functional.interpolate(mode="nearest")`` (asymmetric,
    floor) for the default kernel; ``kernel="seed"`` runs the seed's lowered kernel
    as written. The kernel is traced once per (shape, size, dtype, kernel) and cached.
    """
    _check_nhwc(x, "resize_nearest")
    out_hw = _check_size(size, x.shape[1:3], "resize_nearest")
    return resize_executable(x.shape, out_hw, x.dtype, kernel_name(kernel)).run([x])[0]


def index_map(in_hw, out_hw) -> np.ndarray:
    """Reference flat source index (src_h * W_in + src_w) of every output pixel, shape (H_out, W_out)."""
    return semantics.index_map(in_hw, out_hw)


# -- the gradient ---------------------------------------------------------------------------------

def grad_kernel_name(kernel: str | None) -> str:
    """The registered gradient kernel ``kernel`` names (None: "general", which handles every ratio)."""
    name = "general" if kernel is None else kernel
    if name not in GRAD_KERNELS:
        raise ValueError(f"resize_nearest_grad has no kernel {kernel!r}; choose one of "
                         f"{', '.join(map(repr, GRAD_KERNELS))}")
    return name


def _check_grad_size(size, dy_hw):
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise TypeError(f"resize_nearest_grad requires the forward input size as a pair (in_h, in_w), got {size!r}")
    for i, o in zip(size, dy_hw):
        semantics.check_axis(i, o, "resize_nearest_grad")
    return int(size[0]), int(size[1])


def trace_resize_grad(dy_shape, in_hw, dtype="float32", kernel: str | None = None) -> Program:
    """The Program a gradient kernel traces to for an NHWC ``dy`` of ``dy_shape`` and a forward input ``in_hw``."""
    dtype = dtypes.as_dtype(dtype, "trace_resize_grad")
    return _grad_program(tuple(dy_shape), tuple(in_hw), dtype, grad_kernel_name(kernel))


@functools.lru_cache(maxsize=64)
def _grad_program(dy_shape, in_hw, dtype, name) -> Program:
    n, _, _, c = dy_shape
    return trace(GRAD_KERNELS[name], TensorSpec(dy_shape, dtype), in_shape=(n, *in_hw, c))


@functools.lru_cache(maxsize=64)
def grad_executable(dy_shape, in_hw, dtype, name: str) -> Executable:
    """The cached, prepared Program of gradient kernel ``name`` for this shape and dtype."""
    return Executable(_grad_program(dy_shape, in_hw, np.dtype(dtype), name))


#: resize_nearest_grad's integer path: the compiler's reduce-window, for block ratios (not a kernel).
REDUCE_WINDOW = "reduce_window"


def resize_nearest_grad(dy: np.ndarray, size, kernel: str | None = None) -> np.ndarray:
    """Gradient of ``resize_nearest`` with respect to its input, on the simulated NeuronCore.

    ``dy`` is the NHWC gradient of the resized output (float32, float16 or
    bfloat16) and ``size = (in_h, in_w)`` the forward input's height and width;
    returns dx (N, in_h, in_w, C) of dy's dtype, where each pixel is the sum (not
    the mean) of dy over the output pixels that copied it, summed in float32 in
    the order ``semantics.resize_nearest_grad_reference`` specifies.
    ``kernel``: "reduce_window" runs the compiler's integer path (a one-call
    HLO module whose ResizeNearestGrad canonicalizes to reduce-window), which
    requires block ratios: each axis of dy k times the input's, with the
    float32 forward map ``o // k``; "general" (kernels.GRAD_KERNELS) forces the
    gradient kernel, for any ratio; None picks "reduce_window" for block
    ratios, else "general". Both agree with the reference bit for bit. Modules
    and Programs are built once per (shape, size, dtype, path) and cached.
    """
    _check_nhwc(dy, "resize_nearest_grad", allowed=semantics.GRAD_DTYPES)
    in_hw = _check_grad_size(size, dy.shape[1:3])
    if kernel not in (None, REDUCE_WINDOW, *GRAD_KERNELS):
        raise ValueError(f"resize_nearest_grad has no kernel {kernel!r}; choose one of "
                         f"{', '.join(map(repr, [*GRAD_KERNELS, REDUCE_WINDOW]))}")
    blocks = block_factors(dy.shape[1:3], in_hw) is not None
    if kernel == REDUCE_WINDOW and not blocks:
        raise ValueError(f"resize_nearest_grad kernel='reduce_window' requires dy's height and width to be integer "
                         f"multiples k of the input's whose float32 forward map is o // k, got dy "
                         f"{dy.shape[1:3]} for input {in_hw}; use kernel='general' (or None) for this ratio")
    if kernel == REDUCE_WINDOW or (kernel is None and blocks):
        return _reduce_window_grad(dy.shape, in_hw, dy.dtype)(dy)
    return grad_executable(dy.shape, in_hw, dy.dtype, grad_kernel_name(kernel)).run([dy])[0]


@functools.lru_cache(maxsize=64)
def _reduce_window_grad(dy_shape, in_hw, dtype) -> CompiledModule:
    """A compiled module of one ResizeNearestGrad custom-call: the compiler's own reduce-window path."""
    element_type = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}[np.dtype(dtype).name]
    n, _, _, c = dy_shape
    dy, dx = (",".join(map(str, shape)) for shape in (dy_shape, (n, *in_hw, c)))
    return compile_hlo(f"HloModule resize_nearest_grad\n\nENTRY main {{\n"
                       f"  dy = {element_type}[{dy}] parameter(0)\n"
                       f"  ROOT dx = {element_type}[{dx}] custom-call(dy), "
                       f'custom_call_target="ResizeNearestGrad", backend_config="\\"00\\""\n}}\n')

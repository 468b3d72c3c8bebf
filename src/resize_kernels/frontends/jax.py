"""JAX front end: nearest resize as a custom_vjp function whose forward and backward run on the simulated NeuronCore.

``resize_nearest(x, size)`` takes an NHWC array (batch, height, width,
channels; a ``jax.Array``, a tracer or a numpy array) and ``size = (out_h,
out_w)`` or an int for a square output, and returns the NHWC resize of the
same dtype, equal bit for bit to ``rk.resize_nearest`` (asymmetric, floor:
PyTorch's ``F.interpolate(mode="nearest")`` and the Neuron compiler's
convention). It works eagerly and under ``jax.jit``, ``jax.grad`` /
``jax.vjp`` and ``jax.vmap``, in any nesting.

What runs where: the resize is a ``jax.pure_callback`` into the kernels'
traced Programs, run on the NeuronCore simulator in Python on the host CPU;
under ``jit`` XLA calls back into Python for it (the data is copied to the
host and back on an accelerator), and the simulator is slow for huge shapes.
Its vjp (a ``jax.custom_vjp``) is ``resize_nearest_grad``
(``rk.resize_nearest_grad``, a sum over the forward map, float32 sums cast
once to dy's dtype), whose own vjp is the forward resize again, so
higher-order reverse-mode derivatives work; forward mode (``jax.jvp``,
``jax.jacfwd``) does not, as for every ``custom_vjp``. Under ``vmap`` the
callback receives the mapped axes in front of N and folds them into the batch:
one simulator run per call, whatever the vmapped batch.

Supported dtypes: float32, float16, bfloat16 (bfloat16 reaches the simulator
bit for bit as ml_dtypes.bfloat16); float64 has no NeuronCore equivalent and
is rejected, as are integer and complex arrays. Shapes, sizes and dtypes are
checked when the function is traced; ``size`` sets the output's shape, so it
must be static (Python or numpy ints), never a traced value.

``jax.image.resize(x, shape, method="nearest")`` samples at half-pixel centres,
src = floor((dst + 0.5) * in / out), where PyTorch and the Neuron compiler take
floor(dst * float32(in / out)): on the SD2 upsample 30x20 -> 59x38 the two
differ in 1,010 of the 2,242 output pixels (tests/test_frontend_jax.py; they
agree on exact integer upsamples). ``convention="jax"`` gives JAX's map bit for
bit (``semantics.JAX``); every other convention the numpy API names is taken too.
``resize`` takes ``jax.image.resize``'s signature (any axes, integer dtypes too), and ``patch_image_resize()``
routes a Flax or Equinox model's ``jax.image.resize(..., "nearest")`` calls to it.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from .. import api, contract, semantics
from ..errors import InvalidTypeError, InvalidValueError
from .patching import PatchCalls, count

__all__ = ["resize_nearest", "resize_nearest_grad", "resize", "patch_image_resize", "ImageResizePatch"]

_DTYPES = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _check(x, what: str) -> None:
    if not isinstance(x, (jax.Array, np.ndarray)):
        hint = "; convert a torch tensor with jnp.asarray(t.numpy()) (or use resize_kernels.frontends.torch)" \
            if type(x).__module__.startswith("torch") else ""
        raise InvalidTypeError(f"{what} requires a jax array in NHWC layout, got {type(x).__name__}{hint}")
    if x.ndim != 4:
        raise InvalidValueError(f"{what} requires an NHWC array of rank 4 (batch, height, width, channels), "
                                f"got shape {tuple(x.shape)}")
    dtype = np.dtype(x.dtype)
    if dtype not in _DTYPES:
        hint = ("the NeuronCore has no float64: cast it with .astype(jnp.float32)" if dtype == np.float64
                else "cast it with .astype(jnp.float32)")
        raise InvalidTypeError(f"{what} requires a float32, float16 or bfloat16 array, got {dtype}; {hint}")


def _is_int(s) -> bool:
    return isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_))


def _size(size, what: str, names: str) -> tuple[int, int]:
    """``size`` (an int, or a pair of ints ``names``) as a pair of Python ints; never a traced value."""
    pair = (size, size) if _is_int(size) else size
    if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not all(map(_is_int, pair)):
        if isinstance(size, jax.Array) or (isinstance(size, (tuple, list)) and any(isinstance(s, jax.Array)
                                                                                    for s in size)):
            raise InvalidTypeError(f"{what} requires size as an int or a pair of ints ({names}), got a jax array; "
                                   f"the size sets the result's shape, so it must be static: pass Python ints "
                                   f"(under jax.jit, mark the argument static with static_argnums)")
        raise InvalidTypeError(f"{what} requires size as an int or a pair of ints ({names}), got {size!r}")
    return int(pair[0]), int(pair[1])


def _check_sizes(x, hw: tuple, what: str, grad: bool = False) -> None:
    """The op's contract on NHWC ``x`` and ``hw`` (the output's, or for the gradient the forward input's);
    an empty batch is allowed, as jax.image.resize allows it."""
    n, x_h, x_w, c = x.shape
    shape, other = (max(n, 1), x_h, x_w, c), (max(n, 1), *hw, c)
    (contract.grad_shapes if grad else contract.resize_shapes)(what, shape, other)


def _host(fn, hw: tuple, x) -> np.ndarray:
    """On the host: ``fn`` (rk.resize_nearest or rk.resize_nearest_grad) of an NHWC array with any vmapped axes
    in front of N (vmap_method="expand_dims"), folded into the batch for one run."""
    x = np.asarray(x)  # bfloat16 arrives as ml_dtypes.bfloat16, the dtype the simulator takes
    *lead, _, _, c = x.shape
    flat = x.reshape(-1, *x.shape[-3:])
    y = fn(flat, hw) if flat.shape[0] else np.zeros((0, *hw, c), x.dtype)
    return y.reshape(*lead, *hw, c)


def _call(fn, x, hw: tuple):
    n, _, _, c = x.shape
    result = jax.ShapeDtypeStruct((n, *hw, c), x.dtype)
    if n == 0:
        return jnp.zeros(result.shape, result.dtype)
    return jax.pure_callback(functools.partial(_host, fn, hw), result, x, vmap_method="expand_dims")


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _resize_nearest(x, size: tuple, in_hw: tuple, convention):
    """Nearest resize of NHWC ``x`` (of height and width ``in_hw``) to ``size``, on the simulated NeuronCore."""
    return _call(functools.partial(api.resize_nearest, convention=convention), x, size)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _resize_nearest_grad(dy, in_hw: tuple, out_hw: tuple, convention):
    """Gradient of _resize_nearest: NHWC ``dy`` (of height and width ``out_hw``) summed onto ``in_hw``."""
    return _call(functools.partial(api.resize_nearest_grad, convention=convention), dy, in_hw)


def _resize_nearest_fwd(x, size, in_hw, convention):
    return _resize_nearest(x, size, in_hw, convention), None


def _resize_nearest_bwd(size, in_hw, convention, _, grad):
    return (_resize_nearest_grad(grad, in_hw, size, convention),)


def _resize_nearest_grad_fwd(dy, in_hw, out_hw, convention):
    return _resize_nearest_grad(dy, in_hw, out_hw, convention), None


def _resize_nearest_grad_bwd(in_hw, out_hw, convention, _, grad):
    return (_resize_nearest(grad, out_hw, in_hw, convention),)  # the transpose of a transpose: the forward map


_resize_nearest.defvjp(_resize_nearest_fwd, _resize_nearest_bwd)
_resize_nearest_grad.defvjp(_resize_nearest_grad_fwd, _resize_nearest_grad_bwd)


def resize_nearest(x, size, *, convention=None, coordinate_transformation_mode=None, nearest_mode=None):
    """Nearest resize of NHWC ``x`` to ``size = (out_h, out_w)`` (or an int: square) on the simulated NeuronCore;
    differentiable (reverse mode), jit- and vmap-able. Returns an array of x's dtype. The map is the compiler's
    (asymmetric, floor) unless named as ``rk.resize_nearest`` names it: ``convention="jax"`` (jax.image.resize's),
    a key or ``IndexConvention``, or ONNX's mode names."""
    size = _size(size, "resize_nearest", "height, width")
    _check(x, "resize_nearest")
    _check_sizes(x, size, "resize_nearest")
    convention = api.named_convention("resize_nearest", convention, coordinate_transformation_mode, nearest_mode)
    return _resize_nearest(jnp.asarray(x), size, tuple(x.shape[1:3]), convention)


def resize_nearest_grad(dy, in_size, *, convention=None, coordinate_transformation_mode=None, nearest_mode=None):
    """Gradient of resize_nearest: NHWC ``dy`` summed onto the forward input's ``in_size = (in_h, in_w)`` (or an
    int: square), each pixel the float32 sum of the dy pixels that copied it, cast once to dy's dtype; the
    forward map named as ``resize_nearest`` names it."""
    in_size = _size(in_size, "resize_nearest_grad", "in_h, in_w")
    _check(dy, "resize_nearest_grad")
    _check_sizes(dy, in_size, "resize_nearest_grad", grad=True)
    convention = api.named_convention("resize_nearest_grad", convention, coordinate_transformation_mode, nearest_mode)
    return _resize_nearest_grad(jnp.asarray(dy), in_size, tuple(dy.shape[1:3]), convention)


# -- jax.image.resize ----------------------------------------------------------------------------------

#: The stock jax.image.resize (patch_image_resize replaces the module's name while a block lasts).
_IMAGE_RESIZE = jax.image.resize
#: Dtypes the forward resize takes (integers move bits only; the gradient takes _DTYPES).
_FORWARD_DTYPES = _DTYPES + tuple(np.dtype(t) for t in ("int32", "int16", "int8", "uint8", "uint16", "uint32"))


def _is_nearest(method) -> bool:
    if isinstance(method, str):
        return method.lower() == "nearest"
    return method == jax.image.ResizeMethod.NEAREST


def resize(image, shape, method, antialias: bool = True, precision=jax.lax.Precision.HIGHEST):
    """``jax.image.resize`` with method "nearest" run on the simulated NeuronCore, JAX's map bit for bit
    (``semantics.JAX``); other methods are JAX's own, unchanged.

    ``shape`` is the whole output shape, as JAX takes it: every axis whose size changes is resized, one axis at a
    time (the axes before it fold into the batch, those after it into the channels), as JAX gathers axis by axis,
    so the gradient sums in JAX's order too: float32 gradients are JAX's bit for bit; float16 and bfloat16 ones
    sum in float32 and round once, and differ from JAX's (which accumulates in the array's dtype) where more than
    two outputs copy a pixel. Dtypes: float32, float16, bfloat16 (differentiable) and 8- to 32-bit integers.
    """
    if not _is_nearest(method) or len(tuple(shape)) != jnp.ndim(image):
        return _IMAGE_RESIZE(image, shape, method, antialias, precision)  # JAX's methods, and its own errors
    x = image if isinstance(image, jax.Array) else jnp.asarray(image)
    dtype = np.dtype(x.dtype)
    if dtype not in _FORWARD_DTYPES:
        raise InvalidTypeError(f"resize (method 'nearest', on the simulated NeuronCore) requires one of "
                               f"{', '.join(d.name for d in _FORWARD_DTYPES)}, got {dtype}; cast it, or call "
                               f"jax.image.resize for JAX's own")
    shape = tuple(int(n) for n in shape)
    if x.size == 0 or 0 in shape:
        return _IMAGE_RESIZE(image, shape, method, antialias, precision)
    for axis, (n_in, n_out) in enumerate(zip(x.shape, shape)):
        if n_in != n_out:
            x = _resize_axis(x, axis, n_out)
    return x


def _resize_axis(x, axis: int, n_out: int):
    """``x`` resized along one axis by JAX's map: an NHWC resize of (before, n_in, 1, after) to (n_out, 1)."""
    lead, n_in, trail = x.shape[:axis], x.shape[axis], x.shape[axis + 1:]
    nhwc = x.reshape(math.prod(lead), n_in, 1, math.prod(trail))
    _check_sizes(nhwc, (n_out, 1), "resize")
    if np.dtype(x.dtype) in _DTYPES:
        y = _resize_nearest(nhwc, (n_out, 1), (n_in, 1), semantics.JAX)
    else:  # integers: no gradient to define
        y = _call(functools.partial(api.resize_nearest, convention=semantics.JAX, layout="NHWC"), nhwc, (n_out, 1))
    return y.reshape(*lead, n_out, *trail)


class ImageResizePatch(PatchCalls):
    """What ``patch_image_resize()`` yields: the jax.image.resize calls made while its block lasted (traced calls
    under ``jax.jit``: once per trace), ``taken`` (run on the simulated NeuronCore) and ``passed`` (to JAX)."""

    patch, framework = "patch_image_resize", "jax"


class _Patch:
    lock = threading.Lock()
    depth = 0
    handles: list = []


def _routable(image, shape, method) -> bool:
    """A nearest call the simulator takes: JAX's map on a NeuronCore dtype, sizes within the contract."""
    try:
        shape = tuple(int(n) for n in shape)
    except TypeError:
        return False
    return (_is_nearest(method) and len(shape) == jnp.ndim(image) and np.dtype(image.dtype) in _FORWARD_DTYPES
            and 0 not in shape and 0 not in jnp.shape(image)
            and all(n < semantics.MAX_DIM for n in (*shape, *jnp.shape(image)))
            and max(math.prod(shape), math.prod(jnp.shape(image))) < 2**31)


def _patched_image_resize(image, shape, method, antialias=True, precision=jax.lax.Precision.HIGHEST):
    routed = _routable(image, shape, method)
    count(_Patch.handles, _Patch.lock, routed)
    return (resize if routed else _IMAGE_RESIZE)(image, shape, method, antialias, precision)


@contextlib.contextmanager
def patch_image_resize():
    """While the block lasts, ``jax.image.resize`` (as Flax and Equinox models call it) sends its "nearest" calls
    on NeuronCore dtypes to ``resize`` (the simulated NeuronCore, JAX's bits) and every other call to JAX itself.
    Process-wide (blocks may nest); a name bound before the block (``from jax.image import resize``) is not
    patched. Yields an ``ImageResizePatch`` counting the calls it took and passed on."""
    handle = ImageResizePatch()
    with _Patch.lock:
        if _Patch.depth == 0:
            functools.update_wrapper(_patched_image_resize, _IMAGE_RESIZE)
            jax.image.resize = _patched_image_resize
        _Patch.depth += 1
        _Patch.handles.append(handle)
    try:
        yield handle
    finally:
        with _Patch.lock:
            _Patch.handles.remove(handle)
            _Patch.depth -= 1
            if _Patch.depth == 0:
                jax.image.resize = _IMAGE_RESIZE

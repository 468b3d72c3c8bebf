"""The public entry points: resize, its gradient, their Programs and modelled cost; traced Programs cached.

Each entry point checks its arguments against the op's one contract
(``contract.py``), has the selection stage (``select.py``) trace the named
kernel or choose one, and runs or costs its Program; the forward op and its
gradient share every step.
"""

from __future__ import annotations

import collections
import functools
import math
import threading
import warnings

import numpy as np

from . import contract, select, semantics
from .compiler.hlo import Shape, custom_call_module
from .compiler.hlo.shape import element_type
from .compiler.passes import block_factors
from .compiler.pipeline import compile_module
from .errors import InvalidTypeError, InvalidValueError, LayoutWarning, ResourceError
from . import kernels
from .kernels import AUTO, FORWARD, GRAD
from .machine.cost import CostReport, program_cost, target_params
from .machine.isa import Program
from .machine.memory import check_host_memory
from .machine.simulator import Executable
from .runtime import LoadedModule, load

def kernel_variant(op: str, kernel: str | None, also: tuple = ()) -> str:
    """The name ``kernel`` gives for ``op`` ("resize_nearest" or "resize_nearest_grad"): a registered kernel, or
    "auto" (None), the selection stage's choice per shape.

    ``also``: other names the caller accepts, listed among the choices in the error.
    """
    name = AUTO if kernel is None else kernel
    kernels.record(op, name, also)  # checks it
    return name


def _check_array(x, what: str, layout: str = "NHWC") -> np.ndarray:
    """x as a numpy array of rank 4 in native byte order (its shape and dtype are then the contract's business)."""
    if not isinstance(x, np.ndarray):
        hint = "; convert a torch tensor with .numpy() (or use resize_kernels.frontends.torch)" \
            if type(x).__module__.startswith("torch") else ""
        raise InvalidTypeError(f"{what} requires a numpy array in {layout} layout, got {type(x).__name__}{hint}")
    if x.ndim != 4:
        axes = "batch, channels, height, width" if layout == "NCHW" else "batch, height, width, channels"
        raise InvalidValueError(f"{what} requires an {layout} array of rank 4 ({axes}), got shape {x.shape}")
    return x if x.dtype.isnative else x.astype(x.dtype.newbyteorder("="))  # the values, in the machine's order


#: The layouts ``resize_nearest`` takes.
LAYOUTS = ("NHWC", "NCHW")


def _channel_count(c: int) -> bool:
    return c in (1, 3, 4) or (c >= 64 and c % 8 == 0)


def _sides(h: int, w: int) -> bool:
    return 4 * min(h, w) >= max(h, w)


def looks_nchw(shape) -> bool:
    """Whether an NHWC shape (N, A, B, C) reads as NCHW: A is a channel count (1, 3, 4, or a multiple of 8 from
    64), B and C are an image's sides (at least 8, within a factor 4 of each other), and A and B are not (NHWC's
    height and width). So 1x3x224x224 does; 1x64x64x1, 2x32x48x3, 10x30x20x1280 and 1x4x6x1280 do not."""
    _, a, b, c = shape
    return _channel_count(a) and min(b, c) >= 8 and _sides(b, c) and not _sides(a, b)


def _check_layout(what: str, layout, shape) -> str:
    """``layout`` checked ("NHWC" or "NCHW"; None: "NHWC", warning where ``shape`` reads as NCHW)."""
    if layout is None:
        if looks_nchw(shape):
            _, c, h, w = shape
            warnings.warn(f"{what} takes NHWC arrays, and shape {tuple(shape)} looks NCHW ({c} channels of {h}x{w}): "
                          f"as NHWC it is a {c}x{h} image of {w} channels; pass layout='NCHW' to resize it as NCHW "
                          f"(the result is NCHW too), or layout='NHWC' if it is NHWC", LayoutWarning, stacklevel=3)
        return "NHWC"
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise InvalidValueError(f"{what} requires layout 'NHWC' or 'NCHW', got {layout!r}; None (the default) is "
                                f"NHWC, warning where the shape looks NCHW")
    return layout


def _shapes(op: str, shape, size) -> tuple[tuple, tuple]:
    """(shape, the other side's full NHWC shape) of ``op`` on a tensor of ``shape`` with the size argument ``size``.

    For the forward op ``size`` is the output's (height, width); for the
    gradient it is the forward input's.
    """
    whose, names = ("output", "height, width") if op == "resize_nearest" else ("forward input", "in_h, in_w")
    if isinstance(size, (int, np.integer)) and not isinstance(size, (bool, np.bool_)):
        size = (size, size)  # an int means square, as torch's size= does
    h, w = contract.size_pair(op, size, whose, names)
    other = (shape[0], h, w, shape[3]) if isinstance(shape, (tuple, list)) and len(shape) == 4 else None
    if op == "resize_nearest":
        return contract.resize_shapes(op, shape, other)
    return contract.grad_shapes(op, shape, other)


def _dtype(op: str, dtype) -> np.dtype:
    return contract.resize_dtype(op, dtype) if op == "resize_nearest" else contract.grad_dtype(op, dtype)


class _InstructionBoundedCache:
    """A least-recently-used cache of Programs (or Executables) bounded by their total instructions.

    A count bound would let a few huge Programs hold gigabytes; this one keeps
    at most ``budget`` instructions (about 1 KB each) and always the newest entry.
    """

    def __init__(self, make, budget: int = 1_000_000):
        self.make, self.budget = make, budget
        self.entries: collections.OrderedDict = collections.OrderedDict()
        self.hits = self.misses = self.instructions = 0
        self._lock = threading.Lock()
        functools.update_wrapper(self, make)

    def __call__(self, *key):
        with self._lock:
            if key in self.entries:
                self.hits += 1
                self.entries.move_to_end(key)
                return self.entries[key][0]
        value = self.make(*key)
        program = getattr(value, "program", value)
        with self._lock:
            self.misses += 1
            if key not in self.entries:  # another thread may have made it meanwhile
                self.entries[key] = (value, len(program.instructions))
                self.instructions += len(program.instructions)
            while len(self.entries) > 1 and self.instructions > self.budget:
                self.instructions -= self.entries.popitem(last=False)[1][1]
        return value

    def cache_info(self):
        return CacheInfo(self.hits, self.misses, self.budget, len(self.entries))

    def cache_clear(self) -> None:
        with self._lock:
            self.entries.clear()
            self.hits = self.misses = self.instructions = 0


CacheInfo = collections.namedtuple("CacheInfo", "hits misses maxsize currsize")


def _trace(op: str, shape: tuple, other: tuple, dtype: np.dtype, name: str, convention=None,
           sources: bool = True) -> Program:
    try:
        return select.program(op, name, shape, other, dtype, convention, sources)
    except ResourceError as error:
        hint = "; the default kernel 'auto' traces a bounded number of instructions for every shape" \
            if op == FORWARD and name != AUTO else ""
        raise ResourceError(f"{op} kernel {name!r} for {shape} -> {other}: {error}{hint}") from None


_program = _InstructionBoundedCache(_trace)


def _prepare(op: str, shape: tuple, other: tuple, dtype: np.dtype, name: str, convention=None) -> Executable:
    """The cached, prepared Program of ``op``'s kernel variant ``name`` for these shapes, dtype and convention."""
    return Executable(_program(op, shape, other, dtype, name, convention))


executable = _InstructionBoundedCache(_prepare)


def trace_resize(in_shape, out_hw, dtype="float32", kernel: str | None = None, cached: bool = True,
                 sources: bool = True, convention: semantics.IndexConvention | None = None) -> Program:
    """The Program a forward kernel traces to for an NHWC input of ``in_shape`` resized to ``out_hw``.

    ``cached=False`` traces afresh and keeps nothing: for a caller that traces
    each shape once (a sweep), where a full cache only costs memory and GC time;
    such a caller may also skip the listing's source lines (``sources=False``).
    ``convention``: the index convention (``semantics.IndexConvention``; None:
    the compiler's), for the kernels in ``kernels.convention_names``.
    """
    shape, other = _shapes("resize_nearest", in_shape, out_hw)
    name = kernel_variant("resize_nearest", kernel)
    args = ("resize_nearest", shape, other, _dtype("resize_nearest", dtype), name,
            _check_convention("trace_resize", convention, name, shape, other))
    return _program(*args) if cached else _trace(*args, sources=sources)


#: ONNX Resize's defaults, for a mode the caller leaves out when naming the other.
ONNX_DEFAULTS = ("half_pixel", "round_prefer_floor")


def index_convention(coordinate_transformation_mode: str | None = None, nearest_mode: str | None = None,
                     scales=None) -> semantics.IndexConvention | None:
    """The convention ONNX's mode names ask for (computed as ONNX's reference does), or None (the compiler's
    map) when neither is named; a mode left out takes ONNX Resize's default (half_pixel, round_prefer_floor)."""
    if coordinate_transformation_mode is None and nearest_mode is None:
        if scales is not None:
            raise InvalidValueError("resize_nearest takes scales only with ONNX's coordinate_transformation_mode or "
                                    "nearest_mode (the compiler's map is the sizes' ratio)")
        return None
    if scales is not None and (not isinstance(scales, (tuple, list)) or len(scales) != 2):
        raise InvalidTypeError(f"resize_nearest requires scales as a pair (height, width) of numbers, as ONNX "
                               f"gives them, got {scales!r}")
    return semantics.IndexConvention(  # a mode left out (None, not "") takes ONNX's default
        ONNX_DEFAULTS[0] if coordinate_transformation_mode is None else coordinate_transformation_mode,
        ONNX_DEFAULTS[1] if nearest_mode is None else nearest_mode, "onnx",
        (None, None) if scales is None else tuple(scales))


def named_convention(what: str, convention=None, coordinate_transformation_mode=None, nearest_mode=None, scales=None):
    """The convention an entry point's keywords name: ``convention``, or ONNX's mode names (``index_convention``);
    None for the compiler's map."""
    if convention is not None and (coordinate_transformation_mode, nearest_mode, scales) != (None, None, None):
        raise InvalidValueError(f"{what} takes either convention or ONNX's mode names (and scales), not both")
    if isinstance(convention, str):  # "jax", or a key: "onnx/half_pixel/round_prefer_ceil"
        if convention == "jax":
            return semantics.JAX
        if convention.count("/") not in (2, 3):
            raise InvalidValueError(f"{what} requires convention 'jax', a key such as 'onnx/half_pixel/floor' or an "
                                    f"IndexConvention, got {convention!r}")
        return semantics.IndexConvention.from_key(convention)
    return convention if convention is not None else index_convention(coordinate_transformation_mode, nearest_mode,
                                                                      scales)


def _check_convention(what: str, convention, name: str, shape: tuple, other: tuple, grad: bool = False):
    """``convention`` as the kernels take it (None for the compiler's), checked against the kernel and the shapes
    (``shape`` the op's operand: the input, or dy for the gradient)."""
    if convention is None:
        return None
    if not isinstance(convention, semantics.IndexConvention):
        raise InvalidTypeError(f"{what} requires convention as a resize_kernels.semantics.IndexConvention (or None), "
                               f"got {type(convention).__name__}")
    if convention.is_default:
        return None
    takes = kernels.convention_names(GRAD if grad else FORWARD)
    if name not in takes:
        raise InvalidValueError(f"{what} kernel {name!r} computes the compiler's map on chip; "
                                f"{convention.describe()} requires one of {', '.join(map(repr, takes))}")
    ins, outs = (other, shape) if grad else (shape, other)
    for k, (i, o) in enumerate(zip(ins[1:3], outs[1:3])):
        semantics.axis_index(i, o, convention, k)  # a scale must give this size (raises, naming the fix)
    return convention


def trace_resize_grad(dy_shape, in_hw, dtype="float32", kernel: str | None = None, cached: bool = True,
                      sources: bool = True, convention: semantics.IndexConvention | None = None) -> Program:
    """The Program a gradient kernel traces to for an NHWC ``dy`` of ``dy_shape`` and a forward input ``in_hw``
    (``cached``, ``sources`` and ``convention`` as in ``trace_resize``)."""
    shape, other = _shapes("resize_nearest_grad", dy_shape, in_hw)
    name = kernel_variant("resize_nearest_grad", kernel)
    args = ("resize_nearest_grad", shape, other, _dtype("resize_nearest_grad", dtype), name,
            _check_convention("trace_resize_grad", convention, name, shape, other, grad=True))
    return _program(*args) if cached else _trace(*args, sources=sources)


def resize_nearest(x: np.ndarray, size, kernel: str | None = None, *, coordinate_transformation_mode: str | None = None,
                   nearest_mode: str | None = None, scales=None,
                   convention: semantics.IndexConvention | None = None, layout: str | None = None) -> np.ndarray:
    """Nearest-neighbour resize of an NHWC array to ``size = (out_h, out_w)`` (an int: square) on the simulated
    NeuronCore.

    Same result as ``torch.nn.functional.interpolate(mode="nearest")`` (asymmetric,
    floor, float32: the compiler's map) for the default kernel; ``kernel="seed"``
    runs the seed's lowered kernel as written. The kernel is traced once per
    (shape, size, dtype, kernel, convention) and cached.

    Opt-in: ``coordinate_transformation_mode`` and ``nearest_mode`` (ONNX Resize's
    names; one left out takes ONNX's default) give ONNX's map, computed as ONNX's
    reference computes it (float64), with ONNX's ``scales`` (height, width) if
    the model has them. Named, even "asymmetric" with "floor" is ONNX's float64
    map, which differs from the default's float32 map on some sizes (14 -> 18:
    output 9 reads source 7 by default, 6 under ONNX's 9 / (18 / 14)). ``convention``
    (``semantics.IndexConvention``) names any map instead, TensorFlow's too.
    Kernels "auto" and "rowreuse" take them all.

    ``layout``: None (NHWC; a ``LayoutWarning`` where the shape looks NCHW, see
    ``looks_nchw``), "NHWC", or "NCHW": then ``x`` is (N, C, H, W), resized as
    its NHWC transpose, and the result is NCHW; ``size`` is (out_h, out_w) either way.
    """
    op = "resize_nearest"
    if layout is not None and _check_layout(op, layout, None) == "NCHW":
        x = _check_array(x, op, "NCHW")
        y = resize_nearest(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), size, kernel, layout="NHWC",
                           coordinate_transformation_mode=coordinate_transformation_mode, nearest_mode=nearest_mode,
                           scales=scales, convention=convention)
        return np.ascontiguousarray(y.transpose(0, 3, 1, 2))
    x = _check_array(x, op)
    _check_layout(op, layout, x.shape)
    shape, other = _shapes(op, x.shape, size)
    convention = named_convention(op, convention, coordinate_transformation_mode, nearest_mode, scales)
    name = kernel_variant(op, kernel)
    convention = _check_convention(op, convention, name, shape, other)
    return executable(op, shape, other, _dtype(op, x.dtype), name, convention).run([x])[0]


def index_map(in_hw, out_hw) -> np.ndarray:
    """Reference flat source index (src_h * W_in + src_w) of every output pixel, shape (H_out, W_out), int64."""
    out_h, out_w = contract.size_pair("index_map", out_hw, "output")
    if all(isinstance(s, (int, np.integer)) for s in (out_h, out_w)) and out_h > 0 and out_w > 0:
        check_host_memory(2 * 8 * int(out_h) * int(out_w), f"index_map to {out_h}x{out_w}")  # the map and a temporary
    return semantics.index_map(in_hw, out_hw)


def nhwc_out_shape(in_shape, out_shape):
    """``out_shape`` in full: an int (square) or (out_h, out_w) takes ``in_shape``'s batch and channels, as
    ``resize_nearest``'s size does; an NHWC 4-tuple (or anything else, for the contract to judge) is kept."""
    if isinstance(out_shape, (int, np.integer)) and not isinstance(out_shape, (bool, np.bool_)):
        out_shape = (out_shape, out_shape)
    if isinstance(in_shape, (tuple, list)) and len(in_shape) == 4 and isinstance(out_shape, (tuple, list)) \
            and len(out_shape) == 2:
        return (in_shape[0], *out_shape, in_shape[3])
    return out_shape


def cost(in_shape, out_shape, kernel: str | None = None, target: str = "trn1", dtype="float32", *,
         convention: semantics.IndexConvention | None = None) -> CostReport:
    """Modelled cost of resizing NHWC ``in_shape`` to ``out_shape`` (NHWC, or (out_h, out_w), or an int: square)
    with ``kernel`` (None: the default) on ``target``.

    ``target`` is "trn1" (NeuronCore-v2) or "trn2" (v3). The report gives
    ``modelled_us``, ``roofline_us`` (the bytes the resize must move, each needed
    source pixel read once and the output written once, at the target's peak DMA
    bandwidth), ``efficiency`` (roofline / modelled), ``instructions`` by engine,
    ``dma_count``, ``dma_bytes``, ``events`` (each instruction's start, end,
    engine and DMA engines) and ``timeline()``; ``str(report)`` is readable.
    Every time in it is modelled, not measured. ``convention``: as in
    ``resize_nearest`` (None: the compiler's map).
    """
    if not isinstance(target, str):
        raise InvalidTypeError(f"cost requires target as a name, 'trn1' or 'trn2', got {type(target).__name__}")
    target_params(target)
    in_shape, out_shape = contract.resize_shapes("cost", in_shape, nhwc_out_shape(in_shape, out_shape))
    name = kernel_variant("resize_nearest", kernel)
    convention = _check_convention("cost", convention, name, in_shape, out_shape)
    program = trace_resize(in_shape, out_shape[1:3], dtype, name, convention=convention)
    shapes = "x".join(map(str, in_shape)) + " -> " + "x".join(map(str, out_shape))
    chosen = program.selection
    pick = f"{chosen.label}, auto's pick" if name == AUTO else chosen.label
    where = f" for {convention.describe()}" if convention is not None else ""
    report = program_cost(program, target, label=f"kernel {pick}{where}, {shapes} {dtype}")
    report.notes = tuple(str(chosen).splitlines()) if name == AUTO or len(chosen.candidates) > 1 else ()
    report.roofline_us = roofline_bytes(in_shape, out_shape, program.inputs[0].dtype.itemsize, convention) / (
        report.params.peak_dma_gbps * 1e3)
    return report


def roofline_bytes(in_shape, out_shape, itemsize: int, convention: semantics.IndexConvention | None = None) -> int:
    """Bytes a nearest resize must move: every source pixel the map reads, once, and every output pixel, once."""
    n, in_h, in_w, c = in_shape
    convention = semantics.COMPILER if convention is None else convention
    rows = np.unique(semantics.axis_index(in_h, out_shape[1], convention, 0)).size
    cols = np.unique(semantics.axis_index(in_w, out_shape[2], convention, 1)).size
    return (n * rows * cols * c + math.prod(out_shape)) * itemsize


# -- the gradient ---------------------------------------------------------------------------------

#: resize_nearest_grad's integer path: the compiler's reduce-window, for block ratios (not a kernel).
REDUCE_WINDOW = "reduce_window"


def resize_nearest_grad(dy: np.ndarray, in_size, kernel: str | None = None, *,
                        coordinate_transformation_mode: str | None = None, nearest_mode: str | None = None,
                        scales=None, convention: semantics.IndexConvention | None = None) -> np.ndarray:
    """Gradient of ``resize_nearest`` with respect to its input, on the simulated NeuronCore.

    ``dy`` is the NHWC gradient of the resized output (float32, float16 or
    bfloat16) and ``in_size = (in_h, in_w)`` (an int: square) the forward input's
    height and width;
    returns dx (N, in_h, in_w, C) of dy's dtype, where each pixel is the sum (not
    the mean) of dy over the output pixels that copied it, summed in float32 in
    the order ``semantics.resize_nearest_grad_reference`` specifies.
    ``kernel``: "reduce_window" runs the compiler's integer path (a one-call
    module whose ResizeNearestGrad canonicalizes to reduce-window), which
    requires block ratios: each axis of dy k times the input's, with the
    float32 forward map ``o // k``; "general" (``kernels.names``) forces the
    gradient kernel, for any ratio; None picks "reduce_window" for block
    ratios, else "general". Both agree with the reference bit for bit. Modules
    and Programs are built once per (shape, size, dtype, path) and cached.
    The forward map's convention is named as in ``resize_nearest`` (ONNX's mode
    names and scales, or ``convention``); every gradient kernel takes any.
    """
    op = "resize_nearest_grad"
    dy = _check_array(dy, op)
    shape, other = _shapes(op, dy.shape, in_size)
    dtype = _dtype(op, dy.dtype)
    convention = named_convention(op, convention, coordinate_transformation_mode, nearest_mode, scales)
    if convention is not None and not convention.is_default:
        if kernel == REDUCE_WINDOW:
            raise InvalidValueError(f"resize_nearest_grad kernel='reduce_window' is the compiler's path for its own "
                                    f"map; {convention.describe()} requires a gradient kernel: "
                                    f"{', '.join(map(repr, kernels.names(GRAD)))} or None")
        name = kernel_variant(op, kernel, also=(REDUCE_WINDOW,))
        convention = _check_convention(op, convention, name, shape, other, grad=True)
        return executable(op, shape, other, dtype, name, convention).run([dy])[0]
    blocks = block_factors(shape[1:3], other[1:3]) is not None
    if kernel == REDUCE_WINDOW and not blocks:
        raise InvalidValueError(f"resize_nearest_grad kernel='reduce_window' requires dy's height and width to be integer "
                                f"multiples k of the input's whose float32 forward map is o // k, got dy "
                                f"{shape[1:3]} for input {other[1:3]}; use kernel='general' (or None) for this ratio")
    if kernel == REDUCE_WINDOW or (kernel is None and blocks):
        return _reduce_window_grad(shape, other[1:3], dtype)(dy)
    name = kernel_variant(op, kernel, also=(REDUCE_WINDOW,))
    return executable(op, shape, other, dtype, name).run([dy])[0]


@functools.lru_cache(maxsize=64)
def _reduce_window_grad(dy_shape, in_hw, dtype) -> LoadedModule:
    """A loaded module of one ResizeNearestGrad custom-call: the compiler's own reduce-window path."""
    n, _, _, c = dy_shape
    dy, dx = Shape(element_type(dtype), dy_shape), Shape(element_type(dtype), (n, *in_hw, c))
    module = custom_call_module("ResizeNearestGrad", dy, dx, '"00"', name="resize_nearest_grad", operand="dy",
                                result="dx")
    return load(compile_module(module))


# -- HLO modules ----------------------------------------------------------------------------------

def compile_hlo(text: str | bytes, kernel: str | None = None, *, resize_grad_average_pool: bool = False,
                extended_modes: bool = False) -> LoadedModule:
    """Compile a module and load it: call the result on numpy arrays. ``text``: HLO text (either dump style),
    StableHLO text as JAX prints it, or the bytes of a serialized HloModuleProto (also gzipped), told by content.

    ``kernel`` picks the forward resize variant for "ResizeNearest" (None: the
    default); ``resize_grad_average_pool=True`` lowers block-ratio
    ResizeNearestGrad calls as the seed describes them, an average pool, NOT the
    gradient. ``extended_modes=True`` lowers resize calls with align_corners or
    half_pixel_centers (rejected by default, with the seed's messages) as
    TensorFlow's ResizeNearestNeighbor computes them. The result has ``.module`` (the lowered HLO), ``.programs`` (each
    kernel's Program), ``.values(*arrays)`` and prints as the lowered module.
    See compiler.pipeline.compile_module and runtime.load.
    """
    return load(compile_module(text, kernel, resize_grad_average_pool=resize_grad_average_pool,
                               extended_modes=extended_modes))

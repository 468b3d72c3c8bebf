"""Kernels and their launches, as NKI has them: ``@jit``, SPMD grids (``kernel[grid]``), ``baremetal``,
``simulate_kernel``, ``benchmark``.

There is no device here: a launch traces the kernel into a Program and runs it
on the simulator. ``benchmark`` traces and costs it only (cost-only mode): it
reports the cost model's latency for the Program, modelled, not measured
(machine/cost.py), without computing a single element, so that kernels of 10^12
flops are benchmarked in seconds to minutes; as it holds no data, its trace may
emit tracer.COST_ONLY_MAX_INSTRUCTIONS instructions, more than a trace to
simulate (tracer.MAX_INSTRUCTIONS). ``benchmark(..., numerics=True)`` also runs
it. NKI documents no cost-only mode for ``simulate_kernel`` or ``baremetal``:
they always compute the outputs.
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings

import numpy as np

from ..errors import InvalidTypeError, InvalidValueError
from ..machine.cost import program_cost, target_params
from ..machine.isa import Program
from ..machine.simulator import run
from . import typing as nt
from .tensor import TensorSpec
from .tracer import COST_ONLY_MAX_INSTRUCTIONS, trace, tracing

#: The cost model target ``benchmark`` reports for (NKI benchmarks on the device the code runs on), unless the
#: kernel names its platform (``@nki.jit(platform_target="trn2")``).
BENCHMARK_TARGET = "trn1"
#: NKI's platform names (``platform_target``, NEURON_PLATFORM_TARGET_OVERRIDE) -> the cost model's target (None:
#: a platform the cost model does not have).
PLATFORMS = {"trn1": "trn1", "inf2": "trn1", "gen2": "trn1", "trn2": "trn2", "gen3": "trn2", "trn3": None,
             "gen4": None}
#: ``nki.jit`` modes: how NKI compiles the kernel (for a framework, standalone, or inlined in another kernel's
#: trace). Here every mode traces and simulates the same way; "benchmark" also reports modelled latency.
JIT_MODES = ("auto", "trace", "baremetal", "simulation", "benchmark", "torchxla", "jax")


class Kernel:
    """A kernel function marked with ``@jit``: trace it, or call it on numpy arrays to simulate it."""

    def __init__(self, func, platform_target: str | None = None):
        self.func = func
        self.platform_target = platform_target
        functools.update_wrapper(self, func)

    def trace(self, *args, **kwargs) -> Program:
        return trace(self, *args, **kwargs)

    def __call__(self, *args, **kwargs):
        if tracing():
            return self.func(*args, **kwargs)  # a kernel calling a kernel: inline it
        return self.launch(self, args, kwargs, ())

    def __getitem__(self, grid):
        """``kernel[grid]``: an SPMD launch of ``grid`` instances."""
        return Launch(self, grid)

    def launch(self, launched, args: tuple, kwargs: dict, grid: tuple):
        """Run one launch (``kernel(...)``, or ``launched`` = ``kernel[grid]``) on the simulator: its output(s)."""
        return simulate(self, args, kwargs, grid)[1]


def jit(func=None, mode: str = "auto", platform_target: str | None = None, **device_options):
    """Mark a kernel function: ``@nki.jit``, or with NKI's options ``@nki.jit(mode="trace")``,
    ``@nki.jit(platform_target="trn2")`` (the platform whose SBUF the trace gets and whose cost model
    ``benchmark`` reports). The device options (compiler flags, artifacts) do nothing here, with a warning."""
    if mode not in JIT_MODES:
        raise InvalidValueError(f"nki.jit requires mode to be one of {', '.join(map(repr, JIT_MODES))}, got {mode!r}")
    if platform_target is not None and platform_target not in PLATFORMS:
        raise InvalidValueError(f"nki.jit requires platform_target to be one of {', '.join(map(repr, PLATFORMS))}, "
                                f"got {platform_target!r}")
    _device_options("nki.jit", device_options)
    cls = BenchmarkKernel if mode == "benchmark" else Kernel

    def mark(f):
        return cls(getattr(f, "func", f), platform_target or getattr(f, "platform_target", None))
    return mark if func is None else mark(func)


def platform_of(kernel) -> str | None:
    """The NKI platform ``kernel`` is compiled for: its ``platform_target``, else the environment's
    NEURON_PLATFORM_TARGET_OVERRIDE (as NKI reads it), else None (BENCHMARK_TARGET's)."""
    platform = getattr(kernel, "platform_target", None) or os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE") or None
    if platform is not None and platform not in PLATFORMS:
        raise InvalidValueError(f"NEURON_PLATFORM_TARGET_OVERRIDE requires one of {', '.join(PLATFORMS)}, got "
                                f"{platform!r}; set it to a NeuronCore platform or unset it")
    return platform


def _model_target(kernel) -> str:
    """The cost model target a kernel is benchmarked on: its platform's (``platform_of``), else BENCHMARK_TARGET."""
    platform = platform_of(kernel)
    if platform is None:
        return BENCHMARK_TARGET
    if PLATFORMS[platform] is None:
        raise InvalidValueError(f"benchmarking {kernel.__name__} for platform {platform!r} requires a cost model "
                                f"of it; the model has trn1 and trn2 (platform_target 'trn1' or 'trn2')")
    return PLATFORMS[platform]


def _trace_options(kernel) -> dict:
    """The trace options of a kernel compiled for a platform (``platform_of``): that platform's SBUF and name
    ({} for the default)."""
    target = PLATFORMS.get(platform_of(kernel))
    return {} if target is None else {"sbuf_partition_bytes": target_params(target).sbuf_partition_bytes,
                                      "platform": target}


def check_grid(grid) -> tuple:
    """A launch grid as a tuple of positive ints (``kernel[4]`` or ``kernel[2, 3]``)."""
    dims = grid if isinstance(grid, tuple) else (grid,)
    if not dims or any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1 for d in dims):
        raise InvalidValueError(f"an SPMD launch requires a grid of positive integers, kernel[4] or kernel[2, 3], "
                                f"got {grid!r}")
    return tuple(int(d) for d in dims)


def _is_tensor(a) -> bool:
    return hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, (np.generic, type, np.dtype))


def bind_tensors(kernel, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """(args, kwargs) with every tensor given by keyword (``kernel(q, k, v, sinks=s)``) moved to its parameter's
    position, defaults filling the parameters between: the trace makes HBM inputs of positional tensors, in
    order, and the run takes the arrays in that order."""
    if not any(_is_tensor(v) for v in kwargs.values()):
        return args, kwargs
    signature = inspect.signature(getattr(kernel, "func", kernel))
    names = [n for n, p in signature.parameters.items()
             if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    last = max((names.index(k) for k, v in kwargs.items() if _is_tensor(v) and k in names), default=-1)
    if last < len(args):
        return args, kwargs
    rest = dict(kwargs)
    positional = list(args)
    for name in names[len(args):last + 1]:
        if name in rest:
            positional.append(rest.pop(name))
        elif signature.parameters[name].default is not inspect.Parameter.empty:
            positional.append(signature.parameters[name].default)
        else:
            raise InvalidTypeError(f"{getattr(kernel, '__name__', 'the kernel')} is missing argument {name!r}")
    return tuple(positional), rest


def simulate(kernel, args, kwargs, grid: tuple = ()):
    """Trace ``kernel`` on ``args`` (numpy arrays and Python values) and run it: (Program, its output arrays)."""
    args, kwargs = bind_tensors(kernel, args, kwargs)
    arrays = [a for a in args if hasattr(a, "shape") and hasattr(a, "dtype")]
    for a in arrays:
        if not isinstance(a, np.ndarray):
            raise InvalidTypeError(f"running {getattr(kernel, '__name__', 'a kernel')} requires numpy arrays as "
                                   f"tensors, got {type(a).__name__}; convert with np.asarray")
    program = trace(kernel, *args, grid=grid, **_trace_options(kernel), **kwargs)
    outs = run(program, arrays)
    return program, (outs[0] if len(outs) == 1 else tuple(outs))


class Launch:
    """``kernel[grid]``: the kernel's SPMD instances, traced one after another into one Program and simulated."""

    def __init__(self, kernel: Kernel, grid):
        self.kernel, self.grid = kernel, check_grid(grid)

    def trace(self, *args, **kwargs) -> Program:
        return trace(self.kernel, *args, grid=self.grid, **kwargs)

    def __call__(self, *args, **kwargs):
        return self.kernel.launch(self, args, kwargs, self.grid)

    def __repr__(self) -> str:
        return f"{self.kernel.__name__}[{', '.join(map(str, self.grid))}]"


class BenchmarkResult:
    """``benchmark_result``: its ``nc_latency`` holds the modelled latency of the last run, on ``target``, with
    nki.benchmark's host-device overhead (machine/cost.py, S4) as its figures include it; the
    traced ``program`` can be costed on another target with machine.cost.program_cost."""

    def __init__(self, latency_us: float, program: Program, target: str = BENCHMARK_TARGET):
        self.nc_latency = ModelledLatency(latency_us)
        self.program = program
        self.target = target


class ModelledLatency:
    """NKI's ``nc_latency``, from the cost model: one deterministic figure, so every percentile is that figure."""

    def __init__(self, us: float):
        self.us = us

    def get_latency_percentile(self, p) -> float:
        """The modelled latency in microseconds (the same for every percentile p in 0..100)."""
        if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) or not 0 <= p <= 100:
            raise InvalidValueError(f"get_latency_percentile requires a percentile in 0..100, got {p!r}")
        return self.us

    def __repr__(self) -> str:
        return f"modelled latency {self.us:,.1f} us"


class UnsimulatedOutputs:
    """What a cost-only ``nki.benchmark`` call returns in place of its outputs, which it never computed: any use
    of it as data raises an error saying how to get them."""

    def __init__(self, kernel_name: str):
        self.kernel_name = kernel_name

    def _refuse(self, *args, **kwargs):
        raise InvalidValueError(f"the outputs of {self.kernel_name} were not computed: nki.benchmark here is "
                                f"cost-only (it traces and costs the kernel); to get them use "
                                f"nki.benchmark(..., numerics=True) or nki.simulate_kernel")

    __array__ = __getitem__ = __iter__ = __len__ = __float__ = __int__ = __bool__ = _refuse

    def __getattr__(self, name: str):
        if name.startswith("__"):  # Python's and numpy's own probes: a plain missing attribute
            raise AttributeError(name)
        self._refuse()

    def __repr__(self) -> str:
        return f"<outputs of {self.kernel_name}: not computed (cost-only nki.benchmark)>"


def _tensor_spec(arg):
    """An ``nt.tensor[shape, dtype]`` argument (how NKI benchmarks a kernel without data) as a TensorSpec; any
    other argument as it is."""
    base, given = getattr(arg, "base", None), getattr(arg, "args", None)
    if isinstance(base, type) and issubclass(base, nt.tensor) and isinstance(given, tuple) and len(given) >= 2:
        shape, dtype = given[0], given[1]
        if not isinstance(shape, (tuple, list)) or not all(isinstance(d, (int, np.integer)) for d in shape):
            raise InvalidTypeError(f"a tensor argument nt.tensor[shape, dtype] requires a list or tuple of ints as "
                                   f"shape, got {shape!r}")
        return TensorSpec(tuple(int(d) for d in shape), np.dtype(dtype))
    return arg


class BenchmarkKernel(Kernel):
    """``nki.benchmark(warmup=, iters=)(kernel)``: a launch traces the kernel, costs the Program on
    BENCHMARK_TARGET (or the kernel's platform_target) and sets ``benchmark_result`` (on the launch, and on this kernel for its last launch) to that
    modelled latency. Cost-only unless ``numerics``: the elements are not computed, and the call returns an
    UnsimulatedOutputs; tensor arguments may then be numpy arrays, TensorSpecs or ``nt.tensor[shape, dtype]``.
    With ``numerics`` it also runs the Program on the simulator and returns the outputs. Warmup and iters change
    nothing in a deterministic model and are checked only."""

    def __init__(self, func, platform_target: str | None = None, numerics: bool = False):
        super().__init__(func, platform_target)
        self.numerics = numerics
        self.benchmark_result: BenchmarkResult | None = None

    def launch(self, launched, args: tuple, kwargs: dict, grid: tuple):
        args, kwargs = bind_tensors(self, args, kwargs)
        args = tuple(_tensor_spec(a) for a in args)
        if self.numerics:
            program, outs = simulate(self, args, kwargs, grid)
        else:  # no source lines: the cost model does not read them, and a large trace is 10% faster without
            program = trace(self, *args, grid=grid, sources=False, max_instructions=COST_ONLY_MAX_INSTRUCTIONS,
                            **_trace_options(self), **kwargs)
            outs = UnsimulatedOutputs(self.__name__)
        target = _model_target(self)
        result = BenchmarkResult(program_cost(program, target, events=False).benchmark_us, program, target)
        launched.benchmark_result = self.benchmark_result = result
        return outs


#: Options of nki.benchmark / nki.baremetal that concern the device and its compiler (artifacts, flags): accepted
#: so that NKI code runs unmodified, with a warning that they do nothing here.
DEVICE_OPTIONS = ("save_neff_name", "save_trace_name", "additional_compile_opt", "artifacts_dir", "device_count",
                  "debug_kernel", "show_compiler_tb", "compiler_args")


def _device_options(api: str, options: dict) -> None:
    unknown = [k for k in options if k not in DEVICE_OPTIONS]
    if unknown:
        raise InvalidValueError(f"{api} has no option {unknown[0]!r} here; it takes warmup and iters (benchmark) and "
                                f"the device options {', '.join(DEVICE_OPTIONS)}, which do nothing on the simulator")
    if options:
        warnings.warn(f"{api}({', '.join(f'{k}=...' for k in options)}): no device or compiler here, so "
                      f"{'this option does' if len(options) == 1 else 'these options do'} nothing", stacklevel=3)


def _check_count(what: str, value) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0):
        raise InvalidValueError(f"nki.benchmark requires {what} to be a non-negative integer, got {value!r}")


def benchmark(kernel=None, warmup: int | None = None, iters: int | None = None, numerics: bool = False,
              **device_options):
    """``@nki.benchmark(warmup=5, iters=10)`` or ``nki.benchmark(kernel)``: a kernel that reports modelled latency,
    cost-only; ``numerics=True`` (not an NKI option) also simulates it and returns its outputs."""
    _check_count("warmup", warmup)
    _check_count("iters", iters)
    if not isinstance(numerics, bool):
        raise InvalidTypeError(f"nki.benchmark requires numerics to be True or False, got {numerics!r}")
    _device_options("nki.benchmark", device_options)
    def mark(k):
        return BenchmarkKernel(getattr(k, "func", k), getattr(k, "platform_target", None), numerics)
    return mark if kernel is None else mark(kernel)


def baremetal(kernel=None, **device_options):
    """``nki.baremetal(kernel)``: on a device, compile and run it; here, trace and simulate it (a jit kernel)."""
    _device_options("nki.baremetal", device_options)
    def mark(k):
        return Kernel(getattr(k, "func", k), getattr(k, "platform_target", None))
    return mark if kernel is None else mark(kernel)


def simulate_kernel(kernel, *args, **kwargs):
    """``nki.simulate_kernel(kernel, *args)``: run ``kernel`` (a jit kernel, a launch ``kernel[grid]``, or a plain
    kernel function) on numpy arrays on the simulator; returns its output array(s), also for a benchmark kernel."""
    if isinstance(kernel, Launch):
        return simulate(kernel.kernel, args, kwargs, kernel.grid)[1]
    if callable(kernel):
        return simulate(kernel, args, kwargs)[1]
    raise InvalidTypeError(f"nki.simulate_kernel requires a kernel, got {type(kernel).__name__}")


def simulated(kernel):
    """``nki.simulate(kernel)`` (NKI 0.3.0): the kernel as a callable, ``[grid]`` launchable too, that runs it on
    the simulator (numpy arrays in, numpy arrays out)."""
    if isinstance(kernel, BenchmarkKernel):
        return Kernel(kernel.func, kernel.platform_target)
    if isinstance(kernel, (Kernel, Launch)):
        return kernel
    if callable(kernel):
        return jit(kernel)
    raise InvalidTypeError(f"nki.simulate requires a kernel function, got {type(kernel).__name__}")

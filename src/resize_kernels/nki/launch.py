"""Kernels and their launches, as NKI has them: ``@jit``, SPMD grids (``kernel[grid]``), ``baremetal``,
``simulate_kernel``, ``benchmark``.

There is no device here: every launch traces the kernel into a Program and runs
it on the simulator. ``benchmark`` does the same and reports the cost model's
latency for the Program, which is modelled, not measured (machine/cost.py).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from ..errors import InvalidTypeError, InvalidValueError
from ..machine.cost import program_cost
from ..machine.isa import Program
from ..machine.simulator import run
from .tracer import trace, tracing

#: The cost model target ``benchmark`` reports for (NKI benchmarks on the device the code runs on).
BENCHMARK_TARGET = "trn1"


class Kernel:
    """A kernel function marked with ``@jit``: trace it, or call it on numpy arrays to simulate it."""

    def __init__(self, func):
        self.func = func
        functools.update_wrapper(self, func)

    def trace(self, *args, **kwargs) -> Program:
        return trace(self, *args, **kwargs)

    def __call__(self, *args, **kwargs):
        if tracing():
            return self.func(*args, **kwargs)  # a kernel calling a kernel: inline it
        program = trace(self, *args, **kwargs)
        outs = run(program, [a for a in args if isinstance(a, np.ndarray)])
        return outs[0] if len(outs) == 1 else tuple(outs)

    def __getitem__(self, grid):
        """``kernel[grid]``: an SPMD launch of ``grid`` instances."""
        return Launch(self, grid)

    def after_run(self, launched, program: Program) -> None:
        """What a launch of this kernel does after a run (a benchmark kernel records its modelled latency)."""


def jit(func) -> Kernel:
    """Mark a kernel function (``@nki.jit``)."""
    return Kernel(func)


def check_grid(grid) -> tuple:
    """A launch grid as a tuple of positive ints (``kernel[4]`` or ``kernel[2, 3]``)."""
    dims = grid if isinstance(grid, tuple) else (grid,)
    if not dims or any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1 for d in dims):
        raise InvalidValueError(f"an SPMD launch requires a grid of positive integers, kernel[4] or kernel[2, 3], "
                                f"got {grid!r}")
    return tuple(int(d) for d in dims)


def simulate(kernel, args, kwargs, grid: tuple = ()):
    """Trace ``kernel`` on ``args`` (numpy arrays and Python values) and run it: (Program, its output arrays)."""
    arrays = [a for a in args if hasattr(a, "shape") and hasattr(a, "dtype")]
    for a in arrays:
        if not isinstance(a, np.ndarray):
            raise InvalidTypeError(f"running {getattr(kernel, '__name__', 'a kernel')} requires numpy arrays as "
                                   f"tensors, got {type(a).__name__}; convert with np.asarray")
    program = trace(kernel, *args, grid=grid, **kwargs)
    outs = run(program, arrays)
    return program, (outs[0] if len(outs) == 1 else tuple(outs))


class Launch:
    """``kernel[grid]``: the kernel's SPMD instances, traced one after another into one Program and simulated."""

    def __init__(self, kernel: Kernel, grid):
        self.kernel, self.grid = kernel, check_grid(grid)

    def trace(self, *args, **kwargs) -> Program:
        return trace(self.kernel, *args, grid=self.grid, **kwargs)

    def __call__(self, *args, **kwargs):
        program, outs = simulate(self.kernel, args, kwargs, self.grid)
        self.kernel.after_run(self, program)
        return outs

    def __repr__(self) -> str:
        return f"{self.kernel.__name__}[{', '.join(map(str, self.grid))}]"


class BenchmarkResult:
    """``benchmark_result``: its ``nc_latency`` holds the modelled latency of the last run."""

    def __init__(self, latency_us: float, program: Program):
        self.nc_latency = ModelledLatency(latency_us)
        self.program = program


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


class BenchmarkKernel(Kernel):
    """``nki.benchmark(warmup=, iters=)(kernel)``: runs like the kernel, then sets ``benchmark_result`` to the cost
    model's latency for the Program it ran (modelled on BENCHMARK_TARGET; warmup and iters change nothing in a
    deterministic model and are checked only)."""

    def __call__(self, *args, **kwargs):
        program, outs = simulate(self, args, kwargs)
        self.after_run(self, program)
        return outs

    def after_run(self, launched, program: Program) -> None:
        launched.benchmark_result = BenchmarkResult(program_cost(program, BENCHMARK_TARGET).modelled_us, program)


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


def benchmark(kernel=None, warmup: int | None = None, iters: int | None = None, **device_options):
    """``@nki.benchmark(warmup=5, iters=10)`` or ``nki.benchmark(kernel)``: a kernel that reports modelled latency."""
    _check_count("warmup", warmup)
    _check_count("iters", iters)
    _device_options("nki.benchmark", device_options)
    if kernel is None:
        return lambda k: BenchmarkKernel(getattr(k, "func", k))
    return BenchmarkKernel(getattr(kernel, "func", kernel))


def baremetal(kernel=None, **device_options):
    """``nki.baremetal(kernel)``: on a device, compile and run it; here, trace and simulate it (a jit kernel)."""
    _device_options("nki.baremetal", device_options)
    if kernel is None:
        return lambda k: Kernel(getattr(k, "func", k))
    return Kernel(getattr(kernel, "func", kernel))


def simulate_kernel(kernel, *args, **kwargs):
    """``nki.simulate_kernel(kernel, *args)``: run ``kernel`` (a jit kernel, a launch ``kernel[grid]``, or a plain
    kernel function) on numpy arrays on the simulator; returns its output array(s)."""
    if isinstance(kernel, (Launch, Kernel)):
        return kernel(*args, **kwargs)
    if callable(kernel):
        return simulate(kernel, args, kwargs)[1]
    raise InvalidTypeError(f"nki.simulate_kernel requires a kernel, got {type(kernel).__name__}")

"""The classic NKI dialect: ``neuronxcc.nki`` (NKI Beta 1, Neuron SDK 2.27 and earlier), on the same machine.

Classic ``nisa`` calls return their result, a tile the call allocates
(``nisa.tensor_tensor(a, b, op=nl.multiply)``; PSUM for nc_matmul), and lower to
the dst-first calls of ``resize_kernels.nki.isa`` (NKI 0.3.0's ``nki.isa``), so
both dialects make the same instructions and the same modelled time. Its ``nl``
is the shared ``resize_kernels.nki.language`` where the two namespaces agree,
and its ``typing`` is the same module. ``install_aliases()`` maps
``neuronxcc.nki[.isa|.language|.typing]`` here and ``nki[...]`` to NKI 0.3.0's.

The launch decorators are the package's (``jit``, ``baremetal``, ``benchmark``,
``simulate_kernel``), with classic's forms: ``@nki.jit(mode="simulation")`` and
``@nki.profile(working_directory=...)``, which here run the kernel on the
simulator (there is no device to profile).
"""

from __future__ import annotations

import warnings

from .. import typing
from ..launch import Kernel, baremetal, benchmark, simulate_kernel
from ..launch import jit as _jit
from ..tensor import NkiTensor, TensorSpec
from ..tracer import trace
from . import compiler, isa, language
from ...errors import InvalidValueError

__all__ = ["compiler", "isa", "language", "typing", "jit", "baremetal", "benchmark", "profile", "simulate_kernel", "trace",
           "NkiTensor", "TensorSpec"]

#: ``nki.jit(mode=...)``'s modes (classic nki.jit): frameworks and devices, all of which run on the simulator here.
JIT_MODES = ("auto", "jax", "torchxla", "baremetal", "benchmark", "simulation", "trace")

#: nki.profile's options (classic nki.profile): where and how a device writes its profile; none applies here.
PROFILE_OPTIONS = ("working_directory", "save_neff_name", "save_trace_name", "additional_compile_opt", "overwrite",
                   "profile_nth")


def jit(func=None, mode: str = "auto", platform_target: str | None = None):
    """``@nki.jit``, ``@nki.jit(mode=...)`` or ``@nki.jit(platform_target="trn2")`` (classic): a kernel; every mode
    traces and simulates it here, and platform_target (as the SDK's own tests pass it) selects
    the SBUF it is traced with and the cost model ``benchmark`` reports."""
    if mode not in JIT_MODES:
        raise InvalidValueError(f"nki.jit requires mode to be one of {', '.join(JIT_MODES)}, got {mode!r}")
    mark = _jit(platform_target=platform_target)
    if func is None:
        return mark
    return mark(func)


def profile(func=None, **options):
    """``@nki.profile(working_directory=..., ...)``: on a device, run the kernel and write its profile; here, run it
    on the simulator (a warning says no profile is written; ``benchmark`` gives the modelled latency)."""
    unknown = [k for k in options if k not in PROFILE_OPTIONS]
    if unknown:
        raise InvalidValueError(f"nki.profile has no option {unknown[0]!r}; it takes {', '.join(PROFILE_OPTIONS)}")
    warnings.warn("nki.profile: no device here, so no profile is written; the kernel runs on the simulator "
                  "(nki.benchmark reports the cost model's latency)", stacklevel=2)
    if func is None:
        return lambda f: Kernel(getattr(f, "func", f))
    return Kernel(getattr(func, "func", func))

"""The kernel-writing API (NKI style): ``isa`` (nisa), ``language`` (nl), ``typing`` and the tracer.

Kernels are plain Python functions over tensor handles; calling one under
``trace`` runs its Python control flow once and records a Program. Two dialects
share the machine: this package is NKI 0.3.0's (``nki.*``: dst-first ``nisa``
calls), ``classic`` is NKI Beta 1's (``neuronxcc.nki.*``: value-returning
``nisa`` calls), whose calls lower to this package's. ``install_aliases()`` lets
NKI code import either by NKI's own names (``import neuronxcc.nki.language as
nl``, ``import nki.isa as nisa``) where NKI itself is not installed.
"""

import importlib.util
import sys
import types

from . import classic, isa, language, typing
from .tensor import NkiTensor, TensorSpec
from .launch import baremetal, benchmark, jit, simulate_kernel
from .launch import simulated as simulate
from .tracer import trace

__all__ = ["isa", "language", "typing", "classic", "NkiTensor", "TensorSpec", "jit", "trace", "baremetal",
           "benchmark", "simulate", "simulate_kernel", "install_aliases"]

#: The module names install_aliases registers, with the module of this package each stands for ("" = itself): the
#: classic namespace (NKI Beta 1, ``neuronxcc.nki``) is the classic dialect, the new one (``nki``) this package.
ALIASES = {"neuronxcc": None, "neuronxcc.nki": "classic", "neuronxcc.nki.language": "classic.language",
           "neuronxcc.nki.isa": "classic.isa", "neuronxcc.nki.typing": "classic.typing",
           "neuronxcc.nki.compiler": "classic.compiler",
           "nki": "", "nki.language": "language", "nki.isa": "isa", "nki.typing": "typing"}


def _importable(name: str) -> bool:
    """Whether ``name`` is a module Python can import: already loaded, or a module or regular package on the
    path. A bare directory (a namespace package, such as a project's ``tests/nki``) does not count."""
    if name in sys.modules:
        return True
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return False
    return spec is not None and spec.origin is not None


def install_aliases(replace: bool = False) -> list:
    """Register ``neuronxcc``, ``neuronxcc.nki[.language|.isa|.typing|.compiler]`` (the classic dialect) and
    ``nki[.language|.isa|.typing]`` (NKI 0.3.0's, this package) in sys.modules, so NKI kernels of either
    namespace import unmodified, side by side.

    A name that is already importable (a real Neuron installation, or an earlier call) is left alone unless
    ``replace``. Returns the names registered. Nothing is registered at import time; to undo, remove the
    returned names from sys.modules.
    """
    this = sys.modules[__name__]
    taken = set() if replace else {name for name in ALIASES if _importable(name)}
    registered = []
    for name, attr in ALIASES.items():
        if name in taken:
            continue
        if attr is None:  # the neuronxcc package: a namespace whose nki is the classic dialect
            module = types.ModuleType(name, "Alias of the neuronxcc package: its nki is resize_kernels.nki.classic.")
            module.__path__ = []
            module.nki = this.classic
        else:
            module = this
            for part in filter(None, attr.split(".")):
                module = getattr(module, part)
        sys.modules[name] = module
        registered.append(name)
    return registered

"""The kernel-writing API (NKI style): ``isa`` (nisa), ``language`` (nl) and the tracer.

Kernels are plain Python functions over tensor handles; calling one under
``trace`` runs its Python control flow once and records a Program.
"""

from . import isa, language
from .tensor import NkiTensor, TensorSpec
from .tracer import jit, trace

__all__ = ["isa", "language", "NkiTensor", "TensorSpec", "jit", "trace"]

"""``neuronxcc.nki.compiler`` (``ncc``): direct allocation of SBUF and PSUM tensors (nki.compiler, Neuron 2.26).

``ncc.sbuf.alloc(func)``, ``ncc.sbuf.mod_alloc(...)``, their PSUM forms and ``auto_alloc()`` (the same as
``buffer=nl.sbuf``/``nl.psum``), as ``buffer=`` of nl.ndarray; the placement rules are in
``resize_kernels.nki.allocation``. The page's other names (compiler directives: enable_stack_allocator,
force_auto_alloc, skip_middle_end_transformations, multi_buffer, no_reorder, allocation_scope) are not
simulated and say so.
"""

from __future__ import annotations

from types import SimpleNamespace

from .. import allocation
from .. import language as nl
from ...errors import not_simulated

sbuf = SimpleNamespace(alloc=lambda func: allocation.alloc("sbuf", func), mod_alloc=allocation.sbuf_mod_alloc,
                       auto_alloc=lambda: nl.sbuf)
psum = SimpleNamespace(alloc=lambda func: allocation.alloc("psum", func), mod_alloc=allocation.psum_mod_alloc,
                       auto_alloc=lambda: nl.psum)

__all__ = ["sbuf", "psum"]


def __getattr__(name: str):
    """A name of nki.compiler this module does not simulate: a clear error, never a silent stand-in."""
    raise not_simulated("ncc", name)

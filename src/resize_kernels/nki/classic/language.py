"""nl of the classic dialect (``neuronxcc.nki.language``, NKI Beta 1).

The classic namespace's nl is, name for name, what ``resize_kernels.nki.language``
already simulates (dtypes, buffers, ``nl.ndarray`` with block dimensions before
``nl.par_dim``, ``nl.arange``/``nl.mgrid`` and masks, ``nl.load``/``nl.store``,
elementwise ALU functions and activation functions returning new tiles,
reductions, ``nl.matmul``, ``nl.broadcast_to``, ``nl.loop_reduce``): this module
shares those functions rather than copying them, and states only where the
classic pages differ:

* ``nl.fp32`` holds FP32 constants (``nl.fp32.min``), a name of the classic pages only.
* ``nl.store`` of a PSUM tile copies it to SBUF first ("If the tile is in PSUM,
  an extra copy will be performed to move the tile to SBUF first", classic
  nki.language.store); NKI 0.3.0's nl.store takes an SBUF tile. A tile of
  another dtype is cast (classic DMAs cast), by that copy.
"""

from __future__ import annotations

import numpy as np

from .. import language as _shared
from ..language import *  # noqa: F401,F403 - the shared nl API, re-exported under the classic name
from ..language import __all__ as _SHARED
from ..index import IndexedAccess
from ..tensor import as_ap
from ...errors import not_simulated

__all__ = [*_SHARED, "fp32"]


class _FP32Constants:
    """nl.fp32 (classic "Constants"): ``nl.fp32.min``, "FP32 Bit pattern (0xff7fffff) representing the minimum (or
    maximum negative) FP32 value", as a Python float (so it serves as a fill value or an operand)."""

    min = float(np.finfo(np.float32).min)

    def __repr__(self) -> str:
        return "nl.fp32"


fp32 = _FP32Constants()


def _dtype(dst):
    """The dtype of an nl.store destination: an HBM tensor, a view of one, or one indexed with expressions."""
    if isinstance(dst, IndexedAccess):
        dst = dst.tensor
    return as_ap(dst).dtype


def store(dst, value, mask=None) -> None:
    """nl.store (classic): DMA a tile into ``dst`` (an HBM tensor, indexed); a PSUM tile is copied to SBUF first.
    A tile of another dtype than dst is cast ("A cast will happen if the src and dst have different dtype", classic
    nki.isa.dma_copy): the machine's DMA moves bits, so the cast is a tensor_copy before it."""
    src = as_ap(value)
    cast = src.dtype != _dtype(dst)
    if cast or (src.is_sbuf and src.tensor.memory == _shared.psum):
        value = _shared.copy(value, _dtype(dst), mask=mask) if cast else _shared.copy(value)
    _shared.store(dst, value, mask=mask)


def __getattr__(name: str):
    """An NKI name this module does not simulate: a clear error, never a silent stand-in."""
    raise not_simulated("nl", name)

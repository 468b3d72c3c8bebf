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
from ..tensor import as_ap
from ...errors import InvalidValueError, not_simulated
from ...machine.access import AccessPattern

__all__ = [*_SHARED, "fp32", "load_transpose2d"]


class _FP32Constants:
    """nl.fp32 (classic "Constants"): ``nl.fp32.min``, "FP32 Bit pattern (0xff7fffff) representing the minimum (or
    maximum negative) FP32 value", as a Python float (so it serves as a fill value or an operand)."""

    min = float(np.finfo(np.float32).min)

    def __repr__(self) -> str:
        return "nl.fp32"


fp32 = _FP32Constants()


def store(dst, value, mask=None) -> None:
    """nl.store (classic): DMA a tile into ``dst`` (an HBM tensor, indexed); a PSUM tile is copied to SBUF first.
    A tile of another dtype than dst is cast by the DMA ("A cast will happen if the src and dst have different
    dtype", classic nki.isa.dma_copy)."""
    src = as_ap(value)
    if src.is_sbuf and src.tensor.memory == _shared.psum:
        value = _shared.copy(value)
    _shared.store(dst, value, mask=mask)


def load_transpose2d(src, *, mask=None, dtype=None):
    """nl.load_transpose2d (classic): "Load a tensor from device memory (HBM) and 2D-transpose the data" into a new
    SBUF tile: a DMA reading the 2-D source with its two [step, num] pairs swapped (each element its own contiguous
    run, so its own descriptor in the cost model, as an element-wise strided DMA is); a mask selects the box of the
    source's grid; ``dtype`` casts (in the DMA)."""
    ap, grid, box = _shared._access("load_transpose2d", src, mask)
    if len(grid) != 2 or len(ap.pattern) != 2:
        raise InvalidValueError(f"nl.load_transpose2d requires a 2-D source, got shape {tuple(grid)}; index the "
                                f"tensor down to two axes first")
    if grid[1] > _shared.tile_size.pmax:
        raise InvalidValueError(f"nl.load_transpose2d's result has the source's second axis ({grid[1]}) as "
                                f"partitions, at most nl.tile_size.pmax = {_shared.tile_size.pmax}; load fewer columns")
    tile = _shared.ndarray((grid[1], grid[0]), ap.dtype if dtype is None else dtype, name="transposed")
    if box is not None and any(hi <= lo for lo, hi in box):
        _shared.fresh(tile, ())
        return tile
    flipped = AccessPattern(ap.tensor, (ap.pattern[1], ap.pattern[0]), ap.offset, row_size=ap.row_size)
    kept = None if box is None else [box[1], box[0]]
    _shared.nisa.dma_copy(dst=_shared.cut_box(tile, kept), src=flipped)
    _shared.fresh(tile, kept)
    return tile


def __getattr__(name: str):
    """An NKI name this module does not simulate: a clear error, never a silent stand-in."""
    raise not_simulated("nl", name)

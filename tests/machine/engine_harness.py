"""Hand-built Programs for the engine tests: tiles in SBUF and PSUM, inputs loaded and results stored by DMA.

The machine knows nothing of nki, so its tests build Programs from instruction
records directly: ``Build`` places tiles (PSUM tiles at bank boundaries, past the
SBUF, as a traced Program has them), loads numpy inputs into tiles, stores
results (a PSUM result through an SBUF copy: DMAs do not reach PSUM) and runs.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from resize_kernels.machine.access import AccessPattern
from resize_kernels.machine.isa import PSUM_BANK_BYTES, DmaCopy, Program, TensorCopy
from resize_kernels.machine.memory import DEFAULT_SBUF_PARTITION_BYTES, HbmTensor, SbufTile
from resize_kernels.machine.simulator import run


def whole(tile: SbufTile) -> AccessPattern:
    """The access pattern of a whole tile, its free axes as they are."""
    steps = [math.prod(tile.free_shape[k + 1:]) for k in range(len(tile.free_shape))]
    return AccessPattern(tile, ((tile.free_size, tile.partitions), *zip(steps, tile.free_shape)))


def hbm_whole(t: HbmTensor) -> AccessPattern:
    steps = [math.prod(t.shape[k + 1:]) for k in range(len(t.shape))]
    return AccessPattern(t, tuple(zip(steps, t.shape)))


class Build:
    """A Program under construction: ``tile``, ``load``, ``emit``, ``store``, then ``run(*arrays)``."""

    def __init__(self, name: str = "engines"):
        self.program = Program(name, sbuf_partition_bytes=DEFAULT_SBUF_PARTITION_BYTES)
        self.sbuf_top = self.psum_top = 0
        self.names = itertools.count()

    def tile(self, shape, dtype, memory: str = "sbuf") -> AccessPattern:
        shape = tuple(shape)
        nbytes = math.prod(shape[1:]) * np.dtype(dtype).itemsize
        if memory == "psum":  # each PSUM tile at a bank, as NKI places them
            address = DEFAULT_SBUF_PARTITION_BYTES + self.psum_top
            self.psum_top += math.ceil(nbytes / PSUM_BANK_BYTES) * PSUM_BANK_BYTES
        else:
            address = self.sbuf_top
            self.sbuf_top += math.ceil(nbytes / 64) * 64
        return whole(SbufTile(f"{memory}{next(self.names)}", shape[0], shape[1:], np.dtype(dtype), address, memory))

    def load(self, array: np.ndarray, memory: str = "sbuf") -> AccessPattern:
        """A tile holding ``array`` (an input of the Program), loaded by DMA (copied on to PSUM if asked)."""
        t = HbmTensor(f"in{len(self.program.inputs)}", array.shape, array.dtype, "input")
        self.program.inputs.append(t)
        tile = self.tile(array.shape, array.dtype)
        self.emit(DmaCopy(tile, hbm_whole(t)))
        if memory == "psum":
            on_psum = self.tile(array.shape, array.dtype, "psum")
            self.emit(TensorCopy(on_psum, tile))
            return on_psum
        return tile

    def store(self, ap: AccessPattern) -> None:
        """Make the tile ``ap`` an output of the Program (through an SBUF copy of its bits if it is in PSUM)."""
        if ap.tensor.memory == "psum":
            copy = self.tile(ap.shape, ap.dtype)
            self.emit(TensorCopy(copy, ap))
            ap = copy
        t = HbmTensor(f"out{len(self.program.outputs)}", ap.shape, ap.dtype, "output")
        self.program.outputs.append(t)
        self.emit(DmaCopy(hbm_whole(t), ap))

    def emit(self, inst):
        self.program.append(inst)
        return inst

    def finish(self) -> Program:
        p = self.program
        p.sbuf_high_water, p.psum_high_water = self.sbuf_top, self.psum_top
        return p

    def run(self, *arrays) -> list[np.ndarray]:
        return run(self.finish(), list(arrays))


def bits_equal(got: np.ndarray, want: np.ndarray) -> bool:
    """Same dtype, shape and bits (NaN payloads and -0.0 included)."""
    view = {1: np.uint8, 2: np.uint16, 4: np.uint32}
    return (got.dtype == want.dtype and got.shape == want.shape
            and np.array_equal(np.ascontiguousarray(got).view(view[got.dtype.itemsize]),
                               np.ascontiguousarray(want).view(view[want.dtype.itemsize])))

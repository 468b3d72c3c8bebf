"""Slots: each dx pixel's dy pixels along one axis, in order, padded with +0.0 to the longest run.

The gradient sums, for every dx pixel, its dy pixels from +0.0 in row-major
order. Along an axis where the map is irregular, a dx index's dy indices are no
affine function of it, so no access pattern reaches them; laid out in slots (dx
index j, slot m: its m-th dy index, or a zero slot past its count) by one
nc_n_gather, they are: slot m of every dx index is one strided pattern. A +0.0
term changes no such sum (a sum from +0.0 is never -0.0).
"""

from __future__ import annotations

import numpy as np

from ..nki import isa as nisa
from ..nki import language as nl

#: Elements per partition of one piece's slots (dx columns x slots x channels): 16 KiB float32 tiles, so that the
#: slots, their index tile, the dy span they come from and an accumulator fit SBUF whatever the shape.
SLOTS = 4096


class Members:
    """The dy indices of each dx index along one axis, in increasing order: member(i, k) is the k-th."""

    def __init__(self, src: np.ndarray, size: int):
        self.order = np.argsort(src, kind="stable")  # dy indices grouped by their dx index, each group increasing
        self.count = np.bincount(src, minlength=size)
        self.start = np.concatenate([[0], np.cumsum(self.count)[:-1]])
        self.most = int(self.count.max())

    def member(self, i: np.ndarray, k0: int, kn: int) -> np.ndarray:
        """(len(i), kn) int64: member k0 + k of each index in ``i``, -1 where it has fewer."""
        k = k0 + np.arange(kn)[None, :]
        has = k < self.count[i][:, None]
        at = np.where(has, self.start[i][:, None] + k, 0)
        return np.where(has, self.order[at], -1)


def slots_of(cols: Members, j0: int, jn: int, m0: int, mm: int):
    """(m0, d0, nd, members): dx columns j0 .. j0 + jn - 1's slots m0 .. m0 + mm - 1, their dy column span d0 ..
    d0 + nd - 1 and each slot's dy column (-1: none)."""
    members = cols.member(np.arange(j0, j0 + jn), m0, mm)
    taken = members[members >= 0]
    d0, d1 = (int(taken.min()), int(taken.max()) + 1) if taken.size else (0, 1)
    return m0, d0, d1 - d0, members


def index_tile(slots, ch: int, partitions: int):
    """A uint32 (partitions, jn * mm * ch) tile, the same on every partition: slot (j, m, channel) holds where the
    dy span tile has that dy column's channel, or the zero slot's."""
    _, d0, _, members = slots
    slot = np.where(members >= 0, members - d0 + 1, 0)  # (jn, mm): 0 is the zero slot
    row = (slot[:, :, None] * ch + np.arange(ch)[None, None, :]).reshape(1, -1)
    index = nl.ndarray((partitions, row.shape[1]), dtype=nl.uint32, name="slot_index")
    nisa.dma_copy(dst=index, src=nl.shared_constant(row, dtype=nl.uint32).ap(pattern=[[0, partitions],
                                                                                      [1, row.shape[1]]]))
    return index

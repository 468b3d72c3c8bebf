"""How the rows kernels schedule their moves: over the DMA engines, through a pool of buffers.

A move is one transfer's worth of a kernel's work (a block of rows, a column chunk, a channel chunk).
``balance`` puts each move on the 8-aligned partitions whose DMA engines (one per 8 partitions, cost.py D1)
carry the least so far; ``chunks_for_engines`` cuts rows into column chunks enough for the moves to reach every
engine; ``buffer_count`` sizes the pool of data buffers that lets loads run ahead of copies and stores (NKI's
multi-buffering). Which schedule a shape takes is the selection stage's call (``resize_kernels.select``).
"""

from __future__ import annotations

from ..intmath import ceil_div
from ..machine.cost import DMA_ENGINES, PARTITIONS_PER_DMA_ENGINE  # SBUF partitions one DMA engine serves (D1)
from .columns import TILE_BYTES


#: Blocks a kernel's tiles are grouped into at least, where there are tiles enough: with two buffers, block n + 1
#: loads while block n copies and stores.
MIN_BLOCKS = 3
#: Bytes per partition the rows kernels' data buffers (gathered sources and output tiles) take at most, and the
#: most buffers: more buffers let loads run further ahead of the copies and stores.
POOL_BYTES = 4 * TILE_BYTES
MAX_BUFFERS = 4
#: Times the rows kernels' moves cover every DMA engine at least, as far as rows allow column chunks of
#: MIN_CHUNK_BYTES (smaller ones pay a descriptor per few bytes): with few rows, a tile's moves cut into column
#: chunks spread over all engines instead of a few.
ENGINE_PASSES = 1
MIN_CHUNK_BYTES = 2048
#: The factors a kernel's schedule may put on its column chunks (more, smaller moves: they pipeline and spread,
#: at more instructions; 8 spreads a short last tile's moves over more DMA engines: 2x94x115x128 -> 67x87 float32,
#: rows, 82.3 us modelled at 4, 75.1 at 8).
CHUNK_FACTORS = (1, 2, 4, 8)
def chunks_for_engines(engine_slots: int, row_bytes: int, out_w: int, at_least: int = 1) -> int:
    """Column chunks for moves that cover ``engine_slots`` DMA engines per chunk to cover every engine
    ENGINE_PASSES times (``at_least`` in any case), as far as output rows of ``row_bytes`` allow chunks of
    MIN_CHUNK_BYTES."""
    wanted = max(at_least, ceil_div(ENGINE_PASSES * DMA_ENGINES, max(1, engine_slots)))
    return max(1, min(wanted, out_w, row_bytes // MIN_CHUNK_BYTES))


def buffer_count(move_bytes: int) -> int:
    """Data buffers of ``move_bytes`` per partition each (a move's sources and output tile): two at least."""
    return max(2, min(MAX_BUFFERS, POOL_BYTES // max(1, move_bytes)))


def balance(moves: list, pmax: int) -> tuple[list[int], int]:
    """The first partition of each move [(partitions, load per partition)], in order: the 8-aligned start whose DMA
    engines (one per 8 partitions, D1) carry the least load so far, then the least in all, then the lowest; and
    the busiest engine's load at the end."""
    per = PARTITIONS_PER_DMA_ENGINE
    load = [0] * (pmax // per)
    starts = []
    for p, w in moves:
        def after(q0):
            engines = range(q0 // per, (q0 + p - 1) // per + 1)
            return max(load[e] for e in engines), sum(load[e] for e in engines), q0
        q0 = min(after(q0) for q0 in range(0, pmax - p + 1, per))[2]
        for i in range(q0, q0 + p):
            load[i // per] += w
        starts.append(q0)
    return starts, max(load)

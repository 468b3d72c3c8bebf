"""resize_nearest_row_reuse_kernel: gather each source row once, store it to every output row that repeats it.

Output rows that copy one source row are identical, and every row shares one
column map. So partitions hold output columns (the only irregular axis left,
handled by the gather's vector offset), and the free dimension holds batches,
source rows and channels: one gather reads, for a run of equally spaced source
rows and several batches at once, exactly the pixels the output needs, each
once; one store per run of equally repeated rows writes them to all their
output rows, repeating each row with a step-0 pair.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from .. import contract, semantics
from ..nki import isa as nisa
from ..nki import language as nl
from .dma import CHUNK_BYTES, broadcast_pairs, channel_chunk, partition_pieces
from .helpers import source_columns
from .plan import plan_resize, split_by
from .registration import FORWARD, KernelRecord, register

def _equally_spaced(group, run) -> bool:
    return len(group) == 1 or run.src - group[-1].src == group[1].src - group[0].src


def resize_nearest_row_reuse_kernel(data_tensor, out_shape, convention=None):
    """Nearest-neighbour resize by one gather per distinct source row group and broadcast stores.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved).
    Constraints: the resize contract (in_b == out_b, in_c == out_c, heights and
    widths below 2**24, fewer than 2**31 elements per tensor).
    Tiling: output columns on partitions, 128 per column tile; the source
    column of every column tile comes from one index graph of 11 instructions
    (column tiles along the free dimension). The height's map is split at trace
    time into groups of equally spaced distinct source rows; a data tile
    (columns, batches, rows, channel chunk) of at most 64 KiB per partition is
    filled by gathers, whose row and batch offsets are trace-time integers in
    their access pattern, and emptied by one store per run of rows that repeat
    equally often (each row k times through a step-0 pair); both are cut into
    ranges of partitions (``partition_pieces``) so that they spread over the DMA
    queues. ``convention`` (``semantics.IndexConvention``; None: the compiler's)
    may be any: both maps are fixed at trace time, the width's as a constant
    table (``helpers.source_columns``).
    """
    in_shape, out_shape = contract.resize_shapes("resize_nearest_row_reuse_kernel", data_tensor.shape, out_shape)
    plan = plan_resize(in_shape, out_shape, convention or semantics.COMPILER)
    in_b, in_h, in_w, in_c = in_shape
    out_b, out_h, out_w, out_c = out_shape
    out_tensor = nl.ndarray(out_shape, dtype=data_tensor.dtype, buffer=nl.shared_hbm, name="out_tensor")
    data_pixels = data_tensor.reshape((in_b * in_h * in_w, in_c))  # the gather indexes pixels
    item = data_tensor.dtype.itemsize
    pmax = nl.tile_size.pmax
    src_w = source_columns(plan.w, tiles=math.ceil(out_w / pmax))
    tiles = list(_data_tiles(plan, item))
    for i in nl.affine_range(len(tiles)):
        t, n, b0, bb, rows, step, c0, cc, pieces, stores = tiles[i]
        free = bb * len(rows) * cc
        tile = nl.ndarray((n, bb, len(rows), cc), dtype=data_tensor.dtype, name="rows_sbuf")
        for p0, p1 in pieces:
            nisa.dma_copy(dst=tile[p0:p1], src=data_pixels.ap(
                pattern=[[in_c, p1 - p0],  # partitions: output columns, rows from the index tile
                         [in_h * in_w * in_c, bb],  # batches b0 ..
                         [step * in_w * in_c, len(rows)],  # the group's source rows, step apart
                         [1, cc]],  # channels c0 ..
                offset=((b0 * in_h + rows[0].src) * in_w) * in_c + c0,
                vector_offset=src_w[p0:p1, t:t + 1], indirect_dim=0))
        j = 0
        for same in stores:
            k = same[0].repeat
            for p0, p1 in pieces:
                src, dst = broadcast_pairs(
                    [[free, p1 - p0],  # SBUF: partitions (output columns)
                     [len(rows) * cc, bb],  # batches
                     [cc, len(same)],  # the run's source rows
                     [0, k],  # each row k times: step 0 repeats it
                     [1, cc]],  # channels
                    [[out_c, p1 - p0],  # HBM: output columns
                     [out_h * out_w * out_c, bb],  # batches
                     [k * out_w * out_c, len(same)],  # each source row's block of k output rows
                     [out_w * out_c, k],  # the k output rows of the block
                     [1, cc]])  # channels
                first = (b0 * out_h + same[0].first) * out_w + t * pmax + p0
                nisa.dma_copy(dst=out_tensor.ap(pattern=dst, offset=first * out_c + c0),
                              src=tile.ap(pattern=src, offset=p0 * free + j * cc))
            j += len(same)
    return out_tensor


def _data_tiles(plan, item: int):
    """The kernel's data tiles, in order: (column tile t, its n columns, batches b0 and bb, the source rows (a run
    list, ``step`` apart), channels c0 and cc, the partition ranges of its DMAs, its stores' runs of rows that
    repeat equally often)."""
    in_b, _, _, in_c = plan.in_shape
    out_w = plan.w.out_size
    chunk = channel_chunk(in_c, item)
    units = max(1, CHUNK_BYTES // (chunk * item))  # (batch, row) pairs per data tile
    pmax = nl.tile_size.pmax
    runs = plan.h.runs
    srcs, repeats = _run_columns(plan.h)
    stores_of = _equal_repeats(runs, repeats)
    for a, z in _equally_spaced_groups(runs, srcs):
        size = z - a
        step = runs[a + 1].src - runs[a].src if size > 1 else 1
        nr = min(size, units)
        nb = min(in_b, max(1, units // nr))
        # the group's row blocks, made once (the same for every column tile and batch): tuples, as the tiles may
        # be shared through _tiles_within
        blocks = [(tuple(runs[r0:min(r0 + nr, z)]), stores_of(r0, min(r0 + nr, z))) for r0 in range(a, z, nr)]
        for t in range(math.ceil(out_w / pmax)):
            n = min(pmax, out_w - t * pmax)
            for b0 in range(0, in_b, nb):
                bb = min(nb, in_b - b0)
                for rows, stores in blocks:
                    for c0 in range(0, in_c, chunk):
                        cc = min(chunk, in_c - c0)
                        pieces = partition_pieces(n, bb * len(rows) * cc * item)
                        yield t, n, b0, bb, rows, step, c0, cc, pieces, stores


#: Runs past which the groups are found with numpy (a few calls) rather than a Python step per run.
_NUMPY_RUNS = 32


def _run_columns(axis) -> tuple:
    """(source, repeat) of each of ``axis.runs``, as numpy arrays (None for a short map: Python walks it), made
    from the map ``axis.src`` in a few numpy calls rather than a step per run."""
    if len(axis.runs) <= _NUMPY_RUNS:
        return None, None
    src = axis.src
    starts = np.flatnonzero(src[1:] != src[:-1]) + 1  # where a run starts, past the first
    ends = np.append(starts, len(src))
    return np.append(src[0], src[starts]), ends - np.append(0, starts)


def _equally_spaced_groups(runs, srcs=None) -> list[tuple[int, int]]:
    """``split_by(runs, _equally_spaced)`` as index ranges [(a, z)]: a group takes its first two runs, then each
    next run whose source row is as far from the one before as the group's second is from its first.

    With ``srcs`` (the runs' sources, numpy) and d[k] = srcs[k + 1] - srcs[k], the group from run a ends at run
    m, the first k > a where d[k] differs from d[k - 1] (the last run if none): so only the points where d
    changes are visited, not every run.
    """
    groups, a, n = [], 0, len(runs)
    if srcs is None:
        for group in split_by(runs, _equally_spaced):
            groups.append((a, a + len(group)))
            a += len(group)
        return groups
    d = srcs[1:] - srcs[:-1]
    changes = (np.flatnonzero(d[1:] != d[:-1]) + 1).tolist()  # the k where d[k] != d[k - 1]
    while a < n:
        i = bisect.bisect_right(changes, a)
        m = changes[i] if i < len(changes) else n - 1
        groups.append((a, m + 1))
        a = m + 1
    return groups


def _equal_repeats(runs, repeats=None):
    """``stores(a, z)``: runs a .. z - 1 cut into runs of rows that repeat equally often, as a tuple of tuples
    (``split_by(rows, lambda g, run: run.repeat == g[0].repeat)``); with ``repeats`` (the runs' repeats, numpy)
    from the points where the repeat changes."""
    if repeats is None:
        def stores(a: int, z: int) -> tuple:
            return tuple(map(tuple, split_by(runs[a:z], lambda g, run: run.repeat == g[0].repeat)))
        return stores
    changes = (np.flatnonzero(repeats[1:] != repeats[:-1]) + 1).tolist()  # the k where repeat[k] != repeat[k - 1]

    def stores(a: int, z: int) -> tuple:
        cuts = [a, *changes[bisect.bisect_right(changes, a):bisect.bisect_left(changes, z)], z]
        return tuple(tuple(runs[u:v]) for u, v in zip(cuts, cuts[1:]))
    return stores


register(KernelRecord("rowreuse", FORWARD, resize_nearest_row_reuse_kernel, rank=5, conventions=True))

"""resize_nearest_source_rows_kernel: source rows on partitions, each loaded once, its output rows written by stores.

Where the rows kernel (rows.py) gathers each output row's source row, this loads the height's runs of equal
source row (one per partition, by direct DMAs: no index tile, no descriptors for GpSimd to write) and repeats
them in the stores' access patterns, so that an upsampled height reads each source row once. Its columns are
the rows kernels' (columns.py), its moves scheduled as theirs (schedule.py).
"""

from __future__ import annotations

import bisect
import functools
import operator
from typing import NamedTuple

from .. import contract
from ..errors import InvalidValueError
from ..intmath import ceil_div
from ..nki import isa as nisa
from ..nki import language as nl
from .columns import column_index_tile, column_plan, expand_columns, tile_elements
from .dma import broadcast_pairs
from .plan import ColumnGroup, column_groups, plan_resize
from .registration import FORWARD, KernelRecord, register
from .schedule import CHUNK_FACTORS, MIN_BLOCKS, balance, buffer_count


def resize_nearest_source_rows_kernel(data_tensor, out_shape, schedule=None):
    """Nearest-neighbour resize with source rows on partitions: each loaded once, its output rows written by stores.

    Layouts, dtypes and constraints: those of ``resize_nearest_rows_kernel``, and
    column chunks that read the span of their source columns (``_spanned``:
    upsamples and shallow downsamples) or whose columns are each their own
    source (deeper downsamples: loaded by column group straight into output
    order); else InvalidValueError (the rows kernel applies). Where rows puts output rows on partitions (a gather of each one's
    source row, its descriptors written by GpSimd, and the columns repeated once
    per output row), this puts the map's runs of equal source row on partitions,
    in balanced tiles of up to 128: a tile's source rows come in direct loads of
    arithmetic progressions of rows (one for an upsample, whose rows are
    consecutive; no index tile, no descriptors to write), and its runs, cut into
    groups with one source step, one output step and one repeat
    (``plan.column_groups`` on rows), go out in one store per group whose SBUF
    side repeats the partition with a step-0 pair. Narrow pixels have their
    columns repeated on chip once per source row, as rows does it (copies per
    column group, or nc_n_gather); wide pixels (``columns.repeats_in_stores``) in the
    stores too, one per row group and column group, each repeating the pixel
    with step-0 pairs. Moves (batch, tile, column chunk, channel chunk) number
    at least MIN_BLOCKS, times ``schedule``, the chunk factor (None: 1; the
    selection stage compares them);
    each takes the 8-aligned partitions whose DMA engines carry the least so far,
    and the loads run ahead of copies and stores in a pool of buffers, as in the
    rows kernel. An upsample of the height (RGB images, masks, tall outputs, the
    SD2 UNet's) repeats fewer rows: each source row is read once.
    """
    name = "resize_nearest_source_rows_kernel"
    in_shape, out_shape = contract.resize_shapes(name, data_tensor.shape, out_shape)
    plan = plan_resize(in_shape, out_shape)
    in_b, in_h, in_w, in_c = in_shape
    out_b, out_h, out_w, _ = out_shape
    dtype, item = data_tensor.dtype, data_tensor.dtype.itemsize
    factor = 1 if schedule is None else schedule
    if factor not in CHUNK_FACTORS:
        raise InvalidValueError(f"{name} requires a schedule (chunk factor) in {CHUNK_FACTORS}, got {schedule!r}")
    columns = _source_row_columns(plan, item, factor)
    if columns is None:
        raise InvalidValueError(f"{name} requires {_COLUMNS}, got {in_shape} -> {out_shape} {dtype}; "
                                f"use kernel='rows'")
    cc, wide, chunks = columns
    out_tensor = nl.ndarray(out_shape, dtype=dtype, buffer=nl.shared_hbm, name="out_tensor")
    data_rows = data_tensor.reshape((in_b * in_h, in_w * in_c))  # a source row per index
    row_in, row_out = in_w * in_c, out_w * in_c
    tiles = _source_row_tiles(plan)
    moves = [(b, t, k, c0) for b in range(in_b) for t in range(len(tiles)) for k in range(len(chunks))
             for c0 in range(0, in_c, cc)]
    out_rows = [sum(s.group.count * s.group.repeat for s in tile.stores) for tile in tiles]  # output rows per tile
    spans = [_loaded_columns(chunk) for chunk in chunks]
    # each move on the 8-aligned partitions whose DMA engines carry the least so far: its loads and its stores
    starts, _ = balance([(tiles[t].partitions, (spans[k] + chunks[k].nj * out_rows[t] // tiles[t].partitions)
                          * min(cc, in_c - c0))
                       for _, t, k, c0 in moves], nl.tile_size.pmax)
    top = max(q0 + tiles[t].partitions for q0, (_, t, _, _) in zip(starts, moves))
    column_index = {k: column_index_tile(plan, chunk.j0, chunk.nj, chunk.runs[0].src, in_c, top)
                    for k, chunk in enumerate(chunks) if chunk.groups is None}

    src_elements = max(spans[k] * min(cc, in_c - c0) for _, _, k, c0 in moves)
    out_elements = max([chunks[k].nj * min(cc, in_c - c0) for _, _, k, c0 in moves
                        if not wide and not _in_order(chunks[k])] or [0])
    buffers = buffer_count((src_elements + out_elements) * item)  # taken in turn, as in the rows kernel
    pmax = nl.tile_size.pmax
    src_pool = [nl.ndarray((pmax, src_elements), dtype=dtype, name="row_sources") for _ in range(buffers)]
    out_pool = [nl.ndarray((pmax, out_elements), dtype=dtype, name="row_out") for _ in range(buffers)
                ] if out_elements else [None] * buffers

    def load(n):
        """Move n's source rows, chunk columns and channels, to partitions q0 .. q0 + p - 1 of its buffer."""
        (b, t, k, c0), q0 = moves[n], starts[n]
        sources = src_pool[n % buffers]
        part, s0, ns, c = tile_elements(sources), chunks[k].runs[0].src, spans[k], min(cc, in_c - c0)
        chunk = chunks[k]
        for q, step, count, src0, src_step in tiles[t].loads:
            if chunk.spanned:
                # load: [src_step * row_in, count] source rows in arithmetic progression (consecutive ones for an
                # upsample); [in_c, ns] the span's columns from s0; [1, c] channels. SBUF: partitions q0 + q,
                # q0 + q + step, ..
                nisa.dma_copy(dst=sources.ap(pattern=[[step * part, count], [c, ns], [1, c]],
                                             offset=(q0 + q) * part),
                              src=data_rows.ap(pattern=[[src_step * row_in, count], [in_c, ns], [1, c]],
                                               offset=(b * in_h + src0) * row_in + s0 * in_c + c0))
                continue
            for g in chunk.groups:  # a deep downsample of the width: each column group straight into output order
                # load: [src_step * row_in, count] the rows; [g.src_step * in_c, g.count] the group's source
                # columns; [1, c] channels. SBUF: partitions q0 + q, q0 + q + step, ..; [g.out_step * c, g.count]
                # the group's output columns in the chunk
                nisa.dma_copy(dst=sources.ap(pattern=[[step * part, count], [g.out_step * c, g.count], [1, c]],
                                             offset=(q0 + q) * part + (g.out0 - chunk.j0) * c),
                              src=data_rows.ap(pattern=[[src_step * row_in, count], [g.src_step * in_c, g.count],
                                                        [1, c]],
                                               offset=(b * in_h + src0) * row_in + g.src0 * in_c + c0))

    # software-pipelined as in the rows kernel: loads run buffers - 1 moves ahead of the copies and stores
    for n in range(min(buffers - 1, len(moves))):
        load(n)
    for n in nl.static_range(len(moves)):
        if n + buffers - 1 < len(moves):
            load(n + buffers - 1)
        (b, t, k, c0), q0 = moves[n], starts[n]
        p, groups = tiles[t].partitions, tiles[t].stores
        chunk, c, sources = chunks[k], min(cc, in_c - c0), src_pool[n % buffers]
        s0, ns, nj, j0 = chunk.runs[0].src, spans[k], chunk.nj, chunk.j0
        if wide and not _in_order(chunk):  # repeat rows and columns in the stores' SBUF-side patterns
            part = tile_elements(sources)
            for q, step, g in groups:
                for cg in chunk.groups:
                    col_step = cg.src_step * c if cg.count > 1 else 0
                    src, dst = broadcast_pairs(
                        [[step * part, g.count],  # SBUF: the row group's partitions q0 + q, q0 + q + step, ..
                         [0, g.repeat],  # each repeated: step 0
                         [col_step, cg.count],  # the column group's source columns
                         [0, cg.repeat],  # each repeated: step 0
                         [1, c]],  # channels
                        [[g.out_step * row_out, g.count],  # HBM: the row group's first output rows
                         [row_out, g.repeat],  # their repeats, adjacent
                         [cg.out_step * in_c, cg.count],  # the column group's first output columns
                         [in_c, cg.repeat],  # their repeats, adjacent
                         [1, c]])  # channels from c0
                    nisa.dma_copy(dst=out_tensor.ap(pattern=dst, offset=(b * out_h + g.out0) * row_out
                                                    + cg.out0 * in_c + c0),
                                  src=sources.ap(pattern=src, offset=(q0 + q) * part + (cg.src0 - s0) * c))
            continue
        if _in_order(chunk):  # the sources are the output columns
            expanded = sources
        else:
            expanded = out_pool[n % buffers]
            expand_columns(sources, expanded, q0, p, 1, ns, chunk, c, chunk.groups, lambda src, s0=s0: src - s0,
                            column_index.get(k))
        part = tile_elements(expanded)
        cols = [[in_c, nj], [1, c]] if c < in_c else [[1, nj * c]]
        sbuf_cols = [[c, nj], [1, c]] if c < in_c else [[1, nj * c]]
        for q, step, g in groups:
            # store: partitions q0 + q, q0 + q + step, .. ([0, repeat]: each repeat times) -> output rows
            # out0 + j * out_step + r ([row_out, repeat]); the chunk's columns and channels
            src, dst = broadcast_pairs([[step * part, g.count], [0, g.repeat], *sbuf_cols],
                                       [[g.out_step * row_out, g.count], [row_out, g.repeat], *cols])
            nisa.dma_copy(dst=out_tensor.ap(pattern=dst, offset=(b * out_h + g.out0) * row_out + j0 * in_c + c0),
                          src=expanded.ap(pattern=src, offset=(q0 + q) * part))
    return out_tensor


def _source_row_columns(plan, item: int, factor: int = 1):
    """(channels per chunk, wide pixels?, column chunks) of the source-rows kernel, or None where it does not
    apply: a chunk whose columns are neither read as a span nor each its own source (a clamp at the far end)."""
    cc, wide, chunks, _ = column_plan(plan, item, _source_row_chunks(plan) * factor, _tile_runs(plan))
    return None if not all(chunk.spanned or chunk.shrink for chunk in chunks) else (cc, wide, chunks)


def _loaded_columns(chunk) -> int:
    """Columns a partition's row of the chunk's loaded tile holds: the span of its source columns, or its output
    columns in order (a deep downsample: each its own source, loaded by column group)."""
    return chunk.runs[-1].src - chunk.runs[0].src + 1 if chunk.spanned else chunk.nj


def _in_order(chunk) -> bool:
    """Whether the loaded tile holds the chunk's output columns in order (no copies, whole rows stored)."""
    return chunk.shrink and (chunk.contiguous or not chunk.spanned)


def _tile_runs(plan) -> int:
    """Runs (partitions) per tile: balanced tiles of up to 128, no short last tile on few DMA engines."""
    runs, pmax = len(plan.h.runs), nl.tile_size.pmax
    return ceil_div(runs, ceil_div(runs, pmax))


def _source_row_chunks(plan) -> int:
    """Column chunks the source-rows kernel cuts rows into at least: enough for MIN_BLOCKS pieces of work (tiles
    of runs x chunks) over all batches, so that loads, copies and stores of successive pieces overlap."""
    tiles = plan.in_shape[0] * ceil_div(len(plan.h.runs), nl.tile_size.pmax)
    blocks = ceil_div(MIN_BLOCKS, tiles)
    return blocks


class _Store(NamedTuple):
    """A row group (a ColumnGroup of rows) whose runs sit at partitions q, q + step, ..: one store."""

    q: int
    step: int
    group: ColumnGroup


class _Load(NamedTuple):
    """Source rows src0, src0 + src_step, .. (count of them) into partitions q, q + step, ..: one load."""

    q: int
    step: int
    count: int
    src0: int
    src_step: int


class _Tile(NamedTuple):
    """One tile of the height's runs, a run per partition: its stores and its loads."""

    partitions: int
    stores: list
    loads: list


@functools.lru_cache(maxsize=8)
def _source_row_tiles(plan) -> list[_Tile]:
    """The height's runs in tiles of up to 128 (one per partition). A tile's loads are its source rows cut into
    arithmetic progressions of consecutive partitions (one for an upsample, whose rows are consecutive), or its
    stores' row groups where they are fewer (periodic maps, 0.7x say).

    Memoized (plans are immutable, one per shape): the traces of one shape's schedule settings ask for the same
    tiles; a few entries suffice.
    """
    runs = plan.h.runs
    size = _tile_runs(plan)
    srcs = [r.src for r in runs]
    # the runs k where the step from the run before differs from the step before it: where a progression may end
    changes = [k for k in range(2, len(srcs)) if srcs[k] - srcs[k - 1] != srcs[k - 1] - srcs[k - 2]]
    tiles = []
    for i in range(0, len(runs), size):
        tile, end = runs[i:i + size], min(i + size, len(runs))

        def at(first, tile=tile):  # the tile's partition holding the run of output row ``first``
            return bisect.bisect_left(tile, first, key=_first)
        stores = [_Store(at(g.out0), at(g.out0 + g.out_step) - at(g.out0) if g.count > 1 else 1, g)
                  for g in column_groups(tile)]
        loads, a = [], i
        while a < end:  # a progression takes its first two runs, then each run as far from the one before
            k = bisect.bisect_right(changes, a + 1)
            m = min(changes[k] if k < len(changes) else end, end) - 1  # its last run
            loads.append(_Load(a - i, 1, m + 1 - a, srcs[a], srcs[a + 1] - srcs[a] if m > a else 1))
            a = m + 1
        if len(stores) < len(loads):  # a periodic map (a downsample by 0.7, say): load by the stores' row groups
            loads = [_Load(s.q, s.step, s.group.count, s.group.src0, s.group.src_step) for s in stores]
        tiles.append(_Tile(len(tile), stores, loads))
    return tiles


_first = operator.attrgetter("first")


#: What the kernel requires of a shape's column chunks.
_COLUMNS = ("column chunks that read the span of their source columns or whose columns are each their own source "
            "(an upsample or a downsample of the width)")


def _applies(plan, item: int) -> str | None:
    """Why the kernel does not take the shape (at chunk factor 1), or None."""
    return None if _source_row_columns(plan, item) is not None else f"requires {_COLUMNS}"


register(KernelRecord("sourcerows", FORWARD, resize_nearest_source_rows_kernel, rank=2, applies=_applies,
                      settings=lambda plan, item: (CHUNK_FACTORS,)))

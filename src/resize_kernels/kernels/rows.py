"""resize_nearest_rows_kernel: whole output rows on partitions, source rows gathered once, columns by group.

A partition holds one output row (flat over batches, up to 128 per tile), so
every transfer spans the tile's partitions and with them all 16 DMA engines,
and every descriptor is a run of columns times channels, not one pixel. Per tile
and column chunk: one gather brings each partition its source row's needed
columns (the rows' map is the index tile; the columns' map is known at trace
time, so it is in the access patterns); the width map's column groups
(``plan.column_groups``: runs of columns with one repeat and one stride, a
handful for most ratios) then repeat the columns, either in the store's access
pattern (a step-0 pair; wide pixels, where a pixel is a good descriptor) or by
vector-engine and GpSimd copies into an output tile stored as whole rows
(narrow pixels).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import contract, semantics
from ..errors import InvalidValueError
from ..intmath import ceil_div
from ..machine.cost import PARTITIONS_PER_DMA_ENGINE  # SBUF partitions one DMA engine serves (D1)
from ..nki import isa as nisa
from ..nki import language as nl
from .columns import column_index_tile, column_plan, expand_columns, tile_elements
from .dma import broadcast_pairs
from .helpers import floor_by_cast, scaled_floor, table_tile, tile_rows_and_columns
from .plan import column_groups, plan_resize
from .registration import FORWARD, KernelRecord, register
from .schedule import CHUNK_FACTORS, MIN_BLOCKS, balance, buffer_count, chunks_for_engines


def resize_nearest_rows_kernel(data_tensor, out_shape, schedule=None, convention=None):
    """Nearest-neighbour resize with output rows on partitions, moving whole rows.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved,
    by DMAs and bit-exact tensor_copy).
    Constraints: the resize contract (in_b == out_b, in_c == out_c, sizes below
    2**24, fewer than 2**31 elements per tensor).
    Tiling: partitions are output rows: whole batches per tile when out_h <= 64
    (their source rows from one index tile built once), else tiles of flat rows
    (batch * out_h + row, so batches share tiles; tile t's source rows in column
    t of an index tile), "balanced" (equal tiles, as few as hold the rows, two at
    least) or "whole" (tiles of 128, then the rest in pieces of at most 64, whose
    moves spread over the DMA engines). A tile holds up to TILE_BYTES per
    partition (WIDE_TILE_BYTES for wide pixels, whose one source tile needs no
    output tile beside it): several output rows per partition when rows are
    short (at least three blocks where there are tiles enough, so that they
    pipeline), a chunk of equal-width column ranges (chunks enough for the moves
    to cover every DMA engine, times the schedule's chunk factor), and channel
    chunks for pixels wider than that.
    Schedule: each move (block, column chunk, channel chunk) takes the 8-aligned
    partitions whose DMA engines carry the least so far (``balance``; the index
    tile copied or built there), and the gathers run ahead of the copies and
    stores in a pool of buffers (software pipelining). ``schedule`` is (tiling,
    chunk factor) (None: DEFAULT_SCHEDULE; the selection stage compares them).
    ``convention`` (``semantics.IndexConvention``; None: the compiler's map,
    computed on chip) may be any other: its index tiles are then tables fixed
    at trace time, loaded from shared constants (``helpers.table_tile``).
    Per move: one indirect gather per row of the span of the chunk's source
    columns (where it reads at most twice the columns needed, or its extra bytes
    cost less than the descriptors they save: ``_spanned``; else one gather per
    column group, straight into output order), then a store per column group
    whose SBUF side repeats columns with step-0 pairs (``columns.repeats_in_stores``: pixels of 512 B or more,
    or few rows per tile),
    or, into an output tile stored as whole row chunks, a tensor_copy per column
    group or one nc_n_gather per row (chunks of many groups, ``_most_copies``).
    """
    name = "resize_nearest_rows_kernel"
    in_shape, out_shape = contract.resize_shapes(name, data_tensor.shape, out_shape)
    plan = plan_resize(in_shape, out_shape, convention or semantics.COMPILER)
    in_b, in_h, in_w, in_c = in_shape
    out_b, out_h, out_w, _ = out_shape
    dtype, item = data_tensor.dtype, data_tensor.dtype.itemsize
    src_h, tables = plan.h.src, not plan.h.on_chip  # tables: a map fixed at trace time, not computed on chip
    if schedule is None:
        schedule = DEFAULT_SCHEDULE
    if not (isinstance(schedule, tuple) and len(schedule) == 2 and schedule[0] in TILINGS
            and schedule[1] in CHUNK_FACTORS):
        raise InvalidValueError(f"{name} requires a schedule (tiling, chunk factor) in {TILINGS} x {CHUNK_FACTORS}, "
                                f"got {schedule!r}")
    tiling, chunk_factor = schedule
    out_tensor = nl.ndarray(out_shape, dtype=dtype, buffer=nl.shared_hbm, name="out_tensor")
    data_rows = data_tensor.reshape((in_b * in_h, in_w * in_c))  # a source row per index
    row_in, row_out = in_w * in_c, out_w * in_c

    cc, wide, chunks, fit = column_plan(plan, item, 1, _tile_rows(plan))
    pmax = nl.tile_size.pmax
    blocks = []  # blocks of tiles (_Block)

    def add(p, k_rows, index_of, base_rows, out_row, k_stride):
        blocks.append(_Block(p, k_rows, index_of, tuple(base_rows), out_row, k_stride))

    def plan_moves(blocks):
        """The blocks' column plan, moves (one per block, column chunk and channel chunk), their first partitions
        and the load of the busiest DMA engine: column chunks enough for the moves to cover every DMA engine
        ENGINE_PASSES times (narrower chunks take less SBUF, so the blocks' rows per partition still fit), each
        move on the 8-aligned partitions whose DMA engines carry the least so far (one engine per 8 partitions)."""
        b_cc, b_wide, b_chunks = cc, wide, chunks
        wanted = chunks_for_engines(sum(ceil_div(blk.p, PARTITIONS_PER_DMA_ENGINE) for blk in blocks), row_out * item,
                                     out_w, max(len(chunks), 1) * chunk_factor)
        if wanted > len(chunks):
            b_cc, b_wide, b_chunks, _ = column_plan(plan, item, wanted, _tile_rows(plan))
        moves = [_Move(blk, k, c0) for blk in blocks for k in range(len(b_chunks))
                 for c0 in range(0, in_c, b_cc)]
        starts, load = balance([(blk.p, blk.k_rows * _chunk_elements(b_chunks[k], min(b_cc, in_c - c0)))
                                 for blk, k, c0 in moves], pmax)
        return b_cc, b_wide, b_chunks, moves, starts, load

    if out_h <= pmax // 2 and (pmax // out_h) * in_h < semantics.MAX_DIM:
        batches = min(out_b, pmax // out_h)  # whole batches per tile: one index tile for all
        rows = batches * out_h
        i = np.arange(rows)
        if tables:  # partition i: row i % out_h of batch i // out_h, source row batch * in_h + src_h(row)
            index = table_tile((i // out_h * in_h + src_h[i % out_h])[:, None], "row_index", partitions=pmax)
        elif batches == 1:  # partition i: row i, source row src_h(i)
            index = nl.ndarray((pmax, 1), dtype=nl.int32, name="row_index")
            o = nl.ndarray((rows, 1), dtype=nl.int32, name="out_row")
            nisa.iota(o, pattern=[[0, 1]], offset=0, channel_multiplier=1)
            scaled_floor(o, plan.h.scale, plan.h.limit, "src_h", out=index[0:rows, 0:1])
        else:
            index = nl.ndarray((pmax, 1), dtype=nl.int32, name="row_index")
            _, t, o = tile_rows_and_columns(rows, 1, out_h)  # partition i: row i % out_h of batch i // out_h
            src = scaled_floor(o, plan.h.scale, plan.h.limit, "src_h")
            nisa.tensor_scalar(index[0:rows, 0:1], t, op0=nl.multiply, operand0=in_h)  # the row's batch in the tile
            nisa.tensor_tensor(index[0:rows, 0:1], index[0:rows, 0:1], src, op=nl.add)  # batch * in_h + src_h(row)
        full = out_b // batches  # tiles of `batches` whole batches; then the rest, if any
        k_max = _rows_per_block(fit, full)
        for b0 in _starts(out_b, batches, k_max, full):
            k_rows = min(k_max, full - b0 // batches) if b0 // batches < full else 1
            p = min(batches, out_b - b0) * out_h
            add(p, k_rows, lambda r, q0, tile, p=p: tile[q0:q0 + p, 0:1],
                [(b0 + r * batches) * in_h for r in range(k_rows)], b0 * out_h, p)

        def index_at(_, q0, top):  # the indices moved to partitions q0.. by a DMA: engines cannot cross partitions
            if q0 == 0:
                return index
            if tables:
                return table_tile((i[:top] // out_h * in_h + src_h[i[:top] % out_h])[:, None], "row_index_at", q0,
                                  partitions=pmax)
            tile = nl.ndarray((pmax, 1), dtype=nl.int32, name="row_index_at")
            nisa.dma_copy(dst=tile[q0:q0 + top, 0:1], src=index[0:top, 0:1])
            return tile
    elif out_b * out_h <= FLAT_ROWS_MAX and out_b * in_h < semantics.MAX_DIM:
        # tiles of flat output rows (batch * out_h + row: the batches packed), "balanced" or "whole" (tiles of 128,
        # then the rest in pieces of at most 64, each on at most half the DMA engines, so that their moves can
        # spread over all); a family (first row, rows, tiles) of equal tiles has an index tile per placement, tile
        # t's indices in its column t (partition q0 + i: flat row first + t * rows + i, whose source row is
        # batch * in_h + src_h(row))
        total = out_b * out_h
        tiles = ceil_div(total, pmax) if total >= pmax else 2
        balanced = [(0, ceil_div(total, tiles), tiles)]  # equal tiles, as few as hold the rows, two at least
        whole = [(0, pmax, total // pmax)] if total >= pmax else []  # whole tiles, then the rest in pieces
        if total % pmax:
            rest = total % pmax
            size = ceil_div(rest, ceil_div(rest, pmax // 2))
            whole.append((total - rest, size, ceil_div(rest, size)))

        def flat_blocks(families):
            out = []
            for f, (first, rows, tiles) in enumerate(families):
                full = (total - first) // rows
                k_max = _rows_per_block(fit, full)
                for t0 in _starts(tiles, 1, k_max, full):
                    k_rows = min(k_max, full - t0) if t0 < full else 1
                    p = min(rows, total - first - t0 * rows)
                    out.append(_Block(p, k_rows, lambda r, q0, tile, t0=t0, p=p: tile[q0:q0 + p, t0 + r:t0 + r + 1],
                                      (0,) * k_rows, first + t0 * rows, rows, f))
            return out

        families = balanced if tiling == "balanced" else whole
        blocks = flat_blocks(families)

        def index_at(f, q0, top):
            first, rows, tiles = families[f]
            if tables:  # partition q0 + i, column t: flat row first + t * rows + i (past the rows: clamped, unused)
                flat = np.clip(first + np.arange(top)[:, None] + rows * np.arange(tiles)[None, :], 0, total - 1)
                return table_tile(flat // out_h * in_h + src_h[flat % out_h], "src_h_idx", q0)
            pos = nl.ndarray((q0 + top, tiles), dtype=nl.int32, name="out_row")
            nisa.iota(pos, pattern=[[rows, tiles]], offset=first - q0, channel_multiplier=1)  # below q0: unused
            return _flat_source_rows(pos, plan)
    else:
        # (more rows than float32 divides exactly) tiles of rows rows of a batch (two halves on the two halves of
        # the DMA engines when out_h < 128); tile t's indices are column t of an index tile, one per placement
        # (partition q0 + i: row t * rows + i)
        rows = pmax if out_h >= pmax else ceil_div(out_h, 2)
        tiles = ceil_div(out_h, rows)
        full = out_h // rows
        k_max = _rows_per_block(fit, in_b * full)
        for b in range(in_b):
            for t0 in _starts(tiles, 1, k_max, full):
                k_rows = min(k_max, full - t0) if t0 < full else 1
                p = min(rows, out_h - t0 * rows)
                add(p, k_rows, lambda r, q0, tile, t0=t0, p=p: tile[q0:q0 + p, t0 + r:t0 + r + 1],
                    [b * in_h] * k_rows, b * out_h + t0 * rows, rows)

        def index_at(_, q0, top):
            if tables:  # partition q0 + i, column t: row t * rows + i (past out_h: clamped, unused)
                row = np.minimum(np.arange(top)[:, None] + rows * np.arange(tiles)[None, :], out_h - 1)
                return table_tile(src_h[row], "src_h_idx", q0)
            pos = nl.ndarray((q0 + top, tiles), dtype=nl.int32, name="out_row")
            nisa.iota(pos, pattern=[[rows, tiles]], offset=-q0, channel_multiplier=1)  # below q0: unused
            return scaled_floor(pos, plan.h.scale, in_h - 1, "src_h")

    # index_at(family, q0, partitions): an index tile holding the family's source rows from partition q0 on
    cc, wide, chunks, moves, starts, _ = plan_moves(blocks)
    tops = {}  # (family, first partition) -> partitions its index tile must hold
    for m, q0 in zip(moves, starts):
        tops[m.block.family, q0] = max(tops.get((m.block.family, q0), 0), m.block.p)
    index_tiles = {key: index_at(*key, top) for key, top in sorted(tops.items())}
    column_index = {k: column_index_tile(plan, chunk.j0, chunk.nj, chunk.runs[0].src, in_c,
                                         max(q0 + top for (_, q0), top in tops.items()), table=tables)
                    for k, chunk in enumerate(chunks) if chunk.groups is None}  # chunks repeating by nc_n_gather

    # the data tiles: buffers allocated once and taken in turn (NKI's multi-buffering), as many as fit POOL_BYTES
    src_elements = max(m.block.k_rows * _source_columns(chunks[m.k]) * min(cc, in_c - m.c0) for m in moves)
    out_elements = max([m.block.k_rows * chunks[m.k].nj * min(cc, in_c - m.c0) for m in moves
                        if _expands(chunks[m.k], wide)] or [0])
    buffers = buffer_count((src_elements + out_elements) * item)
    src_pool = [nl.ndarray((pmax, src_elements), dtype=dtype, name="row_sources") for _ in range(buffers)]
    out_pool = [nl.ndarray((pmax, out_elements), dtype=dtype, name="row_out") for _ in range(buffers)
                ] if out_elements else [None] * buffers

    def gather(n):
        (blk, k, c0), q0 = moves[n], starts[n]
        indexes = [blk.index_of(r, q0, index_tiles[blk.family, q0]) for r in range(blk.k_rows)]
        return _gather_chunk(src_pool[n % buffers], data_rows, q0, blk.p, blk.k_rows, indexes, blk.base_rows,
                             chunks[k], c0, min(cc, in_c - c0), in_c, row_in)

    # software-pipelined: the gathers run buffers - 1 moves ahead, issued before the copies and stores of the move
    # they overtake, so that they take the DMA engines first (NKI schedules in program order where engines are
    # free) and overlap them; move n + buffers - 1 reuses the buffer of move n - 1, whose copies are issued
    gathered = {n: gather(n) for n in range(min(buffers - 1, len(moves)))}
    for n in nl.static_range(len(moves)):
        if n + buffers - 1 < len(moves):
            gathered[n + buffers - 1] = gather(n + buffers - 1)
        (blk, k, c0), q0 = moves[n], starts[n]
        _finish_chunk(out_tensor, src_pool[n % buffers], out_pool[n % buffers], gathered.pop(n), q0, blk.p, blk.k_rows,
                      blk.out_row, blk.k_stride, chunks[k], c0, min(cc, in_c - c0), in_c, row_out, wide,
                      column_index.get(k))
    return out_tensor


#: The rows kernel's schedule knobs: how flat rows tile the partitions ("balanced": equal tiles, as few as hold
#: them; "whole": tiles of 128, the rest in pieces of at most 64, which spread over the engines), and a factor
#: on its column chunks (schedule.CHUNK_FACTORS); the default, which small outputs take.
TILINGS = ("balanced", "whole")
DEFAULT_SCHEDULE = ("balanced", 1)


class _Block(NamedTuple):
    """k_rows output rows on each of p partitions: row k of partition i is output row out_row + k * k_stride + i,
    whose source row is base_rows[k] + index_of(k, q0, tile)[i], the index tile of its family of tiles placed at
    partition q0."""

    p: int
    k_rows: int
    index_of: Callable
    base_rows: tuple
    out_row: int
    k_stride: int
    family: int = 0


class _Move(NamedTuple):
    """One transfer of the rows kernel: a block's column chunk k, channels from c0."""

    block: _Block
    k: int
    c0: int


def _chunk_elements(chunk, c: int) -> int:
    """Elements per row a move of the chunk gathers and stores (its engines' load per partition and row)."""
    gathered = chunk.runs[-1].src - chunk.runs[0].src + 1 if chunk.spanned else len(chunk.runs)
    return (gathered + chunk.nj) * c


#: Flat output rows (batches x out_h) up to which the rows kernel packs batches into its tiles: the batch of a
#: flat row f, floor(f / out_h + 0.5 / out_h) in float32, is exact while f + out_h < 2**24 / 6.
FLAT_ROWS_MAX = 1 << 20


def _flat_source_rows(pos, plan):
    """The source row batch * in_h + src_h(row) of each flat output row f = batch * out_h + row in an int32 tile."""
    in_h, out_h, out_b = plan.h.in_size, plan.h.out_size, plan.out_shape[0]
    if out_b == 1:
        return scaled_floor(pos, plan.h.scale, in_h - 1, "src_h")
    batch = nl.ndarray(pos.shape, dtype=nl.int32, name="out_batch")
    floor_by_cast(batch, pos, 1.0 / out_h, 0.5 / out_h)  # the half step keeps it exact
    row = nl.ndarray(pos.shape, dtype=nl.int32, name="out_row_in_batch")
    nisa.tensor_scalar(row, batch, op0=nl.multiply, operand0=out_h)
    nisa.tensor_tensor(row, pos, row, op=nl.subtract)  # f - batch * out_h
    src = scaled_floor(row, plan.h.scale, in_h - 1, "src_h")
    nisa.tensor_scalar(batch, batch, op0=nl.multiply, operand0=in_h)
    nisa.tensor_tensor(src, src, batch, op=nl.add)  # batch * in_h + src_h(row)
    return src


def _tile_rows(plan) -> int:
    """Output rows a tile of the rows kernel holds (at most 128; a tile's rows across batches): its copies, one
    per tile, cost the same for 17 rows as for 128 (``columns.repeats_in_stores``)."""
    return min(nl.tile_size.pmax, plan.out_shape[0] * plan.h.out_size)


def _rows_per_block(fit: int, tiles: int) -> int:
    """Output rows per partition in a block: as many as fit, but few enough for MIN_BLOCKS blocks to pipeline."""
    return max(1, min(fit, ceil_div(tiles, MIN_BLOCKS)))


def _starts(n: int, step: int, fit: int, full: int) -> list[int]:
    """First units of blocks over units 0, step, .. n - 1: up to ``fit`` at a time among the first ``full``
    (whole tiles), then one at a time."""
    starts, u = [], 0
    while u < n:
        starts.append(u)
        u += step * (min(fit, full - u // step) if u // step < full else 1)
    return starts


def _source_columns(chunk) -> int:
    """Columns a row of the chunk's gathered tile holds: its span of source columns, its output columns in order
    (every one its own source) or one per run (a clamp at the far end)."""
    if chunk.spanned:
        return chunk.runs[-1].src - chunk.runs[0].src + 1
    return chunk.nj if chunk.shrink else len(chunk.runs)


def _expands(chunk, wide: bool) -> bool:
    """Whether the chunk's columns are repeated on chip, into an output tile (narrow pixels not already in order)."""
    return not wide and not (chunk.shrink and (chunk.contiguous or not chunk.spanned))


def _gather_chunk(sources, data_rows, q0, p, k_rows, indexes, base_rows, chunk, c0, c, in_c, row_in):
    """Gather one chunk's source columns for k_rows x p rows into partitions q0 .. q0 + p - 1 of ``sources`` (row k
    of a partition at element k * _source_columns(chunk) * c): returns where each source column sits in a row
    (None: the row is the output columns, in order) and the column groups that repeat them."""
    part, ns = tile_elements(sources), _source_columns(chunk)
    j0, nj, runs, groups = chunk.j0, chunk.nj, chunk.runs, chunk.groups
    if chunk.spanned:  # gather the span of the chunk's source columns, one descriptor per row, in source order
        s0 = runs[0].src
        for k in range(k_rows):
            # gather: partition q0 + i reads source row base_rows[k] + index[i] ([row_in, p]: the index tile's
            # rows); [in_c, ns]: ns consecutive columns from s0; [1, c]: c channels from c0
            nisa.dma_copy(dst=sources.ap(pattern=[[part, p], [c, ns], [1, c]], offset=q0 * part + k * ns * c),
                          src=data_rows.ap(pattern=[[row_in, p], [in_c, ns], [1, c]],
                                           offset=base_rows[k] * row_in + s0 * in_c + c0,
                                           vector_offset=indexes[k], indirect_dim=0))
        if chunk.shrink and chunk.contiguous:  # the sources are the outputs, in order
            return None, groups
        return (lambda src: src - s0), groups  # where each source column sits in the row
    if chunk.shrink:  # every output column its own source: gather each group straight into output order
        for k in range(k_rows):
            for g in groups:
                # gather: [row_in, p] rows by the index tile; [src_step * in_c, count] the group's source columns;
                # [1, c] channels. SBUF: [out_step * c, count] the group's output columns in row k of the tile
                nisa.dma_copy(dst=sources.ap(pattern=[[part, p], [g.out_step * c, g.count], [1, c]],
                                             offset=q0 * part + (k * nj + g.out0 - j0) * c),
                              src=data_rows.ap(pattern=[[row_in, p], [g.src_step * in_c, g.count], [1, c]],
                                               offset=base_rows[k] * row_in + g.src0 * in_c + c0,
                                               vector_offset=indexes[k], indirect_dim=0))
        return None, groups
    # neither (a clamp at the far end): one gather per run and row, in run order
    for k in range(k_rows):
        for m, r in enumerate(runs):
            # gather: [row_in, p] rows by the index tile; [1, c] the run's source pixel. SBUF: slot m of row k
            nisa.dma_copy(dst=sources.ap(pattern=[[part, p], [1, c]], offset=q0 * part + (k * ns + m) * c),
                          src=data_rows.ap(pattern=[[row_in, p], [1, c]],
                                           offset=base_rows[k] * row_in + r.src * in_c + c0,
                                           vector_offset=indexes[k], indirect_dim=0))
    at = {r.src: m for m, r in enumerate(runs)}.__getitem__  # a chunk's runs have distinct sources
    return at, [g for r in runs for g in column_groups([r])]


def _finish_chunk(out_tensor, sources, expanded, gathered, q0, p, k_rows, out_row, k_stride, chunk, c0, c, in_c,
                  row_out, wide, column_index=None):
    """Store one chunk's output columns j0 .. j0 + nj - 1 of k_rows x p rows from what ``_gather_chunk`` brought
    to partitions q0 .. q0 + p - 1 of ``sources``, repeating columns in the stores (wide pixels) or on chip first,
    into ``expanded``."""
    at, groups = gathered
    j0, nj = chunk.j0, chunk.nj
    if at is None:  # the tile holds the output columns, in order
        return _store_rows(out_tensor, sources, q0, p, k_rows, nj, c, out_row, k_stride, j0, c0, in_c, row_out)
    part, ns = tile_elements(sources), _source_columns(chunk)
    if wide:  # repeat columns in each store's SBUF-side pattern: a descriptor per pixel (repeats_in_stores)
        for g in groups:
            src_step = at(g.src0 + g.src_step) - at(g.src0) if g.count > 1 else 0
            s_pairs, d_pairs = broadcast_pairs(
                [[part, p],  # SBUF: partitions
                 [ns * c, k_rows],  # the partition's rows
                 [src_step * c, g.count],  # the group's source columns
                 [0, g.repeat],  # each repeated: step 0
                 [1, c]],  # channels
                [[row_out, p],  # HBM: output rows
                 [k_stride * row_out, k_rows],  # a partition's rows, k_stride apart
                 [g.out_step * in_c, g.count],  # the group's first output columns
                 [in_c, g.repeat],  # the repeats, adjacent
                 [1, c]])  # channels from c0
            nisa.dma_copy(dst=out_tensor.ap(pattern=d_pairs, offset=out_row * row_out + g.out0 * in_c + c0),
                          src=sources.ap(pattern=s_pairs, offset=q0 * part + at(g.src0) * c))
        return None
    expand_columns(sources, expanded, q0, p, k_rows, ns, chunk, c, groups, at, column_index)
    return _store_rows(out_tensor, expanded, q0, p, k_rows, nj, c, out_row, k_stride, j0, c0, in_c, row_out)


def _store_rows(out_tensor, tile, q0, p, k_rows, nj, c, out_row, k_stride, j0, c0, in_c, row_out):
    """Store partitions q0 .. q0 + p - 1 of ``tile`` (rows of nj * c elements) as output columns j0 .. j0 + nj - 1
    of rows out_row + k * k_stride + i."""
    # HBM: [row_out, p] output rows; [k_stride * row_out, k_rows] each partition's rows; [in_c, nj] the columns from
    # j0 and [1, c] the channels from c0, one run when they are whole pixels
    part = tile_elements(tile)
    cols = [[in_c, nj], [1, c]] if c < in_c else [[1, nj * c]]
    sbuf_cols = [[c, nj], [1, c]] if c < in_c else [[1, nj * c]]
    dst, src = broadcast_pairs([[part, p], [nj * c, k_rows], *sbuf_cols],
                               [[row_out, p], [k_stride * row_out, k_rows], *cols])
    nisa.dma_copy(dst=out_tensor.ap(pattern=src, offset=out_row * row_out + j0 * in_c + c0),
                  src=tile.ap(pattern=dst, offset=q0 * part))


def _settings(plan, item: int) -> tuple:
    """Its schedules by tiling, each by growing chunk factor: the tilings differ only where flat rows tile the
    partitions (out_h > 64)."""
    flat = plan.h.out_size > nl.tile_size.pmax // 2
    return tuple(tuple((tiling, f) for f in CHUNK_FACTORS) for tiling in TILINGS[:2 if flat else 1])


register(KernelRecord("rows", FORWARD, resize_nearest_rows_kernel, rank=1, conventions=True, settings=_settings))

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

import functools
from dataclasses import dataclass

from .. import contract, semantics
from ..errors import InvalidValueError
from ..machine.cost import PARTITIONS_PER_DMA_ENGINE, TARGETS  # SBUF partitions one DMA engine serves (D1)
from ..nki import isa as nisa
from ..nki import language as nl
from .dma import broadcast_pairs
from .helpers import scaled_floor, tile_rows_and_columns
from .plan import RowRun, column_groups, plan_resize, split_runs

#: Bytes per partition of one data tile; two tiles (sources, output row) double-buffered stay under 128 KiB.
TILE_BYTES = 32 * 1024
#: The same for wide pixels, whose columns repeat in the stores: one source tile, double-buffered.
WIDE_TILE_BYTES = 48 * 1024
#: A pixel of at least this many bytes is a good DMA descriptor: repeat columns in the store's access pattern.
WIDE_PIXEL_BYTES = 512


def resize_nearest_rows_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize with output rows on partitions, moving whole rows.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved,
    by DMAs and bit-exact tensor_copy).
    Constraints: the resize contract (in_b == out_b, in_c == out_c, sizes below
    2**24, fewer than 2**31 elements per tensor).
    Tiling: partitions are output rows: whole batches per tile when out_h <= 64
    (their source rows from one index tile built once), else balanced tiles of
    up to 128 flat rows (batch * out_h + row, so batches share tiles; two at
    least; tile t's source rows in column t of an index tile built once). A tile of few rows takes, move by move, other
    partition ranges (8-aligned: other DMA engines), its indices copied there
    by DMA. A tile holds up to TILE_BYTES per partition (WIDE_TILE_BYTES for wide
    pixels, whose one source tile needs no output tile beside it): several
    output rows per partition when rows are short (at least three blocks where
    there are tiles enough, so that they pipeline), a chunk of equal-width
    column ranges, and channel chunks for pixels wider than that. Per block and
    chunk: one indirect gather per row of the span of the chunk's source columns
    (where it reads at most twice the columns needed, or its extra bytes cost less
    than the descriptors they save: ``_spanned``; else one gather per column group,
    straight into output order), then a store per column group whose SBUF side
    repeats columns with step-0 pairs (pixels of 512 B or more), or, into an
    output tile stored as whole row chunks, a tensor_copy per column group or one
    nc_n_gather per row (chunks of many groups, ``_most_copies``).
    """
    name = "resize_nearest_rows_kernel"
    in_shape, out_shape = contract.resize_shapes(name, data_tensor.shape, out_shape)
    plan = plan_resize(in_shape, out_shape)
    in_b, in_h, in_w, in_c = in_shape
    out_b, out_h, out_w, _ = out_shape
    dtype, item = data_tensor.dtype, data_tensor.dtype.itemsize
    out_tensor = nl.ndarray(out_shape, dtype=dtype, buffer=nl.shared_hbm, name="out_tensor")
    data_rows = data_tensor.reshape((in_b * in_h, in_w * in_c))  # a source row per index
    row_in, row_out = in_w * in_c, out_w * in_c

    cc, wide, chunks, fit = _column_plan(plan, item)
    slot = iter(range(1 << 62))  # a running count of moves, to rotate their partition ranges
    column_index = {}  # chunk -> its column index tile, for chunks that repeat columns by nc_n_gather

    def index_columns(top):
        """Build, on partitions 0 .. top - 1 (those the placements use), the column index of every chunk that
        repeats its columns by nc_n_gather (one in-partition gather per row, not one copy per column group)."""
        for k, chunk in enumerate(chunks):
            if chunk.groups is None:
                column_index[k] = _column_index(plan, chunk.j0, chunk.nj, chunk.runs[0].src, in_c, top)

    def move(p, k_rows, index_of, base_rows, out_row, k_stride, placements):
        """k_rows output rows per partition: row k of partition i is output row out_row + k * k_stride + i, whose
        source row is base_rows[k] + index_of(k, q0, tile)[i]. ``placements`` are (first partition, index tile)
        pairs holding the p indices; successive moves take successive placements, so that tiles of few rows still
        spread their transfers over all DMA engines (one per 8 partitions)."""
        for k in nl.affine_range(len(chunks)):
            for c0 in nl.affine_range(0, in_c, cc):
                c = min(cc, in_c - c0)
                q0, tile = placements[next(slot) % len(placements)]
                _move_chunk(data_rows, out_tensor, q0, p, k_rows, [index_of(r, q0, tile) for r in range(k_rows)],
                            base_rows, out_row, k_stride, chunks[k], c0, c, in_c, row_in, row_out, wide,
                            column_index.get(k))

    pmax = nl.tile_size.pmax
    moves_per_tile = len(chunks) * -(-in_c // cc)
    if out_h <= pmax // 2 and (pmax // out_h) * in_h < semantics.MAX_DIM:
        batches = min(out_b, pmax // out_h)  # whole batches per tile: one index tile for all
        rows = batches * out_h
        index = nl.ndarray((pmax, 1), dtype=nl.int32, name="row_index")
        if batches == 1:  # partition i: row i, source row src_h(i)
            o = nl.ndarray((rows, 1), dtype=nl.int32, name="out_row")
            nisa.iota(o, pattern=[[0, 1]], offset=0, channel_multiplier=1)
            scaled_floor(o, plan.h.scale, plan.h.limit, "src_h", out=index[0:rows, 0:1])
        else:
            _, t, o = tile_rows_and_columns(rows, 1, out_h)  # partition i: row i % out_h of batch i // out_h
            src = scaled_floor(o, plan.h.scale, plan.h.limit, "src_h")
            nisa.tensor_scalar(index[0:rows, 0:1], t, op0=nl.multiply, operand0=in_h)  # the row's batch in the tile
            nisa.tensor_tensor(index[0:rows, 0:1], index[0:rows, 0:1], src, op=nl.add)  # batch * in_h + src_h(row)
        full = out_b // batches  # tiles of `batches` whole batches; then the rest, if any
        k_max = _rows_per_block(fit, full)
        blocks = [(b0, min(k_max, full - b0 // batches) if b0 // batches < full else 1)
                  for b0 in _starts(out_b, batches, k_max, full)]
        # more placements of the indices (no more than there are moves), each on its own DMA engines (8 partitions
        # apart), put there by DMAs: engines cannot move data across partitions
        stride = -(-rows // PARTITIONS_PER_DMA_ENGINE) * PARTITIONS_PER_DMA_ENGINE
        placements = [(q0, index) for q0 in range(0, pmax - rows + 1, stride)]
        if len(placements) == 1 and rows <= pmax - PARTITIONS_PER_DMA_ENGINE:  # one more, at the far partitions
            far = nl.ndarray((pmax, 1), dtype=nl.int32, name="row_index_far")  # overlaps the first: its own tile
            placements.append(((pmax - rows) // PARTITIONS_PER_DMA_ENGINE * PARTITIONS_PER_DMA_ENGINE, far))
        placements = placements[:len(blocks) * moves_per_tile]
        for q0, tile in placements[1:]:
            nisa.dma_copy(dst=tile[q0:q0 + rows, 0:1], src=index[0:rows, 0:1])
        index_columns(placements[-1][0] + rows)
        for n in nl.affine_range(len(blocks)):
            b0, k_rows = blocks[n]
            p = min(batches, out_b - b0) * out_h
            move(p, k_rows, lambda r, q0, tile, p=p: tile[q0:q0 + p, 0:1],
                 [(b0 + r * batches) * in_h for r in range(k_rows)], b0 * out_h, p, placements)
    elif out_b * out_h <= FLAT_ROWS_MAX and out_b * in_h < semantics.MAX_DIM:
        # tiles of flat output rows (batch * out_h + row: the batches packed), balanced, two at least so that they
        # take both halves of the DMA engines; tile t's indices are column t of an index tile, one per placement
        # (partition q0 + i: flat row t * rows + i, whose source row is batch * in_h + src_h(row))
        total = out_b * out_h
        tiles = -(-total // pmax) if total >= pmax else 2
        rows = -(-total // tiles)
        tiles = -(-total // rows)
        stride = -(-rows // PARTITIONS_PER_DMA_ENGINE) * PARTITIONS_PER_DMA_ENGINE
        full = total // rows
        k_max = _rows_per_block(fit, full)
        blocks = [(t, min(k_max, full - t) if t < full else 1) for t in _starts(tiles, 1, k_max, full)]
        placements = []
        for q0 in list(range(0, pmax - rows + 1, stride))[:len(blocks) * moves_per_tile]:
            pos = nl.ndarray((q0 + rows, tiles), dtype=nl.int32, name="out_row")
            nisa.iota(pos, pattern=[[rows, tiles]], offset=-q0, channel_multiplier=1)  # below q0: unused
            placements.append((q0, _flat_source_rows(pos, plan)))
        index_columns(placements[-1][0] + rows)
        for n in nl.affine_range(len(blocks)):
            t0, k_rows = blocks[n]
            p = min(rows, total - t0 * rows)
            move(p, k_rows, lambda r, q0, tile, t0=t0, p=p: tile[q0:q0 + p, t0 + r:t0 + r + 1],
                 [0] * k_rows, t0 * rows, rows, placements)
    else:
        # (more rows than float32 divides exactly) tiles of rows rows of a batch (two halves on the two halves of
        # the DMA engines when out_h < 128); tile t's indices are column t of an index tile, one per placement
        # (partition q0 + i: row t * rows + i)
        rows = pmax if out_h >= pmax else -(-out_h // 2)
        tiles = -(-out_h // rows)
        stride = -(-rows // PARTITIONS_PER_DMA_ENGINE) * PARTITIONS_PER_DMA_ENGINE
        full = out_h // rows
        k_max = _rows_per_block(fit, in_b * full)
        blocks = [(t, min(k_max, full - t) if t < full else 1) for t in _starts(tiles, 1, k_max, full)]
        placements = []
        for q0 in list(range(0, pmax - rows + 1, stride))[:in_b * len(blocks) * moves_per_tile]:
            pos = nl.ndarray((q0 + rows, tiles), dtype=nl.int32, name="out_row")
            nisa.iota(pos, pattern=[[rows, tiles]], offset=-q0, channel_multiplier=1)  # below q0: unused
            placements.append((q0, scaled_floor(pos, plan.h.scale, in_h - 1, "src_h")))
        index_columns(placements[-1][0] + rows)
        for b in nl.affine_range(in_b):
            for n in nl.affine_range(len(blocks)):
                t0, k_rows = blocks[n]
                p = min(rows, out_h - t0 * rows)
                move(p, k_rows, lambda r, q0, tile, t0=t0, p=p: tile[q0:q0 + p, t0 + r:t0 + r + 1],
                     [b * in_h] * k_rows, b * out_h + t0 * rows, rows, placements)
    return out_tensor


#: Flat output rows (batches x out_h) up to which the rows kernel packs batches into its tiles: the batch of a
#: flat row f, floor(f / out_h + 0.5 / out_h) in float32, is exact while f + out_h < 2**24 / 6.
FLAT_ROWS_MAX = 1 << 20


def _flat_source_rows(pos, plan):
    """The source row batch * in_h + src_h(row) of each flat output row f = batch * out_h + row in an int32 tile."""
    in_h, out_h, out_b = plan.h.in_size, plan.h.out_size, plan.out_shape[0]
    if out_b == 1:
        return scaled_floor(pos, plan.h.scale, in_h - 1, "src_h")
    batch = nl.ndarray(pos.shape, dtype=nl.int32, name="out_batch")
    nisa.activation(batch, "floor", pos, scale=1.0 / out_h, bias=0.5 / out_h)  # the half step keeps it exact
    row = nl.ndarray(pos.shape, dtype=nl.int32, name="out_row_in_batch")
    nisa.tensor_scalar(row, batch, op0=nl.multiply, operand0=out_h)
    nisa.tensor_tensor(row, pos, row, op=nl.subtract)  # f - batch * out_h
    src = scaled_floor(row, plan.h.scale, in_h - 1, "src_h")
    nisa.tensor_scalar(batch, batch, op0=nl.multiply, operand0=in_h)
    nisa.tensor_tensor(src, src, batch, op=nl.add)  # batch * in_h + src_h(row)
    return src


def resize_nearest_source_rows_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize with source rows on partitions: each loaded once, its output rows written by stores.

    Layouts, dtypes and constraints: those of ``resize_nearest_rows_kernel``, and
    narrow pixels (under WIDE_PIXEL_BYTES) whose column chunks read the span of
    their source columns (else InvalidValueError: the rows kernel applies).
    Where rows puts output rows on partitions (a gather of each one's source row,
    its descriptors written by GpSimd, and the columns repeated once per output
    row), this puts the map's runs of equal source row on partitions, in balanced
    tiles of up to 128: a tile's source rows come in direct loads of arithmetic
    progressions of rows (one for an upsample, whose rows are consecutive; no index
    tile, no descriptors to write), and its runs, cut into groups with one source
    step, one output step and one repeat (``plan.column_groups`` on rows), go out
    in one store per group whose SBUF side repeats the partition with a step-0
    pair. Columns are repeated on chip once per source row, as rows does it
    (copies per column group, or nc_n_gather), in at least MIN_BLOCKS pieces
    (tiles x column chunks) so that loads, copies and stores overlap. An upsample
    of the height (RGB images, masks, tall outputs) repeats fewer rows.
    """
    name = "resize_nearest_source_rows_kernel"
    in_shape, out_shape = contract.resize_shapes(name, data_tensor.shape, out_shape)
    plan = plan_resize(in_shape, out_shape)
    in_b, in_h, in_w, in_c = in_shape
    out_b, out_h, out_w, _ = out_shape
    dtype, item = data_tensor.dtype, data_tensor.dtype.itemsize
    columns = _source_row_columns(plan, item)
    if columns is None:
        raise InvalidValueError(f"{name} requires pixels under {WIDE_PIXEL_BYTES} B whose output columns read the "
                                f"span of their source columns, got {in_shape} -> {out_shape} {dtype}; use "
                                f"kernel='rows'")
    cc, chunks = columns
    out_tensor = nl.ndarray(out_shape, dtype=dtype, buffer=nl.shared_hbm, name="out_tensor")
    data_rows = data_tensor.reshape((in_b * in_h, in_w * in_c))  # a source row per index
    row_in, row_out = in_w * in_c, out_w * in_c
    tiles = _source_row_tiles(plan)
    top = max(p for p, _, _ in tiles)
    column_index = {k: _column_index(plan, chunk.j0, chunk.nj, chunk.runs[0].src, in_c, top)
                    for k, chunk in enumerate(chunks) if chunk.groups is None}
    for b in nl.affine_range(in_b):
        for t in nl.affine_range(len(tiles)):
            p, groups, loads = tiles[t]
            for k in nl.affine_range(len(chunks)):
                chunk = chunks[k]
                s0 = chunk.runs[0].src
                ns = chunk.runs[-1].src - s0 + 1
                for c0 in nl.affine_range(0, in_c, cc):
                    c = min(cc, in_c - c0)
                    sources = nl.ndarray((p, 1, ns, c), dtype=dtype, name="row_sources")
                    for q, count, src0, src_step in loads:
                        # load: [src_step * row_in, count] source rows in arithmetic progression (consecutive ones
                        # for an upsample); [in_c, ns] the span's columns from s0; [1, c] channels. SBUF: partitions
                        # q .. q + count - 1
                        nisa.dma_copy(dst=sources.ap(pattern=[[ns * c, count], [c, ns], [1, c]], offset=q * ns * c),
                                      src=data_rows.ap(pattern=[[src_step * row_in, count], [in_c, ns], [1, c]],
                                                       offset=(b * in_h + src0) * row_in + s0 * in_c + c0))
                    if chunk.shrink and chunk.contiguous:  # the sources are the output columns
                        expanded = sources
                    else:
                        expanded = _expand_columns(sources, 0, p, 1, ns, chunk, c, chunk.groups,
                                                   lambda src, s0=s0: src - s0, column_index.get(k), 0)
                    nj, j0 = chunk.nj, chunk.j0
                    cols = [[in_c, nj], [1, c]] if c < in_c else [[1, nj * c]]
                    sbuf_cols = [[c, nj], [1, c]] if c < in_c else [[1, nj * c]]
                    for q, step, g in groups:
                        # store: partitions q, q + step, .. ([0, repeat]: each repeat times) -> output rows
                        # out0 + j * out_step + r ([row_out, repeat]); the chunk's columns and channels
                        src, dst = broadcast_pairs([[step * nj * c, g.count], [0, g.repeat], *sbuf_cols],
                                                   [[g.out_step * row_out, g.count], [row_out, g.repeat], *cols])
                        nisa.dma_copy(dst=out_tensor.ap(pattern=dst, offset=(b * out_h + g.out0) * row_out
                                                        + j0 * in_c + c0),
                                      src=expanded.ap(pattern=src, offset=q * nj * c))
    return out_tensor


def _source_row_columns(plan, item: int):
    """(channels per chunk, column chunks) of the source-rows kernel, or None where it does not apply: pixels of
    WIDE_PIXEL_BYTES or more, or a chunk whose columns are not read as a span."""
    cc, wide, chunks, _ = _column_plan(plan, item, _source_row_chunks(plan))
    return None if wide or not all(chunk.spanned for chunk in chunks) else (cc, chunks)


def _source_row_chunks(plan) -> int:
    """Column chunks the source-rows kernel cuts rows into at least: enough for MIN_BLOCKS pieces of work (tiles
    of runs x chunks) over all batches, so that loads, copies and stores of successive pieces overlap."""
    tiles = plan.in_shape[0] * -(-len(plan.h.runs) // nl.tile_size.pmax)
    return -(-MIN_BLOCKS // tiles)


def _source_row_tiles(plan) -> list:
    """The height's runs in tiles of up to 128 (one per partition): [(partitions, stores, loads)]. A store is
    (first partition, partition step, row group), a row group being a ColumnGroup of rows (its runs at
    partitions q, q + step, ..); a load is (first partition, partitions, first source row, source row step):
    the tile's source rows cut into arithmetic progressions (one for an upsample, whose rows are consecutive)."""
    runs, pmax = plan.h.runs, nl.tile_size.pmax
    size = -(-len(runs) // -(-len(runs) // pmax))  # balanced: no short last tile on few DMA engines
    tiles = []
    for i in range(0, len(runs), size):
        tile = runs[i:i + size]
        where = {r.first: n for n, r in enumerate(tile)}
        stores = [(where[g.out0], where[g.out0 + g.out_step] - where[g.out0] if g.count > 1 else 1, g)
                  for g in column_groups(tile)]
        loads = []
        for n, r in enumerate(tile):
            if loads and (loads[-1][1] == 1 or r.src - tile[n - 1].src == loads[-1][3]):
                q, count, src0, _ = loads[-1]
                loads[-1] = (q, count + 1, src0, r.src - tile[n - 1].src)
            else:
                loads.append((n, 1, r.src, 1))
        tiles.append((len(tile), stores, loads))
    return tiles


def source_rows_instruction_count(plan, item: int) -> int | None:
    """The instructions the source-rows kernel traces for ``plan`` and an itemsize, or None where it does not apply."""
    in_c = plan.in_shape[3]
    columns = _source_row_columns(plan, item)
    if columns is None:
        return None
    cc, chunks = columns
    tiles = _source_row_tiles(plan)
    per_batch = sum(len(stores) + len(loads) for _, stores, loads in tiles) * len(chunks)
    copies = sum(0 if chunk.shrink and chunk.contiguous else 1 if chunk.groups is None else len(chunk.groups)
                 for chunk in chunks) * len(tiles)
    return 8 * len(chunks) + plan.in_shape[0] * (per_batch + copies) * -(-in_c // cc)


@dataclass(frozen=True)
class ColumnChunk:
    """Output columns j0 .. j0 + nj - 1 of a row: their runs of equal source column, and how they move.

    ``groups`` is None where the columns repeat by one nc_n_gather per row (narrow whole pixels, more column
    groups than ``_most_copies`` allows, a gathered span); ``spanned``: one read of the span of source columns.
    """

    j0: int
    nj: int
    runs: list[RowRun]
    groups: list | None
    spanned: bool

    @property
    def shrink(self) -> bool:
        """Every output column its own source column (no run repeats)."""
        return len(self.runs) == self.nj

    @property
    def contiguous(self) -> bool:
        """The source columns are consecutive (runs' sources strictly increase)."""
        return self.runs[-1].src - self.runs[0].src + 1 == len(self.runs)


@functools.lru_cache(maxsize=64)
def _column_plan(plan, item: int, min_chunks: int = 1):
    """(channels per chunk, wide pixels?, column chunks, output rows per partition); at least ``min_chunks`` chunks
    where the width has columns enough."""
    in_c = plan.in_shape[3]
    cc = max(1, min(in_c, TILE_BYTES // item))  # channels per chunk (all of them unless a pixel passes TILE_BYTES)
    wide = cc * item >= WIDE_PIXEL_BYTES
    budget = WIDE_TILE_BYTES if wide else TILE_BYTES  # wide pixels need no output tile: a larger source tile
    cols = max(1, min(budget // (cc * item), -(-plan.w.out_size // min_chunks)))  # output columns per chunk at most
    cols = -(-plan.w.out_size // -(-plan.w.out_size // cols))  # chunks of equal width: equal work per placement
    out_w, runs = plan.w.out_size, plan.w.runs
    chunks, index_bytes = [], 0  # the column index tiles of the chunks that gather their columns: live throughout
    for j0 in range(0, out_w, cols):
        nj = min(cols, out_w - j0)
        whole = nj == out_w and plan.w.max_repeat <= cols  # the whole map in one chunk (a sweep's shapes)
        chunk_runs = runs if whole else split_runs(runs, j0, j0 + nj, cols)
        spanned = _spanned(chunk_runs, cc * item)
        gathers = not wide and cc == in_c and spanned and index_bytes + nj * in_c * 4 <= GATHER_INDEX_BYTES
        groups = column_groups(chunk_runs, _most_copies(nj * in_c) if gathers else None)
        index_bytes += nj * in_c * 4 if groups is None else 0
        chunks.append(ColumnChunk(j0, nj, chunk_runs, groups, spanned))
    nj_max = max(chunk.nj for chunk in chunks)
    per_row = (nj_max * cc if wide else 2 * nj_max * cc) * item  # bytes a row of a chunk takes in the tiles
    return cc, wide, tuple(chunks), max(1, (WIDE_TILE_BYTES if wide else 2 * TILE_BYTES) // per_row)


def rows_instruction_count(plan, item: int) -> int:
    """At least as many instructions as the kernel traces for ``plan`` and an itemsize, counted without tracing:
    per block of tiles and chunk, its gathers, copies and stores (a bound for dispatch's budget, not an estimate:
    several times the trace's count where rows per partition are many)."""
    in_c = plan.in_shape[3]
    cc, wide, chunks, fit = _column_plan(plan, item)
    out_b, out_h = plan.out_shape[0], plan.h.out_size
    pmax = nl.tile_size.pmax
    if out_h <= pmax // 2:  # whole batches per tile (or, past float32's exact range, the tiles below)
        sub_tiles = max(-(-out_b * out_h // pmax), out_b * -(-out_h // max(1, -(-out_h // 2))))
    else:
        sub_tiles = out_b * -(-out_h // (pmax if out_h >= pmax else -(-out_h // 2)))
    total = 0
    for chunk in chunks:  # per tile: its rows' gathers; per block (at most one per tile): copies, stores
        gathers = 1 if chunk.spanned else len(chunk.groups) if chunk.shrink else len(chunk.runs)
        total += sub_tiles * (gathers + (1 if chunk.groups is None else len(chunk.groups)) + (0 if wide else 1))
    return 64 + total * -(-in_c // cc)  # 64: the index tiles and their placements


#: Bytes a DMA engine moves in the time it takes for one descriptor (D2 on trn1: 10 ns x 17 B/ns): reading a
#: source column the chunk does not need costs less than a descriptor per needed column below this pixel size.
DESCRIPTOR_BYTES = TARGETS["trn1"].descriptor_ns * TARGETS["trn1"].dma_engine_gbps


def _spanned(runs, pixel_bytes: int) -> bool:
    """Whether to gather the whole span of a chunk's source columns, one descriptor per row (descriptors of
    gathers are written by GpSimd, one at a time), rather than a descriptor per needed column (one per run):
    where it reads at most twice the columns it needs, or where the extra bytes cost less than the descriptors
    they save and the span fits a tile."""
    span, needed = runs[-1].src - runs[0].src + 1, len(runs)
    return span <= 2 * needed or (span * pixel_bytes <= TILE_BYTES
                                   and (span - needed) * pixel_bytes <= needed * DESCRIPTOR_BYTES)


#: A chunk of narrow pixels with more column groups than this (and than ``_most_copies`` allows) repeats its
#: columns with one nc_n_gather per row (150 GpSimd cycles per 512 elements + one per element, E3c) instead of a
#: tensor_copy per group (80 cycles + N each, E2), its column index built once (three to five instructions) while
#: the chunks' indexes fit GATHER_INDEX_BYTES per partition.
GATHER_MIN_GROUPS = 8
GATHER_INDEX_BYTES = 32 * 1024


def _most_copies(elements: int) -> int:
    """Column groups a row of ``elements`` elements repeats by copies at most: more, and the fixed cycles of their
    copies (E2) pass those of one nc_n_gather (E3c) over the row."""
    params = TARGETS["trn1"]
    gather_fixed = params.gpsimd_fixed_cycles * -(-elements // 512)
    return max(GATHER_MIN_GROUPS, gather_fixed // params.vector_fixed_cycles)


def _column_index(plan, j0: int, nj: int, s0: int, c: int, top: int):
    """A uint32 (top, nj * c) tile, the same on every partition: element (j, ch) holds (src_w(j0 + j) - s0) * c + ch,
    the element of the chunk's span of source columns (from column s0) that output element (j, ch) reads."""
    pos = nl.ndarray((top, nj, c), dtype=nl.int32, name="out_col")
    nisa.iota(pos, pattern=[[1, nj], [0, c]], offset=j0, channel_multiplier=0)
    index = nl.ndarray((top, nj * c), dtype=nl.uint32, name="column_index")
    if c == 1 and s0 == 0 and plan.w.limit is None:  # the floor is the index: exact in float32, cast to uint32
        nisa.activation(index, "floor", pos.ap(pattern=[[nj, top], [1, nj]]), scale=plan.w.scale)
        return index
    src = scaled_floor(pos, plan.w.scale, plan.w.limit, "src_w")  # floor(float32(j) * float32(in_w / out_w))
    flat = src.ap(pattern=[[nj * c, top], [1, nj * c]])
    if c == 1:  # src_w - s0, exact in float32 (values below 2**24), cast to uint32
        nisa.tensor_scalar(index, flat, op0=nl.subtract, operand0=s0)
        return index
    nisa.tensor_scalar(src, src, op0=nl.subtract, operand0=s0, op1=nl.multiply, operand1=c)  # first element
    nisa.iota(pos, pattern=[[0, nj], [1, c]], offset=0, channel_multiplier=0)  # plus the channel
    nisa.tensor_tensor(index, flat, pos.ap(pattern=[[nj * c, top], [1, nj * c]]), op=nl.add)
    return index


#: Blocks a kernel's tiles are grouped into at least, where there are tiles enough: with two buffers, block n + 1
#: gathers while block n copies and stores.
MIN_BLOCKS = 3


def _rows_per_block(fit: int, tiles: int) -> int:
    """Output rows per partition in a block: as many as fit, but few enough for MIN_BLOCKS blocks to pipeline."""
    return max(1, min(fit, -(-tiles // MIN_BLOCKS)))


def _starts(n: int, step: int, fit: int, full: int) -> list[int]:
    """First units of blocks over units 0, step, .. n - 1: up to ``fit`` at a time among the first ``full``
    (whole tiles), then one at a time."""
    starts, u = [], 0
    while u < n:
        starts.append(u)
        u += step * (min(fit, full - u // step) if u // step < full else 1)
    return starts


def _move_chunk(data_rows, out_tensor, q0, p, k_rows, indexes, base_rows, out_row, k_stride, chunk, c0, c, in_c,
                row_in, row_out, wide, column_index=None):
    """Gather one chunk's source columns for k_rows x p rows into partitions q0 .. q0 + p - 1, then store its
    output columns j0 .. j0 + nj - 1."""
    dtype = data_rows.dtype
    j0, nj, runs, groups = chunk.j0, chunk.nj, chunk.runs, chunk.groups
    if chunk.spanned:  # gather the span of the chunk's source columns, one descriptor per row, in source order
        s0 = runs[0].src
        ns = runs[-1].src - s0 + 1
        sources = nl.ndarray((q0 + p, k_rows, ns, c), dtype=dtype, name="row_sources")
        for k in range(k_rows):
            # gather: partition q0 + i reads source row base_rows[k] + index[i] ([row_in, p]: the index tile's
            # rows); [in_c, ns]: ns consecutive columns from s0; [1, c]: c channels from c0
            nisa.dma_copy(dst=sources.ap(pattern=[[k_rows * ns * c, p], [c, ns], [1, c]],
                                         offset=(q0 * k_rows + k) * ns * c),
                          src=data_rows.ap(pattern=[[row_in, p], [in_c, ns], [1, c]],
                                           offset=base_rows[k] * row_in + s0 * in_c + c0,
                                           vector_offset=indexes[k], indirect_dim=0))
        if chunk.shrink and chunk.contiguous:  # the sources are the outputs, in order
            return _store_rows(out_tensor, sources, q0, p, k_rows, nj, c, out_row, k_stride, j0, c0, in_c, row_out)
        at = lambda src: src - s0  # noqa: E731 - where each source column sits in the tile
    elif chunk.shrink:  # every output column its own source: gather each group straight into output order
        sources = nl.ndarray((q0 + p, k_rows, nj, c), dtype=dtype, name="row_sources")
        for k in range(k_rows):
            for g in groups:
                # gather: [row_in, p] rows by the index tile; [src_step * in_c, count] the group's source columns;
                # [1, c] channels. SBUF: [out_step * c, count] the group's output columns in row k of the tile
                nisa.dma_copy(dst=sources.ap(pattern=[[k_rows * nj * c, p], [g.out_step * c, g.count], [1, c]],
                                             offset=((q0 * k_rows + k) * nj + g.out0 - j0) * c),
                              src=data_rows.ap(pattern=[[row_in, p], [g.src_step * in_c, g.count], [1, c]],
                                               offset=base_rows[k] * row_in + g.src0 * in_c + c0,
                                               vector_offset=indexes[k], indirect_dim=0))
        return _store_rows(out_tensor, sources, q0, p, k_rows, nj, c, out_row, k_stride, j0, c0, in_c, row_out)
    else:  # neither (a clamp at the far end): one gather per run and row, in run order
        ns = len(runs)
        sources = nl.ndarray((q0 + p, k_rows, ns, c), dtype=dtype, name="row_sources")
        for k in range(k_rows):
            for m, r in enumerate(runs):
                # gather: [row_in, p] rows by the index tile; [1, c] the run's source pixel. SBUF: slot m of row k
                nisa.dma_copy(dst=sources.ap(pattern=[[k_rows * ns * c, p], [1, c]],
                                             offset=((q0 * k_rows + k) * ns + m) * c),
                              src=data_rows.ap(pattern=[[row_in, p], [1, c]],
                                               offset=base_rows[k] * row_in + r.src * in_c + c0,
                                               vector_offset=indexes[k], indirect_dim=0))
        at = {r.src: m for m, r in enumerate(runs)}.__getitem__  # a chunk's runs have distinct sources
        groups = [g for r in runs for g in column_groups([r])]
    ns = sources.shape[2]
    base = q0 * k_rows * ns * c  # the tile's first partition in use
    if wide:  # repeat columns in each store's SBUF-side pattern: a descriptor per pixel, pixels >= 512 B
        for g in groups:
            src_step = at(g.src0 + g.src_step) - at(g.src0) if g.count > 1 else 0
            s_pairs, d_pairs = broadcast_pairs(
                [[k_rows * ns * c, p],  # SBUF: partitions
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
                          src=sources.ap(pattern=s_pairs, offset=base + at(g.src0) * c))
        return None
    expanded = _expand_columns(sources, q0, p, k_rows, ns, chunk, c, groups, at, column_index, base)
    return _store_rows(out_tensor, expanded, q0, p, k_rows, nj, c, out_row, k_stride, j0, c0, in_c, row_out)


def _expand_columns(sources, q0, p, k_rows, ns, chunk, c, groups, at, column_index, base):
    """A (q0 + p, k_rows, nj, c) tile of the chunk's output columns made on chip from ``sources`` (rows of ns source
    columns, column ``src`` at ``at(src)``, partitions from q0 at element ``base``): one nc_n_gather per row with
    the chunk's ``column_index``, else a tensor_copy per column group."""
    nj, j0 = chunk.nj, chunk.j0
    expanded = nl.ndarray((q0 + p, k_rows, nj, c), dtype=sources.dtype, name="row_out")
    if column_index is not None:  # one in-partition gather per row: output element e reads source element index[e]
        for k in range(k_rows):
            # dst: row k of partitions q0.., its nj * c elements; data: the row's span of ns * c source elements
            nisa.nc_n_gather(dst=expanded.ap(pattern=[[k_rows * nj * c, p], [1, nj * c]],
                                             offset=(q0 * k_rows + k) * nj * c),
                             data=sources.ap(pattern=[[k_rows * ns * c, p], [1, ns * c]],
                                             offset=(q0 * k_rows + k) * ns * c),
                             indices=column_index[q0:q0 + p, 0:nj * c])
        return expanded
    for n, g in enumerate(groups):  # narrow pixels: repeat columns on chip
        src_step = at(g.src0 + g.src_step) - at(g.src0) if g.count > 1 else 0
        s_pairs, d_pairs = broadcast_pairs(
            [[k_rows * ns * c, p], [ns * c, k_rows], [src_step * c, g.count], [0, g.repeat], [1, c]],  # sources
            [[k_rows * nj * c, p], [nj * c, k_rows], [g.out_step * c, g.count], [c, g.repeat], [1, c]])  # outputs
        # alternate the vector engine and GpSimd: both copy bit-exactly (on trn2 side by side)
        nisa.tensor_copy(dst=expanded.ap(pattern=d_pairs, offset=(q0 * k_rows * nj + g.out0 - j0) * c),
                         src=sources.ap(pattern=s_pairs, offset=base + at(g.src0) * c),
                         engine=nisa.gpsimd_engine if n % 2 else nisa.vector_engine)
    return expanded


def _store_rows(out_tensor, tile, q0, p, k_rows, nj, c, out_row, k_stride, j0, c0, in_c, row_out):
    """Store partitions q0 .. q0 + p - 1 of a (q0 + p, k_rows, nj, c) tile as output columns j0 .. j0 + nj - 1 of
    rows out_row + k * k_stride + i."""
    # HBM: [row_out, p] output rows; [k_stride * row_out, k_rows] each partition's rows; [in_c, nj] the columns from
    # j0 and [1, c] the channels from c0, one run when they are whole pixels
    cols = [[in_c, nj], [1, c]] if c < in_c else [[1, nj * c]]
    sbuf_cols = [[c, nj], [1, c]] if c < in_c else [[1, nj * c]]
    dst, src = broadcast_pairs([[k_rows * nj * c, p], [nj * c, k_rows], *sbuf_cols],
                               [[row_out, p], [k_stride * row_out, k_rows], *cols])
    nisa.dma_copy(dst=out_tensor.ap(pattern=src, offset=out_row * row_out + j0 * in_c + c0),
                  src=tile.ap(pattern=dst, offset=q0 * k_rows * nj * c))

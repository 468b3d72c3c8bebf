"""Column chunks of the rows kernels: how an output row's columns are cut, gathered and repeated on chip.

Shared by the rows and source-rows kernels (rows.py, sourcerows.py). ``column_plan`` cuts the width into chunks
of equal width, each with its runs of equal source column (``plan.AxisPlan.runs``) and its column groups (runs
of columns with one repeat and one stride, ``plan.column_groups``), and decides per chunk whether its source
columns are read as one span and whether its columns repeat by a copy per group or one nc_n_gather per row;
``expand_columns`` makes a chunk's output columns on chip from its source columns.
"""

from __future__ import annotations

import bisect
import functools
import math
import operator
from dataclasses import dataclass

import numpy as np

from ..intmath import ceil_div
from ..machine.cost import TARGETS
from ..nki import isa as nisa
from ..nki import language as nl
from .dma import broadcast_pairs
from .helpers import floor_by_cast, table_tile
from .plan import RowRun, column_groups, split_runs


#: Bytes per partition of one data tile; two tiles (sources, output row) double-buffered stay under 128 KiB.
TILE_BYTES = 32 * 1024
#: The same for wide pixels, whose columns repeat in the stores: one source tile, double-buffered.
WIDE_TILE_BYTES = 48 * 1024
#: A pixel of at least this many bytes is a good DMA descriptor: repeat columns in the store's access pattern.
WIDE_PIXEL_BYTES = 512


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


def repeats_in_stores(pixel_bytes: int, channels: int, partitions: int) -> bool:
    """Whether a kernel with ``partitions`` rows per tile repeats columns in its stores' access patterns (a
    descriptor per output pixel) rather than by copies on chip (whole-row stores): pixels of WIDE_PIXEL_BYTES or
    more, or where the stores' descriptors cost the DMA engines under half the time the copies cost the vector
    engine (half: the DMA engines also carry the gathers, and copies overlap them).
    Per output column on trn1: the stores take partitions x (descriptor_ns + pixel / engine bandwidth) over 16
    DMA engines (D1, D2); a copy takes ``channels`` cycles at 1.12 GHz whatever the partitions (E2), so that with
    few rows per tile (17 output rows of 192 B pixels: 2 x 24 ns against 86) the copies leave the DMA engines idle."""
    p = TARGETS["trn1"]
    stores_ns = partitions * (p.descriptor_ns + pixel_bytes / p.dma_engine_gbps) / p.dma_engines
    return pixel_bytes >= WIDE_PIXEL_BYTES or 2 * stores_ns < channels / p.clock_ghz


@functools.lru_cache(maxsize=64)
def column_plan(plan, item: int, min_chunks: int = 1, partitions: int = 128):
    """(channels per chunk, wide pixels?, column chunks, output rows per partition); at least ``min_chunks`` chunks
    where the width has columns enough; ``partitions``: the kernel's rows per tile (``repeats_in_stores``)."""
    in_c = plan.in_shape[3]
    cc = max(1, min(in_c, TILE_BYTES // item))  # channels per chunk (all of them unless a pixel passes TILE_BYTES)
    wide = repeats_in_stores(cc * item, cc, partitions)
    budget = WIDE_TILE_BYTES if wide else TILE_BYTES  # wide pixels need no output tile: a larger source tile
    cols = max(1, min(budget // (cc * item), ceil_div(plan.w.out_size, min_chunks)))  # output columns per chunk at most
    cols = ceil_div(plan.w.out_size, ceil_div(plan.w.out_size, cols))  # chunks of equal width: equal work per placement
    out_w, runs = plan.w.out_size, plan.w.runs
    chunks, index_bytes = [], 0  # the column index tiles of the chunks that gather their columns: live throughout
    for j0 in range(0, out_w, cols):
        nj = min(cols, out_w - j0)
        whole = nj == out_w and plan.w.max_repeat <= cols  # the whole map in one chunk (a sweep's shapes)
        chunk_runs = runs if whole else _chunk_runs(runs, j0, j0 + nj, cols, plan.w.max_repeat)
        spanned = _spanned(chunk_runs, cc * item)
        gathers = not wide and cc == in_c and spanned and index_bytes + nj * in_c * 4 <= GATHER_INDEX_BYTES
        groups = column_groups(chunk_runs, _most_copies(nj * in_c) if gathers else None)
        index_bytes += nj * in_c * 4 if groups is None else 0
        chunks.append(ColumnChunk(j0, nj, chunk_runs, groups, spanned))
    nj_max = max(chunk.nj for chunk in chunks)
    per_row = (nj_max * cc if wide else 2 * nj_max * cc) * item  # bytes a row of a chunk takes in the tiles
    return cc, wide, tuple(chunks), max(1, (WIDE_TILE_BYTES if wide else 2 * TILE_BYTES) // per_row)


def _chunk_runs(runs: list[RowRun], first: int, stop: int, cols: int, max_repeat: int) -> list[RowRun]:
    """``split_runs(runs, first, stop, cols)``, walking only the runs the chunk reaches (found by bisection): where
    no run is longer than ``cols``, the runs inside the chunk are kept as they are and only the two at its ends
    are cut, so that cutting the width into chunks costs a step per chunk, not one per run and chunk."""
    a = max(0, bisect.bisect_right(runs, first, key=_first) - 1)  # the run holding index ``first``
    inside = runs[a:bisect.bisect_left(runs, stop, key=_first)]
    if max_repeat > cols or len(inside) < 3:
        return split_runs(inside, first, stop, cols)
    return [*split_runs(inside[:1], first, stop, cols), *inside[1:-1], *split_runs(inside[-1:], first, stop, cols)]


_first = operator.attrgetter("first")


#: Bytes a DMA engine moves in the time it takes for one descriptor (D2's floor x trn1's engine bandwidth): reading a
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
#: the chunks' indexes fit GATHER_INDEX_BYTES per partition (twice that with the one temporary each is built in).
GATHER_MIN_GROUPS = 8
GATHER_INDEX_BYTES = 32 * 1024


def _most_copies(elements: int) -> int:
    """Column groups a row of ``elements`` elements repeats by copies at most: more, and the fixed cycles of their
    copies (E2) pass those of one nc_n_gather (E3c) over the row."""
    params = TARGETS["trn1"]
    gather_fixed = params.gpsimd_fixed_cycles * ceil_div(elements, 512)
    return max(GATHER_MIN_GROUPS, gather_fixed // params.vector_fixed_cycles)


def column_index_tile(plan, j0: int, nj: int, s0: int, c: int, top: int, table: bool = False):
    """A uint32 (top, nj * c) tile, the same on every partition: element (j, ch) holds (src_w(j0 + j) - s0) * c + ch,
    the element of the chunk's span of source columns (from column s0) that output element (j, ch) reads.

    From a table fixed at trace time where ``table`` says so or the engines do not compute the width's map
    (``AxisPlan.on_chip``); else the map is floored once per column (nj elements), then spread over the channels:
    with the index, at most one temporary of its size, the two tiles column_plan budgets for (GATHER_INDEX_BYTES)."""
    if table or not plan.w.on_chip:
        row = ((plan.w.src[j0:j0 + nj] - s0)[:, None] * c + np.arange(c)[None, :]).reshape(-1)
        return table_tile(np.broadcast_to(row, (top, nj * c)), "column_index", dtype=nl.uint32)
    pos = nl.ndarray((top, nj), dtype=nl.float32, name="out_col")  # j, exact in float32; then the floor's scratch
    nisa.iota(pos, pattern=[[1, nj]], offset=j0, channel_multiplier=0)
    index = nl.ndarray((top, nj * c), dtype=nl.uint32, name="column_index")
    src = index if c == 1 else nl.ndarray((top, nj), dtype=nl.int32, name="src_w_idx")
    floor_by_cast(src, pos, plan.w.scale, scratch=pos)  # floor(float32(j) * float32(in_w/out_w))
    ops = ([(nl.minimum, plan.w.limit)] if plan.w.limit is not None else []) + ([(nl.subtract, s0)] if s0 else [])
    ops += [(nl.multiply, c)] if c > 1 else []
    for k in range(0, len(ops), 2):  # min(src_w, in_w - 1) - s0, times c: exact in float32 (values below 2**24)
        (op0, operand0), *rest = ops[k:k + 2]
        nisa.tensor_scalar(src, src, op0=op0, operand0=operand0,
                           **({"op1": rest[0][0], "operand1": rest[0][1]} if rest else {}))
    if c == 1:
        return index
    spread = index.ap(pattern=[[nj * c, top], [c, nj], [1, c]])
    nisa.iota(spread, pattern=[[0, nj], [1, c]], offset=0, channel_multiplier=0)  # the channel
    nisa.tensor_tensor(spread, src.ap(pattern=[[nj, top], [1, nj], [0, c]]), spread, op=nl.add)  # plus the first
    return index


def tile_elements(tile) -> int:
    """Elements per partition of an SBUF tile: the partition step of its access patterns."""
    return math.prod(tile.shape[1:])


def expand_columns(sources, expanded, q0, p, k_rows, ns, chunk, c, groups, at, column_index):
    """Write the chunk's output columns, rows of nj * c elements, to partitions q0 .. q0 + p - 1 of ``expanded``
    from ``sources`` (rows of ns source columns, column ``src`` at ``at(src)``): one nc_n_gather per row with the
    chunk's ``column_index``, else a tensor_copy per column group."""
    nj, j0 = chunk.nj, chunk.j0
    src_part, out_part = tile_elements(sources), tile_elements(expanded)
    if column_index is not None:  # one in-partition gather per row: output element e reads source element index[e]
        for k in range(k_rows):
            # dst: row k of partitions q0.., its nj * c elements; data: the row's span of ns * c source elements
            nisa.nc_n_gather(dst=expanded.ap(pattern=[[out_part, p], [1, nj * c]], offset=q0 * out_part + k * nj * c),
                             data=sources.ap(pattern=[[src_part, p], [1, ns * c]], offset=q0 * src_part + k * ns * c),
                             indices=column_index[q0:q0 + p, 0:nj * c])
        return
    busy = {nisa.vector_engine: 0.0, nisa.gpsimd_engine: 0.0}
    halves = [(groups, False)]
    if splits_columns(chunk, sources.dtype.itemsize):
        # the right half of the columns on the scalar engine, beside the left half's copies: disjoint spans of the
        # tile, so neither waits for the other (S2), and no turn on the port GpSimd and the vector engine share (E4)
        left, right = split_groups(groups, chunk.runs[len(chunk.runs) // 2].first)
        halves = [(left, False), (right, True)]
    for part, on_scalar in halves:
        for g in part:  # narrow pixels: repeat columns on chip
            src_step = at(g.src0 + g.src_step) - at(g.src0) if g.count > 1 else 0
            s_pairs, d_pairs = broadcast_pairs(
                [[src_part, p], [ns * c, k_rows], [src_step * c, g.count], [0, g.repeat], [1, c]],  # sources
                [[out_part, p], [nj * c, k_rows], [g.out_step * c, g.count], [c, g.repeat], [1, c]])  # outputs
            dst = expanded.ap(pattern=d_pairs, offset=q0 * out_part + (g.out0 - j0) * c)
            src = sources.ap(pattern=s_pairs, offset=q0 * src_part + at(g.src0) * c)
            if on_scalar:  # exact: every value of the dtype is a float32 (SCALAR_COPY_DTYPES)
                nisa.activation(dst, nl.copy, src)
                continue
            # the vector engine or GpSimd, whichever is done first (both copy bit-exactly; on trn2 side by side)
            engine = min(busy, key=lambda e: busy[e] + _copy_ns(e, k_rows * g.count * g.repeat * c))
            busy[engine] += _copy_ns(engine, k_rows * g.count * g.repeat * c)
            nisa.tensor_copy(dst=dst, src=src, engine=engine)


#: Dtypes whose column copies share the scalar engine: the 1-byte ones (every machine dtype of 1 byte is one of
#: these integers, and float32 holds each of their values, so the activation's float32 copy is bit-exact); and the
#: runs each half of a chunk keeps at least for its columns to be split between the engines.
SCALAR_COPY_DTYPES = (nl.uint8, nl.int8)
SCALAR_MIN_RUNS = 16


def splits_columns(chunk, item: int) -> bool:
    """Whether ``expand_columns`` splits the chunk's columns of ``item``-byte elements with the scalar engine."""
    return item == 1 and len(chunk.runs) >= 2 * SCALAR_MIN_RUNS


def copy_count(chunk, groups: int, item: int) -> int:
    """Copies ``expand_columns`` issues at most for a chunk's ``groups`` column groups of ``item``-byte elements
    (a group cut in two where the columns split between the engines), for instruction counts without tracing."""
    return 2 * groups if splits_columns(chunk, item) else groups


def split_groups(groups, mid: int) -> tuple[list, list]:
    """``groups`` cut at output column ``mid`` (a run's first column): the members left of it, and the rest."""
    left, right = [], []
    for g in groups:
        k = 0 if g.out0 >= mid else g.count if g.count == 1 else min(g.count, ceil_div(mid - g.out0, g.out_step))
        if k:
            left.append(g._replace(count=k))
        if k < g.count:
            right.append(g._replace(out0=g.out0 + k * g.out_step, src0=g.src0 + k * g.src_step, count=g.count - k))
    return left, right


def _copy_ns(engine, elements: int) -> float:
    """A tensor_copy's time on the engine, on trn2 (where the vector engine and GpSimd copy side by side):
    fixed cycles (E2, E3b) plus one cycle per element, at the engine's clock."""
    p = TARGETS["trn2"]
    if engine == nisa.vector_engine:
        return (p.vector_fixed_cycles + max(p.vector_floor_cycles, elements)) / p.clock_ghz
    return (p.gpsimd_fixed_cycles + max(p.vector_floor_cycles, elements)) / p.gpsimd_ghz

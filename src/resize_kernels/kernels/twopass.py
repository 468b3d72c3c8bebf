"""resize_nearest_two_pass_kernel: one axis at a time through an HBM scratch tensor, whatever the map's shape.

The map is separable, so a resize is two one-axis gathers: columns (partitions
hold output columns; each gathers its source column of every row, the rows and
channels along the free dimension) and rows (partitions hold output rows; each
gathers its whole source row, out_w * C contiguous elements). Each pass's index
graph is one tile for all its tiles, and its DMAs are one gather and one store
per tile of 128 partitions and 64 KiB each: the instruction count grows with
the output's height plus width over 128, never with its pixel count, however
irregular the map. The price is the scratch tensor, written and read once more.
The pass that shrinks the data goes first, so the scratch is the smaller of
in_h x out_w and out_h x in_w.
"""

from __future__ import annotations

import math

import numpy as np

from .. import contract, semantics
from ..nki import isa as nisa
from ..nki import language as nl
from .dma import CHUNK_BYTES, channel_chunk, partition_pieces
from .helpers import scaled_floor, source_columns, table_tile
from .plan import plan_resize
from .registration import FORWARD, KernelRecord, register


#: Tiles (of 128 output columns or rows) whose indices one index tile holds: 2 KiB per partition, so that SBUF
#: holds a pass's index work and data tiles whatever the output's width or height.
INDEX_TILES = 512


def resize_nearest_two_pass_kernel(data_tensor, out_shape, convention=None):
    """Nearest-neighbour resize as a column gather and a row gather through an HBM scratch tensor.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved).
    Constraints: the resize contract (in_b == out_b, in_c == out_c, sizes below
    2**24, fewer than 2**31 elements per tensor). The scratch tensor,
    (in_b, in_h, out_w, C) or (in_b, out_h, in_w, C), whichever is smaller, then
    fits too: its size is at most the geometric mean of the input's and the
    output's.
    Passes: columns (``_gather_columns``: 128 output columns per tile, a data
    tile of (columns, batches, rows, channel chunk) of at most 64 KiB per
    partition, one gather and one store per range of partitions) and rows
    (``_gather_rows``: 128 output rows of a batch per tile, a row cut
    into 64 KiB pieces, one gather and one store per range of partitions), each
    pass's indices built per INDEX_TILES tiles: SBUF per partition stays bounded
    whatever the shape (the selection stage's fallback).
    ``convention`` (``semantics.IndexConvention``; None: the compiler's) may be
    any: its index tiles are then tables fixed at trace time.
    """
    name = "resize_nearest_two_pass_kernel"
    in_shape, out_shape = contract.resize_shapes(name, data_tensor.shape, out_shape)
    plan = plan_resize(in_shape, out_shape, convention or semantics.COMPILER)
    in_b, in_h, in_w, c = in_shape
    _, out_h, out_w, _ = out_shape
    columns_first = in_h * out_w <= out_h * in_w
    scratch_shape = (in_b, in_h, out_w, c) if columns_first else (in_b, out_h, in_w, c)
    dtype = data_tensor.dtype
    scratch = nl.ndarray(scratch_shape, dtype=dtype, buffer=nl.shared_hbm, name="scratch")
    out_tensor = nl.ndarray(out_shape, dtype=dtype, buffer=nl.shared_hbm, name="out_tensor")
    if columns_first:
        _gather_columns(data_tensor, scratch, plan)
        _gather_rows(scratch, out_tensor, plan)
    else:
        _gather_rows(data_tensor, scratch, plan)
        _gather_columns(scratch, out_tensor, plan)
    return out_tensor


def _gather_columns(src, dst, plan):
    """dst[b, r, ow, c] = src[b, r, src_w(ow), c] for every row r: the width's map, rows and channels carried along."""
    b, rows, in_w, c = src.shape
    out_w = dst.shape[2]
    item = src.dtype.itemsize
    chunk = channel_chunk(c, item)
    units = max(1, CHUNK_BYTES // (chunk * item))  # (batch, row) pairs per data tile
    nr = min(rows, units)
    nb = min(b, max(1, units // nr))
    pmax = nl.tile_size.pmax
    pixels = src.reshape((b * rows * in_w, c))  # the gather indexes source pixels
    tiles = math.ceil(out_w / pmax)
    for t0 in nl.affine_range(0, tiles, INDEX_TILES):  # column tiles t0 .., their indices in one index tile
        src_w = source_columns(plan.w, first=t0 * pmax, tiles=min(INDEX_TILES, tiles - t0))
        for t in nl.affine_range(src_w.shape[1]):
            j0 = (t0 + t) * pmax
            n = min(pmax, out_w - j0)
            for b0 in nl.affine_range(0, b, nb):
                bb = min(nb, b - b0)
                for r0 in nl.affine_range(0, rows, nr):
                    rr = min(nr, rows - r0)
                    for c0 in nl.affine_range(0, c, chunk):
                        cc = min(chunk, c - c0)
                        tile = nl.ndarray((n, bb, rr, cc), dtype=src.dtype, name="columns_sbuf")
                        for p0, p1 in partition_pieces(n, bb * rr * cc * item):
                            nisa.dma_copy(dst=tile[p0:p1], src=pixels.ap(
                                pattern=[[c, p1 - p0],  # partitions: output columns, pixels from the index tile
                                         [rows * in_w * c, bb],  # batches b0 ..
                                         [in_w * c, rr],  # rows r0 ..
                                         [1, cc]],  # channels c0 ..
                                offset=((b0 * rows + r0) * in_w) * c + c0,
                                vector_offset=src_w[p0:p1, t:t + 1], indirect_dim=0))
                            nisa.dma_copy(dst=dst.ap(
                                pattern=[[c, p1 - p0],  # output columns j0 + p0 ..
                                         [rows * out_w * c, bb],  # batches
                                         [out_w * c, rr],  # rows
                                         [1, cc]],  # channels
                                offset=((b0 * rows + r0) * out_w + j0 + p0) * c + c0), src=tile[p0:p1])


def _gather_rows(src, dst, plan):
    """dst[b, oh, :, :] = src[b, src_h(oh), :, :]: the height's map, whole rows of width * C elements."""
    b, in_rows, width, c = src.shape
    out_h = dst.shape[1]
    row = width * c
    item = src.dtype.itemsize
    piece = max(1, CHUNK_BYTES // item)  # elements of a row per DMA
    pmax = nl.tile_size.pmax
    bases = _tile_bases(plan).tolist()
    src_rows, dst_rows = src.reshape((b * in_rows, row)), dst.reshape((b * out_h, row))
    tiles = math.ceil(out_h / pmax)
    for t0 in nl.affine_range(0, tiles, INDEX_TILES):  # row tiles t0 .., their indices in one index tile
        rows_of = _row_indices(plan, t0, min(INDEX_TILES, tiles - t0))
        for bi in nl.affine_range(b):
            for t in nl.affine_range(rows_of.shape[1]):
                oh0 = (t0 + t) * pmax
                n = min(pmax, out_h - oh0)
                for e0 in nl.affine_range(0, row, piece):
                    ee = min(piece, row - e0)
                    tile = nl.ndarray((n, ee), dtype=src.dtype, name="rows_sbuf")
                    for p0, p1 in partition_pieces(n, ee * item):
                        nisa.dma_copy(dst=tile[p0:p1], src=src_rows.ap(
                            pattern=[[row, p1 - p0],  # partitions: output rows, source rows from the index tile
                                     [1, ee]],  # elements e0 .. of the row
                            offset=(bi * in_rows + bases[t0 + t]) * row + e0,
                            vector_offset=rows_of[p0:p1, t:t + 1], indirect_dim=0))
                        nisa.dma_copy(dst=dst_rows.ap(
                            pattern=[[row, p1 - p0],  # output rows oh0 + p0 ..
                                     [1, ee]],  # elements e0 ..
                            offset=(bi * out_h + oh0 + p0) * row + e0), src=tile[p0:p1])


def _row_indices(plan, t0: int, tiles: int):
    """An int32 (min(128, out_h), tiles) tile: column t, partition p holds src_h(128 (t0 + t) + p) - src_h(128 (t0 +
    t)).

    Relative to the tile's first source row (folded into the DMA offset at
    trace time), so the values stay small; rows past out_h get a clamped,
    unused index. A convention other than the compiler's is a table fixed at
    trace time, relative to the tile's lowest source row (its first, where the
    map is monotone).
    """
    h = plan.h
    pmax = nl.tile_size.pmax
    p = min(pmax, h.out_size)
    if not h.on_chip:
        rows = np.minimum(np.arange(p)[:, None] + pmax * np.arange(t0, t0 + tiles)[None, :], h.out_size - 1)
        return table_tile(h.src[rows] - _tile_bases(plan)[None, t0:t0 + tiles], "src_h_idx")
    pos = nl.ndarray((p, tiles), dtype=nl.int32, name="out_row")
    nisa.iota(pos, pattern=[[pmax, tiles]], offset=t0 * pmax, channel_multiplier=1)
    src = scaled_floor(pos, h.scale, h.in_size - 1, "src_h")
    first = nl.ndarray((p, tiles), dtype=nl.int32, name="tile_first_row")
    nisa.iota(first, pattern=[[pmax, tiles]], offset=t0 * pmax, channel_multiplier=0)
    base = scaled_floor(first, h.scale, h.in_size - 1, "tile_src_row")
    nisa.tensor_tensor(src, src, base, op=nl.subtract)
    return src


def _tile_bases(plan) -> np.ndarray:
    """The source row each tile of 128 output rows indexes from: its first row's, or its lowest where the map
    steps back (a table's)."""
    src, pmax = plan.h.src, nl.tile_size.pmax
    return src[::pmax] if plan.h.monotone else np.minimum.reduceat(src, np.arange(0, len(src), pmax))


register(KernelRecord("twopass", FORWARD, resize_nearest_two_pass_kernel, rank=6, conventions=True, fallback=True))

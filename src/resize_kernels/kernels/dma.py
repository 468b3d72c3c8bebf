"""DMA planning shared by the kernels: channel chunks, partition ranges, broadcast patterns, gather-and-store.

A tile's payload per partition is bounded (``CHUNK_BYTES``) so that any channel
count fits in SBUF; a tile's transfers are cut by partitions so that they
spread over the DMA queues; a store that repeats rows or pixels reads its SBUF
tile through step-0 pairs.
"""

from __future__ import annotations

from ..machine.isa import DMA_QUEUES
from ..nki import isa as nisa
from ..nki import language as nl

#: Channels per DMA are split so that a data tile takes at most this many bytes per partition.
CHUNK_BYTES = 64 * 1024
#: A tile's DMAs are cut into up to DMA_QUEUES ranges, each of at least 8 partitions and 64 KiB, so that
#: the fixed cost of a transfer stays small beside its payload.
MIN_PIECE_PARTITIONS, MIN_PIECE_BYTES = 8, 64 * 1024


def channel_chunk(channels: int, itemsize: int, tiles: int = 1) -> int:
    """Channels per DMA: as many as fit ``tiles`` tiles of this itemsize in CHUNK_BYTES per partition (at least 1)."""
    return max(1, min(channels, CHUNK_BYTES // (tiles * itemsize)))


def partition_pieces(n: int, bytes_per_partition: int) -> list[tuple[int, int]]:
    """Partitions 0..n-1 of a tile cut into near-equal ranges (p0, p1), one DMA each.

    Separate DMAs can run on separate queues, and a range's store waits only for
    its own load, so a tile's transfers overlap instead of queueing behind one
    another.
    """
    pieces = max(1, min(DMA_QUEUES, n // MIN_PIECE_PARTITIONS, n * bytes_per_partition // MIN_PIECE_BYTES))
    bounds = [n * k // pieces for k in range(pieces + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def broadcast_pairs(src_pairs, dst_pairs):
    """The two sides' [step, num] pairs without the inner pairs of num 1 (dropped from both sides alike)."""
    last = len(src_pairs) - 1
    keep = [k for k, (_, num) in enumerate(src_pairs) if num > 1 or k in (0, last)]
    return [src_pairs[k] for k in keep], [dst_pairs[k] for k in keep]


def gather_store(data_view, out_view, batches: int, chunk: int):
    """The data movement of the row-tiled kernels: ``move(n, load_indices, src_pixel, dst_pixel)``.

    ``data_view`` and ``out_view`` are the (batches * pixels, channels) views of
    input and output. Per batch and channel chunk, move gathers n pixels (source
    pixel src_pixel + load_indices[i]) into one tile and stores them as the dense
    run of output pixels from dst_pixel on: one indirect gather, one strided store.
    """
    (in_rows, in_c), (out_rows, out_c) = data_view.shape, out_view.shape
    in_seqlen, out_seqlen = in_rows // batches, out_rows // batches

    def move(n, load_indices, src_pixel, dst_pixel):
        for b in nl.affine_range(batches):
            for c0 in nl.affine_range(0, in_c, chunk):
                cc = min(chunk, in_c - c0)
                tile = nl.ndarray((n, cc), dtype=data_view.dtype, name="loaded_tile_sbuf")
                # gather: partition i reads pixel src_pixel + load_indices[i] of batch b ([in_c, n] is replaced by
                # the index tile's rows); [1, cc]: cc contiguous channels from c0
                nisa.dma_copy(dst=tile, src=data_view.ap(
                    pattern=[[in_c, n], [1, cc]], offset=(b * in_seqlen + src_pixel) * in_c + c0,
                    vector_offset=load_indices, indirect_dim=0))
                # store: [out_c, n] n consecutive output pixels; [1, cc] their channels from c0
                nisa.dma_copy(dst=out_view.ap(pattern=[[out_c, n], [1, cc]],
                                              offset=(b * out_seqlen + dst_pixel) * out_c + c0), src=tile)
    return move

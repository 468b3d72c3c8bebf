"""resize_nearest_batched_kernel: the exact kernel's tiles, with the index graph built for all tiles at once.

The exact kernel builds the load indices of each tile with ~14 instructions of
a (n, 1) column. Here tiles are laid along the free dimension, tile t in column
t of one (128, n_tiles) index tile, so the whole index graph is a constant
number of instructions whatever the output size; then each tile is one gather
and one store (per batch and channel chunk), reading its column as the vector
offset. Arithmetic stays exact as in the exact kernel: each tile's first source
row is folded into the DMA offset at trace time, and on-chip values stay below
2**24.
"""

from __future__ import annotations

import math

from .. import contract
from ..nki import isa as nisa
from ..nki import language as nl
from .dma import channel_chunk, gather_store
from .helpers import scaled_floor, source_columns, tile_rows_and_columns
from .plan import plan_resize
from .registration import FORWARD, KernelRecord, per_tile, register


def resize_nearest_batched_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize by indirect-DMA gather, with one index graph for every tile.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved).
    Constraints: the resize contract (in_b == out_b, in_c == out_c, heights and
    widths below 2**24, fewer than 2**31 elements per tensor); channels are
    split into chunks of at most 64 KiB per partition.
    Tiling (as the exact kernel): for out_w <= 64, a tile holds floor(128 / out_w)
    whole output rows; otherwise up to 128 pixels of one row. The load indices of
    all tiles form one (128, n_tiles) tile built by a constant number of
    instructions. Per (tile, batch, channel chunk): one gather, one store.
    """
    in_shape, out_shape = contract.resize_shapes("resize_nearest_batched_kernel", data_tensor.shape, out_shape)
    plan = plan_resize(in_shape, out_shape)
    in_b, in_h, in_w, in_c = in_shape
    out_b, out_h, out_w, out_c = out_shape
    out_tensor = nl.ndarray(out_shape, dtype=data_tensor.dtype, buffer=nl.shared_hbm, name="out_tensor")
    data_view = data_tensor.reshape((in_b * in_h * in_w, in_c))
    out_view = out_tensor.reshape((out_b * out_h * out_w, out_c))
    move = gather_store(data_view, out_view, in_b, channel_chunk(in_c, data_tensor.dtype.itemsize))
    src_h = plan.h.src.tolist()
    pmax = nl.tile_size.pmax

    if plan.row_tiles is not None:
        rows, tiles = plan.row_tiles
        load_indices = _row_tile_indices(plan, rows, len(tiles))
        for t in nl.affine_range(len(tiles)):
            oh0, nrows = tiles[t]
            n = nrows * out_w
            move(n, load_indices[0:n, t:t + 1], src_h[oh0] * in_w, oh0 * out_w)
    else:
        src_w = source_columns(plan.w, tiles=math.ceil(out_w / pmax))
        for oh in nl.affine_range(out_h):
            for t in nl.affine_range(src_w.shape[1]):
                n = min(pmax, out_w - t * pmax)
                move(n, src_w[0:n, t:t + 1], src_h[oh] * in_w, oh * out_w + t * pmax)
    return out_tensor


def _row_tile_indices(plan, rows, n_tiles):
    """(rows * out_w, n_tiles) int32: column t holds tile t's load indices relative to its first source row.

    Partition i of tile t is pixel (oh, ow) = (t * rows + r, ow) with (r, ow) =
    divmod(i, out_w), and its index is (src_h(oh) - src_h(t * rows)) * in_w + src_w(ow).
    """
    h, w = plan.h, plan.w
    n = rows * w.out_size
    _, r, ow = tile_rows_and_columns(n, n_tiles, w.out_size)
    src_w = scaled_floor(ow, w.scale, w.in_size - 1, "src_w")
    oh0 = nl.ndarray((n, n_tiles), dtype=nl.int32, name="tile_first_row")
    nisa.iota(oh0, pattern=[[rows, n_tiles]], offset=0, channel_multiplier=0)
    base = scaled_floor(oh0, h.scale, h.in_size - 1, "tile_src_row")
    oh = nl.ndarray((n, n_tiles), dtype=nl.int32, name="out_row")
    nisa.tensor_tensor(oh, oh0, r, op=nl.add)
    src_h = scaled_floor(oh, h.scale, h.in_size - 1, "src_h")
    load_indices = nl.ndarray((n, n_tiles), dtype=nl.int32, name="load_indices")
    nisa.tensor_tensor(load_indices, src_h, base, op=nl.subtract)
    nisa.tensor_scalar(load_indices, load_indices, op0=nl.multiply, operand0=w.in_size)
    nisa.tensor_tensor(load_indices, load_indices, src_w, op=nl.add)
    return load_indices


register(KernelRecord("batched", FORWARD, resize_nearest_batched_kernel, rank=4,
                      least_instructions=per_tile(2, across_batches=True)))

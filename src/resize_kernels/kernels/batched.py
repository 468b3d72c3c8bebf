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

from ..nki import isa as nisa
from ..nki import language as nl
from .axis_maps import source_indices
from .exact import CHUNK_BYTES, check_exact_limits, gather_store, multi_row_tiles
from .helpers import floor_nisa_kernel
from .resize import check_resize_shapes


def _scaled_floor(pos, scale: float, limit: int, name: str):
    """min(floor(pos * scale), limit) of an int32 tile ``pos``, as a new int32 tile of its shape."""
    p, f = pos.shape
    prod = nl.ndarray((p, f), dtype=nl.float32, name=f"{name}_f32")
    nisa.tensor_scalar(prod, pos, op0=nl.multiply, operand0=scale)
    out = nl.ndarray((p, f), dtype=nl.int32, name=name)
    floor_nisa_kernel(prod, out, p, f)
    nisa.tensor_scalar(out, out, op0=nl.minimum, operand0=limit)
    return out


def source_columns(in_w: int, out_w: int):
    """An int32 (min(128, out_w), ceil(out_w / 128)) tile: column t, partition p holds src_w(128 t + p).

    Every column tile's source columns in one graph of 11 instructions; entries
    past out_w in the last column are valid (clamped) but unused.
    """
    pmax = nl.tile_size.pmax
    n_tiles = math.ceil(out_w / pmax)
    ow = nl.ndarray((min(pmax, out_w), n_tiles), dtype=nl.int32, name="out_col")
    nisa.iota(ow, pattern=[[pmax, n_tiles]], offset=0, channel_multiplier=1)
    return _scaled_floor(ow, 1.0 * in_w / out_w, in_w - 1, "src_w_idx")


def resize_nearest_batched_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize by indirect-DMA gather, with one index graph for every tile.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved).
    Constraints: in_b == out_b, in_c == out_c, heights and widths below 2**24,
    fewer than 2**31 elements per tensor; channels are split into chunks of at
    most 64 KiB per partition.
    Tiling (as the exact kernel): for out_w <= 64, a tile holds floor(128 / out_w)
    whole output rows; otherwise up to 128 pixels of one row. The load indices of
    all tiles form one (128, n_tiles) tile built by a constant number of
    instructions. Per (tile, batch, channel chunk): one gather, one store.
    """
    name = "resize_nearest_batched_kernel"
    check_resize_shapes(name, data_tensor.shape, out_shape)
    check_exact_limits(name, data_tensor.shape, out_shape)
    in_b, in_h, in_w, in_c = data_tensor.shape
    out_b, out_h, out_w, out_c = out_shape
    out_tensor = nl.ndarray(out_shape, dtype=data_tensor.dtype, buffer=nl.shared_hbm, name="out_tensor")

    src_h = source_indices(in_h, out_h).tolist()
    in_seqlen, out_seqlen = in_h * in_w, out_h * out_w
    data_view = data_tensor.reshape((in_b * in_seqlen, in_c))
    out_view = out_tensor.reshape((out_b * out_seqlen, out_c))
    chunk = max(1, min(in_c, CHUNK_BYTES // data_tensor.dtype.itemsize))
    pmax = nl.tile_size.pmax

    move = gather_store(data_view, out_view, in_b, chunk)

    tiling = multi_row_tiles(src_h, in_w, out_w)
    if tiling is not None:
        rows, row_tiles = tiling
        load_indices = _row_tile_indices(rows, len(row_tiles), in_h, in_w, out_h, out_w)
        for t in nl.affine_range(len(row_tiles)):
            oh0, nrows = row_tiles[t]
            n = nrows * out_w
            move(n, load_indices[0:n, t:t + 1], src_h[oh0] * in_w, oh0 * out_w)
    else:
        src_w = source_columns(in_w, out_w)
        for oh in nl.affine_range(out_h):
            for t in nl.affine_range(src_w.shape[1]):
                n = min(pmax, out_w - t * pmax)
                move(n, src_w[0:n, t:t + 1], src_h[oh] * in_w, oh * out_w + t * pmax)
    return out_tensor


def _row_tile_indices(rows, n_tiles, in_h, in_w, out_h, out_w):
    """(rows * out_w, n_tiles) int32: column t holds tile t's load indices relative to its first source row.

    Partition i of tile t is pixel (oh, ow) = (t * rows + r, i - r * out_w) with
    r = floor((i + 0.5) / out_w) (the half step keeps the reciprocal's error off
    the integers), and its index is (src_h(oh) - src_h(t * rows)) * in_w + src_w(ow).
    """
    n = rows * out_w
    i = nl.ndarray((n, n_tiles), dtype=nl.int32, name="tile_pos")
    nisa.iota(i, pattern=[[0, n_tiles]], offset=0, channel_multiplier=1)
    r_f32 = nl.ndarray((n, n_tiles), dtype=nl.float32, name="row_f32")
    nisa.tensor_scalar(r_f32, i, op0=nl.add, operand0=0.5, op1=nl.multiply, operand1=1.0 / out_w)
    r = nl.ndarray((n, n_tiles), dtype=nl.int32, name="tile_row")
    floor_nisa_kernel(r_f32, r, n, n_tiles)
    ow = nl.ndarray((n, n_tiles), dtype=nl.int32, name="out_col")
    nisa.tensor_scalar(ow, r, op0=nl.multiply, operand0=out_w)
    nisa.tensor_tensor(ow, i, ow, op=nl.subtract)  # ow = i - r * out_w
    src_w = _scaled_floor(ow, 1.0 * in_w / out_w, in_w - 1, "src_w_idx")

    oh0 = nl.ndarray((n, n_tiles), dtype=nl.int32, name="tile_first_row")
    nisa.iota(oh0, pattern=[[rows, n_tiles]], offset=0, channel_multiplier=0)
    base = _scaled_floor(oh0, 1.0 * in_h / out_h, in_h - 1, "tile_src_row")
    oh = nl.ndarray((n, n_tiles), dtype=nl.int32, name="out_row")
    nisa.tensor_tensor(oh, oh0, r, op=nl.add)
    src_h = _scaled_floor(oh, 1.0 * in_h / out_h, in_h - 1, "src_h_idx")
    load_indices = nl.ndarray((n, n_tiles), dtype=nl.int32, name="load_indices")
    nisa.tensor_tensor(load_indices, src_h, base, op=nl.subtract)
    nisa.tensor_scalar(load_indices, load_indices, op0=nl.multiply, operand0=in_w)
    nisa.tensor_tensor(load_indices, load_indices, src_w, op=nl.add)
    return load_indices

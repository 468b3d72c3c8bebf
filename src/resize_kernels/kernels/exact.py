"""resize_nearest_exact_kernel: the seed's two-DMA gather, exact for every accepted shape.

The seed computes each pixel's row and column from its flat output position with
float32 arithmetic, which misplaces pixels (reciprocal multiply) and stops being
exact at 2**24. Here tiles are aligned to output rows, so the row of every pixel
is known when the kernel is traced: its source row is folded, exactly, into the
DMA offset in Python, and the engines only compute column indices and small
row differences, all below 2**24 where float32 is exact. The index work is also
hoisted out of the batch loop (it does not depend on the batch).
"""

from __future__ import annotations

import math

from ..nki import isa as nisa
from ..nki import language as nl
from .axis_maps import source_indices
from .helpers import floor_nisa_kernel
from .resize import check_resize_shapes

EXACT_LIMIT = 1 << 24  # float32 holds every integer below this
ADDRESS_LIMIT = 1 << 31  # flat element addresses must fit an int32 DMA offset
CHUNK_BYTES = 64 * 1024  # channels per DMA are split so that a tile takes at most this per partition


def check_exact_limits(kernel_name, data_shape, out_shape):
    for d in (*data_shape[1:3], *out_shape[1:3]):
        if d >= EXACT_LIMIT:
            raise ValueError(f"{kernel_name} requires heights and widths below 2**24, got {tuple(data_shape)} -> "
                             f"{tuple(out_shape)}")
    for what, shape in (("input", data_shape), ("output", out_shape)):
        if math.prod(shape) >= ADDRESS_LIMIT:
            raise ValueError(f"{kernel_name} requires fewer than 2**31 elements per tensor, got {what} shape "
                             f"{tuple(shape)} ({math.prod(shape):,} elements); split the batch or the channels")


def _source_columns(first: int, n: int, w_scale: float, in_w: int, pos=None):
    """An int32 (n, 1) tile of min(floor(ow * w_scale), in_w - 1) for ow = first .. first + n - 1 (or ``pos``)."""
    if pos is None:
        pos = nl.ndarray((n, 1), dtype=nl.int32, name="out_col")
        nisa.iota(pos, pattern=[[1, 1]], offset=first, channel_multiplier=1)
    prod = nl.ndarray((n, 1), dtype=nl.float32, name="src_w_f32")
    nisa.tensor_scalar(prod, pos, op0=nl.multiply, operand0=w_scale)
    src_w = nl.ndarray((n, 1), dtype=nl.int32, name="src_w_idx")
    floor_nisa_kernel(prod, src_w, n, 1)
    nisa.tensor_scalar(src_w, src_w, op0=nl.minimum, operand0=in_w - 1)
    return src_w


def resize_nearest_exact_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize by indirect-DMA gather, exact for every accepted shape.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved).
    Constraints: in_b == out_b, in_c == out_c, heights and widths below 2**24,
    fewer than 2**31 elements per tensor. Channels are split into chunks of at
    most 64 KiB per partition, so any channel count fits in SBUF.
    Tiling: for out_w <= 64, a tile holds floor(128 / out_w) whole output rows;
    otherwise a tile is up to 128 pixels of one row. Per (tile, batch, channel
    chunk): one indirect gather, one strided store.
    """
    name = "resize_nearest_exact_kernel"
    check_resize_shapes(name, data_tensor.shape, out_shape)
    check_exact_limits(name, data_tensor.shape, out_shape)
    in_b, in_h, in_w, in_c = data_tensor.shape
    out_b, out_h, out_w, out_c = out_shape
    out_tensor = nl.ndarray(out_shape, dtype=data_tensor.dtype, buffer=nl.shared_hbm, name="out_tensor")

    h_scale, w_scale = 1.0 * in_h / out_h, 1.0 * in_w / out_w
    src_h = source_indices(in_h, out_h).tolist()
    in_seqlen, out_seqlen = in_h * in_w, out_h * out_w
    data_view = data_tensor.reshape((in_b * in_seqlen, in_c))
    out_view = out_tensor.reshape((out_b * out_seqlen, out_c))
    chunk = max(1, min(in_c, CHUNK_BYTES // data_tensor.dtype.itemsize))
    pmax = nl.tile_size.pmax

    move = gather_store(data_view, out_view, in_b, chunk)

    tiling = multi_row_tiles(src_h, in_w, out_w)
    if tiling is not None:
        multi_row(*tiling, src_h, h_scale, w_scale, in_h, in_w, out_w, move)
    else:
        for c0 in nl.affine_range(0, out_w, pmax):
            n = min(pmax, out_w - c0)
            src_w = _source_columns(c0, n, w_scale, in_w)
            for oh in range(out_h):
                move(n, src_w, src_h[oh] * in_w, oh * out_w + c0)
    return out_tensor


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
                nisa.dma_copy(dst=tile, src=data_view.ap(
                    pattern=[[in_c, n], [1, cc]], offset=(b * in_seqlen + src_pixel) * in_c + c0,
                    vector_offset=load_indices, indirect_dim=0))
                nisa.dma_copy(dst=out_view.ap(pattern=[[out_c, n], [1, cc]],
                                              offset=(b * out_seqlen + dst_pixel) * out_c + c0), src=tile)
    return move


def multi_row_tiles(src_h: list, in_w: int, out_w: int):
    """(rows per tile, [(first row, rows)]) when tiles of whole output rows work, else None.

    They work when a 128-partition tile holds at least two rows and every tile's
    on-chip index (row difference * in_w + column) stays below 2**24.
    """
    rows = nl.tile_size.pmax // out_w
    tiles = [(oh0, min(rows, len(src_h) - oh0)) for oh0 in range(0, len(src_h), max(rows, 1))]
    if rows >= 2 and all((src_h[oh0 + r - 1] - src_h[oh0] + 1) * in_w < EXACT_LIMIT for oh0, r in tiles):
        return rows, tiles
    return None


def multi_row(rows, row_tiles, src_h, h_scale, w_scale, in_h, in_w, out_w, move):
    """Tiles of whole rows: partition i is pixel (r, ow) = divmod(i, out_w) of the tile's rows."""
    n_max = rows * out_w
    i = nl.ndarray((n_max, 1), dtype=nl.int32, name="tile_pos")
    nisa.iota(i, pattern=[[1, 1]], offset=0, channel_multiplier=1)
    # r = floor((i + 0.5) / out_w): the half step keeps the reciprocal's error (< 2**-16) off the integers
    r_f32 = nl.ndarray((n_max, 1), dtype=nl.float32, name="row_f32")
    nisa.tensor_scalar(r_f32, i, op0=nl.add, operand0=0.5, op1=nl.multiply, operand1=1.0 / out_w)
    r = nl.ndarray((n_max, 1), dtype=nl.int32, name="tile_row")
    floor_nisa_kernel(r_f32, r, n_max, 1)
    ow = nl.ndarray((n_max, 1), dtype=nl.int32, name="out_col")
    nisa.tensor_scalar(ow, r, op0=nl.multiply, operand0=out_w)
    nisa.tensor_tensor(ow, i, ow, op=nl.subtract)  # ow = i - r * out_w
    src_w = _source_columns(0, n_max, w_scale, in_w, pos=ow)

    for t in nl.affine_range(len(row_tiles)):
        oh0, nrows = row_tiles[t]
        n = nrows * out_w
        # load_indices = (src_h(oh0 + r) - src_h(oh0)) * in_w + src_w: small, exact in float32
        oh = nl.ndarray((n, 1), dtype=nl.int32, name="out_row")
        nisa.tensor_scalar(oh, r[0:n, 0:1], op0=nl.add, operand0=oh0)
        src_h_f32 = nl.ndarray((n, 1), dtype=nl.float32, name="src_h_f32")
        nisa.tensor_scalar(src_h_f32, oh, op0=nl.multiply, operand0=h_scale)
        src_h_idx = nl.ndarray((n, 1), dtype=nl.int32, name="src_h_idx")
        floor_nisa_kernel(src_h_f32, src_h_idx, n, 1)
        row_offset = nl.ndarray((n, 1), dtype=nl.int32, name="row_offset")
        nisa.tensor_scalar(row_offset, src_h_idx, op0=nl.minimum, operand0=in_h - 1,
                           op1=nl.subtract, operand1=src_h[oh0])
        nisa.tensor_scalar(row_offset, row_offset, op0=nl.multiply, operand0=in_w)
        load_indices = nl.ndarray((n, 1), dtype=nl.int32, name="load_indices")
        nisa.tensor_tensor(load_indices, row_offset, src_w[0:n, 0:1], op=nl.add)
        move(n, load_indices, src_h[oh0] * in_w, oh0 * out_w)

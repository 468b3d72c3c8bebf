"""resize_nearest_grad_kernel: the gradient of nearest-neighbour resize, for any ratio, by DMA scatter-add.

The forward kernel is a gather, out[p] = data[load_indices[p]]; its gradient is
the transposed map, a scatter-add: dx[load_indices[p]] += dy[p]. So this kernel
builds exactly the exact forward kernel's load_indices (tiles aligned to output
rows, source rows folded into the DMA offset at trace time, the same on-chip
index graph) and moves dy with the DMA engines' read-modify-write
(``dma_copy(..., dst_rmw_op=nl.add)``), where repeated destinations all count.
One code path serves every ratio: an upsample sends several dy pixels to one dx
pixel, a downsample leaves some dx pixels without any (they keep their zero).
The seed's integer-ratio reduce_window lowering is not needed here.
"""

from __future__ import annotations

import math

from ..nki import isa as nisa
from ..nki import language as nl
from .axis_maps import source_indices
from .exact import check_exact_limits, multi_row, multi_row_tiles
from .helpers import floor_nisa_kernel

#: dtypes a gradient may have; the sums are float32 for all of them.
GRAD_DTYPES = (nl.float32, nl.float16, nl.bfloat16)
#: Channels per DMA are split so that a float32 accumulator tile takes at most this per partition.
CHUNK_BYTES = 32 * 1024
#: Column tiles (of 128 pixels) whose indices are computed at once on rows wider than 64 pixels.
COLUMN_GROUP = 512


def check_grad_shapes(kernel_name, dy_shape, in_shape):
    """dy is NHWC and in_shape (the forward input, dx's shape) has dy's batch and channels."""
    if len(dy_shape) != 4:
        raise ValueError(f"{kernel_name} requires an NHWC dy tensor of rank 4, got shape {tuple(dy_shape)}")
    if not isinstance(in_shape, (tuple, list)) or len(in_shape) != 4 or not all(
            isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in in_shape):
        raise ValueError(f"{kernel_name} requires in_shape as four positive integers (N, H, W, C), got {in_shape!r}")
    if in_shape[0] != dy_shape[0] or in_shape[3] != dy_shape[3]:
        raise ValueError(f"{kernel_name} requires in_shape to have dy's batch and channels (resize changes only H "
                         f"and W), got dy {tuple(dy_shape)} and in_shape {tuple(in_shape)}")


def resize_nearest_grad_kernel(dy_tensor, in_shape):
    """Gradient of nearest-neighbour resize: dx[b, src_h(oh), src_w(ow), c] += dy[b, oh, ow, c], any ratio.

    Layouts: dy_tensor (b, out_h, out_w, c) in HBM; returns dx of ``in_shape``
    (b, in_h, in_w, c) in HBM. src_h, src_w are the forward map (asymmetric,
    floor, float32 scale), so dx is the sum, not the mean, of its dy pixels.
    Dtypes: float32, float16, bfloat16. Sums are float32: each dx element starts
    at +0.0 and adds its dy pixels one at a time in row-major (oh, ow) order
    (float16 / bfloat16 dy is widened exactly and the sum cast once at the end,
    RNE), which is semantics.resize_nearest_grad_reference bit for bit. (Rows
    wider than 65536 pixels are taken in column groups, and a dx column whose dy
    columns straddle two groups adds them group by group.)
    Constraints: heights and widths below 2**24, fewer than 2**31 elements per
    tensor; channels are split into chunks of 8192 so any count fits in SBUF.
    Steps: zero the float32 accumulator (dx itself for float32) with DMAs from a
    memset tile; per dy tile (whole rows when out_w <= 64, else up to 128 pixels
    of one row), batch and channel chunk: load dy, widen it if needed, scatter-add
    it into the accumulator; for float16 / bfloat16, cast the accumulator into dx.
    """
    name = "resize_nearest_grad_kernel"
    check_grad_shapes(name, dy_tensor.shape, in_shape)
    if dy_tensor.dtype not in GRAD_DTYPES:
        raise TypeError(f"{name} requires dy of dtype float32, float16 or bfloat16, got {dy_tensor.dtype}; "
                        f"a gradient is a sum of real values")
    check_exact_limits(name, in_shape, dy_tensor.shape)
    in_b, in_h, in_w, c = in_shape
    _, out_h, out_w, _ = dy_tensor.shape
    dtype = dy_tensor.dtype
    dx = nl.ndarray(tuple(in_shape), dtype=dtype, buffer=nl.shared_hbm, name="dx")
    acc = dx if dtype == nl.float32 else nl.ndarray(tuple(in_shape), dtype=nl.float32, buffer=nl.shared_hbm,
                                                    name="dx_f32")
    in_seqlen, out_seqlen = in_h * in_w, out_h * out_w
    acc_view = acc.reshape((in_b * in_seqlen, c))
    dy_view = dy_tensor.reshape((in_b * out_seqlen, c))
    chunk = min(c, CHUNK_BYTES // 4)
    chunks = [(c0, min(chunk, c - c0)) for c0 in range(0, c, chunk)]

    _zero(acc, math.prod(in_shape))

    def move(n, load_indices, dx_pixel, dy_pixel):
        """Add dy pixels dy_pixel .. dy_pixel + n - 1 into dx pixels dx_pixel + load_indices[i], every batch."""
        for b in nl.affine_range(in_b):
            for k in nl.affine_range(len(chunks)):
                c0, cc = chunks[k]
                tile = nl.ndarray((n, cc), dtype=dtype, name="dy_tile")
                nisa.dma_copy(dst=tile, src=dy_view.ap(pattern=[[c, n], [1, cc]],
                                                       offset=(b * out_seqlen + dy_pixel) * c + c0))
                if dtype != nl.float32:
                    wide = nl.ndarray((n, cc), dtype=nl.float32, name="dy_f32")
                    nisa.tensor_copy(dst=wide, src=tile)  # exact
                    tile = wide
                nisa.dma_copy(dst=acc_view.ap(pattern=[[c, n], [1, cc]], offset=(b * in_seqlen + dx_pixel) * c + c0,
                                              vector_offset=load_indices, indirect_dim=0),
                              src=tile, dst_rmw_op=nl.add)

    h_scale, w_scale = 1.0 * in_h / out_h, 1.0 * in_w / out_w
    src_h = source_indices(in_h, out_h).tolist()
    tiling = multi_row_tiles(src_h, in_w, out_w)
    if tiling is not None:
        multi_row(*tiling, src_h, h_scale, w_scale, in_h, in_w, out_w, move)
    else:
        _wide_rows(src_h, w_scale, in_w, out_h, out_w, move)

    if acc is not dx:
        _cast(acc, dx, math.prod(in_shape))
    return dx


def _wide_rows(src_h, w_scale, in_w, out_h, out_w, move):
    """Tiles of up to 128 pixels of one dy row; rows outer, so every dx pixel adds in row-major order."""
    pmax = nl.tile_size.pmax
    n_tiles = -(-out_w // pmax)
    for g0 in nl.affine_range(0, n_tiles, COLUMN_GROUP):
        g = min(COLUMN_GROUP, n_tiles - g0)
        src_w = _column_indices(g0 * pmax, g, w_scale, in_w)
        for oh in range(out_h):
            for t in range(g):
                c0 = (g0 + t) * pmax
                n = min(pmax, out_w - c0)
                move(n, src_w[0:n, t:t + 1], src_h[oh] * in_w, oh * out_w + c0)


def _column_indices(first, g, w_scale, in_w):
    """An int32 (128, g) tile: column t, partition p holds min(floor(ow * w_scale), in_w - 1), ow = first + 128t + p."""
    pmax = nl.tile_size.pmax
    src_w = nl.ndarray((pmax, g), dtype=nl.int32, name="src_w_idx")
    pos = nl.ndarray((pmax, g), dtype=nl.int32, name="out_col")
    nisa.iota(pos, pattern=[[pmax, g]], offset=first, channel_multiplier=1)
    prod = nl.ndarray((pmax, g), dtype=nl.float32, name="src_w_f32")
    nisa.tensor_scalar(prod, pos, op0=nl.multiply, operand0=w_scale)
    floor_nisa_kernel(prod, src_w, pmax, g)
    nisa.tensor_scalar(src_w, src_w, op0=nl.minimum, operand0=in_w - 1)
    return src_w


def _flat_blocks(total, partitions, width):
    """Cover elements 0..total-1 with (offset, p, w) blocks of p partitions x w contiguous elements each."""
    block = partitions * width
    full = total - total % block
    yield from ((off, partitions, width) for off in range(0, full, block))
    rest = total - full
    if rest >= width:
        yield full, rest // width, width
    if rest % width:
        yield total - rest % width, 1, rest % width


def _zero(acc, total):
    """acc = +0.0 everywhere (fresh memory holds garbage), by DMAs from one memset tile."""
    width = min(total, CHUNK_BYTES // 4)
    partitions = min(nl.tile_size.pmax, -(-total // width))
    zero = nl.ndarray((partitions, width), dtype=nl.float32, name="zero")
    nisa.memset(zero, 0.0)
    for off, p, w in _flat_blocks(total, partitions, width):
        nisa.dma_copy(dst=acc.ap(pattern=[[w, p], [1, w]], offset=off), src=zero[0:p, 0:w])


def _cast(acc, dx, total):
    """dx = acc cast from float32 to dx's dtype (round to nearest even), once, block by block."""
    width = min(total, CHUNK_BYTES // 4)
    partitions = min(nl.tile_size.pmax, -(-total // width))
    blocks = list(_flat_blocks(total, partitions, width))
    for k in nl.affine_range(len(blocks)):
        off, p, w = blocks[k]
        wide = nl.ndarray((p, w), dtype=nl.float32, name="dx_f32_tile")
        nisa.dma_copy(dst=wide, src=acc.ap(pattern=[[w, p], [1, w]], offset=off))
        narrow = nl.ndarray((p, w), dtype=dx.dtype, name="dx_tile")
        nisa.tensor_copy(dst=narrow, src=wide)
        nisa.dma_copy(dst=dx.ap(pattern=[[w, p], [1, w]], offset=off), src=narrow)

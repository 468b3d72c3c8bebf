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

from .. import contract, semantics
from ..intmath import ceil_div
from ..nki import isa as nisa
from ..nki import language as nl
from .dma import channel_chunk
from .helpers import row_tiles, source_columns
from .plan import plan_resize
from .registration import GRAD, KernelRecord, register

#: Column tiles (of 128 pixels) whose indices are computed at once on rows wider than 64 pixels.
COLUMN_GROUP = 512


def resize_nearest_grad_kernel(dy_tensor, in_shape, convention=None):
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
    ``convention`` (``semantics.IndexConvention``; None: the compiler's): the
    forward map's convention, any (its indices come from constant tables).
    """
    name = "resize_nearest_grad_kernel"
    dy_shape, in_shape = contract.grad_shapes(name, dy_tensor.shape, in_shape)
    contract.grad_dtype(name, dy_tensor.dtype)
    plan = plan_resize(in_shape, dy_shape, convention or semantics.COMPILER)
    in_b, in_h, in_w, c = in_shape
    _, out_h, out_w, _ = dy_shape
    dtype = dy_tensor.dtype
    dx = nl.ndarray(tuple(in_shape), dtype=dtype, buffer=nl.shared_hbm, name="dx")
    acc = dx if dtype == nl.float32 else nl.ndarray(tuple(in_shape), dtype=nl.float32, buffer=nl.shared_hbm,
                                                    name="dx_f32")
    in_seqlen, out_seqlen = in_h * in_w, out_h * out_w
    acc_view = acc.reshape((in_b * in_seqlen, c))
    dy_view = dy_tensor.reshape((in_b * out_seqlen, c))
    chunk = channel_chunk(c, 4, tiles=2)  # a float32 dy tile and (for float16 / bfloat16) the one it widens
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

    if plan.row_tiles is not None:
        row_tiles(plan, move)
    else:
        _wide_rows(plan, move)

    if acc is not dx:
        _cast(acc, dx, math.prod(in_shape))
    return dx


def _wide_rows(plan, move):
    """Tiles of up to 128 pixels of one dy row; rows outer, so every dx pixel adds in row-major order."""
    pmax = nl.tile_size.pmax
    src_h, in_w, out_w = plan.h.src.tolist(), plan.w.in_size, plan.w.out_size
    n_tiles = ceil_div(out_w, pmax)
    for g0 in nl.affine_range(0, n_tiles, COLUMN_GROUP):
        g = min(COLUMN_GROUP, n_tiles - g0)
        src_w = source_columns(plan.w, first=g0 * pmax, tiles=g)
        for oh in range(len(src_h)):
            for t in range(g):
                c0 = (g0 + t) * pmax
                n = min(pmax, out_w - c0)
                move(n, src_w[0:n, t:t + 1], src_h[oh] * in_w, oh * out_w + c0)


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
    width = channel_chunk(total, 4, tiles=2)  # a memset float32 tile
    partitions = min(nl.tile_size.pmax, ceil_div(total, width))
    zero = nl.ndarray((partitions, width), dtype=nl.float32, name="zero")
    nisa.memset(zero, 0.0)
    for off, p, w in _flat_blocks(total, partitions, width):
        nisa.dma_copy(dst=acc.ap(pattern=[[w, p], [1, w]], offset=off), src=zero[0:p, 0:w])


def _cast(acc, dx, total):
    """dx = acc cast from float32 to dx's dtype (round to nearest even), once, block by block."""
    width = channel_chunk(total, 4, tiles=2)  # a float32 tile and the narrowed one
    partitions = min(nl.tile_size.pmax, ceil_div(total, width))
    blocks = list(_flat_blocks(total, partitions, width))
    for k in nl.affine_range(len(blocks)):
        off, p, w = blocks[k]
        wide = nl.ndarray((p, w), dtype=nl.float32, name="dx_f32_tile")
        nisa.dma_copy(dst=wide, src=acc.ap(pattern=[[w, p], [1, w]], offset=off))
        narrow = nl.ndarray((p, w), dtype=dx.dtype, name="dx_tile")
        nisa.tensor_copy(dst=narrow, src=wide)
        nisa.dma_copy(dst=dx.ap(pattern=[[w, p], [1, w]], offset=off), src=narrow)


register(KernelRecord("general", GRAD, resize_nearest_grad_kernel, rank=2, conventions=True))

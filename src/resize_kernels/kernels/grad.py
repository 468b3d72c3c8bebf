"""resize_nearest_grad_kernel: the gradient of nearest-neighbour resize, for any ratio and map, by DMA scatter-add.

The forward kernel is a gather, out[p] = data[src[p]]; its gradient is the
transposed map, a scatter-add: dx[src[p]] += dy[p], every repeated destination
counting, by the DMA engines' read-modify-write (``dma_copy(...,
dst_rmw_op=nl.add)``), which adds one DMA's contributions to an address in
partition order, then element order. So dy rows go on partitions (row-major
order down the partitions, each adding into its dx row through the row table),
and along each row the dy pixels are laid out in slots, dx column by dx column,
each column's dy pixels in order and padded with +0.0 to the longest run (a sum
from +0.0 never changes by one): the DMA's destination walks the dx columns with
a step of 0 over a column's slots. Instructions grow with dy's rows times its
padded row over 128 x SLOTS, whatever the ratio (2048x2048 -> 1x1: 83), so this
is the gradient's fallback; the DMA engines serialise repeated addresses, so it
is not fast.
"""

from __future__ import annotations

import math

import numpy as np

from .. import contract, semantics
from ..intmath import ceil_div
from ..nki import isa as nisa
from ..nki import language as nl
from .dma import channel_chunk
from .helpers import table_tile
from .plan import plan_resize
from .registration import GRAD, KernelRecord, register
from .slots import SLOTS, Members, index_tile, slots_of


def resize_nearest_grad_kernel(dy_tensor, in_shape, convention=None):
    """Gradient of nearest-neighbour resize: dx[b, src_h(oh), src_w(ow), c] += dy[b, oh, ow, c], any ratio and map.

    Layouts: dy_tensor (b, out_h, out_w, c) in HBM; returns dx of ``in_shape``
    (b, in_h, in_w, c) in HBM. Dtypes: float32, float16, bfloat16. Sums are
    float32: each dx element starts at +0.0 and adds its dy pixels one at a time
    in row-major (oh, ow) order (float16 / bfloat16 dy is widened exactly and the
    sum cast once at the end, RNE): semantics.resize_nearest_grad_reference bit
    for bit. ``convention`` (``semantics.IndexConvention``; None: the
    compiler's) may be any map (its tables are fixed at trace time).
    Steps: zero the float32 accumulator (dx itself for float32) with DMAs from a
    memset tile; per chunk of dx columns, slots and channels within SLOTS and per
    tile of 128 dy rows (batch and row flattened): load the rows' dy column span
    after a zero slot, nc_n_gather it into (column, slot, channel) order, widen it
    if needed, and scatter-add it into each row's dx row; for float16 / bfloat16,
    cast the accumulator into dx.
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
    _zero(acc, math.prod(in_shape))
    dy_rows, acc_rows = dy_tensor.reshape((in_b * out_h, out_w * c)), acc.reshape((in_b * in_h, in_w * c))
    cols = Members(plan.w.src, in_w)
    cc = min(c, max(1, SLOTS // cols.most))  # every slot of a column in one piece where a channel fits
    mw = min(cols.most, SLOTS // cc)
    nj = max(1, SLOTS // (mw * cc))
    tiles = _row_tiles(plan, in_b, by_member=mw < cols.most)
    for j0 in nl.affine_range(0, in_w, nj):
        jn = min(nj, in_w - j0)
        pieces = [slots_of(cols, j0, jn, m0, min(mw, cols.most - m0)) for m0 in range(0, cols.most, mw)]
        pieces = [piece for piece in pieces if (piece[3] >= 0).any()]
        if not pieces:  # dx columns no dy column reads: they keep their zero
            continue
        for c0 in nl.affine_range(0, c, cc):
            ch = min(cc, c - c0)
            index = index_tile(pieces[0], ch, max(len(t) for t, _ in tiles)) if len(pieces) == 1 else None
            for t in nl.sequential_range(len(tiles)):  # dy rows in order
                dy_row, dx_row = (table_tile(r[:, None], name) for r, name in zip(tiles[t], ("dy_row", "dx_row")))
                for k in nl.sequential_range(len(pieces)):  # a column's slots in order
                    _scatter_add(acc_rows, dy_rows, (dy_row, dx_row), pieces[k], index, (j0, c0, ch, c))
    if acc is not dx:
        _cast(acc, dx, math.prod(in_shape))
    return dx


def _row_tiles(plan, batches: int, by_member: bool) -> list:
    """Tiles of up to 128 dy rows (batch and row flattened) in the order their sums take them, with each one's dx
    row: consecutive dy rows, or (``by_member``: a column's slots take several pieces, so that a tile may hold
    one dy row per dx row only) each dx row's k-th dy row, k outer."""
    pmax, (in_h, out_h), src = nl.tile_size.pmax, (plan.h.in_size, plan.h.out_size), plan.h.src
    if not by_member:
        dy = np.arange(batches * out_h)
        dx = dy // out_h * in_h + src[dy % out_h]
    else:
        rows = Members(src, in_h)
        i = np.tile(np.arange(in_h), batches)
        b = np.repeat(np.arange(batches), in_h)
        member = rows.member(i, 0, rows.most).T  # (k, dx rows): -1 where a row has fewer
        k, q = np.nonzero(member >= 0)
        dy, dx = b[q] * out_h + member[k, q], b[q] * in_h + i[q]
    return [(dy[q0:q0 + pmax], dx[q0:q0 + pmax]) for q0 in range(0, len(dy), pmax)]


def _scatter_add(acc_rows, dy_rows, rows, slots, index, where) -> None:
    """acc_rows[dx_row[p], j0 + j, c0 ..] += slot m of dx column j in dy row dy_row[p], m in order: the rows' dy
    column span gathered after a zero slot, laid out in slots by ``index`` (None: made here), widened to float32
    and scatter-added (one DMA: partition order, then element order)."""
    (dy_row, dx_row), (_, d0, nd, members), (j0, c0, ch, c) = rows, slots, where
    p, (jn, mm), dtype = dy_row.shape[0], members.shape, dy_rows.dtype
    span = nl.ndarray((p, (nd + 1) * ch), dtype=dtype, name="dy_span")
    nisa.memset(span[0:p, 0:ch], 0.0)  # the zero slot
    nisa.dma_copy(dst=span.ap(pattern=[[(nd + 1) * ch, p], [ch, nd], [1, ch]], offset=ch),
                  src=dy_rows.ap(pattern=[[dy_rows.shape[1], p], [c, nd], [1, ch]], offset=d0 * c + c0,
                                 vector_offset=dy_row, indirect_dim=0))
    padded = nl.ndarray((p, jn * mm * ch), dtype=dtype, name="dy_slots")
    nisa.nc_n_gather(padded, span, (index if index is not None else index_tile(slots, ch, p))[0:p])
    if dtype != nl.float32:
        wide = nl.ndarray((p, jn * mm * ch), dtype=nl.float32, name="dy_slots_f32")
        nisa.tensor_copy(dst=wide, src=padded)  # exact
        padded = wide
    # each partition's slots into its dx row: [c, jn] the columns, [0, mm] a column's slots
    nisa.dma_copy(dst=acc_rows.ap(pattern=[[acc_rows.shape[1], p], [c, jn], [0, mm], [1, ch]], offset=j0 * c + c0,
                                  vector_offset=dx_row, indirect_dim=0),
                  src=padded.ap(pattern=[[jn * mm * ch, p], [mm * ch, jn], [ch, mm], [1, ch]]), dst_rmw_op=nl.add)


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


register(KernelRecord("general", GRAD, resize_nearest_grad_kernel, rank=2, conventions=True, fallback=True))

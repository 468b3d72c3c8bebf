"""resize_nearest_grad_padded_kernel: the gradient's sums made on chip, on any map, in few instructions.

dx[i, j] is the float32 sum, from +0.0 and in row-major (oh, ow) order, of the
dy pixels whose source is (i, j): dy rows h_k(i), k < count_h(i), by dy columns
w_m(j), m < count_w(j). With dx rows on partitions, row k of each dx row comes
by one indirect gather (the dx row's k-th dy row from a table; a predicated copy
sets it to +0.0 on rows with fewer), and its columns by one nc_n_gather into slots
(``slots``: column j, slot m, +0.0 past its count), so that one vector add
takes the k-th row's m-th column of 128 dx rows by a chunk of dx columns
however irregular the map. Instructions are about (dx rows / 128) x (dx row
slots / SLOTS) x R_h x (R_w + 4), R the longest runs: few on the ratios models
use, where the rows kernel's bands and column groups and the scatter-add
kernel's serialised DMA adds grow with the pixels; many on ratios of hundreds
(there the scatter-add kernel, the fallback, stays bounded).
"""

from __future__ import annotations

import numpy as np

from .. import contract, semantics
from ..nki import isa as nisa
from ..nki import language as nl
from .plan import plan_resize
from .registration import GRAD, KernelRecord, register
from .slots import SLOTS, Members, index_tile, slots_of

#: dy rows per row-index tile (columns of the table of each dx row's k-th dy row).
INDEX_ROWS = 512


def resize_nearest_grad_padded_kernel(dy_tensor, in_shape, convention=None):
    """Gradient of nearest-neighbour resize, dx[b, src_h(oh), src_w(ow), c] += dy[b, oh, ow, c], any ratio and map.

    Layouts: dy_tensor (b, out_h, out_w, c) in HBM; returns dx of ``in_shape``
    (b, in_h, in_w, c) in HBM. Dtypes: float32, float16, bfloat16; sums in
    float32 from +0.0 in row-major (oh, ow) order, cast once (RNE): bit for bit
    ``semantics.resize_nearest_grad_reference``. ``convention``
    (``semantics.IndexConvention``; None: the compiler's) may be any map, monotone
    or not (its members are listed at trace time).
    Tiling: 128 dx rows (batch and row flattened) per tile, on partitions; along
    the row, pieces of nj dx columns x mw slots x cc channels within SLOTS.
    Per piece: memset a float32 accumulator; per dy row slot k: gather each dx
    row's k-th dy row (the piece's dy column span, after a zero slot), set it
    to +0.0 on rows without one, nc_n_gather it into (column, slot, channel)
    order, and add slot m = 0 .. mw - 1 in turn; cast and store whole rows.
    """
    name = "resize_nearest_grad_padded_kernel"
    dy_shape, in_shape = contract.grad_shapes(name, dy_tensor.shape, in_shape)
    contract.grad_dtype(name, dy_tensor.dtype)
    plan = plan_resize(in_shape, dy_shape, convention or semantics.COMPILER)
    in_b, in_h, in_w, c = in_shape
    _, out_h, out_w, _ = dy_shape
    dtype = dy_tensor.dtype
    dx = nl.ndarray(tuple(in_shape), dtype=dtype, buffer=nl.shared_hbm, name="dx")
    dy_pixels = dy_tensor.reshape((in_b * out_h, out_w, c))
    dx_rows = dx.reshape((in_b * in_h, in_w * c))
    rows, cols = Members(plan.h.src, in_h), Members(plan.w.src, in_w)
    cc = min(c, SLOTS)
    mw = min(cols.most, SLOTS // cc)
    nj = max(1, SLOTS // (mw * cc))
    pmax = nl.tile_size.pmax
    for j0 in nl.affine_range(0, in_w, nj):
        jn = min(nj, in_w - j0)
        slots = [slots_of(cols, j0, jn, m0, min(mw, cols.most - m0)) for m0 in range(0, cols.most, mw)]
        for c0 in nl.affine_range(0, c, cc):
            ch = min(cc, c - c0)
            # one chunk of slots: its index tile serves every row tile; several (R_w > SLOTS): made where used
            index = index_tile(slots[0], ch, min(pmax, in_b * in_h)) if len(slots) == 1 else None
            for q0 in nl.affine_range(0, in_b * in_h, pmax):
                p = min(pmax, in_b * in_h - q0)
                acc = nl.ndarray((p, jn, ch), dtype=nl.float32, name="dx_f32")
                nisa.memset(acc, 0.0)
                batch, i = np.divmod(np.arange(q0, q0 + p), in_h)
                for k0 in nl.sequential_range(0, rows.most, INDEX_ROWS):  # the sums' terms in order
                    member = rows.member(i, k0, min(INDEX_ROWS, rows.most - k0))  # -1: none
                    table = nl.ndarray(member.shape, dtype=nl.int32, name="dy_row")
                    nisa.dma_copy(dst=table, src=nl.shared_constant(batch[:, None] * out_h + np.maximum(member, 0),
                                                                    dtype=nl.int32))
                    taken = None
                    if (member < 0).any():
                        taken = nl.ndarray(member.shape, dtype=nl.uint8, name="dy_row_taken")
                        nisa.dma_copy(dst=taken, src=nl.shared_constant(member >= 0, dtype=nl.uint8))
                    for k in nl.sequential_range(member.shape[1]):
                        for s in nl.sequential_range(len(slots)):
                            span = None if taken is None or (member[:, k] >= 0).all() else taken.ap(
                                pattern=[[member.shape[1], p], [0, (slots[s][2] + 1) * ch]], offset=k)
                            _add_row(acc, dy_pixels, (table[0:p, k:k + 1], span), slots[s], index, c0)
                out = acc
                if dtype != nl.float32:
                    out = nl.ndarray((p, jn, ch), dtype=dtype, name="dx_tile")
                    nisa.tensor_copy(dst=out, src=acc)  # float32 -> dtype, round to nearest even, once
                nisa.dma_copy(dst=dx_rows.ap(pattern=[[in_w * c, p], [c, jn], [1, ch]],
                                             offset=q0 * in_w * c + j0 * c + c0), src=out)
    return dx


def _add_row(acc, dy_pixels, rows_k, slots, index, c0: int) -> None:
    """acc[p, j] += slots m0 .. m0 + mm - 1 of dx column j in the k-th dy row of partition p's dx row, in turn.

    The row's dy column span comes by one gather (the row table's column k) after a zero slot, is set to +0.0
    where ``taken`` says the dx row has no k-th dy row, and is laid out in (column, slot, channel) order by the
    index tile (None: made here)."""
    p, jn, ch = acc.shape
    (table, taken), (_, d0, nd, members) = rows_k, slots
    out_w, c = dy_pixels.shape[1], dy_pixels.shape[2]
    row = nl.ndarray((p, (nd + 1) * ch), dtype=dy_pixels.dtype, name="dy_span")
    nisa.memset(row[0:p, 0:ch], 0.0)  # the zero slot
    nisa.dma_copy(dst=row.ap(pattern=[[(nd + 1) * ch, p], [ch, nd], [1, ch]], offset=ch),
                  src=dy_pixels.ap(pattern=[[out_w * c, p], [c, nd], [1, ch]], offset=d0 * c + c0,
                                   vector_offset=table, indirect_dim=0))
    if taken is not None:
        nisa.tensor_copy_predicated(row, 0.0, taken, reverse_pred=True)  # +0.0 where not taken
    mm = members.shape[1]
    padded = nl.ndarray((p, jn * mm * ch), dtype=dy_pixels.dtype, name="dy_slots")
    nisa.nc_n_gather(padded, row, (index if index is not None else index_tile(slots, ch, p))[0:p])
    for m in range(mm):
        nisa.tensor_tensor(acc, acc, padded.ap(pattern=[[jn * mm * ch, p], [mm * ch, jn], [1, ch]], offset=m * ch),
                           op=nl.add)


register(KernelRecord("padded", GRAD, resize_nearest_grad_padded_kernel, rank=1, conventions=True))

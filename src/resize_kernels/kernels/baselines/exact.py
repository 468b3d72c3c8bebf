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

from ... import contract, semantics
from ...nki import language as nl
from ..dma import channel_chunk, gather_store
from ..helpers import row_tiles, source_columns
from ..plan import plan_resize
from ..registration import FORWARD, KernelRecord, per_tile, register


def resize_nearest_exact_kernel(data_tensor, out_shape, convention=None):
    """Nearest-neighbour resize by indirect-DMA gather, exact for every accepted shape.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved).
    Constraints: the resize contract (in_b == out_b, in_c == out_c, heights and
    widths below 2**24, fewer than 2**31 elements per tensor). Channels are
    split into chunks of at most 64 KiB per partition, so any count fits in SBUF.
    Tiling: for out_w <= 64, a tile holds floor(128 / out_w) whole output rows;
    otherwise a tile is up to 128 pixels of one row. Per (tile, batch, channel
    chunk): one indirect gather, one strided store. ``convention``
    (``semantics.IndexConvention``; None: the compiler's) may be any: its
    indices come from constant tables fixed at trace time.
    """
    in_shape, out_shape = contract.resize_shapes("resize_nearest_exact_kernel", data_tensor.shape, out_shape)
    plan = plan_resize(in_shape, out_shape, convention or semantics.COMPILER)
    in_b, in_h, in_w, in_c = in_shape
    out_b, out_h, out_w, out_c = out_shape
    out_tensor = nl.ndarray(out_shape, dtype=data_tensor.dtype, buffer=nl.shared_hbm, name="out_tensor")
    data_view = data_tensor.reshape((in_b * in_h * in_w, in_c))
    out_view = out_tensor.reshape((out_b * out_h * out_w, out_c))
    move = gather_store(data_view, out_view, in_b, channel_chunk(in_c, data_tensor.dtype.itemsize))

    if plan.row_tiles is not None:
        row_tiles(plan, move)
        return out_tensor
    src_h = plan.h.src.tolist()
    pmax = nl.tile_size.pmax
    for c0 in nl.affine_range(0, out_w, pmax):
        n = min(pmax, out_w - c0)
        src_w = source_columns(plan.w, first=c0)  # (n, 1): the columns of this column tile
        for oh in range(out_h):
            move(n, src_w, src_h[oh] * in_w, oh * out_w + c0)
    return out_tensor


register(KernelRecord("exact", FORWARD, resize_nearest_exact_kernel, rank=None, conventions=True,
                      least_instructions=per_tile(2)))

"""resize_nearest_strided_kernel: integer ratios by strided DMAs, with no index graph and no gather.

When an axis's map is src = d // k (upsample by k) or src = d * k (downsample
by k, k = 1 included), every source address is affine in the output position,
so the seed's indirect gather is unnecessary: a strided load picks the rows and
columns the output needs (every k-th for a downsample, all of them, once, for an
upsample), and the store repeats each row and pixel k times by reading the SBUF
tile through step-0 pairs (a broadcast read).
"""

from __future__ import annotations

from .. import contract
from ..errors import InvalidValueError
from ..nki import isa as nisa
from ..nki import language as nl
from .dma import CHUNK_BYTES, broadcast_pairs, channel_chunk, partition_pieces
from .plan import plan_resize
from .registration import FORWARD, KernelRecord, register


def resize_nearest_strided_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize for integer ratios by strided loads and broadcast stores.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved).
    Constraints: the resize contract (in_b == out_b, in_c == out_c, sizes below
    2**24, fewer than 2**31 elements per tensor), and each axis an integer
    ratio whose float32 map is exactly d // k or d * k (use kernel "auto" for
    any shape).
    Tiling: a partition holds one row unit, flat over batches: a source row when
    the height is upsampled by k_h (stored to its k_h output rows), else an output
    row (loaded from source row k * oh). The free dimension holds the source
    columns the output needs (all of them for an upsampled width, every k-th for
    a downsampled one) times a channel chunk, at most 64 KiB per partition. Per
    tile and range of at least 8 partitions (up to 16 ranges, one per DMA
    queue): one strided load and one store whose SBUF side repeats rows and
    pixels with step-0 pairs.
    """
    name = "resize_nearest_strided_kernel"
    in_shape, out_shape = contract.resize_shapes(name, data_tensor.shape, out_shape)
    ratios = plan_resize(in_shape, out_shape).integer_ratios
    if ratios is None:
        raise InvalidValueError(f"{name} requires {_RATIOS}, got {in_shape} -> {out_shape}; use kernel 'auto', "
                                f"which handles every shape")
    (up_h, down_h), (up_w, down_w) = ratios
    in_b, in_h, in_w, in_c = in_shape
    out_b, out_h, out_w, out_c = out_shape
    out_tensor = nl.ndarray(out_shape, dtype=data_tensor.dtype, buffer=nl.shared_hbm, name="out_tensor")

    units = in_b * (out_h // up_h)  # unit u: source row u * down_h, output rows u * up_h .. + up_h - 1
    columns = out_w // up_w  # column j: source column j * down_w, output columns j * up_w .. + up_w - 1
    unit_in, unit_out = down_h * in_w * in_c, up_h * out_w * out_c  # element steps between units
    item = data_tensor.dtype.itemsize
    chunk = channel_chunk(in_c, item)
    cols_per_tile = min(columns, max(1, CHUNK_BYTES // (chunk * item)))
    pmax = nl.tile_size.pmax

    for u0 in nl.affine_range(0, units, pmax):
        p = min(pmax, units - u0)
        for j0 in nl.affine_range(0, columns, cols_per_tile):
            nc = min(cols_per_tile, columns - j0)
            for c0 in nl.affine_range(0, in_c, chunk):
                cc = min(chunk, in_c - c0)
                rows_sbuf = nl.ndarray((p, nc, cc), dtype=data_tensor.dtype, name="rows_sbuf")
                for p0, p1 in partition_pieces(p, nc * cc * item):
                    u = u0 + p0
                    nisa.dma_copy(dst=rows_sbuf[p0:p1], src=data_tensor.ap(
                        pattern=[[unit_in, p1 - p0],  # partitions: row units, down_h source rows apart
                                 [down_w * in_c, nc],  # the columns needed, down_w apart
                                 [1, cc]],  # channels c0 ..
                        offset=u * unit_in + j0 * down_w * in_c + c0))
                for p0, p1 in partition_pieces(p, nc * cc * item):
                    u = u0 + p0
                    src, dst = broadcast_pairs(
                        [[nc * cc, p1 - p0],  # SBUF: partitions (row units)
                         [0, up_h],  # each row up_h times: step 0 repeats it
                         [cc, nc],  # columns
                         [0, up_w],  # each pixel up_w times
                         [1, cc]],  # channels
                        [[unit_out, p1 - p0],  # HBM: each unit's first output row
                         [out_w * out_c, up_h],  # the unit's up_h output rows
                         [up_w * out_c, nc],  # each column's block of up_w output pixels
                         [out_c, up_w],  # the up_w pixels of the block
                         [1, cc]])  # channels
                    nisa.dma_copy(dst=out_tensor.ap(pattern=dst, offset=u * unit_out + j0 * up_w * out_c + c0),
                                  src=rows_sbuf.ap(pattern=src, offset=p0 * nc * cc))
    return out_tensor


#: What the kernel requires of a shape.
_RATIOS = "an integer ratio on each axis (out = k * in or in = k * out, with the float32 map exactly d // k or d * k)"

register(KernelRecord("strided", FORWARD, resize_nearest_strided_kernel, rank=3,
                      applies=lambda plan, item: None if plan.integer_ratios else f"requires {_RATIOS}"))

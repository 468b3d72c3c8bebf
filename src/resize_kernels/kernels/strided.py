"""resize_nearest_strided_kernel: integer ratios by strided DMAs, with no index graph and no gather.

When an axis's map is src = d // k (upsample by k) or src = d * k (downsample
by k, k = 1 included), every source address is affine in the output position,
so the seed's indirect gather is unnecessary: a strided load picks the rows and
columns the output needs (every k-th for a downsample, all of them, once, for an
upsample), and the store repeats each row and pixel k times by reading the SBUF
tile through step-0 pairs (a broadcast read).
"""

from __future__ import annotations

from ..nki import isa as nisa
from ..nki import language as nl
from .axis_maps import integer_ratio
from .exact import CHUNK_BYTES, check_exact_limits
from .resize import check_resize_shapes


def integer_ratios(in_hw, out_hw) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """((up_h, down_h), (up_w, down_w)) when both axes are integer ratios (see axis_maps.integer_ratio), else None."""
    ratios = tuple(integer_ratio(i, o) for i, o in zip(in_hw, out_hw))
    return None if None in ratios else ratios


#: DMA queues per NeuronCore (HARDWARE.md): a tile's load and store are cut by partitions into up to this many DMAs.
DMA_QUEUES = 16
#: ... each of at least 8 partitions and 64 KiB, so that the fixed cost of a transfer stays small beside its payload.
MIN_PIECE_PARTITIONS, MIN_PIECE_BYTES = 8, 64 * 1024


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


def resize_nearest_strided_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize for integer ratios by strided loads and broadcast stores.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved).
    Constraints: in_b == out_b, in_c == out_c; each axis an integer ratio whose
    float32 map is exactly d // k or d * k (use kernel "auto" for any shape);
    fewer than 2**31 elements per tensor.
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
    check_resize_shapes(name, data_tensor.shape, out_shape)
    check_exact_limits(name, data_tensor.shape, out_shape)
    in_b, in_h, in_w, in_c = data_tensor.shape
    out_b, out_h, out_w, out_c = out_shape
    ratios = integer_ratios((in_h, in_w), (out_h, out_w))
    if ratios is None:
        raise ValueError(f"{name} requires an integer ratio on each axis (out = k * in or in = k * out, with the "
                         f"float32 map exactly d // k or d * k), got {tuple(data_tensor.shape)} -> {tuple(out_shape)}; "
                         f"use kernel 'auto', which handles every shape")
    (up_h, down_h), (up_w, down_w) = ratios
    out_tensor = nl.ndarray(out_shape, dtype=data_tensor.dtype, buffer=nl.shared_hbm, name="out_tensor")

    units = in_b * (out_h // up_h)  # unit u: source row u * down_h, output rows u * up_h .. + up_h - 1
    columns = out_w // up_w  # column j: source column j * down_w, output columns j * up_w .. + up_w - 1
    unit_in, unit_out = down_h * in_w * in_c, up_h * out_w * out_c  # element steps between units
    item = data_tensor.dtype.itemsize
    chunk = max(1, min(in_c, CHUNK_BYTES // item))
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
                        pattern=[[unit_in, p1 - p0], [down_w * in_c, nc], [1, cc]],
                        offset=u * unit_in + j0 * down_w * in_c + c0))
                for p0, p1 in partition_pieces(p, nc * cc * item):
                    u = u0 + p0
                    src, dst = broadcast_pairs(
                        [[nc * cc, p1 - p0], [0, up_h], [cc, nc], [0, up_w], [1, cc]],
                        [[unit_out, p1 - p0], [out_w * out_c, up_h], [up_w * out_c, nc], [out_c, up_w], [1, cc]])
                    nisa.dma_copy(dst=out_tensor.ap(pattern=dst, offset=u * unit_out + j0 * up_w * out_c + c0),
                                  src=rows_sbuf.ap(pattern=src, offset=p0 * nc * cc))
    return out_tensor

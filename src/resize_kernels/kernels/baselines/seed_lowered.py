"""resize_nearest_fixed_dma_kernel: the seed's lowered variant (private_nkl/resize.py), as written.

Its arithmetic is kept, defects included (docs/kernels.md; ``resize-kernels
verify --kernel seed`` lists them): the reciprocal multiply misplaces pixels for
widths such as 41, and float32 positions stop being exact at 2**24. It is the
``kernel="seed"`` variant.
"""

from __future__ import annotations

import math

from ... import contract
from ...nki import isa as nisa
from ...nki import language as nl
from ..helpers import floor_nisa_kernel
from ..registration import FORWARD, KernelRecord, per_tile, register


def resize_nearest_fixed_dma_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize by an indirect-DMA gather; scales fixed at trace time.

    Designed for non-integer scaling factors (e.g. 30x20 -> 59x38).
    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM. Any machine dtype (the data is only moved).
    Constraints: the resize contract (in_b == out_b, in_c == out_c, ...), one
    128 x in_c tile fits in SBUF.
    The flat H*W output axis is tiled by 128 onto partitions (the last tile
    shrunk); per (batch, tile) an index graph of constant operands computes
    load_indices = floor(floor(p/out_w)*h_scale)*in_w + floor((p mod out_w)*w_scale),
    then one indirect gather and one strided store move the pixels.
    """
    contract.resize_shapes("resize_nearest_fixed_dma_kernel", data_tensor.shape, out_shape)
    in_b, in_h, in_w, in_c = data_tensor.shape
    out_b, out_h, out_w, out_c = out_shape
    out_tensor = nl.ndarray(out_shape, dtype=data_tensor.dtype, buffer=nl.shared_hbm, name="out_tensor")

    h_scale = 1.0 * in_h / out_h
    w_scale = 1.0 * in_w / out_w

    in_seqlen, out_seqlen = in_h * in_w, out_h * out_w
    data_view_flattened = data_tensor.reshape((in_b * in_seqlen, in_c))
    output_view_flattened = out_tensor.reshape((out_b * out_seqlen, out_c))
    pmax = nl.tile_size.pmax

    for b in nl.affine_range(in_b):
        for tile in nl.affine_range(math.ceil(out_seqlen / pmax)):
            tile_start = tile * pmax
            actual_tile_size = min(pmax, out_seqlen - tile_start)
            n = actual_tile_size

            # output_pos[i] = tile_start + i: one flat output position per partition
            output_pos = nl.ndarray((n, 1), dtype=nl.int32, name="output_pos")
            nisa.iota(output_pos, pattern=[[1, 1]], offset=tile_start, channel_multiplier=1)

            # out_h_idx = floor(output_pos / out_w), by a reciprocal multiply and the HW floor
            out_h_f32 = nl.ndarray((n, 1), dtype=nl.float32, name="out_h_f32")
            nisa.tensor_scalar(out_h_f32, output_pos, op0=nl.multiply, operand0=1.0 / out_w)
            out_h_idx = nl.ndarray((n, 1), dtype=nl.int32, name="out_h_idx")
            floor_nisa_kernel(out_h_f32, out_h_idx, n, 1)

            # out_w_idx = output_pos - out_h_idx * out_w  (= p mod out_w)
            temp_mul_w = nl.ndarray((n, 1), dtype=nl.int32, name="temp_mul_w")
            nisa.tensor_scalar(temp_mul_w, out_h_idx, op0=nl.multiply, operand0=float(out_w))
            out_w_idx = nl.ndarray((n, 1), dtype=nl.int32, name="out_w_idx")
            nisa.tensor_tensor(out_w_idx, output_pos, temp_mul_w, op=nl.subtract)

            # src_{h,w}_idx = floor(out_{h,w}_idx * scale)
            src_h_f32 = nl.ndarray((n, 1), dtype=nl.float32, name="src_h_f32")
            nisa.tensor_scalar(src_h_f32, out_h_idx, op0=nl.multiply, operand0=h_scale)
            src_h_idx = nl.ndarray((n, 1), dtype=nl.int32, name="src_h_idx")
            floor_nisa_kernel(src_h_f32, src_h_idx, n, 1)
            src_w_f32 = nl.ndarray((n, 1), dtype=nl.float32, name="src_w_f32")
            nisa.tensor_scalar(src_w_f32, out_w_idx, op0=nl.multiply, operand0=w_scale)
            src_w_idx = nl.ndarray((n, 1), dtype=nl.int32, name="src_w_idx")
            floor_nisa_kernel(src_w_f32, src_w_idx, n, 1)

            # load_indices = src_h_idx * in_w + src_w_idx
            temp_mul = nl.ndarray((n, 1), dtype=nl.int32, name="temp_mul")
            nisa.tensor_scalar(temp_mul, src_h_idx, op0=nl.multiply, operand0=in_w)
            load_indices = nl.ndarray((n, 1), dtype=nl.int32, name="load_indices")
            nisa.tensor_tensor(load_indices, temp_mul, src_w_idx, op=nl.add)

            # gather: partition i reads source pixel load_indices[i] of batch b (indirect_dim=0)
            loaded_tile_sbuf = nl.ndarray((n, out_c), dtype=data_tensor.dtype, name="loaded_tile_sbuf")
            nisa.dma_copy(dst=loaded_tile_sbuf,
                          src=data_view_flattened.ap(pattern=[[in_c, n], [1, out_c]], offset=b * in_seqlen * in_c,
                                                     vector_offset=load_indices, indirect_dim=0))
            # store: a dense run of n output pixels
            nisa.dma_copy(dst=output_view_flattened.ap(pattern=[[out_c, n], [1, out_c]],
                                                       offset=b * out_seqlen * out_c + tile_start * out_c),
                          src=loaded_tile_sbuf)
    return out_tensor


register(KernelRecord("seed", FORWARD, resize_nearest_fixed_dma_kernel, rank=None, least_instructions=per_tile(24)))

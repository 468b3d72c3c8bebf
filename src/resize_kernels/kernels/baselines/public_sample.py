"""public_resize_nearest_fixed_dma_kernel: the NKI samples' vision.py resize_nearest_fixed_dma_kernel, step for step.

The same map as the lowered variant, written as the public sample writes it
(aws-neuron/nki-samples src/nki_samples/reference/vision.py, commit b3c5c8d):
an int32 iota of the flat output positions, the output row as nl.floor of a
divide by the output width, the column as nl.mod, the source row and column
as nl.floor of a float32 multiply by the scale, full 128-pixel tiles whose
last one is masked rather than shrunk, and an advanced-index load and store.
The divide is float32 and correctly rounded, and it never rounds a quotient
below 2**24 up to the next integer, so the flat split is exact: unlike the
seed's private lowered kernel (``kernel="seed"``), which multiplies by a
float32 reciprocal of the width and misplaces pixels for widths such as 41.
It is the ``kernel="public"`` variant.
"""

from __future__ import annotations

import math

from ... import contract
from ...nki import isa as nisa
from ...nki import language as nl
from ..registration import FORWARD, KernelRecord, per_tile, register


def public_resize_nearest_fixed_dma_kernel(data_tensor, out_shape):
    """Nearest-neighbour resize by a masked indirect-DMA gather, nl style; scales fixed at trace time.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved).
    Constraints: the resize contract (in_b == out_b, in_c == out_c, ...), one
    128 x in_c tile fits in SBUF.
    The flat H*W output axis is tiled by full 128-pixel tiles; the last is masked.
    """
    contract.resize_shapes("resize_nearest_fixed_dma_kernel", data_tensor.shape, out_shape)
    in_b, in_h, in_w, in_c = data_tensor.shape
    out_b, out_h, out_w, out_c = out_shape
    out_tensor = nl.ndarray(out_shape, dtype=data_tensor.dtype, buffer=nl.shared_hbm, name="out_tensor")

    h_scale, w_scale = 1.0 * in_h / out_h, 1.0 * in_w / out_w
    in_seqlen, out_seqlen = in_h * in_w, out_h * out_w
    data_view_flattened = data_tensor.reshape((in_b, in_seqlen, in_c))
    out_view_flattened = out_tensor.reshape((out_b, out_seqlen, out_c))

    pmax = nl.tile_size.pmax
    i_p = nl.arange(pmax)[:, None]
    i_f = nl.arange(out_c)[None, :]
    for b in nl.affine_range(in_b):
        for tile in nl.affine_range(math.ceil(out_seqlen / pmax)):
            pos = tile * pmax + i_p  # flat output position of each partition
            output_pos_iota = nisa.iota(pos, dtype=nl.int32)
            # the sample's output_pos_iota / out_w: the quotient stays float32 (an int32 result would round it
            # to nearest before the floor)
            out_h_idx = nl.floor(nl.divide(output_pos_iota, out_w, dtype=nl.float32), dtype=nl.int32)
            out_w_idx = nl.mod(output_pos_iota, out_w, dtype=nl.int32)
            src_h_idx = nl.floor(nl.multiply(out_h_idx, h_scale, dtype=nl.float32), dtype=nl.int32)
            src_w_idx = nl.floor(nl.multiply(out_w_idx, w_scale, dtype=nl.float32), dtype=nl.int32)
            # the sample's src_h_idx * in_w + src_w_idx
            load_indices = nl.add(nl.multiply(src_h_idx, in_w, dtype=nl.int32), src_w_idx, dtype=nl.int32)

            mask = pos < out_seqlen
            data_tile = nl.load(data_view_flattened[b, load_indices, i_f], mask=mask)
            nl.store(out_view_flattened[b, pos, i_f], value=data_tile, mask=mask)
    return out_tensor


register(KernelRecord("public", FORWARD, public_resize_nearest_fixed_dma_kernel, rank=None,
                      least_instructions=per_tile(8)))

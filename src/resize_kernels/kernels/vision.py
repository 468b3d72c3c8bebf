"""resize_nearest_fixed_dma_kernel, the public variant (the NKI samples' vision.py form), in the nl style.

The same map as the lowered variant, written with nl-level calls: index
expressions from nl.arange, nl.floor (one scalar-engine activation, not the
cast-and-correct floor_nisa_kernel), nl.mod for the column, and full 128-pixel
tiles whose last one is masked rather than shrunk. Its arithmetic is float32
like the lowered variant's, so the reciprocal multiply still puts the row of
some pixels one too low for widths such as 41 (the verifier lists them); the
column comes from a modulo, so those pixels stay inside the image.
It is the ``kernel="public"`` variant.
"""

from __future__ import annotations

import math

from .. import contract
from ..nki import isa as nisa
from ..nki import language as nl


def resize_nearest_fixed_dma_kernel(data_tensor, out_shape):
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
            output_pos = nisa.iota(pos, dtype=nl.float32)
            out_h_idx = nl.floor(nl.multiply(output_pos, 1.0 / out_w))
            out_w_idx = nl.mod(output_pos, out_w)
            src_h_idx = nl.floor(nl.multiply(out_h_idx, h_scale))
            src_w_idx = nl.floor(nl.multiply(out_w_idx, w_scale))
            load_indices = nl.add(nl.multiply(src_h_idx, in_w), src_w_idx, dtype=nl.int32)

            mask = pos < out_seqlen
            data_tile = nl.load(data_view_flattened[b, load_indices, i_f], mask=mask)
            nl.store(out_view_flattened[b, pos, i_f], value=data_tile, mask=mask)
    return out_tensor

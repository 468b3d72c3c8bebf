"""The seed kernel's index arithmetic, recomputed independently in numpy float32.

Each line mirrors one step of the seed's index graph as the engines compute it:
operands cast to float32, a float32 operation, the result cast to the
destination (int32: round to nearest even). The floors are np.floor: that
floor_nisa_kernel computes floor exactly is tested on its own.
"""

import numpy as np

f32 = np.float32


def _i32(x):
    return np.rint(x.astype(np.float64)).astype(np.int64)


def seed_load_indices(in_h, in_w, out_h, out_w) -> np.ndarray:
    """load_indices for every flat output position, as the seed kernel computes them."""
    p = np.arange(out_h * out_w, dtype=np.int64)
    output_pos = _i32(p.astype(f32))  # iota: computed in float32
    out_h_idx = np.floor(output_pos.astype(f32) * f32(1.0 / out_w)).astype(np.int64)
    temp_mul_w = _i32(out_h_idx.astype(f32) * f32(out_w))
    out_w_idx = _i32(output_pos.astype(f32) - temp_mul_w.astype(f32))
    src_h_idx = np.floor(out_h_idx.astype(f32) * f32(1.0 * in_h / out_h)).astype(np.int64)
    src_w_idx = np.floor(out_w_idx.astype(f32) * f32(1.0 * in_w / out_w)).astype(np.int64)
    temp_mul = _i32(src_h_idx.astype(f32) * f32(in_w))
    return _i32(temp_mul.astype(f32) + src_w_idx.astype(f32))


def seed_resize(x: np.ndarray, out_hw):
    """What the seed kernel produces for NHWC ``x``, or the (batch, partition-row) of its first out-of-bounds read.

    Returns (output, None) or (None, flat_row) where flat_row is the first gathered
    row outside the data tensor, in the kernel's (batch, tile) order.
    """
    n, in_h, in_w, c = x.shape
    out_h, out_w = out_hw
    load = seed_load_indices(in_h, in_w, out_h, out_w)
    rows = np.arange(n)[:, None] * (in_h * in_w) + load[None, :]  # gathered row of the (n*in_seqlen, c) view
    bad = (rows < 0) | (rows >= n * in_h * in_w)
    if bad.any():
        return None, int(rows[bad][0])
    return x.reshape(n * in_h * in_w, c)[rows].reshape(n, out_h, out_w, c), None


def public_load_indices(in_h, in_w, out_h, out_w) -> np.ndarray:
    """load_indices of the public sample's arithmetic: float32 engines, row by a divide, column by fmod."""
    pos = np.arange(out_h * out_w).astype(f32)  # the int32 iota, as the engines read it
    out_h_idx = np.floor(pos / f32(out_w))
    out_w_idx = np.fmod(pos, f32(out_w))
    src_h_idx = np.floor(out_h_idx * f32(1.0 * in_h / out_h))
    src_w_idx = np.floor(out_w_idx * f32(1.0 * in_w / out_w))
    return _i32(src_h_idx * f32(in_w) + src_w_idx)

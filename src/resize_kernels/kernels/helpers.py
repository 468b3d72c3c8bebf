"""Index-graph builders shared by kernels: the seed's floor, the scaled floor, source columns, row tiles.

Every builder emits engine instructions on int32 / float32 SBUF tiles whose
values stay below 2**24, where float32 (the engines' arithmetic) is exact.
The seed floors with eight vector instructions (``floor_nisa_kernel``, kept for
the seed's kernel); the exact kernels floor with four (``floor_by_cast``): the
scalar engine's copy does the multiply-add, a cast rounds, a compare and a
subtract take one back where it rounded up. (The scalar engine's floor would do it in one, but floor
is not among the activation functions NKI 0.3.0 documents.)
"""

from __future__ import annotations

import numpy as np

from ..nki import isa as nisa
from ..nki import language as nl


def floor_nisa_kernel(a, out, p, f):
    """out[0:p, 0:f] = floor(a[0:p, 0:f]) for a float32 tile ``a`` into an int32 tile ``out``.

    A float -> int32 cast rounds to nearest even on this hardware (kaena-4592), so
    floor is the cast minus 1 wherever the cast rounded up: cast, cast back,
    compare, and select with xor / multiply / add. A single cast is wrong at x.5
    and above.
    """
    src, dst = a[0:p, 0:f], out[0:p, 0:f]
    casted = nl.ndarray((p, f), dtype=nl.int32, name="casted")
    nisa.tensor_copy(dst=casted, src=src)  # round to nearest even
    b = nl.ndarray((p, f), dtype=nl.float32, name="casted_f32")
    nisa.tensor_copy(dst=b, src=casted)  # back to float
    cast_m1 = nl.ndarray((p, f), dtype=nl.int32, name="cast_m1")
    nisa.tensor_scalar(dst=cast_m1, data=casted, op0=nl.subtract, operand0=1)
    cond = nl.ndarray((p, f), dtype=nl.int8, name="cond")
    nisa.tensor_tensor(dst=cond, data1=b, data2=src, op=nl.greater)  # the cast rounded up
    cond_not = nl.ndarray((p, f), dtype=nl.int8, name="cond_not")
    nisa.tensor_scalar(dst=cond_not, data=cond, op0=nl.logical_xor, operand0=1)
    smaller = nl.ndarray((p, f), dtype=nl.int32, name="smaller")
    nisa.tensor_tensor(dst=smaller, data1=casted, data2=cond_not, op=nl.multiply)
    larger = nl.ndarray((p, f), dtype=nl.int32, name="larger")
    nisa.tensor_tensor(dst=larger, data1=cast_m1, data2=cond, op=nl.multiply)
    nisa.tensor_tensor(dst=dst, data1=larger, data2=smaller, op=nl.add)


def floor_by_cast(out, src, scale: float, bias: float = 0.0, scratch=None) -> None:
    """out = floor(float32(src) * float32(scale) + float32(bias)) for results in [0, 2**24), into an int32 or uint32
    ``out`` (``src``: a tile or view of out's shape; ``scratch``: a float32 one, else a new tile).

    The scalar engine's copy computes the value in float32, a cast to out's dtype rounds it to nearest even (not
    toward -inf: the seed's GOTCHA, kaena-4592), and where that went up, one comes off: four documented NKI 0.3.0
    instructions, as the scalar engine's floor is not among the activation functions NKI 0.3.0 documents. Every
    value is an integer below 2**24 once cast, so float32 holds each step exactly."""
    x = nl.ndarray(out.shape, dtype=nl.float32, name="floor_value") if scratch is None else scratch
    nisa.activation(x, nl.copy, src, scale=scale, bias=bias)
    nisa.tensor_copy(out, x)  # round to nearest even
    nisa.tensor_tensor(x, out, x, op=nl.greater)  # 1.0 where the cast went up
    nisa.tensor_tensor(out, out, x, op=nl.subtract)


def scaled_floor(pos, scale: float, limit: int | None, name: str, out=None):
    """min(floor(pos * scale), limit) of an int32 tile ``pos``: a new int32 tile ``{name}_idx`` of its shape
    (or ``out``, a view of pos's shape).

    This is one axis of the map, src = min(floor(float32(d) * float32(in/out)), in - 1),
    for the output positions d in ``pos``. ``limit=None`` skips the clamp, for positions within the output
    where the floor never passes in - 1 (``AxisPlan.limit``).
    """
    if out is None:
        out = nl.ndarray(pos.shape, dtype=nl.int32, name=f"{name}_idx")
    floor_by_cast(out, pos, scale)  # floor(float32(d) * float32(scale))
    if limit is not None:
        nisa.tensor_scalar(out, out, op0=nl.minimum, operand0=limit)
    return out


def source_columns(w, first: int = 0, tiles: int = 1):
    """An int32 (min(128, out_w - first), tiles) tile: column t, partition p holds src_w(first + 128 t + p).

    ``w`` is the width's AxisPlan. Positions past out_w (in the last column) get
    the clamped in_w - 1: valid, and unused. A convention other than the
    compiler's (``AxisPlan.on_chip``) is a table fixed at trace time: one DMA
    from a shared constant instead of the index graph.
    """
    pmax = nl.tile_size.pmax
    if not w.on_chip:
        n = min(pmax, w.out_size - first)
        pos = first + np.arange(n)[:, None] + pmax * np.arange(tiles)[None, :]
        table = np.where(pos < w.out_size, w.src[np.minimum(pos, w.out_size - 1)], w.in_size - 1)
        index = nl.ndarray((n, tiles), dtype=nl.int32, name="src_w_idx")
        nisa.dma_copy(dst=index, src=nl.shared_constant(table, dtype=nl.int32))  # partition p, column t: src_w
        return index
    pos = nl.ndarray((min(pmax, w.out_size - first), tiles), dtype=nl.int32, name="out_col")
    nisa.iota(pos, pattern=[[pmax, tiles]], offset=first, channel_multiplier=1)
    return scaled_floor(pos, w.scale, w.in_size - 1, "src_w")


def table_tile(table, name: str, q0: int = 0, partitions: int | None = None, dtype=nl.int32):
    """A tile whose partitions q0 .. q0 + len(table) - 1 hold ``table`` (values fixed at trace time), loaded by
    one DMA from a shared constant: what an index graph computes, for a map the engines do not compute
    (``AxisPlan.on_chip``). ``partitions``: the tile's height (None: q0 + len(table))."""
    table = np.asarray(table)
    p, f = table.shape
    tile = nl.ndarray((q0 + p if partitions is None else partitions, f), dtype=dtype, name=name)
    nisa.dma_copy(dst=tile[q0:q0 + p, 0:f], src=nl.shared_constant(table, dtype=dtype))
    return tile


def tile_rows_and_columns(n: int, tiles: int, out_w: int):
    """Int32 (n, tiles) tiles (i, r, ow): partition i of a tile of whole rows is pixel (r, ow) = divmod(i, out_w).

    r = floor(i / out_w + 0.5 / out_w) by a reciprocal multiply: the half step
    keeps the rounding error (below 2**-16 for n <= 128) off the integers, so the
    row is exact.
    """
    i = nl.ndarray((n, tiles), dtype=nl.int32, name="tile_pos")
    nisa.iota(i, pattern=[[0, tiles]], offset=0, channel_multiplier=1)
    r = nl.ndarray((n, tiles), dtype=nl.int32, name="tile_row")
    floor_by_cast(r, i, 1.0 / out_w, 0.5 / out_w)
    ow = nl.ndarray((n, tiles), dtype=nl.int32, name="out_col")
    nisa.tensor_scalar(ow, r, op0=nl.multiply, operand0=out_w)
    nisa.tensor_tensor(ow, i, ow, op=nl.subtract)  # ow = i - r * out_w
    return i, r, ow


def row_tiles(plan, move) -> None:
    """For each tile of whole output rows (``plan.row_tiles``): its load indices, then ``move`` its pixels.

    The indices are relative to the tile's first source row, which is folded into
    ``move``'s source pixel at trace time: load_indices[i] = (src_h(oh0 + r) -
    src_h(oh0)) * in_w + src_w(ow), small and exact in float32. ``move(n,
    load_indices, src_pixel, dst_pixel)`` moves the tile's n pixels (see
    ``dma.gather_store``). The column part is built once for all tiles.
    """
    rows, tiles = plan.row_tiles
    h, w = plan.h, plan.w
    src_h, in_w, out_w = h.src.tolist(), w.in_size, w.out_size
    if not (h.on_chip and w.on_chip):
        _row_tiles_from_tables(plan, move)
        return
    _, r, ow = tile_rows_and_columns(rows * out_w, 1, out_w)
    src_w = scaled_floor(ow, w.scale, in_w - 1, "src_w")
    for t in nl.affine_range(len(tiles)):
        oh0, nrows = tiles[t]
        n = nrows * out_w
        oh = nl.ndarray((n, 1), dtype=nl.int32, name="out_row")
        nisa.tensor_scalar(oh, r[0:n, 0:1], op0=nl.add, operand0=oh0)
        row = scaled_floor(oh, h.scale, h.in_size - 1, "src_h")
        row_offset = nl.ndarray((n, 1), dtype=nl.int32, name="row_offset")
        nisa.tensor_scalar(row_offset, row, op0=nl.subtract, operand0=src_h[oh0], op1=nl.multiply, operand1=in_w)
        load_indices = nl.ndarray((n, 1), dtype=nl.int32, name="load_indices")
        nisa.tensor_tensor(load_indices, row_offset, src_w[0:n, 0:1], op=nl.add)
        move(n, load_indices, src_h[oh0] * in_w, oh0 * out_w)


#: Tiles of whole rows whose load indices one constant table holds (4 bytes per tile per partition).
TABLE_TILES = 512


def _row_tiles_from_tables(plan, move) -> None:
    """``row_tiles`` for a convention other than the compiler's: the same load indices, computed at trace time
    from the maps and loaded from constant tables (one DMA per TABLE_TILES tiles) instead of the index graph."""
    rows, tiles = plan.row_tiles
    h, w = plan.h, plan.w
    in_w, out_w, out_h = w.in_size, w.out_size, h.out_size
    r, ow = np.divmod(np.arange(rows * out_w), out_w)
    for g0 in range(0, len(tiles), TABLE_TILES):
        group = tiles[g0:g0 + TABLE_TILES]
        # column t: tile t's pixel i reads source pixel (src_h(oh0 + r) - src_h(oh0)) * in_w + src_w(ow); rows past
        # the tile's own (the last tile) are clamped: valid, and unused
        table = np.stack([(h.src[np.minimum(oh0 + r, out_h - 1)] - h.src[oh0]) * in_w + w.src[ow]
                          for oh0, _ in group], axis=1)
        index = nl.ndarray(table.shape, dtype=nl.int32, name="load_indices")
        nisa.dma_copy(dst=index, src=nl.shared_constant(table, dtype=nl.int32))
        for t in nl.affine_range(len(group)):
            oh0, nrows = group[t]
            n = nrows * out_w
            move(n, index[0:n, t:t + 1], int(h.src[oh0]) * in_w, oh0 * out_w)

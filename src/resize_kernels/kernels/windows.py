"""resize_nearest_windows_kernel: many output rows per partition, one gather of a window of source rows each.

Where output rows outnumber the partitions many times over, the rows kernel
gathers one row per partition per DMA (an indirect DMA takes one index per
partition), and every DMA engine starts at most one packet per packet_ns
(cost.py D2b) however few bytes it carries: narrow rows make that the bound.
Here a partition takes m consecutive flat output rows, whose source rows (the
map is monotone) lie in a window of k consecutive flat source rows: one gather
per tile brings each partition its window, and one nc_n_gather per tile picks
every output element from it (row offset + column index), so a tile costs two
DMAs whatever m is.
"""

from __future__ import annotations

import numpy as np

from .. import contract, semantics
from ..errors import InvalidValueError
from ..intmath import ceil_div
from ..machine.cost import PARTITIONS_PER_DMA_ENGINE, TARGETS
from ..nki import isa as nisa
from ..nki import language as nl
from .columns import column_index_tile
from .helpers import table_tile
from .plan import plan_resize
from .registration import FORWARD, KernelRecord, Knob, register
from .schedule import POOL_BYTES, buffer_count

#: Bytes per partition a tile's window, index and output take at most, two sets of them at least (the next tiles
#: gather while this one is picked and stored; up to schedule.MAX_BUFFERS where they fit): the rows kernels' pool.
WINDOW_BYTES = POOL_BYTES
#: Bytes of a row per partition below which a gather of one row per partition takes an engine for less than the
#: packet rate's minimum (cost.py D2b: packet_ns at the engine's bandwidth over a packet's 8 partitions, trn1's).
PACKET_ROW_BYTES = int(TARGETS["trn1"].packet_ns * TARGETS["trn1"].dma_engine_gbps / PARTITIONS_PER_DMA_ENGINE)
#: Output rows per partition per tile the selection tries (each setting a line: more rows, fewer and larger DMAs).
ROWS_PER_PARTITION = (4, 8, 16, 32, 64)


def resize_nearest_windows_kernel(data_tensor, out_shape, schedule=None, convention=None):
    """Nearest-neighbour resize with m output rows per partition, their source rows gathered as one window.

    Layouts: data_tensor (in_b, in_h, in_w, in_c) in HBM; returns out_tensor
    (out_b, out_h, out_w, out_c) in HBM; any machine dtype (data is only moved:
    an indirect DMA and nc_n_gather, both bit-exact).
    Constraints: the resize contract; a monotone height map (every convention
    but the ones that step back); a tile within WINDOW_BYTES per partition.
    Tiling: flat output rows (batch * out_h + row), m per partition, 128 m per
    tile. Partition p's rows f .. f + m - 1 read flat source rows from start(p)
    = min(src(f), rows - k) on, k the longest window of the tile (the flat map
    is monotone across batches too); its window is those k rows (whole, or the
    span of the columns read where that is under half a row). The window starts
    and the rows' offsets in them are one table (fixed at trace time, loaded
    once); the column index is the index graph's (``columns.column_index_tile``:
    a table for another convention).
    Per tile: one gather of the windows (issued ahead by the buffers' depth), the
    element index (row offset plus column index: a tensor_tensor for some rows,
    scalar-engine copies with a bias for the others), one nc_n_gather, one store
    (and one more for a last, partial partition). ``schedule``: m, or a ``Knob`` of it (None: the first
    of ROWS_PER_PARTITION that fits).
    """
    name = "resize_nearest_windows_kernel"
    in_shape, out_shape = contract.resize_shapes(name, data_tensor.shape, out_shape)
    plan = plan_resize(in_shape, out_shape, convention or semantics.COMPILER)
    dtype, item = data_tensor.dtype, data_tensor.dtype.itemsize
    reason = _refusal(plan, item)
    if reason is not None:
        raise InvalidValueError(f"{name} {reason}, got {in_shape} -> {out_shape}; use kernel 'auto'")
    m = schedule.value if isinstance(schedule, Knob) else _fitting(plan, item)[0] if schedule is None else schedule
    if not (isinstance(m, int) and m >= 1 and _fits(plan, item, m)):
        raise InvalidValueError(f"{name} requires a schedule m, output rows per partition whose tile fits "
                                f"{WINDOW_BYTES} bytes per partition ({_fitting(plan, item)} here), got {schedule!r}")
    in_b, in_h, in_w, c = in_shape
    out_h, out_w = out_shape[1], out_shape[2]
    rows_in, rows_out = in_b * in_h, in_b * out_h
    out_tensor = nl.ndarray(out_shape, dtype=dtype, buffer=nl.shared_hbm, name="out_tensor")
    out_rows = out_tensor.reshape((rows_out, out_w * c))
    lo, span = _column_span(plan)  # the source columns the output reads: lo .. lo + span - 1
    row_len, pmax = span * c, nl.tile_size.pmax

    tiles = _tiles(plan, m)
    k = max(t.window for t in tiles)
    table = np.zeros((pmax, len(tiles) * (m + 1)), np.int64)  # per tile: the window starts, then the row offsets
    for n, t in enumerate(tiles):  # every window k rows, those that would pass the last row moved back
        starts = np.minimum(t.src[:, 0], rows_in - k)
        table[:t.partitions, n] = starts
        table[:t.partitions, len(tiles) + n * m:len(tiles) + (n + 1) * m] = (t.src - starts[:, None]) * row_len
    index_table = table_tile(table, "window_table")
    columns = column_index_tile(plan, 0, out_w, lo, c, pmax)

    pool = [(nl.ndarray((pmax, k * row_len), dtype=dtype, name="window"),
             nl.ndarray((pmax, m * out_w * c), dtype=nl.uint32, name="window_index"),
             nl.ndarray((pmax, m * out_w * c), dtype=dtype, name="window_out"))
            for _ in range(min(len(tiles), buffer_count(_set_bytes(plan, item, m, k))))]
    data_rows, whole = data_tensor.reshape((rows_in, in_w * c)), span == in_w  # whole rows: a window is one run

    def gather(n):
        """Tile n's windows into its buffer: k rows of the span per partition, from the table's start."""
        p, window = tiles[n].partitions, pool[n % len(pool)][0]
        nisa.dma_copy(dst=window.ap(pattern=[[k * row_len, p], [1, k * row_len]] if whole else
                                    [[k * row_len, p], [row_len, k], [1, row_len]], offset=0),
                      src=data_rows.ap(pattern=[[in_w * c, p], [1, k * row_len]] if whole else
                                       [[in_w * c, p], [in_w * c, k], [1, row_len]],
                                       offset=lo * c, vector_offset=index_table[0:p, n:n + 1], indirect_dim=0))

    for n in range(len(pool) - 1):  # the gathers run ahead of the picks and stores by the pool's depth
        gather(n)
    width = out_w * c
    on_vector = _vector_rows(m, width)  # the index's first rows by one vector add, the others one by one on the
    for n, t in enumerate(tiles):  # scalar engine (its copy adds a (p, 1) bias), so that the two share the work
        if n + len(pool) - 1 < len(tiles):
            gather(n + len(pool) - 1)  # into the buffer tile n - 1 is done with
        window, index, out = pool[n % len(pool)]
        p, offsets = t.partitions, len(tiles) + n * m
        if on_vector:
            nisa.tensor_tensor(index.ap(pattern=[[m * width, p], [width, on_vector], [1, width]]),
                               index_table.ap(pattern=[[index_table.shape[1], p], [1, on_vector], [0, width]],
                                              offset=offsets),
                               columns.ap(pattern=[[width, p], [0, on_vector], [1, width]]), op=nl.add)
        for j in range(on_vector, m):
            nisa.activation(index[0:p, j * width:(j + 1) * width], nl.copy, columns[0:p, :],
                            bias=index_table[0:p, offsets + j:offsets + j + 1])
        nisa.nc_n_gather(out[0:p, :], window[0:p, 0:k * row_len], index[0:p, :])
        full = t.rows // m  # partitions with m rows; a last one with fewer stores its own
        if full:
            nisa.dma_copy(dst=out_rows.ap(pattern=[[m * width, full], [1, m * width]], offset=t.first * width),
                          src=out[0:full, :])
        if t.rows > full * m:
            rest = t.rows - full * m
            nisa.dma_copy(dst=out_rows.ap(pattern=[[rest * width, 1], [1, rest * width]],
                                          offset=(t.first + full * m) * width), src=out[full:full + 1, 0:rest * width])
    return out_tensor


def _vector_rows(m: int, width: int) -> int:
    """Rows of a partition's index the vector engine adds in one instruction (2 passes over them, E2), the rest
    left to the scalar engine's copies (a row each, E5): the split whose busier engine finishes soonest."""
    params = TARGETS["trn1"]
    fixed = params.vector_fixed_cycles
    return min(range(m + 1), key=lambda v: max(fixed + 2 * v * width if v else 0, (m - v) * (fixed + width)))


class _Tile:
    """A tile's flat output rows first .. first + rows - 1, m per partition: the partitions, each row's flat
    source row (partition, row), and the longest window a partition needs."""

    def __init__(self, flat_src: np.ndarray, first: int, rows: int, m: int):
        self.first, self.rows = first, rows
        self.partitions = ceil_div(rows, m)
        f = first + np.arange(self.partitions * m).reshape(self.partitions, m)
        self.src = flat_src[np.minimum(f, first + rows - 1)]  # past the tile's rows: its last row's source, unused
        self.window = int((self.src[:, -1] - self.src[:, 0]).max()) + 1


def _flat_sources(plan) -> np.ndarray:
    """batch * in_h + src_h(row) for every flat output row batch * out_h + row."""
    in_b, in_h = plan.in_shape[0], plan.in_shape[1]
    return (np.arange(in_b)[:, None] * in_h + plan.h.src[None, :]).reshape(-1)


def _tiles(plan, m: int) -> list[_Tile]:
    rows_out, flat = plan.in_shape[0] * plan.h.out_size, _flat_sources(plan)
    step = nl.tile_size.pmax * m
    return [_Tile(flat, f0, min(step, rows_out - f0), m) for f0 in range(0, rows_out, step)]


def _column_span(plan) -> tuple[int, int]:
    """(first source column a window holds, columns from it): whole rows, one descriptor per partition's window
    (its rows are contiguous), unless the output reads under half of each row: then the span it reads, a
    descriptor per row (each generated on GpSimd, cost.py D5)."""
    src, in_w = plan.w.src, plan.w.in_size
    lo, span = int(src.min()), int(src.max() - src.min()) + 1
    return (lo, span) if 2 * span < in_w else (0, in_w)


def _set_bytes(plan, item: int, m: int, k: int) -> int:
    """Bytes per partition of one tile's window (k rows of the span), index and output (m rows)."""
    c = plan.in_shape[3]
    return k * _column_span(plan)[1] * c * item + m * plan.w.out_size * c * (4 + item)


def _fits(plan, item: int, m: int) -> bool:
    """Whether tiles of m rows per partition fit WINDOW_BYTES per partition (two sets) with exact indices."""
    k = max(t.window for t in _tiles(plan, m))
    return 2 * _set_bytes(plan, item, m, k) <= WINDOW_BYTES and k * _column_span(plan)[1] * plan.in_shape[3] < 1 << 24


def _fitting(plan, item: int) -> tuple[int, ...]:
    """The settings of ROWS_PER_PARTITION that fit, up to twice the rows per partition the shape has."""
    rows_out = plan.in_shape[0] * plan.h.out_size
    return tuple(m for m in ROWS_PER_PARTITION
                 if (m == ROWS_PER_PARTITION[0] or m // 2 <= ceil_div(rows_out, nl.tile_size.pmax))
                 and _fits(plan, item, m))


def _refusal(plan, item: int) -> str | None:
    if not plan.h.monotone:
        return (f"requires a monotone height map (a partition's rows in one window), not "
                f"{plan.h.convention.describe()}, which steps back here")
    if not _fitting(plan, item):
        return f"requires a tile of {ROWS_PER_PARTITION[0]} rows per partition within {WINDOW_BYTES} bytes"
    return None


def _skipped(plan, item: int) -> str | None:
    """The default tries it first where the rows kernel's gathers are bound by the DMA packet rate: two output rows
    per partition or more (two gathers or more), each row under a packet's worth of bytes per partition, and a
    height downsampled 4x at most (deeper, the windows hold mostly rows no output reads)."""
    if plan.in_shape[0] * plan.h.out_size < 2 * nl.tile_size.pmax:
        return "fewer than two output rows per partition: the rows kernel gathers each tile once already"
    row_bytes = _column_span(plan)[1] * plan.in_shape[3] * item
    if row_bytes > PACKET_ROW_BYTES:
        return f"rows of {row_bytes:,} bytes: the rows kernel's gathers are not bound by the DMA packet rate"
    if plan.h.in_size > 4 * plan.h.out_size:
        return "a height downsampled more than 4x: windows of mostly unread rows"
    return None


register(KernelRecord("windows", FORWARD, resize_nearest_windows_kernel, rank=0, conventions=True, applies=_refusal,
                      skipped_by_default=_skipped, settings=lambda plan, item: (tuple(Knob(m, "rows per partition") for m in
                                                                   _fitting(plan, item) or ROWS_PER_PARTITION[:1]),)))

"""resize_nearest_grad_rows_kernel: the gradient with dx rows on partitions, its sums made on chip, in order.

dx[b, i, j] is the float32 sum, from +0.0 and in row-major (oh, ow) order, of
the dy pixels whose source is (i, j): those of the height's run of output rows
that copy row i and of the width's run of output columns that copy column j
(``plan.AxisPlan.runs``). Both runs are consecutive, so a dx row needs a block
of consecutive dy rows and each of its columns a block of consecutive dy
columns: the kernel loads dy rows by direct DMAs (no scatter, no descriptors for
GpSimd to write) and adds them into a float32 accumulator in PSUM (where a
vector add streams one operand, not two) with access patterns that follow the
width's column groups; then it casts once and stores whole dx rows.

The work is a pipeline of pieces (a row tile's columns and channels): the
loads of the next pieces run on the DMA engines while the vector engine adds
one piece and the scalar engine casts the one before, so that only the first
piece's loads and the last piece's cast and stores are not overlapped.
"""

from __future__ import annotations

from .. import contract, semantics
from ..errors import InvalidValueError
from ..intmath import ceil_div
from ..nki import isa as nisa
from ..nki import language as nl
from .plan import RowRun, column_groups, plan_resize
from .registration import GRAD, KernelRecord, register

#: PSUM bytes per partition of one accumulator: two of them (double-buffered) fill PSUM's 16 KiB.
ACC_BYTES = 8 * 1024
#: SBUF bytes per partition of one tile of dy rows, at most (a piece's dy rows are usually far fewer).
DY_TILE_BYTES = 48 * 1024
#: dy tiles the pieces take in turn: while one piece is added, the next DY_BUFFERS - 1 pieces load. Three tiles
#: of DY_TILE_BYTES and two output tiles fit trn1's 192 KiB of SBUF per partition.
DY_BUFFERS = 3
#: About how many pieces the pipeline has over all row tiles, its columns cut to that (never under
#: MIN_PIECE_ELEMENTS): the first piece's loads and the last one's cast and stores are the pipeline's
#: unoverlapped ends, so smaller pieces shorten them.
PIECES = 6
#: Accumulator elements per partition and column group of the width a piece keeps at least: a vector instruction
#: costs 80 cycles on top of its elements (cost model E2), so narrower pieces would spend more on instructions
#: than they save at the ends.
MIN_PIECE_ELEMENTS = 512


def resize_nearest_grad_rows_kernel(dy_tensor, in_shape, convention=None):
    """Gradient of nearest-neighbour resize, dx[b, src_h(oh), src_w(ow), c] += dy[b, oh, ow, c], any ratio.

    Layouts: dy_tensor (b, out_h, out_w, c) in HBM; returns dx of ``in_shape``
    (b, in_h, in_w, c) in HBM. Dtypes: float32, float16, bfloat16; sums in
    float32 from +0.0 in row-major (oh, ow) order, cast once (RNE): bit for bit
    ``semantics.resize_nearest_grad_reference``. Every map is fixed at trace
    time, so ``convention`` (``semantics.IndexConvention``; None: the
    compiler's) may be any. Constraint: one channel of a
    dx pixel's dy pixels (its run of rows by its run of columns) fits
    DY_TILE_BYTES per partition (``grad_rows_applies``), else InvalidValueError.
    Tiling: a row tile holds whole batches of dx rows when in_h <= 128 (else up
    to 128 rows of one batch), times channel blocks: partition rank * blocks +
    block, where a row's rank orders the rows by how many dy rows they take
    (most first), so that the adds of the r-th dy row cover a prefix of the
    partitions, and blocks (equal divisors of the channels) fill the partitions
    the rows leave. Along the row, pieces of dx columns and channels whose
    accumulator fits ACC_BYTES of PSUM and whose dy rows fit DY_TILE_BYTES,
    columns cut narrower for about PIECES pieces over all the row tiles, none
    under MIN_PIECE_ELEMENTS per column group (``_column_chunks``).
    Per piece: one direct load per band of rows (``plan.column_groups`` on the
    height's runs: dx rows in arithmetic progression, each with its run of
    consecutive dy rows), or per row when a row has several blocks (its blocks'
    partitions are then consecutive), into the next of DY_BUFFERS dy tiles,
    issued DY_BUFFERS - 1 pieces ahead; per dy row r and column group, one
    vector op per column of the group's runs (the first a copy + 0.0, the rest
    adds in PSUM), after a memset where a row or column takes no dy pixel (a
    downsample); a copy out of PSUM on the scalar engine (the cast); stores
    like the loads. The pieces of all row tiles form one pipeline.
    """
    name = "resize_nearest_grad_rows_kernel"
    dy_shape, in_shape = contract.grad_shapes(name, dy_tensor.shape, in_shape)
    contract.grad_dtype(name, dy_tensor.dtype)
    plan = plan_resize(in_shape, dy_shape, convention or semantics.COMPILER)
    reason = _refusal(plan, dy_tensor.dtype.itemsize)
    if reason:
        raise InvalidValueError(f"{name} {reason}, got dy {dy_shape} for dx {in_shape}; use kernel='general'")
    in_b, in_h, in_w, c = in_shape
    _, out_h, out_w, _ = dy_shape
    dtype, item = dy_tensor.dtype, dy_tensor.dtype.itemsize
    dx = nl.ndarray(tuple(in_shape), dtype=dtype, buffer=nl.shared_hbm, name="dx")
    dy_rows = dy_tensor.reshape((in_b * out_h, out_w * c))
    dx_rows = dx.reshape((in_b * in_h, in_w * c))
    row_dy, row_dx = out_w * c, in_w * c
    depth = plan.h.max_repeat  # dy rows per dx row at most
    tiles = _row_tiles(plan)
    pieces = [(tile, chunk) for tile in tiles  # one pipeline: about PIECES in all
              for chunk in _column_chunks(plan, depth, c // tile[2], item, ceil_div(PIECES, len(tiles)))]
    size = max(depth * nd * cc for _, (_, _, _, nd, _, _, cc, _) in pieces)  # dy elements per partition, at most
    partitions = max(rows * blocks for _, rows, blocks in tiles)
    dy_tiles = [nl.ndarray((partitions, size), dtype=dtype, name="dy_rows")
                for _ in range(min(DY_BUFFERS, len(pieces)))]

    def load(k):
        """Piece k's dy rows into dy tile k % DY_BUFFERS: partition rank * blocks + block, slot r (nd * cc
        elements from r * nd * cc) the r-th dy row of the rank's dx row, the piece's dy columns and channels."""
        (bands, _, blocks), (_, _, d0, nd, _, c0, cc, _) = pieces[k]
        dyt = dy_tiles[k % len(dy_tiles)]
        cols, sbuf_cols = _columns(nd, cc, c)
        for band in bands:
            if band.repeat == 0 or nd == 0:  # dx rows or columns no dy pixel reads
                continue
            across = c // blocks if blocks > 1 else band.dy_step * row_dy  # one row's blocks, or the band's rows
            for first, n in _moves(band, blocks):
                # load: [across, n] the band's runs of dy rows from its row `first` (or that run's channel blocks),
                # [row_dy, repeat] each run's dy rows, the piece's dy columns from d0 and channels from c0.
                # SBUF: partitions (rank0 + first) * blocks .. + n, slots 0 .. repeat - 1
                nisa.dma_copy(dst=dyt.ap(pattern=[[size, n], [nd * cc, band.repeat], *sbuf_cols],
                                         offset=(band.rank0 + first) * blocks * size),
                              src=dy_rows.ap(pattern=[[across, n], [row_dy, band.repeat], *cols],
                                             offset=(band.batch * out_h + band.dy0 + first * band.dy_step) * row_dy
                                             + d0 * c + c0))

    for k in range(len(dy_tiles) - 1):  # the first pieces' loads, ahead of any add
        load(k)
    for k in nl.affine_range(len(pieces)):
        if k + len(dy_tiles) - 1 < len(pieces):
            load(k + len(dy_tiles) - 1)  # before this piece's adds in program order: the DMA engines take it first
        (bands, rows, blocks), (j0, nj, d0, nd, col_groups, c0, cc, empty_cols) = pieces[k]
        dyt = dy_tiles[k % len(dy_tiles)]
        p = rows * blocks
        covered = [blocks * sum(b.count for b in bands if b.repeat > r) for r in range(depth)]
        acc = nl.ndarray((p, nj, cc), dtype=nl.float32, buffer=nl.psum, name="dx_f32")
        fresh = covered[0] < p or empty_cols  # some dx pixel takes no dy pixel: start every sum at +0.0
        if fresh:
            nisa.memset(acc, 0.0)
        for r in range(depth):  # dy rows in order; within one, the dy columns of each run in order
            if not covered[r]:  # no row of this tile has an r-th dy row
                break
            for cg in col_groups:
                for m in range(cg.repeat):
                    # acc: [nj * cc, covered] the rows with an r-th dy row, [src_step * cc, count] the group's dx
                    # columns; dy: slot r, the m-th dy column of each of their runs
                    total = acc.ap(pattern=[[nj * cc, covered[r]], [cg.src_step * cc, cg.count], [1, cc]],
                                   offset=(cg.src0 - j0) * cc)
                    term = dyt.ap(pattern=[[size, covered[r]], [cg.out_step * cc, cg.count], [1, cc]],
                                  offset=(r * nd + cg.out0 - d0 + m) * cc)
                    if r == 0 and m == 0 and not fresh:  # +0.0 + x, the sum's first term (-0.0 becomes +0.0)
                        nisa.tensor_scalar(total, term, op0=nl.add, operand0=0.0)
                    else:
                        nisa.tensor_tensor(total, total, term, op=nl.add)
        out = nl.ndarray((p, nj, cc), dtype=dtype, name="dx_tile")
        # out of PSUM on the scalar engine, beside the vector engine's adds of the next piece: float32 -> dtype,
        # round to nearest even, once (x * 1.0 is x; a sum from +0.0 is never -0.0, so a bias add changes nothing)
        nisa.activation(out, "copy", acc)
        cols, sbuf_cols = _columns(nj, cc, c)
        for band in bands:
            across = c // blocks if blocks > 1 else band.dx_step * row_dx  # one row's blocks, or the band's rows
            for first, n in _moves(band, blocks):
                # store: partitions (rank0 + first) * blocks .. + n -> [across, n] the band's dx rows from its row
                # `first` (or that row's channel blocks), the piece's dx columns from j0 and channels from c0
                nisa.dma_copy(dst=dx_rows.ap(pattern=[[across, n], *cols],
                                             offset=(band.batch * in_h + band.dx0 + first * band.dx_step) * row_dx
                                             + j0 * c + c0),
                              src=out.ap(pattern=[[nj * cc, n], *sbuf_cols],
                                         offset=(band.rank0 + first) * blocks * nj * cc))
    return dx


def _columns(nj: int, cc: int, c: int) -> tuple[list, list]:
    """The free pairs (HBM, SBUF) of nj consecutive pixels' cc channels from a row of c-channel pixels: one run
    when cc is all of them."""
    return ([[1, nj * cc]], [[1, nj * cc]]) if cc == c else ([[c, nj], [1, cc]], [[cc, nj], [1, cc]])


def _moves(band, blocks: int) -> list:
    """(first row, partitions) per DMA of a band: all its rows at once when a row has one block (partitions rank0 ..
    rank0 + count - 1), else one DMA per row over its blocks' consecutive partitions (a DMA over every blocks-th
    partition would overlap the next block's partition range, and the cost model orders writes to overlapping
    ranges of one tile, S2)."""
    return [(0, band.count)] if blocks == 1 else [(k, blocks) for k in range(band.count)]


def _refusal(plan, item: int) -> str | None:
    """Why the kernel does not take the shape, or None."""
    if not (plan.h.monotone and plan.w.monotone):
        return (f"requires a monotone forward map (each dx pixel's dy pixels in one run), not "
                f"{plan.h.convention.describe()}, which steps back here")
    if not grad_rows_applies(plan, item):
        return (f"requires a dx pixel's dy pixels (rows x columns of one run, {plan.h.max_repeat} x "
                f"{plan.w.max_repeat} here) to fit a tile of {DY_TILE_BYTES // 1024} KiB per partition")
    return None


def grad_rows_applies(plan, item: int) -> bool:
    """Whether one channel of one dx pixel's dy pixels (its run of rows by its run of columns) fits a dy tile, and
    they are one run on each axis (a monotone map)."""
    return plan.h.monotone and plan.w.monotone and plan.h.max_repeat * plan.w.max_repeat * item <= DY_TILE_BYTES


#: Instructions per tile and chunk past which the default takes the scatter-add kernel instead: irregular ratios cut
#: the maps into many row bands (two DMAs each) and column groups (an add per dy row and column of their runs).
GRAD_ROWS_MAX_PER_CHUNK = 64


def grad_rows_is_short(plan, item: int) -> bool:
    """Whether every tile and chunk of the rows kernel takes at most GRAD_ROWS_MAX_PER_CHUNK instructions."""
    depth, channels = plan.h.max_repeat, plan.in_shape[3]
    bands = max(2 * len(tile[0]) for tile in _row_tiles(plan))
    adds = max(depth * sum(g.repeat for g in chunk[4]) for chunk in _column_chunks(plan, depth, channels, item))
    return bands + adds <= GRAD_ROWS_MAX_PER_CHUNK


class Band:
    """dx rows dx0 + k * dx_step (k < count) of ``batch``, each summing ``repeat`` consecutive dy rows from
    dy0 + k * dy_step (none when repeat is 0), at ranks rank0 + k."""

    def __init__(self, batch: int, group, rank0: int = 0):
        self.batch, self.count, self.repeat = batch, group.count, group.repeat
        self.dx0, self.dx_step, self.dy0, self.dy_step = group.src0, group.src_step, group.out0, group.out_step
        self.rank0 = rank0


def _row_tiles(plan) -> list:
    """Tiles of dx rows: [(bands, rows, channel blocks)], bands ranked by repeat, most first."""
    in_b, in_h, c = plan.in_shape[0], plan.h.in_size, plan.in_shape[3]
    pmax, runs = nl.tile_size.pmax, plan.h.runs
    tiles = []
    spans = [(b0, min(in_b, b0 + pmax // in_h), 0, in_h) for b0 in range(0, in_b, pmax // in_h)] if in_h <= pmax \
        else [(b, b + 1, i0, min(in_h, i0 + pmax)) for b in range(in_b) for i0 in range(0, in_h, pmax)]
    for b0, b1, i0, i1 in spans:
        part = [r for r in runs if i0 <= r.src < i1]
        used = {r.src for r in part}
        empty = [RowRun(i, i, 0) for i in range(i0, i1) if i not in used]  # dx rows no dy row reads: zeros
        groups = column_groups(part) + [g._replace(repeat=0) for g in column_groups([e._replace(repeat=1)
                                                                                      for e in empty])]
        bands = sorted((Band(b, g) for b in range(b0, b1) for g in groups), key=lambda band: -band.repeat)
        rank = 0
        for band in bands:
            band.rank0, rank = rank, rank + band.count
        rows = (b1 - b0) * (i1 - i0)
        blocks = max(d for d in range(1, min(c, pmax // rows) + 1) if c % d == 0)
        tiles.append((bands, rows, blocks))
    return tiles


def _column_chunks(plan, depth: int, channels: int, item: int, pieces: int = 1) -> list:
    """Chunks of dx columns and channels of a block: [(j0, nj, d0, nd, column groups, c0, cc, empty columns?)],
    dy columns d0 .. d0 + nd - 1 feeding dx columns j0 .. j0 + nj - 1, the accumulator within ACC_BYTES and the
    dy rows within DY_TILE_BYTES per partition; columns cut narrower for about ``pieces`` chunks in all, down to
    MIN_PIECE_ELEMENTS accumulator elements per column group (channels are not cut further: that would shorten
    every DMA descriptor)."""
    in_w, runs = plan.w.in_size, plan.w.runs
    cc = max(1, min(channels, ACC_BYTES // 4, DY_TILE_BYTES // (depth * plan.w.max_repeat * item)))
    nj = max(1, min(ACC_BYTES // (4 * cc), DY_TILE_BYTES // (depth * plan.w.max_repeat * cc * item)))
    if pieces > 1:  # an add's elements are about nj * cc over the groups of a chunk (the width's period)
        per_channels = ceil_div(pieces, ceil_div(channels, cc))  # column chunks wanted per chunk of channels
        groups = len(column_groups(runs)) if runs else 1
        nj = min(nj, max(ceil_div(in_w, per_channels), ceil_div(MIN_PIECE_ELEMENTS * groups, cc)))
    chunks = []
    for j0 in range(0, in_w, nj):
        j1 = min(in_w, j0 + nj)
        part = [r for r in runs if j0 <= r.src < j1]
        d0, d1 = (part[0].first, part[-1].first + part[-1].repeat) if part else (0, 0)  # none: nothing to load
        for c0 in range(0, channels, cc):
            chunks.append((j0, j1 - j0, d0, d1 - d0, column_groups(part) if part else [], c0,
                           min(cc, channels - c0), len(part) < j1 - j0))
    return chunks


register(KernelRecord("rows", GRAD, resize_nearest_grad_rows_kernel, rank=0, conventions=True, applies=_refusal,
                      skipped_by_default=lambda plan, item: None if grad_rows_is_short(plan, item) else (
                          f"more than {GRAD_ROWS_MAX_PER_CHUNK} instructions per tile and chunk (an irregular map): "
                          f"the scatter-add kernel is faster")))

"""The plan of one resize, computed once when a kernel is traced: what to move, before any schedule says how.

Scales are fixed at trace time, so each axis's whole map (``semantics.source_index``,
the float32 convention the engines compute) is a Python value then, and so is its
structure: an integer ratio, runs of output rows that copy one source row, tiles
of whole output rows. The plan holds these facts for one (in, out) shape; the
kernels are schedules over it (TVM's compute / schedule split), so each of them
decides nothing the plan already knows.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import semantics
from ..errors import InvalidValueError
from ..nki import language as nl


class RowRun(NamedTuple):
    """Output rows ``first .. first + repeat - 1`` all copy source row ``src`` (a tuple: maps have thousands)."""

    first: int
    src: int
    repeat: int


@dataclass(frozen=True, eq=False)
class AxisPlan:
    """One axis: its sizes, its map src(d) for every output index d, and its integer ratio if it has one.

    ``convention``: the axis's index convention (``semantics.IndexConvention.axis``); the compiler's by default,
    the one map the engines compute on chip (``scale``, ``limit``). Any other is a trace-time table: kernels that
    accept it read its indices from a constant (``helpers.source_columns``).
    """

    in_size: int
    out_size: int
    convention: semantics.IndexConvention = semantics.COMPILER

    @functools.cached_property
    def src(self) -> np.ndarray:
        """src(d), int64, one entry per output index: min(floor(float32(d) * float32(in/out)), in - 1) for the
        compiler's convention, else ``semantics.convention_index``."""
        if self.convention.is_default:
            return semantics.source_index(self.in_size, self.out_size)
        return semantics.convention_index(self.in_size, self.out_size, self.convention, self.convention.scales[0])

    @functools.cached_property
    def ratio(self) -> tuple[int, int] | None:
        """(up, down) when src(d) = (d // up) * down (``semantics.integer_ratio``), else None."""
        if self.convention.is_default:
            return semantics.integer_ratio(self.in_size, self.out_size)
        i, o = self.in_size, self.out_size
        up, down = (o // i, 1) if o % i == 0 else (1, i // o) if i % o == 0 else (0, 0)
        d = np.arange(o, dtype=np.int64)
        return (up, down) if up and np.array_equal(self.src, d // up * down) else None

    @property
    def on_chip(self) -> bool:
        """Whether the engines compute this map (``scale``, ``limit``): the compiler's convention only."""
        return self.convention.is_default

    @functools.cached_property
    def limit(self) -> int | None:
        """in - 1 where the float32 floor passes it for some output index (src is then clamped), else None: the
        map is monotone, so the last index decides."""
        self._check_on_chip("limit")
        last = np.floor(np.float32(self.out_size - 1) * semantics.axis_scale(self.in_size, self.out_size))
        return self.in_size - 1 if last > self.in_size - 1 else None

    @property
    def scale(self) -> float:
        """in / out as the Python float the kernels hand the engines (which round it to float32)."""
        self._check_on_chip("scale")
        return 1.0 * self.in_size / self.out_size

    def _check_on_chip(self, what: str) -> None:
        if not self.on_chip:  # a kernel that computes the map on chip was handed another convention
            raise InvalidValueError(f"AxisPlan.{what} is the compiler's on-chip map; {self.convention.describe()} "
                                    f"is a trace-time table (AxisPlan.src): use a kernel that accepts conventions")

    @functools.cached_property
    def monotone(self) -> bool:
        """Whether src never steps back (every map but some of onnx.reference's round_prefer_* ones), so that each
        source index's outputs form one run."""
        return bool(np.all(self.src[1:] >= self.src[:-1]))

    @functools.cached_property
    def max_repeat(self) -> int:
        """The longest run: how many output indices at most copy one source index."""
        return max(self._runs[2]) if self.out_size <= 64 else int(self._runs[2].max())

    @property
    def runs(self) -> list[RowRun]:
        """The map as runs of equal source index, in output order (the map is non-decreasing)."""
        return self._runs[3]

    @functools.cached_property
    def _runs(self) -> tuple:
        """(starts, sources, repeats, runs): the runs' columns (lists for a short map, else numpy) and RowRuns."""
        if self.out_size <= 64:  # a short map: Python is quicker than numpy's calls
            src, starts = self.src.tolist(), [0]
            starts += [d for d in range(1, len(src)) if src[d] != src[d - 1]]
            srcs, repeats = [src[s] for s in starts], [b - a for a, b in zip(starts, starts[1:] + [len(src)])]
        else:
            starts = np.flatnonzero(np.diff(self.src, prepend=-1))
            srcs, repeats = self.src[starts], np.diff(starts, append=len(self.src))
        runs = zip(*(x if isinstance(x, list) else x.tolist() for x in (starts, srcs, repeats)))
        return starts, srcs, repeats, list(map(tuple.__new__, itertools.repeat(RowRun), runs))  # no call per run


@dataclass(frozen=True, eq=False)
class ResizePlan:
    """An NHWC resize ``in_shape`` -> ``out_shape`` (already checked by the contract): its two axes."""

    in_shape: tuple
    out_shape: tuple
    h: AxisPlan
    w: AxisPlan

    @property
    def integer_ratios(self) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """((up_h, down_h), (up_w, down_w)) when both axes are integer ratios, else None."""
        return None if self.h.ratio is None or self.w.ratio is None else (self.h.ratio, self.w.ratio)

    @functools.cached_property
    def row_tiles(self) -> tuple[int, list[tuple[int, int]]] | None:
        """(rows per tile, [(first output row, rows)]) when tiles of whole output rows work, else None.

        A tile of partitions holds floor(128 / out_w) whole output rows. This
        works when that is at least two rows and every tile's on-chip index
        (source row difference * in_w + column) stays below 2**24, where
        float32 holds integers exactly.
        """
        src_h, in_w, out_w = self.h.src, self.w.in_size, self.w.out_size
        rows = nl.tile_size.pmax // out_w
        if rows < 2:
            return None
        firsts = np.arange(0, len(src_h), rows)
        lasts = np.minimum(firsts + rows, len(src_h)) - 1
        if ((src_h[lasts] - src_h[firsts] + 1) * in_w >= semantics.MAX_DIM).any():
            return None
        return rows, [(int(f), int(min(rows, len(src_h) - f))) for f in firsts]


def plan_resize(in_shape: tuple, out_shape: tuple,
                convention: semantics.IndexConvention = semantics.COMPILER) -> ResizePlan:
    """The plan of NHWC ``in_shape`` -> ``out_shape`` (int tuples) under ``convention``, made once per shape pair
    (one cache entry whether the convention is given or left to its default)."""
    return _plan_resize(tuple(in_shape), tuple(out_shape), convention)


@functools.lru_cache(maxsize=256)
def _plan_resize(in_shape: tuple, out_shape: tuple, convention: semantics.IndexConvention) -> ResizePlan:
    return ResizePlan(in_shape, out_shape, AxisPlan(in_shape[1], out_shape[1], convention.axis(0)),
                      AxisPlan(in_shape[2], out_shape[2], convention.axis(1)))


def split_by(items: list, key) -> list[list]:
    """``items`` cut into consecutive groups: an item joins the open group when ``key(group, item)`` holds."""
    groups: list[list] = []
    for item in items:
        if groups and key(groups[-1], item):
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


class ColumnGroup(NamedTuple):
    """Output columns ``out0 + k * out_step + 0 .. repeat - 1`` copy source column ``src0 + k * src_step``, k < count.

    One affine access-pattern pair per side moves a whole group: a strided read of
    its sources, each repeated ``repeat`` times through a step-0 pair.
    """

    out0: int
    src0: int
    count: int
    out_step: int
    src_step: int
    repeat: int


#: Longest period column_groups looks for: a map whose runs repeat with period T becomes T groups per stretch.
MAX_PERIOD = 8


def column_groups(runs: list[RowRun], most: int | None = None) -> list[ColumnGroup] | None:
    """The runs of a map (in output order) as few ColumnGroups: greedily, the stretch of runs that is periodic
    with the period T <= MAX_PERIOD covering the most runs per group, cut into its T interleaved groups.

    A floor map of ratio p/q is periodic in its runs (1.5x: repeats 1, 2, 1, 2, ...), except where float32
    rounding or the ends break the period, so most maps take a handful of groups, not one per column. With
    ``most``, None as soon as the groups would be more than that (a caller that moves many groups otherwise).
    """
    groups, i, n = [], 0, len(runs)
    periodic_length = (_PeriodicStretches if n > LONG_MAP else _ScannedStretches)(runs)
    while i < n:
        best_t, best_len = 1, periodic_length(i, 1)
        for t in range(2, min(MAX_PERIOD, n - i) + 1):
            if (n - i) * best_t <= best_len * t:  # not even the whole rest would take more runs per group
                break
            length = periodic_length(i, t)
            if length >= 2 * t and length * best_t > best_len * t:  # more runs per group, over two periods at least
                best_t, best_len = t, length
        for k in range(best_t):
            first = runs[i + k]
            count = len(range(k, best_len, best_t))
            nxt = runs[i + k + best_t] if count > 1 else first
            groups.append(ColumnGroup(first.first, first.src, count, nxt.first - first.first,
                                      nxt.src - first.src, first.repeat))
        if most is not None and len(groups) > most:
            return None
        i += best_len
    return groups


#: Runs past which column_groups finds periodic stretches with numpy (a few calls per period) rather than by
#: scanning them in Python (a step per run and period tried).
LONG_MAP = 512


class _ScannedStretches:
    """periodic_length(i, t): how many runs from run i repeat with period t (run m matches run m - t in repeat,
    and in output and source distance, the first period's), by scanning them."""

    def __init__(self, runs: list[RowRun]):
        self.firsts, self.srcs, self.repeats = ([r[k] for r in runs] for k in range(3))

    def __call__(self, i: int, t: int) -> int:
        firsts, srcs, repeats = self.firsts, self.srcs, self.repeats
        n = len(firsts)
        if i + t >= n:
            return n - i
        d_out, d_src = firsts[i + t] - firsts[i], srcs[i + t] - srcs[i]
        m = i + t
        while m < n and (repeats[m] == repeats[m - t] and firsts[m] - firsts[m - t] == d_out
                         and srcs[m] - srcs[m - t] == d_src):
            m += 1
        return m - i


class _PeriodicStretches:
    """The same lengths from, per period t (computed when first asked), the runs m where a stretch stops: the
    repeat differs from run m - t's, or the distances to run m - t differ from run m - 1's to its run m - 1 - t."""

    def __init__(self, runs: list[RowRun]):
        self.runs, self.columns, self.stops = runs, None, {}

    def __call__(self, i: int, t: int) -> int:
        n = len(self.runs)
        if i + t >= n:
            return n - i
        if self.runs[i + t].repeat != self.runs[i].repeat:
            return t
        stops = self.stops.get(t)
        if stops is None:
            if self.columns is None:
                flat = np.fromiter(itertools.chain.from_iterable(self.runs), np.int64, 3 * n)
                self.columns = flat.reshape(n, 3).T  # firsts, srcs, repeats
            firsts, srcs, repeats = self.columns
            d_out, d_src = firsts[t:] - firsts[:-t], srcs[t:] - srcs[:-t]  # run m's distances, at m - t
            stop = repeats[t:] != repeats[:-t]
            stop[1:] |= (d_out[1:] != d_out[:-1]) | (d_src[1:] != d_src[:-1])
            stops = self.stops[t] = (np.flatnonzero(stop) + t).tolist()
        k = bisect.bisect_right(stops, i + t)  # the first stop past run i + t, which matches by definition
        return (stops[k] if k < len(stops) else n) - i


def split_runs(runs: list[RowRun], first: int, stop: int, max_repeat: int) -> list[RowRun]:
    """The runs covering output indices first .. stop - 1, cut at both ends and into runs of at most max_repeat."""
    out = []
    for r in runs:
        lo, hi = max(r.first, first), min(r.first + r.repeat, stop)
        for a in range(lo, hi, max_repeat):
            out.append(RowRun(a, r.src, min(max_repeat, hi - a)))
    return out

"""Trace-time analysis of one axis's index map, shared by the kernels that plan DMAs from it.

Scales are fixed when a kernel is traced, so the whole map of an axis,
src(d) = min(floor(float32(d) * float32(in/out)), in - 1), is a Python value
then. Kernels use it to fold exact offsets into DMA patterns and to find the
structure (integer ratios, repeated source rows) that lets them move less.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def source_indices(in_size: int, out_size: int) -> np.ndarray:
    """The float32 map of one axis, computed as the engines compute it (int64, one entry per output index)."""
    d = np.arange(out_size, dtype=np.float32)  # exact: sizes are below 2**24
    src = np.floor(d * np.float32(1.0 * in_size / out_size)).astype(np.int64)
    return np.minimum(src, in_size - 1)


def integer_ratio(in_size: int, out_size: int) -> tuple[int, int] | None:
    """(up, down) when the map is src(d) = (d // up) * down with out * down == in * up and one of them 1, else None.

    That is an integer upsample (src = d // k), an integer downsample (src = d * k)
    or the identity, checked against the float32 map itself rather than assumed
    from the sizes.
    """
    if out_size % in_size == 0:
        up, down = out_size // in_size, 1
    elif in_size % out_size == 0:
        up, down = 1, in_size // out_size
    else:
        return None
    d = np.arange(out_size, dtype=np.int64)
    return (up, down) if np.array_equal(source_indices(in_size, out_size), d // up * down) else None


@dataclass(frozen=True)
class RowRun:
    """Output rows ``first .. first + repeat - 1`` all copy source row ``src``."""

    first: int
    src: int
    repeat: int


def row_runs(src: np.ndarray) -> list[RowRun]:
    """The map as runs of equal source index, in output order (the map is non-decreasing)."""
    starts = np.flatnonzero(np.diff(src, prepend=-1))
    ends = np.append(starts[1:], len(src))
    return [RowRun(int(s), int(src[s]), int(e - s)) for s, e in zip(starts, ends)]


def split_by(items: list, key) -> list[list]:
    """``items`` cut into consecutive groups: an item joins the open group when ``key(group, item)`` holds."""
    groups: list[list] = []
    for item in items:
        if groups and key(groups[-1], item):
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups

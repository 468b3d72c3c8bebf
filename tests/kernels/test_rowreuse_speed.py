"""The row-reuse kernel's planning shortcuts give exactly the tiles of the general split (``split_by``)."""

import math

import numpy as np

from hypothesis import given, settings, strategies as st

from resize_kernels.kernels import rowreuse
from resize_kernels.kernels.dma import CHUNK_BYTES, channel_chunk, partition_pieces
from resize_kernels.kernels.plan import RowRun, plan_resize, split_by


def _general_tiles(plan, item):
    """The tiles as the kernel first planned them: split_by over the runs, per column tile, batch and row block."""
    in_b, _, _, in_c = plan.in_shape
    out_w, chunk = plan.w.out_size, channel_chunk(plan.in_shape[3], item)
    units = max(1, CHUNK_BYTES // (chunk * item))
    for group in split_by(plan.h.runs, rowreuse._equally_spaced):
        step = group[1].src - group[0].src if len(group) > 1 else 1
        nr = min(len(group), units)
        nb = min(in_b, max(1, units // nr))
        for t in range(math.ceil(out_w / 128)):
            n = min(128, out_w - t * 128)
            for b0 in range(0, in_b, nb):
                bb = min(nb, in_b - b0)
                for r0 in range(0, len(group), nr):
                    rows = tuple(group[r0:r0 + nr])
                    stores = tuple(map(tuple, split_by(rows, lambda g, run: run.repeat == g[0].repeat)))
                    for c0 in range(0, in_c, chunk):
                        cc = min(chunk, in_c - c0)
                        yield t, n, b0, bb, rows, step, c0, cc, partition_pieces(n, bb * len(rows) * cc * item), stores


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 700), st.integers(1, 700), st.integers(1, 3), st.sampled_from([1, 3, 64, 5000, 40000]),
       st.integers(1, 300), st.sampled_from([1, 2, 4]))
def test_data_tiles_match_the_general_split(in_h, out_h, b, c, out_w, item):
    plan = plan_resize((b, in_h, 5, c), (b, out_h, out_w, c))
    assert list(rowreuse._data_tiles(plan, item)) == list(_general_tiles(plan, item))


runs_strategy = st.lists(st.tuples(st.integers(1, 4), st.integers(1, 3)), min_size=1, max_size=120)


@given(runs_strategy)
def test_groups_and_stores_match_split_by(steps_repeats):
    """Arbitrary run lists (any source steps and repeats), below and above the numpy threshold."""
    runs, first, src = [], 0, 0
    for step, repeat in steps_repeats:
        runs.append(RowRun(first, src, repeat))
        first, src = first + repeat, src + step
    groups = split_by(runs, rowreuse._equally_spaced)
    bounds = [(sum(map(len, groups[:k])), sum(map(len, groups[:k + 1]))) for k in range(len(groups))]
    srcs, repeats = (np.array([r[k] for r in runs]) for k in (1, 2))
    assert rowreuse._equally_spaced_groups(runs) == bounds == rowreuse._equally_spaced_groups(runs, srcs)
    for stores in (rowreuse._equal_repeats(runs), rowreuse._equal_repeats(runs, repeats)):
        for a in range(0, len(runs), 7):
            for z in (a + 1, min(len(runs), a + 5), len(runs)):
                rows = runs[a:z]
                assert stores(a, z) == tuple(map(tuple, split_by(rows, lambda g, run: run.repeat == g[0].repeat)))


@given(st.integers(1, 2000), st.integers(1, 2000))
def test_run_columns_are_the_runs(in_size, out_size):
    plan = plan_resize((1, in_size, 1, 1), (1, out_size, 1, 1))
    srcs, repeats = rowreuse._run_columns(plan.h)
    if srcs is None:
        assert len(plan.h.runs) <= rowreuse._NUMPY_RUNS
    else:
        assert srcs.tolist() == [r.src for r in plan.h.runs] and repeats.tolist() == [r.repeat for r in plan.h.runs]

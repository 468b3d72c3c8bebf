"""The source-rows kernel's tiles (found by bisection, memoized) are those of the plain walk over every run."""

from hypothesis import given, settings, strategies as st

from resize_kernels.kernels.plan import column_groups, plan_resize
from resize_kernels.kernels.sourcerows import _source_row_tiles


def _walked_tiles(plan) -> list:
    """The tiles as first written: a dict from output row to partition, and a step per run for the loads."""
    runs = plan.h.runs
    size = -(-len(runs) // -(-len(runs) // 128))
    tiles = []
    for i in range(0, len(runs), size):
        tile = runs[i:i + size]
        where = {r.first: n for n, r in enumerate(tile)}
        stores = [(where[g.out0], where[g.out0 + g.out_step] - where[g.out0] if g.count > 1 else 1, g)
                  for g in column_groups(tile)]
        loads = []
        for n, r in enumerate(tile):
            if loads and (loads[-1][2] == 1 or r.src - tile[n - 1].src == loads[-1][4]):
                q, step, count, src0, _ = loads[-1]
                loads[-1] = (q, step, count + 1, src0, r.src - tile[n - 1].src)
            else:
                loads.append((n, 1, 1, r.src, 1))
        tiles.append((len(tile), stores, loads))
    return tiles


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 1500), st.integers(1, 1500))
def test_source_row_tiles_are_the_walked_ones(in_h, out_h):
    plan = plan_resize((1, in_h, 2, 1), (1, out_h, 3, 1))
    tiles = _source_row_tiles(plan)
    for (p, stores, loads), (walked_p, walked_stores, walked_loads) in zip(tiles, _walked_tiles(plan), strict=True):
        assert (p, stores) == (walked_p, walked_stores)
        # the walk's progressions, or the row groups where they are fewer (periodic maps)
        by_group = [(q, step, g.count, g.src0, g.src_step) for q, step, g in stores]
        assert loads == (by_group if len(by_group) < len(walked_loads) else walked_loads)
    assert _source_row_tiles(plan) is tiles
    first = 0
    for p, _, loads in tiles:  # either way, the loads bring each partition its run's source row, once
        srcs = {}
        for q, step, count, src0, src_step in loads:
            for j in range(count):
                assert q + j * step not in srcs
                srcs[q + j * step] = src0 + j * src_step
        assert srcs == {n: plan.h.runs[first + n].src for n in range(p)}
        assert all(type(v) is int for load in loads for v in load)
        first += p

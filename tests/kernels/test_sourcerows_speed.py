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
            if loads and (loads[-1][1] == 1 or r.src - tile[n - 1].src == loads[-1][3]):
                q, count, src0, _ = loads[-1]
                loads[-1] = (q, count + 1, src0, r.src - tile[n - 1].src)
            else:
                loads.append((n, 1, r.src, 1))
        tiles.append((len(tile), stores, loads))
    return tiles


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 1500), st.integers(1, 1500))
def test_source_row_tiles_are_the_walked_ones(in_h, out_h):
    plan = plan_resize((1, in_h, 2, 1), (1, out_h, 3, 1))
    tiles = _source_row_tiles(plan)
    assert tiles == _walked_tiles(plan)
    assert _source_row_tiles(plan) is tiles
    for _, _, loads in tiles:
        assert all(type(v) is int for load in loads for v in load)

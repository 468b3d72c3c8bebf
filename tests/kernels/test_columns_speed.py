"""Column chunks cut from only the runs a chunk reaches are the chunks cut from all of the map's runs."""

from hypothesis import given, settings, strategies as st

from resize_kernels.kernels.columns import _chunk_runs
from resize_kernels.kernels.plan import plan_resize, split_runs


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2000), st.integers(1, 2000), st.integers(16, 600), st.integers(1, 8))
def test_chunk_runs_split_as_all_runs(in_size, out_size, cols, max_repeat_cut):
    runs = plan_resize((1, 1, in_size, 1), (1, 1, out_size, 1)).w.runs
    for j0 in range(0, out_size, cols):
        stop = min(out_size, j0 + cols)
        for cut in (cols, max_repeat_cut):
            assert _chunk_runs(runs, j0, stop, cut, max(r.repeat for r in runs)) == split_runs(runs, j0, stop, cut)

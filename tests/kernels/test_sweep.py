"""Exhaustive per-axis sweeps: the default kernel is exact, the seed fails exactly where its arithmetic says.

Why per-axis sweeps plus the coupling tests suffice for the default kernel: its
source column of every pixel is computed on chip from the column alone (a
function of (in_w, out_w) and the tile's first column), and its source row from
the row alone, either at trace time or on chip from (in_h, out_h) and the
tile's first row. The two meet only in the row split of multi-row tiles
(i = r * out_w + ow, tested for every width that uses it in
test_exact_kernel.py::test_row_split_is_exact_for_every_narrow_width) and in the
flat offset src_h * in_w + src_w, which is exact by construction (trace-time
integers, on-chip values below 2**24; see the large-shape tests). The sweeps
keep three output rows on the w axis (source rows 0, 0, 1), so the seed's
row/column coupling shows, and one output column on the h axis, so a tile
holds 128 rows.
"""

import pytest

from resize_kernels import cli, semantics
from resize_kernels.verifier import axis_shapes, sweep

from seed_model import seed_load_indices

#: Size of the suite's sweeps of the default (CI sweeps it over 1..320).
N = 80


def predicted_seed_failures(axis, n):
    failures = []
    for i in range(1, n + 1):
        for o in range(1, n + 1):
            (_, ih, iw, _), (_, oh, ow, _) = axis_shapes(axis, i, o)
            load = seed_load_indices(ih, iw, oh, ow)
            ref = semantics.index_map((ih, iw), (oh, ow)).reshape(-1)
            if load.min() < 0 or load.max() >= ih * iw:
                failures.append((i, o, None))
            elif (load != ref).any():
                failures.append((i, o, int((load != ref).sum())))
    return failures


@pytest.mark.parametrize("axis", ["w", "h"])
def test_default_kernel_is_exact_on_every_pair(axis):
    assert sweep(N, axis, jobs=2).failures == []


@pytest.mark.parametrize("axis", ["w", "h"])
def test_seed_fails_exactly_where_its_arithmetic_predicts(axis):
    n = 64 if axis == "w" else 48  # past the widths named below; the tall sweep (one output column) fails
    # nowhere, as the model predicts (checked to 96)
    result = sweep(n, axis, "seed", jobs=2)
    assert result.failures == predicted_seed_failures(axis, n)
    if axis == "w":
        assert {o for _, o, _ in result.failures} >= {41, 47, 55, 61}


def test_sweep_command(tmp_path, capsys):
    png = tmp_path / "sweep.png"
    assert cli.main(["verify", "--sweep", "45", "--axis", "w", "--kernel", "seed", "--jobs", "1",
                     "--plot", str(png)]) == 1
    out = capsys.readouterr().out
    assert "kernel 'seed', axis w: 2,025 (in, out) pairs in 1..45: 45 not exact" in out
    assert "output sizes affected (1): 41\n" in out
    assert png.stat().st_size > 10_000
    assert cli.main(["verify", "--sweep", "12", "--kernel", "exact", "--random", "3", "--max-size", "40"]) == 0
    assert "3 random 2-D shapes up to 40: 3 exact" in capsys.readouterr().out


def test_the_strided_kernels_w_sweep_keeps_an_integer_ratio_on_the_height():
    """2 -> 3 rows is no integer ratio, so a w sweep of strided resizes the height 2 -> 4: the width decides."""
    from resize_kernels.kernels.plan import plan_resize

    assert axis_shapes("w", 5, 10, "strided") == ((1, 2, 5, 1), (1, 4, 10, 1))
    result = sweep(24, "w", "strided")
    taken = [(i, o) for i in range(1, 25) for o in range(1, 25)
             if plan_resize(*axis_shapes("w", i, o, "strided")).integer_ratios is not None]
    assert result.failures == [] and result.exact == len(taken) > 100


def test_a_sweep_counts_the_pairs_a_kernel_does_not_take_apart():
    """strided takes integer ratios only: the others are not applicable, neither exact nor failures."""
    from resize_kernels.kernels.plan import plan_resize

    result = sweep(24, "h", "strided", jobs=2)
    refused = [(i, o) for i in range(1, 25) for o in range(1, 25)
               if plan_resize(*axis_shapes("h", i, o)).integer_ratios is None]
    assert result.failures == [] and result.not_applicable == refused
    assert result.exact == 24 * 24 - len(refused) > 100
    assert result.summary().startswith(f"kernel 'strided', axis h: 576 (in, out) pairs in 1..24: {result.exact} exact, "
                                       f"{len(refused)} not applicable\n  not applicable, e.g. 2 -> 3: ")

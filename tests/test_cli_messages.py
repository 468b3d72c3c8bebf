"""Messages say what they mean: counts with the right plural, cut lists that say how many more, columns named as
columns, and a busy time summed over engines labelled as a sum."""

import re

import pytest

import resize_kernels as rk
from resize_kernels import cli, verifier
from resize_kernels.errors import plural
from resize_kernels.verifier import SweepResult, VerifyReport, verify


def test_plural():
    assert plural(1, "pixel") == "1 pixel" and plural(2, "pixel") == "2 pixels" and plural(0, "pair") == "0 pairs"
    assert plural(2419, "pixel") == "2,419 pixels" and plural(3, "DMA shape") == "3 DMA shapes"
    assert plural(1, "chunk", "chunks") == "1 chunk" and plural(2, "matrix", "matrices") == "2 matrices"


def test_a_report_of_one_pixel_says_pixel():
    assert str(verify((1, 1, 1, 1), (1, 1, 1, 1))).endswith("exact (1 output pixel checked)")
    one = VerifyReport("k", (1, 1, 1, 1), (1, 1, 1, 1), False, 1, first_wrong=[((0, 0, 0), (0, 0, 0), None)])
    assert "NOT exact: 1 of 1 output pixel wrong" in str(one)


def wrong(n):
    return [((0, h, 0), (0, h // 2, 0), (0, h // 2 + 1, 0)) for h in range(n)]


def test_a_cut_list_of_wrong_pixels_says_how_many_more():
    report = VerifyReport("k", (1, 30, 20, 1), (1, 59, 41, 1), False, 12, first_wrong=wrong(10))
    assert str(report).splitlines()[11] == "  ... and 2 more wrong pixels"
    report = VerifyReport("k", (1, 30, 20, 1), (1, 59, 41, 1), False, 11, first_wrong=wrong(10))
    assert "  ... and 1 more wrong pixel" in str(report).splitlines()


def test_the_seeds_wrong_pixels_at_width_41_are_named_by_their_column():
    report = verify((1, 30, 20, 1), (1, 59, 41, 1), kernel="seed")
    assert report.wrong_columns == (0,) and report.wrong_rows == (1, 7, 13, 15, 27, 29, 31, 53, 55, 57)
    lines = str(report).splitlines()
    assert lines[-1] == ("  the 10 wrong pixels lie in 1 output column of 41 (w=0), on 10 output rows of 59 "
                         "(h=1, 7, 13, 15, 27, 29, 31, 53, 55, 57)")
    assert "(n=0, h=1, w=0)" in report._repr_html_() and "lie in" not in report._repr_html_()


def test_a_gradients_wrong_pixels_are_placed_too():
    listed = [((0, 1, w), 1.0, 2.0) for w in range(10)]
    report = VerifyReport("k", (1, 3, 30, 1), (1, 5, 59, 1), False, 12, first_wrong=listed, op="resize_nearest_grad",
                          wrong_rows=(1,), wrong_columns=tuple(range(12)))
    assert str(report).splitlines()[-1] == ("  the 12 wrong pixels lie in 12 dx columns of 30 (w=0, 1, 2, 3, 4, 5, 6, "
                                            "7, 8, 9, ... and 2 more), on 1 dx row of 3 (h=1)")


def test_a_sweeps_summary_counts_with_plurals_and_says_how_many_more():
    failures = [(i, 41, i % 2 + 1) for i in range(1, 12)] + [(i, 42 + i, 3) for i in range(1, 45)]
    result = SweepResult("seed", "w", 100, failures)
    lines = result.summary().splitlines()
    assert "  2 -> 41: 1 wrong pixel" in lines and "  1 -> 41: 2 wrong pixels" in lines
    assert lines[-1] == f"  ... and {len(failures) - 8} more pairs not exact"
    affected = next(line for line in lines if line.startswith("  output sizes affected"))
    assert affected.endswith(", 81, ... and 5 more")
    one = SweepResult("auto", "w", 5, [], low=5)
    assert one.summary() == "kernel 'auto', axis w: 1 (in, out) pair in 5..5: all exact"


def test_the_random_shapes_list_is_cut_with_a_count(monkeypatch, capsys):
    shapes = [((1, 2, 20, 1), (1, 3, 41, 1))] * 7
    monkeypatch.setattr(verifier, "sweep", lambda n, axis, kernel, **k: SweepResult("seed", axis, 2, []))
    monkeypatch.setattr(verifier, "random_shapes", lambda count, size, seed: shapes[:count])
    monkeypatch.setattr(verifier, "verify", lambda i, o, kernel, **k: VerifyReport(
        "seed", i, o, False, 1, first_wrong=[((0, 1, 0), (0, 0, 0), (0, 1, 0))]))
    assert cli.main(["verify", "--sweep", "2", "--kernel", "seed", "--random", "7", "--jobs", "1"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "kernel 'seed': 7 random 2-D shapes up to 1024: 0 exact" in lines
    assert lines[-1] == "  ... and 2 more shapes not exact"
    assert cli.main(["verify", "--sweep", "2", "--kernel", "seed", "--random", "1", "--jobs", "1"]) == 1
    assert "kernel 'seed': 1 random 2-D shape up to 1024: 0 exact" in capsys.readouterr().out


def test_the_dma_busy_time_is_labelled_as_a_sum_over_engines():
    report = rk.cost((1, 30, 20, 1280), (59, 38))
    text = str(report)
    line = next(line for line in text.splitlines() if line.startswith("  dma "))
    assert line.endswith(f"; DMA engines busy, summed over 16 engines: modelled {report.busy_us['dma']:,.1f} us")
    assert "over 16\n" not in text and not text.splitlines()[0].endswith("over 16")
    assert re.search(r"\b1 partitions\b|\b1 elements\b|\b1 DMA shapes\b", text) is None


def test_cost_counts_take_their_plurals():
    report = rk.cost((1, 1, 1, 1), (1, 1))
    text = str(report)
    assert re.search(r"\b1 (partitions|elements|transfers|descriptors)\b", text) is None, text
    assert re.search(r"\b1 (transfer|partition|element)\b", text), text


@pytest.mark.parametrize("batch", ["1"])
def test_the_demo_says_the_seed_gets_columns_wrong_on_widths(batch, capsys):
    assert cli.main(["demo", "--batch", batch]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "row or column" not in out
    assert "gets columns wrong on some output widths (41, 47, 55, ...)" in out

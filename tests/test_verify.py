import pytest

from resize_kernels import cli
from resize_kernels import verify


def test_exact_shape_reports_ok():
    report = verify((2, 30, 20, 3), (2, 59, 41, 3))
    assert report.ok and report.wrong_pixels == 0 and report.out_of_bounds is None
    assert "exact (4,838 output pixels checked)" in str(report)


def test_seed_on_width_41_lists_wrong_pixels():
    report = verify((1, 30, 20, 8), (1, 59, 41, 8), kernel="seed")
    assert not report.ok and report.wrong_pixels == 10
    # p = 41 is output (1, 0): the seed puts it in row 0, column 41, i.e. source pixel 20 = (1, 0)
    assert report.first_wrong[0] == ((0, 1, 0), (0, 0, 0), (0, 1, 0))


def test_out_of_bounds_is_reported():
    report = verify((1, 1, 3, 2), (1, 2, 41, 2), kernel="seed")
    assert not report.ok and report.wrong_pixels is None
    assert "partition 41 reads elements 6..7" in report.out_of_bounds


def test_verify_command_exit_codes(capsys):
    assert cli.main(["verify", "--in", "1x30x20x8", "--out", "1x59x41x8"]) == 0
    assert "exact" in capsys.readouterr().out
    assert cli.main(["verify", "--in", "1x30x20x8", "--out", "1x59x41x8", "--kernel", "seed"]) == 1
    out = capsys.readouterr().out
    assert "NOT exact: 10 of 2,419 output pixels wrong" in out and "output (0, 1, 0): expected source (0, 0, 0)" in out


def test_verify_command_rejects_bad_shapes(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["verify", "--in", "1x30x20", "--out", "1x59x41x8"])
    assert e.value.code == 2 and "expected an NHWC shape like 1x30x20x8, got '1x30x20'" in capsys.readouterr().err
    assert cli.main(["verify", "--in", "1x30x20x8"]) == 2
    assert "give --in and --out, or --sweep N" in capsys.readouterr().err


@pytest.mark.parametrize("shapes, match", [(((1, 3, 3), (1, 4, 4, 1)), "four positive integers"),
                                           (((1, 3, 3, 2), (2, 4, 4, 2)), "equal batch and channels")])
def test_verify_rejects_bad_shapes(shapes, match):
    with pytest.raises(ValueError, match=match):
        verify(*shapes)

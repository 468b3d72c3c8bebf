import pytest

from resize_kernels import cli
from resize_kernels import verify
from resize_kernels.verifier import sweep


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


@pytest.mark.parametrize("grad", [False, True])
def test_an_access_out_of_bounds_when_traced_is_reported_too(monkeypatch, grad):
    """A kernel whose static access pattern leaves its tile fails when traced: a failure of the kernel, not of the
    sweep (an ONNX map's gradient once stopped a whole sweep so)."""
    from resize_kernels import verifier
    from resize_kernels.machine.errors import OutOfBoundsError

    def trace(*args, **kwargs):
        raise OutOfBoundsError("instruction 7 (dma_copy): out-of-bounds access to dy_rows.0")

    monkeypatch.setattr(verifier, "trace_resize_grad" if grad else "trace_resize", trace)
    report = (verifier.verify_grad if grad else verifier.verify)((1, 7, 1, 3), (1, 17, 1, 3))
    assert not report.ok and "out-of-bounds access to dy_rows.0" in report.out_of_bounds


def test_verify_command_exit_codes(capsys):
    assert cli.main(["verify", "--in", "1x30x20x8", "--out", "1x59x41x8"]) == 0
    assert "exact" in capsys.readouterr().out
    assert cli.main(["verify", "--in", "1x30x20x8", "--out", "1x59x41x8", "--kernel", "seed"]) == 1
    out = capsys.readouterr().out
    assert "NOT exact: 10 of 2,419 output pixels wrong" in out
    assert "output (n=0, h=1, w=0): expected source (n=0, h=0, w=0), got source (n=0, h=1, w=0)" in out


@pytest.mark.parametrize("command", ["verify", "inspect"])
def test_out_takes_h_x_w_with_the_inputs_batch_and_channels(command, capsys):
    assert cli.main([command, "--in", "2x30x20x8", "--out", "59x41", "--kernel", "seed"]) == (command == "verify")
    assert "2x30x20x8 -> 2x59x41x8" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        cli.main([command, "--in", "2x30x20x8", "--out", "59x41x8"])
    assert e.value.code == 2 and ("expected an output shape NxHxWxC like 1x59x38x8, or HxW like 59x38, got "
                                  "'59x41x8'") in capsys.readouterr().err


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


def test_a_kernel_that_does_not_take_the_shape_is_not_applicable():
    report = verify((1, 30, 20, 8), (1, 59, 41, 8), kernel="strided")
    assert not report.applicable and not report.ok and report.wrong_pixels is None
    assert report.not_applicable.startswith("resize_nearest_strided_kernel requires an integer ratio on each axis")
    assert str(report).startswith("kernel 'strided': NHWC 1x30x20x8 -> 1x59x41x8: not applicable: ")
    exact = verify((1, 30, 20, 8), (1, 60, 40, 8), kernel="strided")
    assert exact.ok and exact.applicable


@pytest.mark.parametrize("args, match", [((-1, 8), "count requires an integer >= 0, got -1"),
                                         ((2, 0), r"max_size requires an integer in 1..16777215, got 0"),
                                         ((2, 2**24), r"max_size requires an integer in 1..16777215"),
                                         ((2, 8, -1), "seed requires an integer >= 0, got -1"),
                                         ((2.0, 8), "count requires an integer >= 0, got 2.0")])
def test_random_shapes_rejects_bad_arguments(args, match):
    from resize_kernels.errors import InvalidValueError
    from resize_kernels.verifier import random_shapes

    with pytest.raises(InvalidValueError, match=match):
        random_shapes(*args)


@pytest.mark.parametrize("n", [0, -3, 2**24, True, 2.0])
def test_sweep_rejects_bad_bounds(n):
    from resize_kernels.errors import InvalidValueError
    from resize_kernels.verifier import sweep

    with pytest.raises(InvalidValueError, match=r"sweep requires sizes n \(meaning 1..n\) or \(low, high\)"):
        sweep(n)


def test_check_plot_path(tmp_path):
    from resize_kernels.errors import InvalidValueError
    from resize_kernels.verifier import check_plot_path

    assert check_plot_path(tmp_path / "a.PDF") == tmp_path / "a.PDF" and not (tmp_path / "a.PDF").exists()
    (tmp_path / "old.png").write_bytes(b"kept")
    assert check_plot_path(tmp_path / "old.png") == tmp_path / "old.png"
    assert (tmp_path / "old.png").read_bytes() == b"kept"
    for bad, match in [(tmp_path / "a.jpg", "ending in .png, .pdf, .svg"), (tmp_path / "a", "ending in"),
                       (tmp_path / "no" / "a.png", "an existing directory"), ("/proc/a.png", "a writable file")]:
        with pytest.raises(InvalidValueError, match=match):
            check_plot_path(bad)


def test_reports_print_one_line_and_a_table_in_notebooks():
    report = verify((1, 30, 20, 8), (1, 59, 41, 8), kernel="seed")
    assert repr(report) == ("<VerifyReport kernel 'seed': NHWC 1x30x20x8 -> 1x59x41x8: NOT exact: 10 of 2,419 "
                            "output pixels wrong>")
    html = report._repr_html_()
    assert html.startswith("<table>") and "1x30x20x8 -&gt; 1x59x41x8" in html and "(n=0, h=1, w=0)" in html
    result = sweep(4, "w")
    assert repr(result).startswith("<SweepResult kernel 'auto', axis w: 16 (in, out) pairs in 1..4: all exact [")
    assert "<td style='text-align:left'>1..4</td>" in result._repr_html_()


# -- dtypes: the index image in 8- or 16-bit pieces --------------------------------------------------------------

DTYPE_NAMES = ["float32", "bfloat16", "float16", "int32", "int16", "int8", "uint8", "uint16", "uint32"]


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_every_machine_dtype_is_proven_and_finds_what_int32_finds(dtype):
    assert verify((1, 7, 256, 3), (9, 383), dtype=dtype).ok  # the scalar-engine copies for 1-byte integers
    want, got = verify((1, 30, 20, 8), (59, 41), kernel="seed"), verify((1, 30, 20, 8), (59, 41), kernel="seed",
                                                                         dtype=dtype)
    assert (got.wrong_pixels, got.first_wrong) == (want.wrong_pixels, want.first_wrong) == (10, want.first_wrong)
    assert f"({dtype})" in str(got) or dtype == "int32"


def test_pieces_carry_indices_past_every_piece_width():
    """2**16 + 3 source pixels: a uint8 run needs three pieces, a 16-bit one two; the last pixels read back whole."""
    report = verify((1, 257, 256, 1), (257, 255), dtype="uint8")
    assert report.ok, report
    assert verify((1, 257, 256, 1), (257, 255), dtype="bfloat16").ok


def test_run_pieces_puts_the_index_back_together():
    import numpy as np

    from resize_kernels.contract import resize_dtype
    from resize_kernels.verifier import run_pieces

    class Identity:
        def run(self, inputs):
            return [inputs[0].copy()]

    labels = np.arange(0, 2**24, 4099, dtype=np.int32).reshape(1, 1, -1, 1)
    for dtype in ("uint8", "int8", "float16", "bfloat16", "float32"):
        assert np.array_equal(run_pieces(Identity(), labels, resize_dtype("t", dtype)), labels)


def test_dtype_sweeps_are_labelled_and_checkpointed_apart(tmp_path):
    path = tmp_path / "sweep.jsonl"
    a = sweep(6, "w", "seed", checkpoint=path)
    b = sweep(6, "w", "seed", checkpoint=path, dtype="uint8")
    assert "(uint8), axis w: 36 (in, out) pairs in 1..6: all exact" in b.summary() and "(" not in a.summary()[:20]
    assert path.read_text().count('"dtype": "uint8"') == path.read_text().count('"dtype": "int32"') > 0
    assert type(b).from_dict(b.to_dict()).dtype == "uint8"
    with pytest.raises(Exception, match="requires one of the dtypes"):
        sweep(6, "w", dtype="float64")
    with pytest.raises(Exception, match="takes no dtype"):
        sweep(6, "w", op="resize_nearest_grad", dtype="uint8")


def test_the_verify_command_takes_a_dtype(capsys):
    assert cli.main(["verify", "--sweep", "8", "--axis", "h", "--dtype", "bfloat16", "--jobs", "1"]) == 0
    assert "kernel 'auto' (bfloat16), axis h: 64 (in, out) pairs in 1..8: all exact" in capsys.readouterr().out
    assert cli.main(["verify", "--in", "1x30x20x8", "--out", "59x41", "--kernel", "seed", "--dtype", "int8"]) == 1
    assert "(int8)" in capsys.readouterr().out
    assert cli.main(["verify", "--in", "1x3x3x1", "--out", "5x5", "--grad", "--dtype", "uint8"]) == 2
    assert "--dtype goes with the forward kernels" in capsys.readouterr().err

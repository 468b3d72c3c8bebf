"""rk.cost and ``resize-kernels inspect``: the public face of the cost model."""

import collections
import re

import pytest

import resize_kernels as rk
from resize_kernels import cli


def test_cost_reports_the_programs_counts_and_bytes():
    report = rk.cost((1, 30, 20, 64), (1, 59, 38, 64), kernel="seed")
    program = rk.trace_resize((1, 30, 20, 64), (59, 38), kernel="seed")
    assert {k: v for k, v in report.instructions.items() if v} == collections.Counter(
        i.engine for i in program.instructions)
    assert report.dma_count == len(program.dmas()) == report.dma_indirect + report.dma_strided
    assert report.dma_bytes == 2 * 59 * 38 * 64 * 4  # gathered once, stored once
    assert report.modelled_us > 0 and report.target == "trn1"


def test_report_text_says_every_time_is_modelled():
    text = str(rk.cost((1, 8, 8, 4), (1, 16, 16, 4)))
    assert "modelled" in text and "(trn1 cost model)" in text
    for line in text.splitlines():
        if " us" in line:
            assert "modelled" in line, line


def test_default_kernel_and_trn2():
    default, trn2 = rk.cost((1, 8, 8, 4), (1, 16, 16, 4)), rk.cost((1, 8, 8, 4), (1, 16, 16, 4), target="trn2")
    assert default.label.startswith("kernel ") and default.modelled_us > 0  # labelled with the kernel it costed
    assert trn2.sbuf_capacity == 224 * 1024 and "(trn2 cost model)" in str(trn2)


@pytest.mark.parametrize("args, kwargs, match", [
    (((1, 8, 8, 4), (1, 16, 16, 4)), {"target": "inf9"}, "no target 'inf9'; choose one of 'trn1', 'trn2'"),
    (((1, 8, 8, 4), (1, 16, 16, 4)), {"kernel": "fast?"}, "no kernel 'fast\\?'"),
    (((8, 8, 4), (1, 16, 16, 4)), {}, "in_shape as four positive integers"),
    (((1, 8, 8, 4), (1, 16, 0, 4)), {}, "positive sizes, got output size 0"),
    (((1, 8, 8, 4), (1, 16, 16, 5)), {}, "equal batch and channels"),
])
def test_bad_inputs_say_what_to_change(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        rk.cost(*args, **kwargs)


def test_inspect_prints_the_modelled_cost_and_the_listing(capsys):
    assert cli.main(["inspect", "--in", "1x30x20x16", "--out", "1x59x38x16", "--kernel", "seed",
                     "--target", "trn2", "--listing", "3"]) == 0
    out = capsys.readouterr().out
    assert "modelled" in out and "(trn2 cost model)" in out
    assert "program resize_nearest_fixed_dma_kernel" in out and "more instructions" in out


def test_inspect_rejects_mismatched_shapes(capsys):
    assert cli.main(["inspect", "--in", "1x30x20x16", "--out", "2x59x38x16"]) == 1
    assert "equal batch and channels" in capsys.readouterr().err


def test_programs_and_reports_print_a_line_and_a_table_in_notebooks():
    program = rk.trace_resize((1, 30, 20, 64), (59, 38), kernel="seed")  # 6,120 instructions
    assert repr(program) == (f"<Program {program.name}: {len(program.instructions):,} instructions, "
                             f"{len(program.dmas()):,} DMAs, {sum(d.nbytes for d in program.dmas()):,} bytes moved>")
    html = program._repr_html_()
    assert len(html) < 2000 and f"<td style='text-align:left'>{len(program.instructions):,}</td>" in html
    assert program.listing(3).count("\n") == 3 + len(program.inputs) + len(program.outputs) + 1  # on demand
    report = rk.cost((2, 30, 20, 1280), (59, 38), dtype="bfloat16")
    assert "\n" not in repr(report) and repr(report).startswith("<CostReport kernel ")
    html = report._repr_html_()
    assert f"{report.modelled_us:,.1f} us on trn1" in html and "efficiency" in html and "selection: " in html


@pytest.mark.parametrize("out", [(59, 38), [59, 38], 59])
def test_cost_takes_the_output_size_as_resize_nearest_does(out):
    hw = (out, out) if isinstance(out, int) else tuple(out)
    full = rk.cost((2, 30, 20, 8), (2, *hw, 8))
    assert rk.cost((2, 30, 20, 8), out).modelled_us == full.modelled_us
    assert rk.verify((2, 30, 20, 8), out).out_shape == (2, *hw, 8)


def test_the_report_names_the_kernel_its_schedule_and_the_selection():
    """The rows kernels' schedule knobs are chosen by modelled time; the report says which it took, and how."""
    report = rk.cost((2, 30, 20, 1280), (59, 38), dtype="bfloat16")
    assert re.match(r"kernel sourcerows \(column chunks x[1248]\), auto's pick, 2x30x20x1280", report.label)
    assert report.notes[0].startswith("selection: sourcerows (column chunks x") and "rowreuse: " in str(report)
    report = rk.cost((4, 100, 100, 128), (70, 70), dtype="float16", kernel="rows")
    assert re.match(r"kernel rows \((balanced|whole) tiles, column chunks x[1248]\), ", report.label)
    assert rk.cost((4, 100, 100, 128), (70, 70), kernel="exact").label.startswith("kernel exact, ")

"""Notebook pictures: CostReport and SweepResult draw a small PNG (``_repr_png_``) beside their HTML table."""

import builtins
import struct
from pathlib import Path

import pytest

import resize_kernels as rk
from resize_kernels.machine import cost
from resize_kernels.verifier import SweepResult

plt = pytest.importorskip("matplotlib.pyplot", reason="the pictures need the plot extra: pip install -e '.[plot]'")
import matplotlib  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple:
    """(width, height) from a PNG's IHDR chunk, after checking the signature."""
    assert data[:8] == PNG and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def report():
    return rk.cost((1, 30, 20, 64), (59, 38), kernel="seed")


SWEEPS = [SweepResult("seed", "w", 40, [(3, 7, 2), (5, 9, None), (30, 31, 12)], [(1, 1), (2, 1)], "too small"),
          SweepResult("auto", "h", 16, [])]


def pictures(report):
    return [report._repr_png_()] + [r._repr_png_() for r in SWEEPS]


def test_the_pictures_are_small_pngs(report):
    for data in pictures(report):
        width, height = png_size(data)
        assert 200 <= width <= 1000 and 150 <= height <= 800, (width, height)
        assert 2_000 < len(data) < 300_000 and data.endswith(b"IEND\xaeB`\x82")


def test_the_pictures_leave_pyplot_as_it_was(report):
    figures, backend = plt.get_fignums(), matplotlib.get_backend()
    pictures(report)
    assert plt.get_fignums() == figures and matplotlib.get_backend() == backend


def test_no_matplotlib_gives_none_and_the_table_stays(report, monkeypatch):
    real = builtins.__import__

    def without_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_matplotlib)
    assert pictures(report) == [None] * 3
    assert report._repr_html_().startswith("<table>") and SWEEPS[0]._repr_html_().startswith("<table>")


def test_a_report_without_events_has_no_picture():
    program = rk.trace_resize((1, 8, 8, 4), (16, 16))
    assert cost.program_cost(program, "trn1", events=False)._repr_png_() is None


def test_the_files_are_drawn_by_the_same_code(report, tmp_path):
    from resize_kernels.machine.timeline import plot_timeline
    from resize_kernels.verifier import plot_failures

    for written in (plot_timeline(report, tmp_path / "t.png"), plot_failures(SWEEPS, tmp_path / "s.png")):
        data = Path(written).read_bytes()
        assert png_size(data)[0] > 1000  # the files' size: 110 dpi, larger than the pictures
    assert plot_failures(SWEEPS[:1], tmp_path / "s.svg").read_text().lstrip().startswith("<?xml")

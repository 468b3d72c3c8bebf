"""The modelled schedule as a timeline: lanes, the Chrome trace-event format, the image, the CLI flags."""

import json

import pytest

import resize_kernels as rk
from resize_kernels.cli import main
from resize_kernels.machine import timeline

SHAPE_IN, SHAPE_OUT = (1, 30, 20, 64), (1, 59, 38, 64)


@pytest.fixture(scope="module")
def report():
    return rk.cost(SHAPE_IN, SHAPE_OUT, kernel="seed")


def test_timeline_has_a_row_per_compute_instruction_and_dma_packet(report):
    rows = report.timeline()
    compute = [e for e in report.events if e.engine != "dma"]
    packets = sum(len(e.packets) for e in report.events if e.engine == "dma")
    dge = sum(e.dge is not None for e in report.events)
    assert len(rows) == len(compute) + packets + dge
    assert {lane for lane, *_ in rows} <= set(timeline.lanes(report))
    assert all(report.params.launch_us <= start <= end <= report.modelled_us + 1e-9 for _, _, start, end, _ in rows)
    for lane in timeline.lanes(report):  # one engine runs one thing at a time
        spans = sorted((s, e) for ln, _, s, e, _ in rows if ln == lane)
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:])), lane


def test_events_give_start_end_engine_and_dma_engines(report):
    for e in report.events:
        assert e.start_us <= e.end_us
        if e.engine == "dma":
            assert e.packets and e.nbytes > 0
            assert all(0 <= q < report.params.dma_engines for q, _, _ in e.packets)
    assert report.modelled_us == pytest.approx(report.params.launch_us + max(e.end_us for e in report.events))


REQUIRED = {"X": {"name", "ph", "ts", "dur", "pid", "tid"}, "M": {"name", "ph", "pid", "tid", "args"}}


def test_chrome_trace_has_the_trace_event_formats_required_fields(report, tmp_path):
    path = timeline.write_chrome_trace(report, tmp_path / "t.json")
    data = json.loads(open(path).read())
    events = data["traceEvents"]
    assert data["otherData"]["modelled"] is True
    for ev in events:
        assert REQUIRED[ev["ph"]] <= ev.keys(), ev
        if ev["ph"] == "X":
            assert isinstance(ev["ts"], (int, float)) and ev["dur"] >= 0
            assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int)
    tracks = {ev["args"]["name"]: ev["tid"] for ev in events if ev["name"] == "thread_name"}
    assert list(tracks) == timeline.lanes(report) and len(set(tracks.values())) == len(tracks)
    complete = [ev for ev in events if ev["ph"] == "X"]
    assert len(complete) == len(report.timeline())
    dma = [ev for ev in complete if ev["cat"] == "dma"]
    assert dma and all(ev["args"]["bytes"] > 0 for ev in dma)


def test_inspect_writes_a_trace_and_a_timeline_image(tmp_path, capsys):
    trace, png = tmp_path / "t.json", tmp_path / "t.png"
    assert main(["inspect", "--in", "1x30x20x64", "--out", "1x59x38x64", "--trace", str(trace),
                 "--timeline", str(png), "--listing", "2"]) == 0
    out = capsys.readouterr().out
    assert "roofline" in out and "efficiency" in out and "modelled schedule" in out
    assert json.loads(trace.read_text())["traceEvents"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_schedule_lists_start_end_and_dma_engines(report):
    text = report.schedule(limit=None)
    lines = text.splitlines()[1:]
    assert len(lines) == len(report.events)
    dma = [ln for ln, e in zip(lines, report.events) if e.engine == "dma"]
    assert dma and all(" dma " in ln for ln in dma)
    assert "descriptors on gpsimd" in text  # the seed's gathers
    assert report.schedule(limit=3).splitlines()[-1].startswith(f"  ... {len(report.events) - 3:,} more")


def test_roofline_counts_each_needed_source_pixel_once(report):
    # 30x20 -> 59x38 reads every source row and column; the output is 59*38 pixels; 64 float32 channels
    want = (30 * 20 + 59 * 38) * 64 * 4 / (report.params.peak_dma_gbps * 1e3)
    assert report.roofline_us == pytest.approx(want)
    down = rk.cost((1, 8, 8, 4), (1, 2, 2, 4))  # a 4x downsample reads 2x2 of the 8x8 source pixels
    assert down.roofline_us == pytest.approx((4 + 4) * 4 * 4 / (down.params.peak_dma_gbps * 1e3))
    assert 0 < report.efficiency < 1

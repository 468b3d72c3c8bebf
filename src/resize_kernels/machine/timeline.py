"""The modelled schedule of a CostReport, as neuron-profile users look at one: lanes per engine and DMA engine.

``chrome_trace(report)`` is the Chrome trace-event format (JSON object form)
that Perfetto and chrome://tracing open: one process for the NeuronCore, one
thread (track) per engine and DMA engine, a complete event ("ph": "X") per
instruction or DMA packet, with its name, bytes and position in the Program as
arguments. ``plot_timeline(report, path)`` draws the same lanes with
matplotlib (the ``plot`` extra); ``draw_timeline(fig, report)`` draws them on a
given Figure (the report's notebook picture). Every time is modelled, in
microseconds.
"""

from __future__ import annotations

import json
import os

from ..display import save_figure
from ..errors import InvalidValueError

#: Lanes top to bottom: the compute engines (the tensor engine first, where a Program uses it), then the DMA
#: engines.
COMPUTE_LANES = ("vector", "scalar", "gpsimd")
_COLOURS = {"dma_copy": "#4c72b0", "dma_copy_add": "#55a868", "descriptors": "#c44e52", "nc_matmul": "#dd8452",
            "nc_transpose": "#937860"}


def lanes(report) -> list[str]:
    """The lanes a report's timeline uses, in display order."""
    tensor = ["tensor"] if report.instructions.get("tensor") else []
    return tensor + list(COMPUTE_LANES) + [f"dma{q}" for q in range(report.params.dma_engines)]


def chrome_trace(report) -> dict:
    """The report's timeline as a Chrome trace-event JSON object (timestamps in microseconds)."""
    tids = {lane: n for n, lane in enumerate(lanes(report))}
    events = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0,
               "args": {"name": f"NeuronCore ({report.target}, modelled): {report.label or report.program}"}}]
    for lane, tid in tids.items():
        events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": tid, "args": {"name": lane}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": tid, "args": {"sort_index": tid}})
    for lane, name, start, end, args in report.timeline():
        events.append({"name": name, "cat": lane.rstrip("0123456789"), "ph": "X", "pid": 0, "tid": tids[lane],
                       "ts": round(start, 4), "dur": round(end - start, 4), "args": args})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"modelled": True, "modelled_us": report.modelled_us, "target": report.target}}


def write_chrome_trace(report, path) -> str:
    """Write ``chrome_trace(report)`` to ``path`` (open it in https://ui.perfetto.dev); returns the path."""
    with open(path, "w") as f:
        json.dump(chrome_trace(report), f)
    return os.fspath(path)


def draw_timeline(fig, report) -> None:
    """Draw the report's lanes on the matplotlib Figure ``fig`` (``plot_timeline`` and the report's picture)."""
    names = lanes(report)
    rows = {lane: n for n, lane in enumerate(names)}
    bars: dict[tuple, list] = {}
    for lane, name, start, end, _ in report.timeline():
        key = (lane, "descriptors" if name.endswith("descriptors") else name)
        bars.setdefault(key, []).append((start, max(end - start, 1e-3)))
    ax = fig.subplots()
    for (lane, name), spans in bars.items():
        ax.broken_barh(spans, (rows[lane] - 0.4, 0.8), facecolors=_COLOURS.get(name, "#8172b2"), linewidth=0)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlim(0, report.modelled_us)
    ax.set_xlabel(f"modelled time (us); the first {report.params.launch_us:g} us are the launch")
    ax.set_title(f"{report.label or report.program}: modelled {report.modelled_us:,.1f} us on {report.target} "
                 f"(cost model, not measured)", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()


def figure_size(report) -> tuple:
    """The timeline figure's size in inches: a row per lane."""
    return (12, 0.3 * len(lanes(report)) + 1.5)


def plot_timeline(report, path) -> str:
    """Draw the report's lanes to an image file ``path`` (PNG, SVG, ...: matplotlib's formats); returns the path."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InvalidValueError("a timeline image requires matplotlib: pip install 'resize-kernels[plot]' "
                                "(--trace writes a Chrome trace without it)") from None
    return save_figure(lambda fig: draw_timeline(fig, report), figure_size(report), path)

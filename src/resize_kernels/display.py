"""Rich display for notebooks: the small HTML tables behind the objects' ``_repr_html_``, and the matplotlib figures
(drawn off pyplot, on the Agg canvas) behind their ``_repr_png_`` and the image files the package writes."""

from __future__ import annotations

import html
import io
import os


def html_table(rows, caption: str | None = None) -> str:
    """A two-column HTML table of (label, value) rows, escaped, under an optional caption."""
    cells = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th><td style='text-align:left'>"
                    f"{html.escape(str(v))}</td></tr>" for k, v in rows)
    head = f"<caption style='text-align:left'>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{head}{cells}</table>"


def _figure(figsize):
    """A matplotlib Figure on its own Agg canvas: pyplot (its figure list, its backend) is never involved, so
    nothing global is left open or switched; ImportError without matplotlib."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def save_figure(draw, figsize, path, dpi: int = 110, format: str | None = None) -> str:
    """Write the figure ``draw(fig)`` fills to ``path`` (matplotlib's formats); returns the path."""
    fig = _figure(figsize)
    draw(fig)
    fig.savefig(path, dpi=dpi, format=format)
    return os.fspath(path)


def png_bytes(draw, figsize, dpi: int = 60) -> bytes | None:
    """The PNG bytes of the figure ``draw(fig)`` fills (a notebook's ``_repr_png_``); None without matplotlib."""
    try:
        fig = _figure(figsize)
    except ImportError:
        return None
    draw(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def draw_failures(fig, results) -> None:
    """Draw sweeps (``verifier.SweepResult``) on ``fig``, one panel each: the failing (in, out) pairs in red, those
    read out of bounds in black, those the kernel does not take in grey."""
    from matplotlib.patches import Rectangle

    for ax, r in zip(fig.subplots(1, len(results), squeeze=False)[0], results):
        pts = [(i, o) for i, o, _ in r.failures]
        oob = [(i, o) for i, o, w in r.failures if w is None]
        side = r.n - r.low + 1
        ax.add_patch(Rectangle((r.low - 0.5, r.low - 0.5), side, side, color="honeydew",
                               label=f"checked ({r.checked:,} pairs, {r.exact:,} exact)"))
        if r.not_applicable:
            ax.scatter([o for _, o in r.not_applicable], [i for i, _ in r.not_applicable], s=1, c="lightgrey",
                       label=f"not applicable ({len(r.not_applicable):,})")
        ax.scatter([o for _, o in pts], [i for i, _ in pts], s=2, c="tab:red", label=f"wrong ({len(pts):,})")
        if oob:
            ax.scatter([o for _, o in oob], [i for i, _ in oob], s=4, c="black", label=f"out of bounds ({len(oob):,})")
        ax.set(xlim=(r.low - 1, r.n + 1), ylim=(r.low - 1, r.n + 1), xlabel=f"output size ({r.axis})",
               ylabel=f"input size ({r.axis})",
               title=f"kernel {r.kernel!r}, axis {r.axis}: {len(r.failures):,} of {r.checked:,} pairs not exact")
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()

"""Rich display for notebooks: the small HTML tables behind the objects' ``_repr_html_``."""

from __future__ import annotations

import html


def html_table(rows, caption: str | None = None) -> str:
    """A two-column HTML table of (label, value) rows, escaped, under an optional caption."""
    cells = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th><td style='text-align:left'>"
                    f"{html.escape(str(v))}</td></tr>" for k, v in rows)
    head = f"<caption style='text-align:left'>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{head}{cells}</table>"

"""A chart on the page: its stable element id and its plotly figure (a plain dict, serialised to JSON).

Figures are built as dicts in plotly's JSON schema rather than through ``plotly.graph_objects``: validating
a few hundred traces there costs seconds, and the page needs only the JSON.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

#: One colour per model in page order (the baseline first, grey); plotly's default cycle after it.
BASELINE_COLOUR = "#7f7f7f"
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf"]


@dataclass
class Chart:
    """``id`` is the chart element's id on the page (``<div class="oe-chart" id="...">``)."""

    id: str
    title: str
    figure: dict[str, Any]
    notes: list[str] = field(default_factory=list)


class ChartIds:
    """Stable, distinct element ids: a prefix and the slug of a key (``values-accuracy-accuracy_score``)."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def __call__(self, prefix: str, *parts: str) -> str:
        slug = "-".join([prefix, *(re.sub(r"[^A-Za-z0-9_.-]+", "_", p) for p in parts)])
        chart_id, n = slug, 1
        while chart_id in self._taken:
            n += 1
            chart_id = f"{slug}-{n}"
        self._taken.add(chart_id)
        return chart_id


def label(text: str) -> str:
    """Text for plotly (labels, legend, hover): plotly reads a little HTML in text, so escape it."""
    return html.escape(text, quote=False)


def colour(index: int, is_baseline: bool) -> str:
    return BASELINE_COLOUR if is_baseline else COLOURS[index % len(COLOURS)]


def layout(title: str, x_title: str | None = None, y_title: str | None = None, **extra: Any) -> dict[str, Any]:
    """A plain layout: no web fonts, no templates fetched; axis titles as given."""
    out: dict[str, Any] = {
        "title": {"text": label(title)},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 60},
        "hovermode": "closest",
        "font": {"family": "system-ui, sans-serif", "size": 12},
    }
    if x_title is not None:
        out["xaxis"] = {"title": {"text": label(x_title)}, "automargin": True}
    if y_title is not None:
        out["yaxis"] = {"title": {"text": label(y_title)}, "automargin": True}
    out.update(extra)
    return out


def error_bars(values: list[float | None], lows: list[float | None], highs: list[float | None]) -> dict[str, Any]:
    """Asymmetric error bars from interval bounds (none where a value has no interval)."""
    plus = [h - v if v is not None and h is not None else None for v, h in zip(values, highs, strict=True)]
    minus = [v - lo if v is not None and lo is not None else None for v, lo in zip(values, lows, strict=True)]
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "visible": True}


def model_menu(names: list[str], visible: list[list[bool]], active: int) -> dict[str, Any]:
    """A dropdown showing one group of traces per entry (a model, or a candidate beside the baseline)."""
    buttons = [
        {"label": label(name), "method": "restyle", "args": [{"visible": vis}]}
        for name, vis in zip(names, visible, strict=True)
    ]
    return {"buttons": buttons, "active": active, "x": 1.0, "xanchor": "right", "y": 1.15, "yanchor": "top"}

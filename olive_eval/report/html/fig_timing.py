"""Distribution figures of the timed runs: every run of every model as a point, the rounds side by side
within the model's slot (colour = round, left to right = order of the runs), p50 and p90 as marks.
Pure: :class:`~olive_eval.report.html.data_timing.TimingView` in, plotly figure dicts out."""

from __future__ import annotations

from typing import Any

from olive_eval.report.html.charts import Chart, ChartIds, label, layout
from olive_eval.report.html.data_timing import TimingView

#: Width of a model's slot on the x axis the rounds share.
SLOT = 0.8
ROUND_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf"]


def _positions(model: int, round_index: int, rounds: int, n: int) -> list[float]:
    """x of each run of one round: its share of the model's slot, runs spread in the order they ran."""
    width = SLOT / rounds
    start = model - SLOT / 2 + round_index * width
    step = width * 0.9 / max(n - 1, 1)
    return [round(start + width * 0.05 + j * step, 4) for j in range(n)]


def timing_figure(view: TimingView) -> dict[str, Any]:
    """One trace per round across the models (legend: round k), one for p50 and one for p90."""
    names = [d.model for d in view.distributions]
    most = max((len(d.rounds) for d in view.distributions), default=0)
    traces: list[dict[str, Any]] = []
    for k in range(most):
        xs: list[float] = []
        ys: list[float] = []
        for i, d in enumerate(view.distributions):
            if k < len(d.rounds):
                xs += _positions(i, k, len(d.rounds), len(d.rounds[k]))
                ys += d.rounds[k]
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"round {k + 1}",
                "x": xs,
                "y": ys,
                "marker": {"size": 3, "opacity": 0.6, "color": ROUND_COLOURS[k % len(ROUND_COLOURS)]},
                "hovertemplate": f"round {k + 1}: %{{y}} {view.unit}<extra></extra>",
            }
        )
    for stat, symbol, colour in (("p50", "line-ew-open", "#000"), ("p90", "line-ew-open", "#d62728")):
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": stat,
                "x": list(range(len(names))),
                "y": [getattr(d, stat) for d in view.distributions],
                "marker": {
                    "symbol": symbol,
                    "size": 40,
                    "color": colour,  # an open line symbol is drawn in the marker's colour
                    "line": {"width": 3, "color": colour},
                },
                "hovertemplate": f"{stat} %{{y}} {view.unit}<extra></extra>",
            }
        )
    axis = {
        "tickvals": list(range(len(names))),
        "ticktext": [label(n) for n in names],
        "automargin": True,
        "zeroline": False,  # x = 0 is the first model's slot, not a zero
    }
    y_title = f"{view.unit} per call" + (f" (batch {view.batch_size})" if view.batch_size else "")
    fig_layout = layout(view.title, None, y_title, xaxis=axis, showlegend=True)
    fig_layout["yaxis"]["type"] = "log"  # a few slow runs (a busy machine) would flatten the rest
    return {"data": traces, "layout": fig_layout}


def timing_charts(views: list[TimingView], ids: ChartIds) -> list[Chart]:
    charts = []
    for view in views:
        notes = [f"{name}: {why}" for name, why in view.missing.items()]
        stride = max((d.stride for d in view.distributions), default=1)
        if stride > 1:
            notes.append(f"every {stride}th run is drawn (p50 and p90 are of every run): the page stays small")
        chart_id = ids("timing", view.metric, *([view.quantity] if view.quantity else []))
        charts.append(Chart(chart_id, view.title, timing_figure(view), notes))
    return charts

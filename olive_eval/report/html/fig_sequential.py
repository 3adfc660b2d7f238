"""A sequential run's bounds: per goal, each candidate's anytime-valid interval on the mean margin over the goal's
threshold against the examples seen (met once the band clears 0, missed once it falls below). Pure: the run's
results in, plotly figure dicts out."""

from __future__ import annotations

from typing import Any

from olive_eval.records.results import RunResult
from olive_eval.report.html.charts import Chart, ChartIds, colour, label, layout


def _band(name: str, index: int, looks: list[list[float]], state: str) -> list[dict[str, Any]]:
    """The candidate's lower and upper bounds at each look, the space between filled."""
    drawn = [look for look in looks if look[1] is not None and look[2] is not None]
    xs = [look[0] for look in drawn]
    tint = colour(index, False)
    common = {"type": "scatter", "mode": "lines+markers", "x": xs, "legendgroup": name, "line": {"color": tint}}
    return [
        {**common, "y": [look[1] for look in drawn], "name": f"{label(name)} ({state})", "showlegend": True,
         "hovertemplate": f"{label(name)}: lower %{{y:.4g}} after %{{x}} examples<extra></extra>"},
        {**common, "y": [look[2] for look in drawn], "name": label(name), "showlegend": False, "fill": "tonexty",
         "hovertemplate": f"{label(name)}: upper %{{y:.4g}} after %{{x}} examples<extra></extra>"},
    ]  # fmt: skip


def sequential_charts(result: RunResult, names: list[str], ids: ChartIds) -> list[Chart]:
    """One chart per goal decided chunk by chunk, one band per candidate."""
    keys = list(dict.fromkeys(key for n in names for p in result.models[n].sequential.values() for key in p.goals))
    charts = []
    for key in keys:
        traces: list[dict[str, Any]] = []
        for index, name in enumerate(names):
            for p in result.models[name].sequential.values():
                decision = p.goals.get(key)
                if decision is not None and decision.looks:
                    traces += _band(name, index, decision.looks, f"{decision.state} after {decision.examples:,}")
        zero = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": 0, "y1": 0, "line": {"dash": "dot"}}
        fig_layout = layout(f"{key}: bounds on the mean margin", "examples seen", "margin over the goal's threshold")
        fig_layout["xaxis"]["type"] = "log"  # doubling chunks: evenly spaced looks
        fig_layout["shapes"] = [zero]
        charts.append(
            Chart(ids("sequential", key), f"{key}: sequential bounds", {"data": traces, "layout": fig_layout})
        )
    return charts

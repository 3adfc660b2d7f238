"""Figures of the run's values: the Pareto chart of two metrics, and each metric's values with their
confidence intervals as error bars. Pure: data in, plotly figure dicts out."""

from __future__ import annotations

from typing import Any

from olive_eval.report.html.charts import Chart, ChartIds, colour, error_bars, label, layout
from olive_eval.report.html.data_run import MetricSeries, pareto_front

PARETO_ID = "pareto"


def pareto_data(
    names: list[str], baseline: str, series: dict[str, MetricSeries], axes: tuple[str, str]
) -> dict[str, Any]:
    """What the page's metric pickers redraw the Pareto chart from (the same figure as :func:`pareto_figure`)."""
    return {
        "models": [label(n) for n in names],
        "baseline": label(baseline),
        "colours": [colour(i, n == baseline) for i, n in enumerate(names)],
        "x": axes[0],
        "y": axes[1],
        "layout": pareto_figure(names, baseline, series[axes[0]], series[axes[1]])["layout"],
        "series": {
            key: {
                "label": label(s.label),
                "higher": s.higher_is_better is not False,
                "values": s.values,
                "lo": s.ci_low,
                "hi": s.ci_high,
            }
            for key, s in series.items()
        },
    }


def pareto_figure(names: list[str], baseline: str, sx: MetricSeries, sy: MetricSeries) -> dict[str, Any]:
    """Every model with both values as a labelled point (intervals as error bars), the front as a line.

    Mirrored by ``paretoFigure`` in the page's script (:mod:`olive_eval.report.html.bundle`), which redraws it
    for the metrics picked on the page.
    """
    front = pareto_front(sx.values, sy.values, sx.higher_is_better is not False, sy.higher_is_better is not False)
    on_front = set(front)
    points = {
        "type": "scatter",
        "mode": "markers+text",
        "name": "models",
        "x": sx.values,
        "y": sy.values,
        "text": [label(n) for n in names],
        "textposition": "top center",
        "marker": {
            "size": 11,
            "color": [colour(i, n == baseline) for i, n in enumerate(names)],
            "symbol": ["diamond" if i in on_front else "circle" for i in range(len(names))],
        },
        "error_x": error_bars(sx.values, sx.ci_low, sx.ci_high),
        "error_y": error_bars(sy.values, sy.ci_low, sy.ci_high),
        "hovertemplate": "%{text}<br>x %{x}<br>y %{y}<extra></extra>",
    }
    line = {
        "type": "scatter",
        "mode": "lines",
        "name": "Pareto front",
        "x": [sx.values[i] for i in front],
        "y": [sy.values[i] for i in front],
        "line": {"dash": "dot", "color": "#444"},
        "hoverinfo": "skip",
    }
    return {"data": [line, points], "layout": layout("Pareto front", sx.label, sy.label, showlegend=True)}


def value_charts(names: list[str], baseline: str, series: dict[str, MetricSeries], ids: ChartIds) -> list[Chart]:
    """One chart per sub-type that has a confidence interval on some model: values with error bars."""
    charts = []
    for key, s in series.items():
        if not s.has_interval:
            continue
        trace = {
            "type": "scatter",
            "mode": "markers",
            "x": [label(n) for n in names],
            "y": s.values,
            "marker": {"size": 10, "color": [colour(i, n == baseline) for i, n in enumerate(names)]},
            "error_y": error_bars(s.values, s.ci_low, s.ci_high),
            "hovertemplate": "%{x}: %{y}<extra></extra>",
        }
        figure = {"data": [trace], "layout": layout(s.label, None, s.unit or "value", showlegend=False)}
        charts.append(Chart(ids("values", key), s.label, figure))
    return charts

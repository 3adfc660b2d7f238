"""Figures of structured values: per-class bars, PR and ROC curves, confusion matrices, reliability diagrams.
Curves, matrices and diagrams of several models share one chart with a model picker (a candidate is shown beside
the baseline).
Pure: :mod:`~olive_eval.report.html.data_details` in, plotly figure dicts out."""

from __future__ import annotations

from typing import Any

from olive_eval.report.html.charts import Chart, ChartIds, colour, label, layout, model_menu
from olive_eval.report.html.data_details import Confusion, Curves, PerClass, Reliability


def per_class_chart(data: PerClass, baseline: str, ids: ChartIds) -> Chart:
    traces = [
        {
            "type": "bar",
            "name": label(name),
            "x": [label(c) for c in data.classes],
            "y": values,
            "marker": {"color": colour(i, name == baseline)},
        }
        for i, (name, values) in enumerate(data.values.items())
    ]
    figure = {"data": traces, "layout": layout(f"{data.key} per class", "class", data.key, barmode="group")}
    return Chart(ids("perclass", data.key), f"{data.key} per class", figure)


def _views(models: list[str], baseline: str) -> list[tuple[str, set[str]]]:
    """(menu entry, models shown): each candidate beside the baseline; the baseline alone without candidates."""
    candidates = [m for m in models if m != baseline]
    if not candidates:
        return [(m, {m}) for m in models]
    return [(f"{c} vs {baseline}", {c, baseline}) for c in candidates]


def curve_charts(data: Curves, baseline: str, ids: ChartIds) -> list[Chart]:
    """A PR chart and a ROC chart: per class a line for the picked candidate (solid) and the baseline (dotted)."""
    models = list(data.models)
    views = _views(models, baseline)
    charts = []
    for kind, (x_of, y_of), titles in (
        ("pr", ("recall", "precision"), ("recall", "precision")),
        ("roc", ("fpr", "tpr"), ("false positive rate", "true positive rate")),
    ):
        traces, owners = [], []
        for name in models:
            for ci, cls in enumerate(data.classes):
                points = data.models[name].get(cls)
                if points is None:
                    continue
                traces.append(
                    {
                        "type": "scatter",
                        "mode": "lines+markers",
                        "name": label(f"{cls} ({name})"),
                        "x": getattr(points, x_of),
                        "y": getattr(points, y_of),
                        "text": [f"threshold {t:g}" for t in points.thresholds],
                        "line": {"dash": "dot" if name == baseline else "solid", "color": colour(ci, False)},
                        "hovertemplate": "%{text}: (%{x:.3f}, %{y:.3f})<extra>%{fullData.name}</extra>",
                    }
                )
                owners.append(name)
        visible = [[o in shown for o in owners] for _, shown in views]
        for trace, vis in zip(traces, visible[0], strict=True):
            trace["visible"] = vis
        title = f"{data.key}: {'precision-recall' if kind == 'pr' else 'ROC'}"
        extra: dict[str, Any] = {"xaxis": {"title": {"text": titles[0]}, "range": [0, 1.02]}}
        extra["yaxis"] = {"title": {"text": titles[1]}, "range": [0, 1.02]}
        if len(views) > 1:
            extra["updatemenus"] = [model_menu([v[0] for v in views], visible, 0)]
        charts.append(Chart(ids(kind, data.key), title, {"data": traces, "layout": layout(title, **extra)}))
    return charts


def confusion_chart(data: Confusion, baseline: str, ids: ChartIds) -> Chart:
    """One heatmap per model (rows: reference, columns: predicted), one shown at a time: the first candidate."""
    models = list(data.models)
    labels = [label(x) for x in data.labels]
    active = next((i for i, m in enumerate(models) if m != baseline), 0)
    traces = [
        {
            "type": "heatmap",
            "name": label(name),
            "z": matrix,
            "x": labels,
            "y": labels,
            "colorscale": "Blues",
            "visible": i == active,
            "hovertemplate": "reference %{y}, predicted %{x}: %{z}<extra></extra>",
        }
        for i, (name, matrix) in enumerate(data.models.items())
    ]
    extra: dict[str, Any] = {
        "xaxis": {"title": {"text": "predicted"}, "type": "category"},
        "yaxis": {"title": {"text": "reference"}, "type": "category", "autorange": "reversed"},
    }
    if len(models) > 1:
        visible = [[j == i for j in range(len(models))] for i in range(len(models))]
        extra["updatemenus"] = [model_menu(models, visible, active)]
    title = f"{data.key}: confusion matrix"
    return Chart(ids("confusion", data.key), title, {"data": traces, "layout": layout(title, **extra)})


def reliability_chart(data: Reliability, baseline: str, ids: ChartIds) -> Chart:
    """Accuracy against mean confidence per non-empty bin (marker area by count), the diagonal as perfect
    calibration; the picked candidate solid, the baseline dotted."""
    models = list(data.models)
    views = _views(models, baseline)
    diagonal = {
        "type": "scatter",
        "mode": "lines",
        "name": "perfectly calibrated",
        "x": [0, 1],
        "y": [0, 1],
        "line": {"dash": "dash", "color": "#bbbbbb"},
        "hoverinfo": "skip",
    }
    traces, owners = [diagonal], [None]
    for i, name in enumerate(models):
        bins = data.models[name]
        largest = max(bins.count, default=1)
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": label(name),
                "x": bins.confidence,
                "y": bins.accuracy,
                "text": [
                    f"{n} examples, confidence {'?' if lo is None else f'{lo:.3g}'} to {'?' if hi is None else f'{hi:.3g}'}"
                    for n, lo, hi in zip(bins.count, bins.lower, bins.upper, strict=True)
                ],
                "marker": {"size": [6 + 14 * (n / largest) ** 0.5 for n in bins.count]},
                "line": {"dash": "dot" if name == baseline else "solid", "color": colour(i, name == baseline)},
                "hovertemplate": "%{text}: confidence %{x:.3f}, accuracy %{y:.3f}<extra>%{fullData.name}</extra>",
            }
        )
        owners.append(name)
    visible = [[o is None or o in shown for o in owners] for _, shown in views]
    for trace, vis in zip(traces, visible[0], strict=True):
        trace["visible"] = vis
    title = f"{', '.join(data.keys)}: reliability"
    extra: dict[str, Any] = {
        "xaxis": {"title": {"text": "mean confidence"}, "range": [0, 1.02]},
        "yaxis": {"title": {"text": "accuracy"}, "range": [0, 1.02]},
    }
    if len(views) > 1:
        extra["updatemenus"] = [model_menu([v[0] for v in views], visible, 0)]
    return Chart(ids("reliability", data.keys[0]), title, {"data": traces, "layout": layout(title, **extra)})

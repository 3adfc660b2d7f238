"""Pure extraction of the structured values metrics leave in results.json: per-class values (``per_class``,
``details["per_class"]``: classification averages "none", detection's per-class AP, segmentation), curves
(``pr_curve``-shaped details: per label and score threshold the counts tp, fp, fn, tn, whence PR and ROC),
confusion matrices (``details["confusion_matrix"]``) and reliability diagrams (``details["reliability"]``: per
confidence bin its count, mean confidence and accuracy, as calibration metrics give). No HTML, no figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from olive_eval.records.results import RunResult
from olive_eval.report.html.data_run import finite, metric_keys


@dataclass
class PerClass:
    """One sub-type's per-class values: class names, and per model a value per class (None: not defined)."""

    key: str
    classes: list[str]
    values: dict[str, list[float | None]] = field(default_factory=dict)


@dataclass
class CurvePoints:
    """One class's curve of one model, a point per score threshold (ascending)."""

    thresholds: list[float]
    precision: list[float | None]
    recall: list[float | None]
    tpr: list[float | None]
    fpr: list[float | None]


@dataclass
class Curves:
    key: str
    classes: list[str]
    models: dict[str, dict[str, CurvePoints]] = field(default_factory=dict)


@dataclass
class Confusion:
    """Rows: reference class; columns: predicted class."""

    key: str
    labels: list[str]
    models: dict[str, list[list[int]]] = field(default_factory=dict)


@dataclass
class ReliabilityBins:
    """One model's non-empty confidence bins, in order."""

    confidence: list[float]
    accuracy: list[float]
    count: list[int]
    lower: list[float | None]
    upper: list[float | None]


@dataclass
class Reliability:
    """A reliability diagram per model; ``keys``: the sub-types whose bins are these (ece and mce alike)."""

    keys: list[str]
    models: dict[str, ReliabilityBins] = field(default_factory=dict)


@dataclass
class Structured:
    per_class: list[PerClass] = field(default_factory=list)
    curves: list[Curves] = field(default_factory=list)
    confusion: list[Confusion] = field(default_factory=list)
    reliability: list[Reliability] = field(default_factory=list)
    #: Flat objects of numbers (a WER's hits, substitutions, deletions, insertions), a row per field.
    breakdowns: list[PerClass] = field(default_factory=list)
    #: Structured values the page does not draw, by sub-type: where to find them.
    undrawn: list[str] = field(default_factory=list)


def _number(value: Any) -> float | None:
    return finite(float(value)) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: Any) -> int:
    """A count, or a detailed curve's ``{"total": n, ...}``."""
    if isinstance(value, dict):
        value = value.get("total", 0)
    return int(value) if isinstance(value, int | float) else 0


def _per_class(sub_per_class: list[float | None] | None, details: Any) -> dict[str, float | None] | None:
    if isinstance(details, dict) and isinstance(details.get("per_class"), dict):
        return {str(k): _number(v) for k, v in details["per_class"].items()}
    if sub_per_class:
        return {str(i): _number(v) for i, v in enumerate(sub_per_class)}
    return None


def _threshold(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _curves(details: Any) -> dict[str, CurvePoints] | None:
    """``{label: {threshold: {tp, fp, fn, tn, ...}}}`` as points per label; None for any other shape."""
    if not isinstance(details, dict) or not details:
        return None
    out = {}
    for label, by_threshold in details.items():
        if not isinstance(by_threshold, dict) or not by_threshold:
            return None
        points = []
        for key, counts in by_threshold.items():
            t = _threshold(key)
            if t is None or not isinstance(counts, dict) or not {"tp", "fp", "fn", "tn"} <= set(counts):
                return None
            points.append((t, *(_count(counts[k]) for k in ("tp", "fp", "fn", "tn"))))
        points.sort()
        out[str(label)] = CurvePoints(
            [p[0] for p in points],
            [tp / (tp + fp) if tp + fp else None for _, tp, fp, _, _ in points],
            [tp / (tp + fn) if tp + fn else None for _, tp, _, fn, _ in points],
            [tp / (tp + fn) if tp + fn else None for _, tp, _, fn, _ in points],
            [fp / (fp + tn) if fp + tn else None for _, _, fp, _, tn in points],
        )
    return out


def _confusion(details: Any) -> tuple[list[str], list[list[int]]] | None:
    matrix = details.get("confusion_matrix") if isinstance(details, dict) else None
    if not isinstance(matrix, dict) or not all(isinstance(row, dict) for row in matrix.values()):
        return None
    labels = list(dict.fromkeys([str(k) for k in matrix] + [str(p) for row in matrix.values() for p in row]))
    rows = {str(k): {str(p): _count(c) for p, c in row.items()} for k, row in matrix.items()}
    return labels, [[rows.get(r, {}).get(p, 0) for p in labels] for r in labels]


def _reliability(details: Any) -> ReliabilityBins | None:
    """``details["reliability"]`` as the non-empty bins; None for any other shape."""
    rows = details.get("reliability") if isinstance(details, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        return None
    out = ReliabilityBins([], [], [], [], [])
    for row in rows:
        confidence, accuracy, count = (
            _number(row.get("confidence")),
            _number(row.get("accuracy")),
            _count(row.get("count")),
        )
        if confidence is None or accuracy is None or count <= 0:
            continue  # an empty bin has no point
        out.confidence.append(confidence)
        out.accuracy.append(accuracy)
        out.count.append(count)
        out.lower.append(_number(row.get("lower")))
        out.upper.append(_number(row.get("upper")))
    return out


def _add_reliability(found: list[Reliability], key: str, models: dict[str, ReliabilityBins]) -> None:
    """A new diagram, or the key added to an earlier one with the same bins (ece and mce of one configuration)."""
    same = next((r for r in found if r.models == models), None)
    if same is not None:
        same.keys.append(key)
    elif models:
        found.append(Reliability([key], models))


def _breakdown(details: Any) -> dict[str, float] | None:
    """``details`` as field -> number when it is a flat object whose values are numbers or text (text, such as
    the normaliser's name, is left out); None for anything nested."""
    if not isinstance(details, dict) or not details:
        return None
    numbers = {str(k): v for k, v in details.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    if len(numbers) + sum(isinstance(v, str) for v in details.values()) != len(details):
        return None
    return numbers or None


def _add(table: PerClass | None, key: str, name: str, values: dict[str, float | None]) -> PerClass:
    table = table or PerClass(key, [])
    table.classes += [c for c in values if c not in table.classes]
    table.values[name] = [values.get(c) for c in table.classes]
    return table


def _padded(table: PerClass) -> PerClass:
    n = len(table.classes)
    table.values = {m: v + [None] * (n - len(v)) for m, v in table.values.items()}
    return table


def structured(result: RunResult, names: list[str]) -> Structured:
    """Every structured value the models produced, grouped by sub-type in model order."""
    out = Structured()
    for key in metric_keys(result):
        per_class: PerClass | None = None
        curves: Curves | None = None
        confusion: Confusion | None = None
        breakdown: PerClass | None = None
        diagrams: dict[str, ReliabilityBins] = {}
        for name in names:
            sub = result.models[name].metrics.get(key)
            if sub is None:
                continue
            values = _per_class(sub.per_class, sub.details)
            if values is not None:
                per_class = _add(per_class, key, name, values)
            drawn = values is not None
            points = _curves(sub.details)
            if points is not None:
                curves = curves or Curves(key, [])
                curves.classes += [c for c in points if c not in curves.classes]
                curves.models[name] = points
                drawn = True
            matrix = _confusion(sub.details)
            if matrix is not None:
                confusion = confusion or Confusion(key, matrix[0])
                if matrix[0] == confusion.labels:
                    confusion.models[name] = matrix[1]
                drawn = True
            bins = _reliability(sub.details)
            if bins is not None:
                diagrams[name] = bins
                drawn = True
            flat = None if drawn else _breakdown(sub.details)
            if flat is not None:
                breakdown = _add(breakdown, key, name, dict(flat))
                drawn = True
            if sub.details is not None and not drawn and key not in out.undrawn:
                out.undrawn.append(key)
        if per_class is not None:
            out.per_class.append(_padded(per_class))
        if breakdown is not None:
            out.breakdowns.append(_padded(breakdown))
        if curves is not None:
            out.curves.append(curves)
        if confusion is not None:
            out.confusion.append(confusion)
        _add_reliability(out.reliability, key, diagrams)
    return out

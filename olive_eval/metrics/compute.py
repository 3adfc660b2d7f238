"""``compute_metric(name, predictions, references)``: one sub-type on arrays, without a model or a run."""

from __future__ import annotations

from typing import Any

import numpy as np

from olive_eval.metrics.base import Score
from olive_eval.metrics.registry import get_metric

#: The pass fields ``compute_metric`` can give a metric: the predictions serve as the raw output too.
_GIVEN = {"prediction": 0, "logits": 0, "references": 1}


class MetricValue(float):
    """What :func:`compute_metric` returns: the value, a float wherever one is expected, with what else the
    sub-type computed.

    * ``value`` -- the number (``float(result)``); NaN for a structured sub-type;
    * ``per_class`` -- per-class values where the sub-type has them (``average: "none"``, ``roc_auc``), else None;
    * ``details`` -- the structure of a structured sub-type (``confusion_matrix``, ``pr_curve``: a JSON-ready
      dict, as written to results.json), or the named per-class values; else None;
    * ``undefined`` -- why ``value`` is NaN: set for a structured sub-type, whose result is ``details``.
    """

    name: str
    per_class: list[float] | None
    details: Any
    undefined: str | None

    def __new__(cls, name: str, score: Score) -> MetricValue:
        result = super().__new__(cls, score.value)
        result.name = name
        result.per_class = score.per_class
        result.details = score.details
        result.undefined = score.undefined
        return result

    @property
    def value(self) -> float:
        return float(self)

    def __repr__(self) -> str:
        parts = [f"{self.name}={float(self)!r}"]
        parts += [f"{key}={_short(getattr(self, key))}" for key in ("per_class", "details", "undefined")]
        return f"MetricValue({', '.join(p for p in parts if not p.endswith('=None'))})"

    def __reduce__(self) -> tuple[Any, ...]:
        score = Score(float(self), self.per_class, undefined=self.undefined, details=self.details)
        return (MetricValue, (self.name, score))


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 4]} ..."


def compute_metric(name: str, predictions: Any, references: Any, **metric_config: Any) -> MetricValue:
    """One accuracy sub-type on arrays, without a model: ``compute_metric("f1_score", p, r, task="binary")``.

    Returns a :class:`MetricValue`: a float, with the per-class values and details the sub-type has. A
    structured sub-type (``confusion_matrix``, ``pr_curve`` ...) has no number: its value is NaN and its
    result is ``.details``. Raises ValueError when a prediction is NaN or infinite, when the metric is
    undefined on this data (AUROC with one class present, accuracy of no examples), or when the metric reads
    pass fields besides predictions and references (``samples_per_second`` reads ``inference_seconds``),
    rather than returning a number that looks like a result.
    """
    metric = get_metric(name, metric_config)
    missing = [field for field in metric.reads if field not in _GIVEN]
    if missing:
        raise ValueError(
            f"{name} reads {', '.join(metric.reads)} from a prediction pass; compute_metric has only predictions "
            "and references: score it in a run (evaluate())"
        )
    preds = _column(predictions)
    if isinstance(preds, np.ndarray) and np.issubdtype(preds.dtype, np.floating) and not np.isfinite(preds).all():
        bad = ~np.isfinite(preds.reshape(len(preds), -1)).all(axis=1) if preds.ndim else ~np.isfinite(preds[None])
        raise ValueError(
            f"{name}: predictions hold NaN or infinity in {int(bad.sum())} of {bad.size} examples "
            f"(first: example {int(np.argmax(bad))})"
        )
    columns = (preds, _column(references))
    score = metric.compute(*(columns[_GIVEN[field]] for field in metric.reads))
    if score.undefined is not None and (metric.scalar or score.details is None):
        raise ValueError(f"{name} is undefined here: {score.undefined}")
    return MetricValue(name, score)


def _column(values: Any) -> Any:
    """Numbers as an array; text and ragged columns (lists of reference answers) as given, so that a metric
    sees every value's own type (a prediction that is not a string is named, not turned into one)."""
    if isinstance(values, np.ndarray):
        return values
    try:
        array = np.asarray(values)
    except ValueError:  # ragged lists
        return values
    return array if array.dtype.kind in "biufc" or array.ndim == 0 else values

"""``compute_metric(name, predictions, references)``: one sub-type on arrays, without a model or a run."""

from __future__ import annotations

from typing import Any

import numpy as np

from olive_eval.metrics.registry import get_metric


def compute_metric(name: str, predictions: Any, references: Any, **metric_config: Any) -> float:
    """One accuracy sub-type on arrays, without a model: ``compute_metric("f1_score", p, r, task="binary")``.

    Raises ValueError when a prediction is NaN or infinite, or when the metric is undefined on this
    data (AUROC with one class present), rather than returning a number that looks like a result.
    """
    metric = get_metric(name, metric_config)
    preds = _column(predictions)
    if isinstance(preds, np.ndarray) and np.issubdtype(preds.dtype, np.floating) and not np.isfinite(preds).all():
        bad = ~np.isfinite(preds.reshape(len(preds), -1)).all(axis=1) if preds.ndim else ~np.isfinite(preds[None])
        raise ValueError(
            f"{name}: predictions hold NaN or infinity in {int(bad.sum())} of {bad.size} examples "
            f"(first: example {int(np.argmax(bad))})"
        )
    score = metric.compute(preds, _column(references))
    if score.undefined is not None:
        raise ValueError(f"{name} is undefined here: {score.undefined}")
    return float(score.value)


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

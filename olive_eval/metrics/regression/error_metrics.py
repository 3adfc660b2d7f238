"""``mse``, ``rmse`` and ``mae``: mean errors, map/reduce over per-example ``(error, counted)`` rows.

Statistics are ``[n, k, 2]``: per example and output, the squared (or absolute) error and 1 for an example counted
(0, and an error of 0, for one that ``nan_policy: omit`` leaves out). A value is, per output, the summed error over
the counted examples; with several outputs, their plain mean (scikit-learn's ``uniform_average``: the RMSE of each
output, then the mean), each output's own value in ``per_class``. Equal to scikit-learn's ``mean_squared_error``,
``root_mean_squared_error`` and ``mean_absolute_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

import numpy as np

from olive_eval.metrics.base import Kind, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.regression.base import RegressionMetric
from olive_eval.metrics.regression.inputs import missing_reason

__all__ = ["ErrorMetric", "MeanAbsoluteError", "MeanSquaredError", "RootMeanSquaredError", "column_sums"]

Loss = Literal["squared", "absolute"]


def column_sums(rows: np.ndarray) -> np.ndarray:
    """Sums over the first axis, column by column: numpy adds a 1-D run pairwise (accurate), strided or not."""
    rows = np.asarray(rows, dtype=np.float64)
    flat = rows.reshape(len(rows), int(np.prod(rows.shape[1:])))
    return np.array([flat[:, j].sum() for j in range(flat.shape[1])]).reshape(rows.shape[1:])


class ErrorMetric(RegressionMetric):
    """A mean error over examples (see module docstring)."""

    kind = Kind.MAP_REDUCE
    higher_is_better = False
    loss: ClassVar[Loss]
    root: ClassVar[bool] = False

    def losses(self, p: np.ndarray, r: np.ndarray) -> np.ndarray:
        """``[n, k]`` squared or absolute errors, NaN where either side is."""
        error = p - r
        return np.multiply(error, error, out=error) if self.loss == "squared" else np.abs(error, out=error)

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        loss = self.losses(*self.columns(predictions, references))
        rows = np.empty((*loss.shape, 2))
        rows[..., 0], rows[..., 1] = loss, 1.0
        if self.nan_policy == "omit":
            rows[np.isnan(loss).any(axis=1)] = 0.0
        return rows

    def compute(self, predictions: Any, references: Any) -> Score:
        """The whole set from its errors, without per-example rows; examples numbered from 0."""
        self.seen = 0
        loss = self.losses(*self.columns(predictions, references))
        examples = len(loss)
        if self.nan_policy == "omit":
            loss = loss[~np.isnan(loss).any(axis=1)]
        totals = np.stack([column_sums(loss), np.full(loss.shape[1], float(len(loss)))], axis=-1)
        return self.score(totals, examples, lambda: np.isnan(loss).any(axis=1))

    def shared_key(self) -> Any:
        """mse and rmse read the same squared errors."""
        return ("regression_errors", self.loss, self.nan_policy)

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        widths = {p.shape[1] for p in parts if len(p)}
        if len(widths) > 1:
            raise ValueError(f"batches hold different numbers of outputs per example: {sorted(widths)}")
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, 1, 2))

    def per_output(self, totals: np.ndarray) -> np.ndarray:
        """``[B, k]`` values of each output from ``[B, k, 2]`` totals (NaN for an output with nothing counted)."""
        t = np.asarray(totals, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(t[..., 1] > 0, t[..., 0] / t[..., 1], np.nan)
        return np.sqrt(mean) if self.root else mean

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        return self.per_output(np.asarray(totals).reshape(len(totals), -1, 2)).mean(axis=1)

    def instance_scores(self, statistics: np.ndarray) -> np.ndarray:
        """Each example's own error (NaN for one left out)."""
        return self.finalize_totals(statistics)

    def reduce(self, statistics: np.ndarray) -> Score:
        rows = np.asarray(statistics, dtype=np.float64)
        totals = column_sums(rows)
        return self.score(totals.reshape(-1, 2), len(rows), lambda: np.isnan(rows[..., 0]).any(axis=1))

    def score(self, totals: np.ndarray, examples: int, missing: Callable[[], np.ndarray]) -> Score:
        """The value of ``[k, 2]`` totals over ``examples``; ``missing`` marks the examples holding NaN (asked only
        when the totals are NaN)."""
        if not examples:
            return Score(float("nan"), undefined="no examples to score")
        if np.isnan(totals[:, 0]).any():
            return Score(float("nan"), undefined=missing_reason(missing()))
        if not totals[:, 1].all():
            return Score(float("nan"), undefined="every example holds a NaN, and nan_policy 'omit' left them all out")
        values = self.per_output(totals[None])[0]
        return Score(float(values.mean()), per_class=[float(v) for v in values] if len(values) > 1 else None)


@register_metric
class MeanSquaredError(ErrorMetric):
    """Mean of the squared errors (scikit-learn's ``mean_squared_error``)."""

    name = "mse"
    loss = "squared"


@register_metric
class RootMeanSquaredError(ErrorMetric):
    """Square root of the mean squared error, per output (scikit-learn's ``root_mean_squared_error``)."""

    name = "rmse"
    loss = "squared"
    root = True


@register_metric
class MeanAbsoluteError(ErrorMetric):
    """Mean of the absolute errors (scikit-learn's ``mean_absolute_error``)."""

    name = "mae"
    loss = "absolute"

"""Calibration metrics (Olive's ``accuracy`` type): ``ece``, ``mce`` and ``brier_score``, lower is better.

They read the pass's ``logits`` (the model's raw scores: logits or probabilities, see :mod:`.confidence`) and
``references`` (class labels). ``ece`` equals torchmetrics' ``CalibrationError(norm="l1")``, ``mce`` its
``norm="max"``, ``brier_score`` scikit-learn's ``brier_score_loss`` (binary: the mean of ``(p - y)^2``;
multiclass: the mean over examples of ``sum_k (p_k - y_k)^2``).

``ece`` and ``mce`` keep each example's confidence and hit as its statistics (``[N, 2]``) and bin them when they
reduce (:mod:`.binning`): equal-mass bins depend on the whole set, and per-bin sums as additive statistics would
be ``3 x (n_bins + 1)`` numbers per example. So they are global metrics with per-example statistics, as detection
is: a bootstrap resamples the statistics and bins each resample (:meth:`reduce_resamples`), so intervals and
paired goals never go back to the scores. ``details`` holds the reliability diagram: per bin its edges, count,
mean confidence and accuracy (the hit rate: for a binary task, the share of positives).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.calibration.binning import (
    CONFIDENCE,
    COUNT,
    HITS,
    adaptive_resampled_totals,
    adaptive_totals,
    expected_error,
    max_error,
    uniform_bins,
    uniform_edges,
    uniform_resampled_totals,
    uniform_totals,
)
from olive_eval.metrics.calibration.confidence import Task, brier_terms, confidences
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel

__all__ = ["BrierConfig", "BrierScore", "CalibrationConfig", "ExpectedCalibrationError", "MaxCalibrationError"]

NO_EXAMPLES = "no examples to score"


class BrierConfig(StrictModel):
    """metric_config of brier_score."""

    task: Literal["binary", "multiclass"] | None = Field(
        None, description="Left out: multiclass for scores with more than two columns, else binary."
    )


class CalibrationConfig(BrierConfig):
    """metric_config of ece and mce."""

    n_bins: int = Field(15, ge=1, le=100_000, description="Number of confidence bins (torchmetrics' default, 15).")
    binning: Literal["uniform", "adaptive"] = Field(
        "uniform", description="uniform: bins of equal width over [0, 1]; adaptive: bins of equal example counts."
    )


def reliability(totals: np.ndarray, bounds: np.ndarray, keep_empty: np.ndarray) -> list[dict[str, Any]]:
    """Per bin ``{lower, upper, count, confidence, accuracy}``: its edges, and its means (None when empty)."""
    rows = []
    for b in range(totals.shape[1]):
        count = int(totals[COUNT, b])
        if count or keep_empty[b]:
            lower, upper = (None if np.isnan(v) else float(v) for v in bounds[:, b])
            confidence, accuracy = (float(totals[s, b] / count) if count else None for s in (CONFIDENCE, HITS))
            rows.append(
                {"lower": lower, "upper": upper, "count": count, "confidence": confidence, "accuracy": accuracy}
            )
    return rows


class _CalibrationError(Metric):
    """Binned calibration error of top-label confidences; subclasses say how the bins' gaps make one value."""

    higher_is_better = False
    kind = Kind.GLOBAL
    reads = ("logits", "references")
    Config: ClassVar[type[StrictModel]] = CalibrationConfig

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._task: Task | None = None  # the task the last statistics call resolved, for Score.extra
        self._seen = 0  # examples of the earlier batches, to number examples in errors

    @property
    def decomposes(self) -> bool:
        """Per-example (confidence, hit) exist, though the value is no sum of them (it bins them)."""
        return True

    @property
    def _config(self) -> CalibrationConfig:
        return self.config  # type: ignore[return-value]

    def error(self, totals: np.ndarray) -> np.ndarray:
        """The metric of totals ``[..., 3, bins]``."""
        raise NotImplementedError

    def statistics(self, scores: Any, references: Any) -> np.ndarray:
        """``[N, 2]`` float64: each example's confidence and hit (1.0 or 0.0)."""
        out, self._task = confidences(scores, references, self._config.task, start=self._seen)
        self._seen += len(out)
        return out

    def shared_key(self) -> Any:
        """ece and mce of the same task share the confidences, whatever their bins."""
        return ("calibration", self._config.task)

    def adopt(self, producer: Metric) -> None:
        self._task = getattr(producer, "_task", None) or self._task
        self._seen = getattr(producer, "_seen", self._seen)

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts, axis=0) if parts else np.empty((0, 2))

    def instance_scores(self, statistics: np.ndarray) -> np.ndarray:
        """An example's own calibration error: its one bin's gap, ``|confidence - hit|``."""
        stats = np.asarray(statistics, dtype=np.float64).reshape(-1, 2)
        return np.abs(stats[:, 0] - stats[:, 1])

    def compute(self, scores: Any, references: Any) -> Score:
        """The whole set: examples numbered from 0."""
        self._seen = 0
        return self.reduce(self.statistics(scores, references))

    def _columns(self, statistics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        stats = np.asarray(statistics, dtype=np.float64).reshape(-1, 2)
        return stats[:, 0], stats[:, 1] > 0.5

    def reduce(self, statistics: np.ndarray) -> Score:
        confidence, hit = self._columns(statistics)
        c = self._config
        if not len(confidence):
            return Score(float("nan"), undefined=NO_EXAMPLES)
        if c.binning == "uniform":
            totals = uniform_totals(confidence, hit, c.n_bins)
            edges = uniform_edges(c.n_bins)
            bounds = np.stack([edges, np.append(edges[1:], 1.0)])  # the last bin holds confidence 1 alone
            keep_empty = np.arange(c.n_bins + 1) < c.n_bins  # the bin of confidence 1 only when it holds some
        else:
            totals, bounds = adaptive_totals(confidence, hit, c.n_bins)
            keep_empty = np.zeros(c.n_bins, bool)
        details = {"binning": c.binning, "n_bins": c.n_bins, "reliability": reliability(totals, bounds, keep_empty)}
        return Score(float(self.error(totals)), extra={"task": self._task} if self._task else {}, details=details)

    def reduce_resamples(self, statistics: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """The metric on each resample ``idx`` ``[B, n]``, each binned anew (equal-mass bins follow the resample)."""
        confidence, hit = self._columns(statistics)
        c = self._config
        if c.binning == "uniform":
            bins = uniform_bins(confidence, c.n_bins)
            return self.error(uniform_resampled_totals(bins, confidence, hit, idx, c.n_bins))
        return self.error(adaptive_resampled_totals(confidence, hit, idx, c.n_bins))


@register_metric
class ExpectedCalibrationError(_CalibrationError):
    """ECE: the gap between mean confidence and accuracy per bin, weighted by the bin's share of the examples."""

    name = "ece"

    def error(self, totals: np.ndarray) -> np.ndarray:
        return expected_error(totals)


@register_metric
class MaxCalibrationError(_CalibrationError):
    """MCE: the largest gap between mean confidence and accuracy of a non-empty bin."""

    name = "mce"

    def error(self, totals: np.ndarray) -> np.ndarray:
        return max_error(totals)


@register_metric
class BrierScore(Metric):
    """The mean squared error of the predicted probabilities against the one-hot label (an instance metric: its
    per-example terms are its statistics)."""

    name = "brier_score"
    higher_is_better = False
    kind = Kind.INSTANCE
    reads = ("logits", "references")
    Config: ClassVar[type[StrictModel]] = BrierConfig

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0

    def statistics(self, scores: Any, references: Any) -> np.ndarray:
        terms = brier_terms(scores, references, self.config.task, start=self._seen)  # type: ignore[attr-defined]
        self._seen += len(terms)
        return terms

    def compute(self, scores: Any, references: Any) -> Score:
        self._seen = 0
        return self.reduce(self.statistics(scores, references))

    def reduce(self, statistics: np.ndarray) -> Score:
        if not len(statistics):
            return Score(float("nan"), undefined=NO_EXAMPLES)
        return super().reduce(statistics)

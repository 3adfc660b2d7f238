"""What an lm-eval value rests on, from lm-eval's per-sample log (``log_samples``), so a confidence interval and a
paired goal resample the same questions of both models.

lm-eval's aggregation decides how the per-document items reduce: ``mean`` is an instance mean;
``weighted_perplexity``, ``bits_per_byte`` and ``perplexity`` are ratios of sums (log-likelihood over words or
bytes, or over documents), resampled as such; any other aggregation is recomputed by lm-eval's own function on
each resample. One metric class holds all of them, its aggregation a plain attribute, so the results cache stores
and restores it like any metric's state.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.resampling import ExampleStats

#: Aggregations reduced from per-document sums: (log-likelihood, weight) rows.
RATIOS = ("weighted_perplexity", "bits_per_byte", "perplexity")


class SampleMetric(Metric):
    """lm-eval's aggregation ``lm_eval_aggregation`` over one task's per-document items."""

    name = "lm_eval_samples"
    higher_is_better = True
    reads = ("items",)

    def __init__(self, aggregation: str = "mean") -> None:
        super().__init__()
        self.lm_eval_aggregation = aggregation

    @property
    def kind(self) -> Kind:  # type: ignore[override]
        if self.lm_eval_aggregation == "mean":
            return Kind.INSTANCE
        return Kind.MAP_REDUCE if self.lm_eval_aggregation in RATIOS else Kind.GLOBAL

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        """Summed ``[log-likelihood, weight]`` rows → perplexity ``exp(-ll/w)`` or bits per byte ``-ll/w/ln 2``."""
        totals = np.asarray(totals, dtype=np.float64).reshape(-1, 2)
        mean = totals[:, 0] / totals[:, 1]
        return -mean / math.log(2) if self.lm_eval_aggregation == "bits_per_byte" else np.exp(-mean)

    def reduce(self, statistics: np.ndarray) -> Score:
        if self.kind is Kind.MAP_REDUCE:
            totals = np.asarray(statistics, dtype=np.float64).reshape(-1, 2).sum(axis=0)
            return Score(float(self.finalize_totals(totals)[0]))
        return super().reduce(statistics)

    def compute(self, *fields: Any) -> Score:
        if self.kind is not Kind.GLOBAL:
            return super().compute(*fields)
        from lm_eval.api.registry import get_aggregation

        return Score(float(get_aggregation(self.lm_eval_aggregation)(list(fields[0]))))

    def statistics(self, *fields: Any) -> np.ndarray:
        items = list(fields[0])
        if self.kind is Kind.INSTANCE:
            return np.asarray(items, dtype=np.float64)
        if self.lm_eval_aggregation == "perplexity":
            return np.array([[float(v), 1.0] for v in items], dtype=np.float64).reshape(-1, 2)
        return np.array([[float(ll), float(w)] for ll, w in items], dtype=np.float64).reshape(-1, 2)


def _as_data(item: Any) -> Any:
    """An item as JSON data (tuples and arrays as lists), so that the results cache stores it as it is resampled."""
    if isinstance(item, (tuple, list)):
        return [_as_data(v) for v in item]
    if isinstance(item, (np.ndarray, np.generic)):
        return item.tolist()
    return item


def sample_evidence(aggregation: str, items: list[Any]) -> ExampleStats:
    """Per-document evidence for a value lm-eval aggregated by ``aggregation`` (its registered name). The items a
    global aggregation reads (``f1``'s ``(gold, prediction)`` pairs) are kept as lists, which lm-eval's
    aggregations take as they take tuples."""
    metric = SampleMetric(aggregation)
    if metric.kind is Kind.GLOBAL:
        return ExampleStats(metric, fields=([_as_data(item) for item in items],))
    return ExampleStats(metric, statistics=metric.statistics(items))

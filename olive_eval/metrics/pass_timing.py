"""Speed over the real data, from the per-batch timing every prediction pass records.

``samples_per_second`` is an accuracy sub-type like any other: examples scored over the seconds of the model
calls plus post-processing, the first ``warmup_batches`` left out of both sums. It reads the pass's
``inference_seconds`` (each example's share of its batch's time) and ``batch_index`` fields, so it is a
map/reduce metric with intervals and paired goals for free.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel


class WarmupConfig(StrictModel):
    warmup_batches: int = Field(1, ge=0, description="Leading batches left out (caches, lazy initialisation).")


def timed_share(seconds: Any, batch_index: Any, warmup_batches: int) -> np.ndarray:
    """Per-example ``[counted, seconds]``: nothing for the examples of warm-up batches."""
    counted = (np.asarray(batch_index) >= warmup_batches).astype(np.float64)
    return np.stack([counted, counted * np.asarray(seconds, dtype=np.float64)], axis=1)


@register_metric
class SamplesPerSecond(Metric):
    name = "samples_per_second"
    higher_is_better = True
    kind = Kind.MAP_REDUCE
    reads = ("inference_seconds", "batch_index")
    Config: ClassVar[type[StrictModel]] = WarmupConfig

    def statistics(self, seconds: Any, batch_index: Any) -> np.ndarray:
        return timed_share(seconds, batch_index, self.config.warmup_batches)

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        t = np.asarray(totals, dtype=np.float64).reshape(-1, 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(t[:, 1] > 0, t[:, 0] / np.where(t[:, 1] > 0, t[:, 1], 1), np.nan)

    def reduce(self, statistics: np.ndarray) -> Score:
        totals = np.asarray(statistics, dtype=np.float64).reshape(-1, 2).sum(axis=0)
        if totals[0] == 0:
            return Score(float("nan"), undefined="every batch is a warm-up batch; lower warmup_batches")
        return Score(float(totals[0] / totals[1]), extra={"examples": int(totals[0]), "seconds": float(totals[1])})

"""What a model's measurement rests on, kept so intervals and paired goal checks can resample it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from olive_eval.metrics import resampling
from olive_eval.metrics.resampling import Sample


@dataclass
class Evidence:
    """Per-example data of a prediction metric (``sample``), or the repeated timings of a timing metric."""

    sample: Sample | None = None
    timings: np.ndarray | None = None
    statistic: Callable[[np.ndarray], np.ndarray] | None = None  # timings [..., n] -> value(s)

    def distribution(self, n_resamples: int, seed: int) -> np.ndarray:
        if self.sample is not None:
            return resampling.distribution(self.sample, n_resamples, seed)
        assert self.timings is not None and self.statistic is not None
        return resampling.independent_distribution(self.timings, self.statistic, n_resamples, seed)

    def interval(self, value: float, method: str, n_resamples: int, level: float, seed: int) -> tuple[float, float]:
        if self.sample is not None:
            return resampling.confidence_interval(self.sample, value, method, n_resamples, level, seed)
        assert self.timings is not None and self.statistic is not None
        return resampling.independent_interval(self.timings, self.statistic, value, method, n_resamples, level, seed)


def paired_distribution(
    base: Evidence, candidate: Evidence, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Resampled values of both models: the same examples for prediction metrics, independent runs for timings."""
    if base.sample is not None and candidate.sample is not None:
        return resampling.paired_distribution(base.sample, candidate.sample, n_resamples, seed)
    seeds = np.random.SeedSequence(seed).spawn(2)
    return (
        base.distribution(n_resamples, int(seeds[0].generate_state(1)[0])),
        candidate.distribution(n_resamples, int(seeds[1].generate_state(1)[0])),
    )

"""What a model's measurement rests on, kept so intervals and paired goal checks can resample it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from olive_eval.metrics import resampling, stats
from olive_eval.metrics.performance import TimingSample
from olive_eval.metrics.resampling import ExampleStats


@dataclass
class Evidence:
    """Per-example data of a prediction metric (``sample``), or the timed runs of a timing metric.

    Timings taken in several rounds (interleaved timing) are resampled round by round, then run by run
    within each round; a single block of runs is resampled run by run, with scipy's draws for the seed.
    """

    sample: ExampleStats | None = None
    timings: TimingSample | None = None
    statistic: Callable[[np.ndarray], np.ndarray] | None = None  # seconds [..., n] -> value(s)

    @property
    def _timing(self) -> tuple[TimingSample, Callable[[np.ndarray], np.ndarray]]:
        assert self.timings is not None and self.statistic is not None
        return self.timings, self.statistic

    def distribution(self, n_resamples: int, seed: int) -> np.ndarray:
        if self.sample is not None:
            return resampling.distribution(self.sample, n_resamples, seed)
        timings, statistic = self._timing
        if len(timings.rounds) > 1:
            return resampling.rounds_distribution(timings.rounds, statistic, None, None, n_resamples, seed)[0]
        return resampling.independent_distribution(timings.seconds, statistic, n_resamples, seed)

    def interval(self, value: float, method: str, n_resamples: int, level: float, seed: int) -> tuple[float, float]:
        if self.sample is not None:
            return resampling.confidence_interval(self.sample, value, method, n_resamples, level, seed)
        timings, statistic = self._timing
        if len(timings.rounds) == 1:
            return resampling.independent_interval(timings.seconds, statistic, value, method, n_resamples, level, seed)
        jackknife = stats.sample_jackknife(timings.seconds, statistic) if method == "bca" else None
        return stats.interval(self.distribution(n_resamples, seed), value, level, method, jackknife)

    def pairs_with(self, other: Evidence) -> bool:
        """Timings of two models taken in the same rounds (interleaved): their rounds pair up."""
        return (
            self.timings is not None
            and other.timings is not None
            and len(self.timings.rounds) > 1
            and len(self.timings.rounds) == len(other.timings.rounds)
        )


def paired_distribution(
    base: Evidence, candidate: Evidence, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Resampled values of both models: the same examples for prediction metrics, the same rounds for
    interleaved timings, independent runs for timings taken apart."""
    if base.sample is not None and candidate.sample is not None:
        return resampling.paired_distribution(base.sample, candidate.sample, n_resamples, seed)
    if base.pairs_with(candidate):
        (tb, sb), (tc, sc) = base._timing, candidate._timing
        theta_b, theta_c = resampling.rounds_distribution(tb.rounds, sb, tc.rounds, sc, n_resamples, seed)
        assert theta_c is not None
        return theta_b, theta_c
    seeds = np.random.SeedSequence(seed).spawn(2)
    return (
        base.distribution(n_resamples, int(seeds[0].generate_state(1)[0])),
        candidate.distribution(n_resamples, int(seeds[1].generate_state(1)[0])),
    )

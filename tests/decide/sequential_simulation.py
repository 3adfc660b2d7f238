"""Simulated paired candidates for the sequential tests and bench/bench_sequential_calibration.py, and the plain
repeated percentile bootstrap that the issue requires us to show is not anytime-valid."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MET, OPEN, MISSED = 1, 0, -1


def paired_accuracy_margins(
    rng: np.random.Generator, runs: int, n: int, worse: float, better: float, degradation: float
) -> tuple[np.ndarray, np.ndarray]:
    """Margins of a max-degradation goal on paired 0/1 accuracy: ``z = c - b + degradation``, where the candidate
    is wrong and the baseline right with probability ``worse`` and the other way round with ``better``.
    The population mean of z is ``better - worse + degradation`` (0: exactly at the threshold).
    Returns (z of shape (runs, n), its three possible values)."""
    values = np.array([-1.0 + degradation, degradation, 1.0 + degradation])
    u = rng.random((runs, n))
    z = np.where(u < worse, values[0], np.where(u < worse + better, values[2], values[1]))
    return z, values


def repeated_bootstrap(
    rng: np.random.Generator,
    z: np.ndarray,
    values: np.ndarray,
    alpha: float,
    checkpoints: Sequence[int],
    resamples: int = 1000,
) -> tuple[np.ndarray, np.ndarray]:
    """At each checkpoint, a (1 - alpha) percentile-bootstrap interval for mean(z) from the examples so far; stop at
    the first that decides (lower >= 0: met, upper < 0: missed). z takes only ``values``, so a resample of t
    examples is a multinomial draw of their counts (the same distribution as resampling the rows, vectorized).
    Returns each run's state code and the examples seen then."""
    runs = z.shape[0]
    state = np.full(runs, OPEN)
    examples = np.full(runs, checkpoints[-1])
    for t in checkpoints:
        counts = np.stack([(z[:, :t] == v).sum(axis=1) for v in values], axis=1)
        draws = rng.multinomial(t, counts / t, size=(resamples, runs))
        means = draws @ values / t
        lower, upper = np.quantile(means, [alpha / 2, 1 - alpha / 2], axis=0)
        fresh = state == OPEN
        met, missed = fresh & (lower >= 0), fresh & (upper < 0)
        state[met], state[missed] = MET, MISSED
        examples[met | missed] = t
    return state, examples

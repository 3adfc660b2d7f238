"""Latency and throughput statistics: pure functions over the measured run times."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from olive_eval.strict_model import StrictModel

#: Upper bound of warm-up and timed calls: far beyond any useful sample, short of "runs forever".
MAX_RUNS = 100_000

#: Sub-type name → percentile (None for the plain statistics).
STATISTICS: dict[str, float | None] = {
    "avg": None,
    "min": None,
    "max": None,
    "p50": 50.0,
    "p75": 75.0,
    "p90": 90.0,
    "p95": 95.0,
    "p99": 99.0,
    "p999": 99.9,
}


class TimingConfig(StrictModel):
    """Olive's latency/throughput metric_config: warm-up runs, timed runs, seconds to sleep after each."""

    warmup_num: int = Field(10, ge=0, le=MAX_RUNS, description=f"Untimed calls first (at most {MAX_RUNS:,}).")
    repeat_test_num: int = Field(20, ge=1, le=MAX_RUNS, description=f"Timed calls (at most {MAX_RUNS:,}).")
    sleep_num: float = Field(0, ge=0, le=60, description="Seconds to sleep after each timed call (at most 60).")


def _statistic(values: np.ndarray, name: str) -> np.ndarray:
    """The statistic along the last axis (so bootstrap resamples ``[B, n]`` reduce in one call)."""
    if name not in STATISTICS:
        raise ValueError(f"unknown statistic '{name}'; valid: {', '.join(STATISTICS)}")
    if name == "avg":
        return np.mean(values, axis=-1)
    if name == "min":
        return np.min(values, axis=-1)
    if name == "max":
        return np.max(values, axis=-1)
    return np.percentile(values, STATISTICS[name], axis=-1)


def latency_ms(seconds: np.ndarray, name: str) -> np.ndarray | float:
    """A latency statistic in milliseconds (percentiles use numpy's linear interpolation, as Olive does).

    ``seconds`` is one sample ``[n]`` (a float comes back) or resamples ``[B, n]`` (``[B]`` back).
    """
    values = np.asarray(seconds, dtype=np.float64)
    if values.shape[-1] == 0:
        raise ValueError("no timed runs")
    out = _statistic(values, name) * 1000.0
    return float(out) if values.ndim == 1 else out


def throughput_per_s(seconds: np.ndarray, batch_size: int, name: str) -> np.ndarray | float:
    """A throughput statistic in samples per second, shaped like :func:`latency_ms`'s.

    ``avg`` is samples over total time (``batch / mean latency``), the rate a user observes. The other
    statistics are taken over the per-run rates, so ``min`` is the slowest run and ``p90`` the 90th
    percentile of rates (Olive maps ``p90`` to the latency p90, which is the 10th percentile of rates).
    """
    values = np.asarray(seconds, dtype=np.float64)
    if values.shape[-1] == 0:
        raise ValueError("no timed runs")
    out = batch_size / np.mean(values, axis=-1) if name == "avg" else _statistic(batch_size / values, name)
    return float(out) if values.ndim == 1 else out

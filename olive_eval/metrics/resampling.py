"""Bootstrap a :class:`Metric` by its kind, reusing per-example work wherever the kind allows.

* instance with mean aggregation, and map/reduce: resample per-example statistics and reduce sums
  (:func:`stats.additive_distribution`); the metric is never recomputed from the raw inputs;
* instance with another aggregation: resample the scores and aggregate each resample;
* global with per-example statistics (detection's per-image matching): reduce each resample's statistics,
  a chunk of resamples per call where the metric evaluates many at once (:class:`ResamplesAtOnce`);
* global without: recompute the metric on each resample (it costs a full evaluation each).

``ExampleStats`` bundle what a metric saw for one model, so a paired comparison can apply the
same resampled examples to a baseline and a candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from olive_eval.metrics import stats
from olive_eval.metrics.base import Kind, Metric


@runtime_checkable
class ResamplesAtOnce(Protocol):
    """A metric whose statistics do not add up, but which reduces many resamples of them in one call."""

    def reduce_resamples(self, statistics: Any, idx: np.ndarray) -> np.ndarray:
        """The metric on each row of example indices ``idx`` ``[B, n]``: ``[B]``."""
        ...


@dataclass
class ExampleStats:
    """One model's evidence for one metric: per-example statistics, or the fields a global metric reads.

    ``fields`` are the metric's :attr:`~Metric.reads` columns, whole-set; for a decomposable metric the
    statistics are computed from them when not given. Statistics are an array whose first axis is the
    examples, or any object that ``len`` and ``[idx]`` take by example (detection's per-image tables).
    """

    metric: Metric
    statistics: Any = None
    fields: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        if self.metric.decomposes and self.statistics is None:
            assert self.fields is not None
            self.statistics = self.metric.statistics(*self.fields)

    def __len__(self) -> int:
        if self.statistics is not None:
            return len(self.statistics)
        assert self.fields is not None
        return len(self.fields[0])

    @property
    def additive(self) -> bool:
        return self.metric.kind is Kind.MAP_REDUCE or (
            self.metric.kind is Kind.INSTANCE and self.metric.aggregator.is_mean
        )

    def additive_rows(self) -> np.ndarray:
        """Rows whose column sums determine the metric: the scores of a mean, else the statistics."""
        assert self.statistics is not None
        return self.statistics

    def finalizer(self, count: int) -> Callable[[np.ndarray], np.ndarray]:
        """Totals over ``count`` examples → metric values (a mean divides by the count)."""
        if self.metric.kind is Kind.INSTANCE:
            return lambda totals: np.asarray(totals, dtype=np.float64).reshape(len(totals)) / count
        return self.metric.finalize_totals

    def value_on(self, idx: np.ndarray) -> float:
        """The metric on the examples ``idx`` (a resample), from scratch."""
        if self.statistics is not None:
            return self.metric.reduce(self.statistics[idx]).value
        assert self.fields is not None
        return self.metric.compute(*(_take(f, idx) for f in self.fields)).value

    def values_on(self, idx: np.ndarray) -> np.ndarray:
        """The metric on each resample ``idx`` ``[B, n]``, in one call where the metric can."""
        if self.statistics is not None and isinstance(self.metric, ResamplesAtOnce):
            return np.asarray(self.metric.reduce_resamples(self.statistics, idx), dtype=np.float64)
        return np.array([self.value_on(row) for row in idx], dtype=np.float64)


def _take(values: Any, idx: np.ndarray) -> Any:
    return np.asarray(values)[idx] if not isinstance(values, list) else [values[i] for i in idx]


def check_resamplable(sample_size: int, n_resamples: int) -> None:
    if n_resamples < 2:
        raise ValueError(f"a bootstrap needs at least 2 resamples, got {n_resamples}")
    if sample_size < 2:
        raise ValueError(f"a bootstrap needs at least 2 examples, got {sample_size}")


def distribution(sample: ExampleStats, n_resamples: int, seed: int) -> np.ndarray:
    """The metric's value on each of ``n_resamples`` seeded bootstrap resamples."""
    check_resamplable(len(sample), n_resamples)
    if sample.additive:
        return stats.additive_distribution(sample.additive_rows(), sample.finalizer(len(sample)), n_resamples, seed)
    if sample.metric.kind is Kind.INSTANCE:
        aggregate = sample.metric.aggregator
        return stats.sample_distribution(sample.statistics, aggregate, n_resamples, seed)
    out, start = np.empty(n_resamples), 0
    for idx in stats.index_chunks(len(sample), n_resamples, seed):
        out[start : start + len(idx)] = sample.values_on(idx)
        start += len(idx)
    return out


def jackknife(sample: ExampleStats) -> stats.Jackknife:
    if sample.additive:
        return stats.additive_jackknife(sample.additive_rows(), sample.finalizer(len(sample) - 1))
    if sample.metric.kind is Kind.INSTANCE:
        return stats.sample_jackknife(np.asarray(sample.statistics, dtype=np.float64), sample.metric.aggregator)
    return stats.calls_jackknife(len(sample), sample.value_on)


def confidence_interval(
    sample: ExampleStats, value: float, method: str, n_resamples: int, level: float, seed: int
) -> tuple[float, float]:
    theta_b = distribution(sample, n_resamples, seed)
    return stats.interval(theta_b, value, level, method, jackknife(sample) if method == "bca" else None)


def paired_distribution(
    base: ExampleStats, candidate: ExampleStats, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Both models' values on the same resampled examples."""
    if len(base) != len(candidate):
        raise ValueError(f"paired samples differ in size: {len(base)} and {len(candidate)} examples")
    check_resamplable(len(base), n_resamples)
    if base.additive and candidate.additive:
        n = len(base)
        return stats.paired_additive_distribution(
            base.additive_rows(),
            candidate.additive_rows(),
            base.finalizer(n),
            candidate.finalizer(n),
            n_resamples,
            seed,
        )
    out_base, out_cand = np.empty(n_resamples), np.empty(n_resamples)
    start = 0
    for idx in stats.index_chunks(len(base), n_resamples, seed):
        out_base[start : start + len(idx)] = base.values_on(idx)
        out_cand[start : start + len(idx)] = candidate.values_on(idx)
        start += len(idx)
    return out_base, out_cand


def independent_distribution(
    values: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], n_resamples: int, seed: int
) -> np.ndarray:
    """Resamples of a sample with no pairing (e.g. one model's repeated timings)."""
    check_resamplable(len(values), n_resamples)
    return stats.sample_distribution(np.asarray(values, dtype=np.float64), statistic, n_resamples, seed)


def independent_interval(
    values: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    value: float,
    method: str,
    n_resamples: int,
    level: float,
    seed: int,
) -> tuple[float, float]:
    """The interval of ``statistic`` over an unpaired sample (e.g. one model's repeated timings)."""
    theta_b = independent_distribution(values, statistic, n_resamples, seed)
    jackknife = stats.sample_jackknife(np.asarray(values, dtype=np.float64), statistic) if method == "bca" else None
    return stats.interval(theta_b, value, level, method, jackknife)


# ---------------------------------------------------------------------------------------------- rounds
#: Resampled values held at once by a rounds bootstrap (bounds memory for long adaptive runs).
_ROUNDS_CHUNK = 1 << 22


def _padded(rounds: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rounds as one ``[R, m]`` array padded with NaN, and each round's length."""
    lengths = np.array([len(r) for r in rounds])
    out = np.full((len(rounds), int(lengths.max())), np.nan)
    for k, r in enumerate(rounds):
        out[k, : len(r)] = r
    return out, lengths


def _resample_within(
    table: np.ndarray, lengths: np.ndarray, picked: np.ndarray, rng: np.random.Generator, fill: Any
) -> np.ndarray:
    """For resampled round indices ``picked [B, R]``: each picked round's runs (or their ranks) resampled,
    ``[B, R * m]``, ``fill`` where a shorter round contributes fewer runs."""
    width = table.shape[1]
    n = lengths[picked][..., None]  # [B, R, 1]
    pos = np.minimum((rng.random((*picked.shape, width)) * n).astype(np.int64), n - 1)
    values = table[picked[..., None], pos]
    values[np.arange(width)[None, None, :] >= n] = fill
    return values.reshape(len(picked), -1)


@dataclass(frozen=True)
class _RankedRounds:
    """Rounds whose statistic is a percentile of finite values: each run's rank, padded with the rank
    ``len(ranked)``, so a resample's percentile is counted (:func:`stats.percentiles_of_ranks`), not partitioned."""

    ranks: np.ndarray  # [R, m]
    ranked: np.ndarray
    q: float
    scale: float

    @classmethod
    def of(cls, rounds: list[np.ndarray], statistic: Callable[[np.ndarray], np.ndarray]) -> _RankedRounds | None:
        form = statistic.as_percentile() if isinstance(statistic, stats.PercentileForm) else None
        if form is None:
            return None
        transform, q, scale = form
        taken = np.asarray(transform(np.concatenate(rounds).astype(np.float64)), dtype=np.float64)
        if not np.isfinite(taken).all():
            return None
        ranked, rank = stats.rank_values(taken)
        padded, _ = _padded(np.split(rank, np.cumsum([len(r) for r in rounds])[:-1]))
        return cls(np.nan_to_num(padded, nan=len(ranked)).astype(np.intp), ranked, q, scale)

    def statistic(self, ranks: np.ndarray, counts: np.ndarray) -> np.ndarray:
        return stats.percentiles_of_ranks(ranks, self.ranked, self.q, counts) * self.scale


def _resampled_statistic(
    rounds: tuple[np.ndarray, np.ndarray, _RankedRounds | None],
    statistic: Callable[[np.ndarray], np.ndarray],
    picked: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """The statistic of each resample of rounds ``picked [B, R]``, its runs resampled within each round."""
    padded, lengths, ranked = rounds
    if ranked is None:
        return statistic(_resample_within(padded, lengths, picked, rng, np.nan))
    ranks = _resample_within(ranked.ranks, lengths, picked, rng, len(ranked.ranked))
    return ranked.statistic(ranks, lengths[picked].sum(axis=1))


def rounds_distribution(
    rounds_a: list[np.ndarray],
    statistic_a: Callable[[np.ndarray], np.ndarray],
    rounds_b: list[np.ndarray] | None,
    statistic_b: Callable[[np.ndarray], np.ndarray] | None,
    n_resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray | None]:
    """A two-level bootstrap of timings taken in rounds: rounds first, then the runs within each round.

    With ``rounds_b`` (another model timed in the same rounds) both models get the same resampled rounds,
    so the drift of the machine between rounds cancels out of their comparison (a paired bootstrap).
    """
    check_resamplable(len(rounds_a), n_resamples)
    rng = np.random.default_rng(seed)
    model_a = (*_padded(rounds_a), _RankedRounds.of(rounds_a, statistic_a))
    model_b = None
    if rounds_b is not None:
        model_b = (*_padded(rounds_b), _RankedRounds.of(rounds_b, statistic_b) if statistic_b else None)
    per_resample = model_a[0].size + (model_b[0].size if model_b is not None else 0)
    step = max(1, _ROUNDS_CHUNK // max(per_resample, 1))
    out_a = np.empty(n_resamples)
    out_b = np.empty(n_resamples) if model_b is not None else None
    for start in range(0, n_resamples, step):
        count = min(step, n_resamples - start)
        picked = rng.integers(0, len(rounds_a), size=(count, len(rounds_a)))
        out_a[start : start + count] = _resampled_statistic(model_a, statistic_a, picked, rng)
        if out_b is not None and model_b is not None and statistic_b is not None:
            out_b[start : start + count] = _resampled_statistic(model_b, statistic_b, picked, rng)
    return out_a, out_b

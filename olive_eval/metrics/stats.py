"""Seeded bootstrap: resampled metric values, confidence intervals, paired comparisons. Pure numpy.

Two ways to draw the same bootstrap distribution:

* **indices** -- ``rng.integers(0, n, (rows, n))`` per chunk, the draws ``scipy.stats.bootstrap`` makes
  with the same seed, so results match scipy exactly. The next chunk is drawn in a second thread
  while this one is gathered (numpy releases the GIL for both).
* **counts** -- when the statistic depends only on sums of per-example rows (a mean, or a map/reduce
  metric's sufficient statistics) and many rows repeat (0/1 accuracy, tp/fp/fn one-hots), a resample
  is a multinomial draw over the distinct rows: O(distinct rows) per resample instead of O(n). It is the
  same distribution, drawn differently.

Every function takes a ``seed`` and makes its own generator, so results never depend on call order.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal, Protocol, get_args, runtime_checkable

import numpy as np

from olive_eval.metrics.row_groups import coded_groups, unique_rows

Method = Literal["percentile", "basic", "bca"]
METHODS: tuple[str, ...] = get_args(Method)

#: Elements drawn per index chunk (rows x n); bounds memory at about 80 MB of int64 per chunk.
CHUNK_ELEMENTS = 10_000_000
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Jackknife:
    """Leave-one-out values of the statistic; ``weights[k]`` examples share the value ``values[k]``."""

    values: np.ndarray
    weights: np.ndarray


def index_chunks(n: int, n_resamples: int, seed: int, width: int = 1) -> Iterator[np.ndarray]:
    """Bootstrap index matrices ``[rows, n]``, in order, identical to scipy's draws for the same seed.

    ``width`` is how many values each index gathers, so a chunk's gathered data stays bounded too.
    """
    rng = np.random.default_rng(seed)
    rows = max(1, min(n_resamples, CHUNK_ELEMENTS // max(n * width, 1)))
    sizes = [min(rows, n_resamples - start) for start in range(0, n_resamples, rows)]
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(rng.integers, 0, n, (sizes[0], n))
        for k in range(len(sizes)):
            chunk = pending.result()
            if k + 1 < len(sizes):
                pending = pool.submit(rng.integers, 0, n, (sizes[k + 1], n))
            yield chunk


class LastGrouping:
    """:func:`unique_rows` of the last statistics array asked about, by identity: the sub-types that share one
    chunk's statistics (accuracy, F1 and precision of one metric) group its rows once, not once each. A
    statistics array is never changed in place once made; the last one is held weakly, with its groups, in one
    attribute (a thread reads a consistent pair). The producer of an array may tell its rows' codes first
    (:meth:`remember`): the array is then grouped by them (:func:`coded_groups`, the same groups)."""

    def __init__(self) -> None:
        self._last: tuple[weakref.ReferenceType[np.ndarray], np.ndarray, np.ndarray] | None = None
        self._coded: tuple[weakref.ReferenceType[np.ndarray], np.ndarray] | None = None

    def remember(self, statistics: np.ndarray, codes: np.ndarray) -> None:
        """``codes`` (non-negative integers, one per row) are equal exactly where the rows of ``statistics`` are."""
        self._coded = (weakref.ref(statistics), codes)

    def __call__(self, statistics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(distinct rows, each row's index into them) of ``statistics`` viewed as ``[n, -1]``."""
        last, coded = self._last, self._coded
        if last is not None and last[0]() is statistics:
            return last[1], last[2]
        rows = statistics.reshape(len(statistics), -1)
        if coded is not None and coded[0]() is statistics:
            unique, inverse, _ = coded_groups(rows, coded[1])
        else:
            unique, inverse, _ = unique_rows(rows)
        self._last = (weakref.ref(statistics), unique, inverse)
        return unique, inverse


class LastSums:
    """The int64 sums over the examples (axis 0) of the last statistics array asked about, by identity: the
    sub-types that finish on one joined array (accuracy, F1 and precision of one metric) sum it once. As for
    :class:`LastGrouping`, a statistics array is never changed in place once made; the last one is held weakly."""

    def __init__(self) -> None:
        self._last: tuple[weakref.ReferenceType[np.ndarray], np.ndarray] | None = None

    def __call__(self, statistics: np.ndarray) -> np.ndarray:
        last = self._last
        if last is not None and last[0]() is statistics:
            return last[1]
        totals = statistics.sum(axis=0, dtype=np.int64)
        self._last = (weakref.ref(statistics), totals)
        return totals


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(distinct rows, how many of each) when at most half the rows are distinct, else None."""
    unique, _, counts = unique_rows(rows)
    return (unique, counts) if len(unique) * 2 <= len(rows) else None


def additive_distribution(
    stats: np.ndarray, finalize: Callable[[np.ndarray], np.ndarray], n_resamples: int, seed: int
) -> np.ndarray:
    """Bootstrap values of ``finalize(sum of resampled rows)``; ``finalize`` maps ``[B, *S]`` totals to ``[B]``."""
    n = len(stats)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    rows = stats.reshape(n, -1)
    distinct = _distinct_rows(rows)
    rows = rows.astype(np.float64, copy=False)
    if distinct is not None:
        unique, counts = distinct
        draws = np.random.default_rng(seed).multinomial(n, counts / n, size=n_resamples)
        totals = draws @ unique.astype(np.float64)
    else:
        width = rows.shape[1]
        columns = [np.ascontiguousarray(rows[:, j]) for j in range(width)]
        totals = np.empty((n_resamples, width))
        start = 0
        for idx in index_chunks(n, n_resamples, seed, width):
            for j, column in enumerate(columns):  # 1-D takes from contiguous columns: the fast gather
                totals[start : start + len(idx), j] = column.take(idx).sum(axis=1)
            start += len(idx)
    return np.asarray(finalize(totals.reshape(n_resamples, *stats.shape[1:])), dtype=np.float64)


def additive_jackknife(stats: np.ndarray, finalize: Callable[[np.ndarray], np.ndarray]) -> Jackknife:
    """Leave-one-out values of an additive statistic, computed once per distinct row."""
    n = len(stats)
    rows = stats.reshape(n, -1)
    unique, _, counts = unique_rows(rows)
    unique = unique.astype(np.float64)
    left_out = rows.astype(np.float64).sum(axis=0)[None, :] - unique
    values = np.asarray(finalize(left_out.reshape(len(unique), *stats.shape[1:])), dtype=np.float64)
    return Jackknife(values, counts.astype(np.float64))


def paired_additive_distribution(
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    finalize_a: Callable[[np.ndarray], np.ndarray],
    finalize_b: Callable[[np.ndarray], np.ndarray],
    n_resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The same resamples of examples applied to two models' statistics (a paired bootstrap)."""
    n = len(stats_a)
    if len(stats_b) != n:
        raise ValueError(f"paired samples differ in length: {n} and {len(stats_b)}")
    a, b = stats_a.reshape(n, -1), stats_b.reshape(n, -1)
    joint = np.concatenate([a, b], axis=1).astype(np.float64, copy=False)
    totals = additive_distribution(joint, lambda t: t, n_resamples, seed)
    width = a.shape[1]
    theta_a = finalize_a(totals[:, :width].reshape(n_resamples, *stats_a.shape[1:]))
    theta_b = finalize_b(totals[:, width:].reshape(n_resamples, *stats_b.shape[1:]))
    return np.asarray(theta_a, dtype=np.float64), np.asarray(theta_b, dtype=np.float64)


def sample_distribution(
    values: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], n_resamples: int, seed: int
) -> np.ndarray:
    """Bootstrap values of ``statistic`` over resamples of ``values``; ``statistic`` reduces axis -1 of ``[B, n]``."""
    values = np.asarray(values)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    form = statistic.as_percentile() if isinstance(statistic, PercentileForm) and values.ndim == 1 else None
    if form is not None and len(values):
        transform, q, scale = form
        taken = np.asarray(transform(values.astype(np.float64)), dtype=np.float64)
        if np.isfinite(taken).all():
            return resampled_percentiles(taken, q, n_resamples, seed) * scale
    out = np.empty(n_resamples)
    start = 0
    for idx in index_chunks(len(values), n_resamples, seed):
        out[start : start + len(idx)] = statistic(values.take(idx))
        start += len(idx)
    return out


#: Resamples counted at a time by :func:`resampled_percentiles` (a block of 1000 runs each is about 1 MB).
_BLOCK_ROWS = 128


@runtime_checkable
class PercentileForm(Protocol):
    """A statistic that can say it is ``scale * np.percentile(transform(values), q)``: resampled by
    :func:`resampled_percentiles`, without gathering or partitioning the resampled values."""

    def as_percentile(self) -> tuple[Callable[[np.ndarray], np.ndarray], float, float] | None: ...


def resampled_percentiles(values: np.ndarray, q: float, n_resamples: int, seed: int) -> np.ndarray:
    """``np.percentile(values[idx], q, axis=-1)`` (linear interpolation) over the index rows of
    :func:`index_chunks`, exactly, for finite ``values``."""
    ranked, rank = rank_values(values)
    return np.concatenate(
        [
            percentiles_of_ranks(rank.take(idx), ranked, q, len(values))
            for idx in index_chunks(len(values), n_resamples, seed)
        ]
    )


def rank_values(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the values sorted, each value's distinct rank in them): the input of :func:`percentiles_of_ranks`."""
    order = np.argsort(values, kind="stable")
    rank = np.empty(len(values), dtype=np.intp)
    rank[order] = np.arange(len(values))
    return values[order], rank


def percentiles_of_ranks(ranks: np.ndarray, ranked: np.ndarray, q: float, counts: int | np.ndarray) -> np.ndarray:
    """``np.percentile(ranked[row], q)`` (linear interpolation) for each row of ``ranks [B, w]``, exactly, for
    finite ``ranked``; rank ``len(ranked)`` is padding, and ``counts`` (one, or one per row) the valid ranks.

    A resample's percentile reads two of its order statistics. Counting each value's rank per resample and
    cumulating the counts gives them in a few linear passes over ``[B, n]`` small integers, where gathering
    the resampled values and partitioning each row took four times longer (the latency ratio's bootstrap,
    1000 runs x 2000 resamples per model).
    """
    n = len(ranked)
    virtual = (np.asarray(counts) - 1) * np.true_divide(q, 100)  # numpy's virtual index for 'linear'
    below = np.where(virtual < counts - 1, np.floor(virtual), counts - 1).astype(np.intp)
    above = np.minimum(below + 1, counts - 1)
    gamma = virtual - below
    out = np.empty(len(ranks))
    for first in range(0, len(ranks), _BLOCK_ROWS):  # blocks that stay in the CPU's cache
        block = ranks[first : first + _BLOCK_ROWS]
        rows = len(block)
        part = slice(first, first + rows)
        flat = (block + (np.arange(rows) * (n + 1))[:, None]).ravel()  # a bin per rank, one more for padding
        cumulative = np.bincount(flat, minlength=rows * (n + 1)).reshape(rows, n + 1)[:, :n].cumsum(axis=1)
        # the k-th smallest: how many ranks hold k or fewer
        low = ranked[(cumulative <= (below if below.ndim == 0 else below[part, None])).sum(axis=1)]
        high = ranked[(cumulative <= (above if above.ndim == 0 else above[part, None])).sum(axis=1)]
        t = gamma if gamma.ndim == 0 else gamma[part]
        diff = high - low
        out[part] = np.where(t >= 0.5, high - diff * (1 - t), low + diff * t)  # numpy's _lerp, term for term
    return out


def sample_jackknife(values: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray]) -> Jackknife:
    """Leave-one-out values of a statistic over ``values``, in blocks of left-out examples."""
    values = np.asarray(values)
    n = len(values)
    result = np.empty(n)
    block = max(1, CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, n, block):
        left = np.arange(start, min(start + block, n))
        idx = np.arange(n - 1)[None, :] + (np.arange(n - 1)[None, :] >= left[:, None])
        result[start : start + len(left)] = statistic(values.take(idx))
    return Jackknife(result, np.ones(n))


def resampled_calls(n: int, compute: Callable[[np.ndarray], float], n_resamples: int, seed: int) -> np.ndarray:
    """Bootstrap values of a metric that must be recomputed from scratch on each resample (global metrics)."""
    out = np.empty(n_resamples)
    start = 0
    for idx in index_chunks(n, n_resamples, seed):
        for row in idx:
            out[start] = compute(row)
            start += 1
    return out


def calls_jackknife(n: int, compute: Callable[[np.ndarray], float]) -> Jackknife:
    everything = np.arange(n)
    values = np.array([compute(np.delete(everything, i)) for i in range(n)])
    return Jackknife(values, np.ones(n))


def _percentile_of_score(theta_b: np.ndarray, theta_hat: float) -> float:
    return float(((theta_b < theta_hat).sum() + (theta_b <= theta_hat).sum()) / (2 * len(theta_b)))


def _acceleration(jackknife: Jackknife) -> float:
    w, v = jackknife.weights, jackknife.values
    mean = np.sum(w * v) / np.sum(w)
    d = mean - v
    denominator = 6.0 * np.sum(w * d**2) ** 1.5
    return float(np.sum(w * d**3) / denominator) if denominator > 0 else 0.0


def interval(
    theta_b: np.ndarray,
    theta_hat: float,
    level: float,
    method: str,
    jackknife: Jackknife | None = None,
) -> tuple[float, float]:
    """A two-sided interval at ``level`` from bootstrap values (scipy's definitions of the three methods)."""
    theta_b = np.asarray(theta_b, dtype=np.float64)
    theta_b = theta_b[np.isfinite(theta_b)]
    if len(theta_b) == 0:
        return float("nan"), float("nan")
    alpha = (1 - level) / 2
    if method == "percentile":
        low, high = np.percentile(theta_b, [alpha * 100, (1 - alpha) * 100])
        return float(low), float(high)
    if method == "basic":
        low, high = np.percentile(theta_b, [alpha * 100, (1 - alpha) * 100])
        return float(2 * theta_hat - high), float(2 * theta_hat - low)
    if method == "bca":
        if jackknife is None:
            raise ValueError("the bca method needs jackknife values")
        if np.all(theta_b == theta_b[0]):  # every resample agrees: no spread to correct
            return float(theta_b[0]), float(theta_b[0])
        p = _percentile_of_score(theta_b, theta_hat)
        if p <= 0.0 or p >= 1.0:  # theta_hat outside the bootstrap values: the bias correction is infinite
            low, high = np.percentile(theta_b, [alpha * 100, (1 - alpha) * 100])
            return float(low), float(high)
        z0 = _NORMAL.inv_cdf(p)
        a = _acceleration(jackknife)
        bounds = []
        for q in (alpha, 1 - alpha):
            z = _NORMAL.inv_cdf(q)
            bounds.append(_NORMAL.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))) * 100)
        low, high = np.percentile(theta_b, bounds)
        return float(low), float(high)
    raise ValueError(f"unknown interval method '{method}'; valid: {', '.join(METHODS)}")

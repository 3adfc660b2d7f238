"""The two-level rounds bootstrap counts a percentile's order statistics from ranks instead of gathering and
partitioning the resampled runs; its values equal the gathered implementation's (kept here), bit for bit."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from olive_eval.metrics.performance import RUN_STATISTICS, RunStatistic
from olive_eval.metrics.resampling import rounds_distribution


def _padded(rounds: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.array([len(r) for r in rounds])
    out = np.full((len(rounds), int(lengths.max())), np.nan)
    for k, r in enumerate(rounds):
        out[k, : len(r)] = r
    return out, lengths


def _within(padded: np.ndarray, lengths: np.ndarray, picked: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    width = padded.shape[1]
    n = lengths[picked][..., None]
    pos = np.minimum((rng.random((*picked.shape, width)) * n).astype(np.int64), n - 1)
    values = padded[picked[..., None], pos]
    values[np.arange(width)[None, None, :] >= n] = np.nan
    return values.reshape(len(picked), -1)


def reference(
    rounds_a: list[np.ndarray],
    statistic_a: Callable[[np.ndarray], np.ndarray],
    rounds_b: list[np.ndarray] | None,
    statistic_b: Callable[[np.ndarray], np.ndarray] | None,
    n_resamples: int,
    seed: int,
    chunk: int = 1 << 22,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The implementation before rank counting: the resampled runs gathered, NaN-padded, then the statistic."""
    rng = np.random.default_rng(seed)
    padded_a, len_a = _padded(rounds_a)
    padded_b, len_b = _padded(rounds_b) if rounds_b is not None else (None, None)
    step = max(1, chunk // max(padded_a.size + (padded_b.size if padded_b is not None else 0), 1))
    out_a = np.empty(n_resamples)
    out_b = np.empty(n_resamples) if rounds_b is not None else None
    for start in range(0, n_resamples, step):
        count = min(step, n_resamples - start)
        picked = rng.integers(0, len(rounds_a), size=(count, len(rounds_a)))
        out_a[start : start + count] = statistic_a(_within(padded_a, len_a, picked, rng))
        if out_b is not None and padded_b is not None and statistic_b is not None:
            out_b[start : start + count] = statistic_b(_within(padded_b, len_b, picked, rng))
    return out_a, out_b


def random_rounds(seed: int, runs: tuple[int, int], count: int = 7, ties: bool = False) -> list[np.ndarray]:
    """``count`` rounds of ``runs[0]`` to ``runs[1]`` runs each (unequal lengths: NaN padding)."""
    rng = np.random.default_rng(seed)
    rounds = [rng.lognormal(-7, 0.5, int(rng.integers(runs[0], runs[1] + 1))) for _ in range(count)]
    return [np.round(r, 4) if ties else r for r in rounds]


CASES = {
    "unequal rounds": dict(runs=(5, 40)),
    "equal rounds": dict(runs=(20, 20)),
    "ties": dict(runs=(3, 30), ties=True),
    "one run per round": dict(runs=(1, 1)),
    "one or two runs per round": dict(runs=(1, 2)),
    "two rounds": dict(runs=(1, 9), count=2),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", [0, 1, 17])
@pytest.mark.parametrize("name", RUN_STATISTICS)
@pytest.mark.parametrize("batch_size", [None, 4])
def test_paired_rounds_bootstrap_equals_the_gathered_implementation(case, seed, name, batch_size):
    rounds_a = random_rounds(seed, **CASES[case])
    rounds_b = random_rounds(seed + 100, **CASES[case])
    rounds_b = rounds_b[: len(rounds_a)]
    statistic = RunStatistic(name, batch_size)
    got = rounds_distribution(rounds_a, statistic, rounds_b, statistic, 300, seed)
    expected = reference(rounds_a, statistic, rounds_b, statistic, 300, seed)
    assert np.array_equal(got[0], expected[0], equal_nan=True)
    assert np.array_equal(got[1], expected[1], equal_nan=True)


@pytest.mark.parametrize("seed", [0, 5])
def test_a_percentile_and_another_statistic_share_the_resampled_rounds(seed):
    """The two models draw from one generator: the counting path must draw what the gathered one drew."""
    rounds_a, rounds_b = random_rounds(seed, (2, 12)), random_rounds(seed + 1, (2, 12))
    p90, avg = RunStatistic("p90"), RunStatistic("avg", 8)
    got = rounds_distribution(rounds_a, p90, rounds_b, avg, 500, seed)
    expected = reference(rounds_a, p90, rounds_b, avg, 500, seed)
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
    got_alone, _ = rounds_distribution(rounds_a, avg, None, None, 500, seed)
    assert np.array_equal(got_alone, reference(rounds_a, avg, None, None, 500, seed)[0])


@pytest.mark.parametrize("bad", [np.inf, 0.0, np.nan])
def test_rounds_with_non_finite_values_take_the_gathered_path(bad):
    rounds = random_rounds(3, (4, 10))
    rounds[2][1] = bad  # an infinite latency, a zero latency (an infinite rate), a NaN run
    for statistic in (RunStatistic("p50"), RunStatistic("p99", 2)):
        with np.errstate(divide="ignore", invalid="ignore"):
            got = rounds_distribution(rounds, statistic, rounds, statistic, 200, 4)
            expected = reference(rounds, statistic, rounds, statistic, 200, 4)
        assert np.array_equal(got[0], expected[0], equal_nan=True)
        assert np.array_equal(got[1], expected[1], equal_nan=True)


def test_resamples_are_chunked_the_same_way_as_before(monkeypatch):
    """A long run is bootstrapped in chunks of resamples; the draws, and so the values, do not change."""
    monkeypatch.setattr("olive_eval.metrics.resampling._ROUNDS_CHUNK", 500)
    rounds = random_rounds(9, (10, 30))
    statistic = RunStatistic("p95")
    got, _ = rounds_distribution(rounds, statistic, None, None, 100, 2)
    assert np.array_equal(got, reference(rounds, statistic, None, None, 100, 2, chunk=500)[0])

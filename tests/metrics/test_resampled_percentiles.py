"""The bootstrap of a latency or throughput percentile reads order statistics from rank counts instead of
gathering and partitioning the resampled runs; its values equal the gathered path's, bit for bit."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from olive_eval.metrics.performance import PERCENTILES, RUN_STATISTICS, RunStatistic, run_statistic
from olive_eval.metrics.stats import index_chunks, resampled_percentiles, sample_distribution


def gathered(values: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], n_resamples: int, seed: int):
    """The reference: each resample's values gathered, then the statistic over the rows."""
    return np.concatenate(
        [np.atleast_1d(statistic(values.take(idx))) for idx in index_chunks(len(values), n_resamples, seed)]
    )


SAMPLES = {
    "lognormal": np.random.default_rng(1).lognormal(-7, 0.5, 1000),
    "ties": np.round(np.random.default_rng(2).lognormal(-7, 0.5, 501), 5),  # many equal runs
    "two runs": np.array([0.002, 0.001]),
    "one run": np.array([0.0015]),
    "constant": np.full(17, 0.001),
}


@pytest.mark.parametrize("sample", SAMPLES)
@pytest.mark.parametrize("q", [0.0, 1.0, 33.3, 50.0, 75.0, 90.0, 99.0, 99.9, 100.0])
def test_resampled_percentiles_equal_numpy_on_the_gathered_resamples(sample, q):
    values = SAMPLES[sample]
    expected = gathered(values, lambda rows: np.percentile(rows, q, axis=-1), 300, 7)
    assert np.array_equal(resampled_percentiles(values, q, 300, 7), expected)


@pytest.mark.parametrize("name", RUN_STATISTICS)
@pytest.mark.parametrize("batch_size", [None, 8])
def test_every_timing_statistic_resamples_to_the_same_values_as_before(name, batch_size):
    """Percentiles take the counting path, the other statistics the gathered one; both equal the reference."""
    statistic = RunStatistic(name, batch_size)
    values = SAMPLES["lognormal"]
    assert (statistic.as_percentile() is not None) == (name in PERCENTILES)
    assert np.array_equal(sample_distribution(values, statistic, 2000, 3), gathered(values, statistic, 2000, 3))


def test_a_percentile_of_runs_that_are_not_all_finite_takes_the_gathered_path():
    values = SAMPLES["lognormal"].copy()
    values[3] = np.inf
    statistic = RunStatistic("p50")
    assert np.array_equal(sample_distribution(values, statistic, 200, 0), gathered(values, statistic, 200, 0))
    throughput = RunStatistic("p90", 4)
    values[3] = 0.0  # a rate of inf
    with np.errstate(divide="ignore"):
        assert np.array_equal(sample_distribution(values, throughput, 200, 0), gathered(values, throughput, 200, 0))


def test_a_run_statistic_is_the_latency_or_throughput_function():
    s = SAMPLES["lognormal"]
    assert RunStatistic("p90")(s) == np.percentile(s, 90) * 1000
    assert RunStatistic("p90", 8)(s) == np.percentile(8 / s, 90)
    assert RunStatistic("avg", 8)(s) == 8 / np.mean(s)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", list(PERCENTILES))
def test_a_nan_padded_percentile_is_numpys_nanpercentile_value_for_value(seed, name):
    """Rows padded with NaN (runs of different counts, a bootstrap over batches): ``run_statistic`` groups the rows
    by their counts; the reference is numpy's own row-by-row ``nanpercentile``. Ties, zeros, infinities and rows of
    NaN only included; 1-D and 3-D shapes too."""
    rng = np.random.default_rng(seed)
    rows = np.round(rng.lognormal(-7, 0.5, (40, 12)), 4 if seed % 2 else 9)
    rows[rng.random(rows.shape) < 0.3] = np.nan
    rows[3] = np.nan  # NaN only
    rows[5, :4] = [0.0, np.inf, np.inf, 0.0]
    rows[7] = 0.001  # one value throughout
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning, match="All-NaN"):
        expected = np.nanpercentile(rows, PERCENTILES[name], axis=-1)
    assert np.array_equal(run_statistic(rows, name), expected, equal_nan=True)
    assert np.array_equal(run_statistic(rows.reshape(4, 10, 12), name), expected.reshape(4, 10), equal_nan=True)
    one = rows[0] if not np.isnan(rows[0]).all() else rows[1]
    assert run_statistic(one, name) == np.nanpercentile(one, PERCENTILES[name])

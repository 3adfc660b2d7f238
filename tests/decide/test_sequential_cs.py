"""Confidence sequences: equal to the paper's formulas, conservative against exact bisection, and covering the true
mean at every step in >= 1 - alpha of simulated runs (binomial tolerance), both methods."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from olive_eval.decide.sequential.confidence_sequence import excludes, mean_confidence_sequence
from tests.decide.sequential_reference import exact_betting, loop_bernstein

METHODS = ("betting", "empirical_bernstein")


def allowed_misses(runs: int, alpha: float) -> int:
    """The most misses a valid (1 - alpha) sequence shows in ``runs`` runs, but for a 1e-4 chance."""
    return int(stats.binom.ppf(1 - 1e-4, runs, alpha))


def test_empirical_bernstein_equals_the_theorem_step_by_step():
    rng = np.random.default_rng(3)
    for low, high, n in [(0.0, 1.0, 300), (-2.0, 5.0, 200), (3.0, 4.0, 1)]:
        z = rng.uniform(low, high, n)
        lower, upper = mean_confidence_sequence(z, low, high, 0.05, "empirical_bernstein")
        ref_lower, ref_upper = loop_bernstein((z - low) / (high - low), 0.05)
        np.testing.assert_allclose(lower, low + ref_lower * (high - low), rtol=0, atol=1e-12)
        np.testing.assert_allclose(upper, low + ref_upper * (high - low), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_betting_grid_never_tighter_than_exact_and_close(seed):
    rng = np.random.default_rng(seed)
    x = rng.beta(2, 5, 300) if seed else rng.binomial(1, 0.8, 300).astype(float)
    lower, upper = mean_confidence_sequence(x, 0.0, 1.0, 0.05)
    ref_lower, ref_upper = exact_betting(x, 0.05)
    assert np.all(lower <= ref_lower + 1e-9) and np.all(upper >= ref_upper - 1e-9)
    assert np.max(ref_lower - lower) < 1e-4 and np.max(upper - ref_upper) < 1e-4


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("p", [0.03, 0.5, 0.9])
def test_covers_a_bernoulli_mean_at_every_step(method, p):
    runs, alpha = 400, 0.1
    z = np.random.default_rng(int(p * 100)).binomial(1, p, (runs, 1000)).astype(float)
    above, below = excludes(z, 0.0, 1.0, alpha, p, method)  # lower >= p (counted as a miss) or upper < p
    misses = int(np.count_nonzero(above[:, -1] | below[:, -1]))
    assert misses <= allowed_misses(runs, alpha)


@pytest.mark.parametrize("method", METHODS)
def test_covers_a_bounded_mean_on_the_grid_at_every_step(method):
    runs, alpha, low, high = 150, 0.1, -3.0, 5.0
    rng = np.random.default_rng(11)
    mean = low + (high - low) * 2 / 7  # Beta(2, 5) scaled to [low, high]
    misses = 0
    for _ in range(runs):
        z = low + (high - low) * rng.beta(2, 5, 400)
        lower, upper = mean_confidence_sequence(z, low, high, alpha, method)
        misses += bool(np.any((lower > mean) | (upper < mean)))
    assert misses <= allowed_misses(runs, alpha)


def test_a_fixed_sample_interval_at_every_step_fails_the_same_check():
    """The coverage check can fail: a 90% normal interval recomputed at every step misses far more often."""
    runs, alpha, p = 400, 0.1, 0.5
    z = np.random.default_rng(5).binomial(1, p, (runs, 1000)).astype(float)
    t = np.arange(1, 1001)
    mean = np.cumsum(z, axis=1) / t
    half = stats.norm.ppf(1 - alpha / 2) * np.sqrt(np.maximum(mean * (1 - mean), 1e-12) / t)
    misses = int(np.count_nonzero(np.any(np.abs(mean - p) > half, axis=1)))
    assert misses > allowed_misses(runs, alpha)


@pytest.mark.parametrize("method", METHODS)
def test_bounds_are_monotone_within_the_range_and_shrink(method):
    z = np.random.default_rng(8).uniform(-1.0, 2.0, 2000)
    lower, upper = mean_confidence_sequence(z, -1.0, 2.0, 0.05, method)
    assert np.all(np.diff(lower) >= 0) and np.all(np.diff(upper) <= 0)
    assert np.all(lower >= -1.0) and np.all(upper <= 2.0) and np.all(lower <= upper)
    assert upper[-1] - lower[-1] < 0.2 * (upper[99] - lower[99]) + 0.1


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("value", [0.25, -1.0, 2.0])
def test_constant_data_keep_their_value_and_close_in(method, value):
    z = np.full(3000, value)
    lower, upper = mean_confidence_sequence(z, -1.0, 2.0, 0.05, method)
    assert np.all(lower <= value) and np.all(upper >= value)
    assert upper[-1] - lower[-1] < 0.1 * 3.0


@pytest.mark.parametrize("method", METHODS)
def test_one_observation_says_nothing_yet(method):
    lower, upper = mean_confidence_sequence(np.array([0.7]), 0.0, 1.0, 0.05, method)
    assert lower.tolist() == [0.0] and upper.tolist() == [1.0]


def test_smaller_alpha_gives_wider_bounds():
    z = np.random.default_rng(2).binomial(1, 0.4, 1000).astype(float)
    for method in METHODS:
        wide = mean_confidence_sequence(z, 0, 1, 0.01, method)
        narrow = mean_confidence_sequence(z, 0, 1, 0.2, method)
        assert np.all(wide[0] <= narrow[0]) and np.all(wide[1] >= narrow[1])
        assert wide[1][-1] - wide[0][-1] > narrow[1][-1] - narrow[0][-1]


def test_points_on_the_grid_agree_with_the_exact_test():
    rng = np.random.default_rng(4)
    z = rng.uniform(-1, 1, 1500) + 0.1
    z = np.clip(z, -1, 1)
    for value in rng.uniform(0.0, 0.2, 6):
        lower, upper = mean_confidence_sequence(z, -1.0, 1.0, 0.05, points=[value])
        above, below = excludes(z, -1.0, 1.0, 0.05, value)
        np.testing.assert_array_equal(lower >= value, above)
        np.testing.assert_array_equal(upper < value, below)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_alpha_outside_zero_one_is_refused(alpha):
    with pytest.raises(ValueError, match=r"^alpha must be in \(0, 1\), got"):
        mean_confidence_sequence(np.ones(3), 0.0, 1.0, alpha)


@pytest.mark.parametrize(("low", "high"), [(1.0, 1.0), (2.0, 1.0), (0.0, float("inf"))])
def test_bounds_that_are_not_an_interval_are_refused(low, high):
    with pytest.raises(ValueError, match=r"^the bounds need low < high \(both finite\), got low="):
        mean_confidence_sequence(np.ones(3), low, high, 0.05)


def test_bad_observations_are_refused():
    with pytest.raises(ValueError, match=r"^2 observation\(s\) outside \[0.0, 1.0\], e.g. 1.5$"):
        mean_confidence_sequence(np.array([0.5, 1.5, -1.0]), 0.0, 1.0, 0.05)
    with pytest.raises(ValueError, match=r"^a confidence sequence needs at least one observation$"):
        mean_confidence_sequence(np.array([]), 0.0, 1.0, 0.05)
    with pytest.raises(ValueError, match=r"^the observations must be finite$"):
        mean_confidence_sequence(np.array([0.5, np.nan]), 0.0, 1.0, 0.05)
    with pytest.raises(ValueError, match=r"^unknown confidence sequence method 'hoeffding'; expected one of betting"):
        mean_confidence_sequence(np.ones(2), 0.0, 1.0, 0.05, "hoeffding")
    with pytest.raises(ValueError, match=r"^mean_confidence_sequence takes one sequence, got shape \(2, 2\)$"):
        mean_confidence_sequence(np.ones((2, 2)), 0.0, 1.0, 0.05)


def test_excludes_rows_are_independent_sequences():
    z = np.random.default_rng(6).binomial(1, 0.7, (300, 1200)).astype(float)
    for method in METHODS:
        above, below = excludes(z, 0.0, 1.0, 0.05, 0.5, method)  # blocks of rows
        row_above, row_below = excludes(z[17], 0.0, 1.0, 0.05, 0.5, method)
        np.testing.assert_array_equal(above[17], row_above)
        np.testing.assert_array_equal(below[17], row_below)
        lower, upper = mean_confidence_sequence(z[17], 0.0, 1.0, 0.05, method, points=[0.5])
        np.testing.assert_array_equal(lower >= 0.5, row_above)
        np.testing.assert_array_equal(upper < 0.5, row_below)

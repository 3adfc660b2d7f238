"""The rank and moment kernels: the C extension and the numpy forms equal each other and scipy, on random data,
heavy ties, values equal but for their low bits, signed zeros, infinities and tiny sizes; the numpy inversion count
equals a brute-force count."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.stats

from olive_eval.metrics.regression.moments import centred_moments, pearson, pearson_rows, r2, r2_rows
from olive_eval.metrics.regression.native import moments_extension, ranks_extension
from olive_eval.metrics.regression.ranks import average_ranks, inversions, kendall_counts, kendall_tau_b, spearman


def test_the_c_extensions_are_built():
    """The dev install compiles them; without a compiler the numpy forms run (tested equal below)."""
    assert ranks_extension is not None and moments_extension is not None


def samples(seed: int, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=n), rng.normal(size=n)
    return [
        (x, x + y),  # continuous, no ties
        (np.round(x * 2), np.round(y)),  # heavy ties in both
        (rng.integers(0, 3, n) * 1.0, y),  # a few groups of ties, large for large n
        (1.0 + rng.integers(0, 4, n) * 2.0**-50, y.round(1)),  # equal but for the lowest mantissa bits
        (rng.integers(-2, 3, n) * 0.0, rng.choice([-np.inf, 0.0, np.inf, 1.0], n)),  # -0.0 == 0.0, infinities
        (np.arange(n, dtype=float)[::-1].copy(), np.arange(n, dtype=float)),  # every pair discordant
    ]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8, 33, 1000, 70_000])
def test_average_ranks_equal_scipy_in_both_forms(n):
    for x, y in samples(n, n):
        for values in (x, y):
            expected = scipy.stats.rankdata(values)
            np.testing.assert_array_equal(average_ranks(values), expected)
            np.testing.assert_array_equal(average_ranks(values, use_compiled=False), expected)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8, 33, 1000, 70_000])
def test_kendall_counts_are_the_same_in_both_forms_and_tau_equals_scipy(n):
    for x, y in samples(n + 1, n):
        for a, b in ((x, y), (y, x)):
            counts = kendall_counts(a, b)
            assert counts == kendall_counts(a, b, use_compiled=False)
            if n >= 2:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # constant samples
                    expected = scipy.stats.kendalltau(a, b).statistic
                np.testing.assert_allclose(kendall_tau_b(a, b), expected, rtol=1e-12, atol=1e-15)


def test_kendall_counts_by_hand():
    """Pairs of x = [1, 1, 2, 3], y = [1, 2, 2, 1]: (0,1) tied in x; (1,2) and (0,3) tied in y; discordant (1,3),
    (2,3); concordant (0,2)."""
    assert kendall_counts(np.array([1.0, 1, 2, 3]), np.array([1.0, 2, 2, 1])) == (1, 2, 0, 2)
    assert kendall_counts(np.array([1.0, 1, 1]), np.array([2.0, 2, 2])) == (3, 3, 3, 0)


def test_numpy_inversions_equal_a_brute_force_count():
    rng = np.random.default_rng(11)
    for n, top in ((0, 1), (1, 1), (7, 2), (50, 4), (300, 1000)):
        values = rng.integers(0, top, n)
        brute = sum(int(a > b) for a, b in itertools.combinations(values.tolist(), 2))
        assert inversions(values, max(1, int(top - 1).bit_length())) == brute


@pytest.mark.parametrize("n", [2, 3, 50, 5000])
def test_spearman_and_pearson_equal_scipy_in_both_forms(n):
    for k, (x, y) in enumerate(samples(n + 2, n)):
        if k in (3, 4):
            continue  # a spread at the last bits of 1.0 is noise to any Pearson's r; infinities have none
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rho, r = scipy.stats.spearmanr(x, y).statistic, scipy.stats.pearsonr(x, y).statistic
        for compiled in (True, False):
            np.testing.assert_allclose(spearman(x, y, use_compiled=compiled), rho, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(pearson(x, y, use_compiled=compiled), r, rtol=1e-12, atol=1e-15)


def test_centred_moments_are_the_same_in_both_forms():
    rng = np.random.default_rng(12)
    x, y = rng.normal(1e6, 1.0, 10_001), rng.normal(-5.0, 3.0, 10_001)
    compiled, plain = centred_moments(x, y), centred_moments(x, y, use_compiled=False)
    assert compiled.n == plain.n == 10_001
    np.testing.assert_allclose(compiled[1:], plain[1:], rtol=1e-12)
    np.testing.assert_allclose(compiled.sxx, np.sum((x - x.mean()) ** 2), rtol=1e-12)


def test_block_forms_equal_the_single_forms_row_by_row():
    rng = np.random.default_rng(13)
    x, y = rng.normal(size=(6, 40)), rng.normal(size=(6, 40))
    y[0] = 2.0  # a constant row: undefined in both
    x[1, :39] = np.nan  # one pair left: undefined
    x[2, [3, 7]] = np.nan  # two pairs left out
    for row in range(6):
        keep = ~np.isnan(x[row])
        np.testing.assert_allclose(pearson_rows(x, y)[row], pearson(x[row][keep], y[row][keep]), rtol=1e-12)
        np.testing.assert_allclose(r2_rows(x, y)[row], r2(x[row][keep], y[row][keep]), rtol=1e-12)


def test_many_distinct_values_with_ties_take_the_sorting_path():
    """Over 65536 distinct values the C kernels sort (fewer go through a hash table): small groups of ties, and one
    large group among many distinct values, ranked and counted as scipy does."""
    rng = np.random.default_rng(14)
    n = 150_000
    small_groups = rng.integers(0, 100_000, n) * 1.0  # about 78k distinct values, ties of 2 or 3
    one_large = rng.normal(size=n)
    one_large[rng.choice(n, 5000, replace=False)] = 0.5  # 5000 tied values among 145k distinct ones
    y = np.round(rng.normal(size=n) * 30_000)
    for x in (small_groups, one_large):
        assert len(np.unique(x)) > 65_536
        np.testing.assert_array_equal(average_ranks(x), scipy.stats.rankdata(x))
        for a, b in ((x, y), (y, x), (x, rng.normal(size=n))):
            counts = kendall_counts(a, b)
            assert counts == kendall_counts(a, b, use_compiled=False)
            np.testing.assert_allclose(kendall_tau_b(a, b), scipy.stats.kendalltau(a, b).statistic, rtol=1e-12)

"""The regression sub-types against scikit-learn and scipy.stats in the same test: random data of several seeds,
ties, several outputs, constant and tiny inputs (undefined, with the reason), NaN under each ``nan_policy``, and
bad input as one-line errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats
from sklearn import metrics as skm

from olive_eval.metrics import get_metric
from olive_eval.metrics.resampling import ExampleStats, distribution

ERRORS = {
    "mse": skm.mean_squared_error,
    "rmse": skm.root_mean_squared_error,
    "mae": skm.mean_absolute_error,
    "r2_score": skm.r2_score,
}
CORRELATIONS = {
    "pearson": lambda x, y: scipy.stats.pearsonr(x, y).statistic,
    "spearman": lambda x, y: scipy.stats.spearmanr(x, y).statistic,
    "kendall_tau": lambda x, y: scipy.stats.kendalltau(x, y).statistic,  # variant "b", ties corrected
}


def sample(seed: int, n: int, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(3.0, 2.0, n)
    predicted = truth + rng.normal(0.0, 1.5, n)
    if ties:  # few distinct values on both sides: many tied pairs, tied in one sample or in both
        truth, predicted = np.round(truth), np.round(predicted / 2)
    return predicted, truth


def both_ways(name: str, predictions: object, references: object, config: dict | None = None) -> float:
    """The value from ``compute`` and from the per-example statistics, which must agree."""
    metric = get_metric(name, config)
    value = metric.compute(predictions, references).value
    again = get_metric(name, config)
    np.testing.assert_allclose(again.reduce(again.statistics(predictions, references)).value, value, rtol=1e-13)
    return value


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("n", [2, 3, 17, 500])
def test_every_sub_type_equals_its_reference(seed, ties, n):
    p, y = sample(seed, n, ties)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on the constant samples that small tied draws make
        for name, reference in ERRORS.items():
            expected = reference(y, p)
            if name == "r2_score" and np.all(y == y[0]):
                expected = np.nan  # scikit-learn's force_finite stands in 1.0 or 0.0; undefined here
            np.testing.assert_allclose(both_ways(name, p, y), expected, rtol=1e-12, atol=1e-14)
        for name, reference in CORRELATIONS.items():
            np.testing.assert_allclose(both_ways(name, p, y), reference(p, y), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("seed", [3, 4])
def test_several_outputs_average_each_outputs_value_like_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(80, 3)) * [1.0, 10.0, 0.1]
    p = y + rng.normal(size=(80, 3))
    for name, reference in ERRORS.items():
        score = get_metric(name).compute(p, y)
        np.testing.assert_allclose(score.value, reference(y, p), rtol=1e-12)
        np.testing.assert_allclose(score.per_class, reference(y, p, multioutput="raw_values"), rtol=1e-12)
    one = get_metric("mse").compute(p[:, 1], y[:, 1])
    assert one.per_class is None
    assert get_metric("mse").compute(p[:, 1:2], y[:, 1]).value == one.value  # [n, 1] is one output, like [n]


def test_lists_from_a_python_model_read_as_arrays():
    p, y = sample(5, 40, ties=False)
    as_lists = [float(v) for v in p], [np.array([v]) for v in y]
    for name in (*ERRORS, *CORRELATIONS):
        assert get_metric(name).compute(*as_lists).value == pytest.approx(get_metric(name).compute(p, y).value)


def test_a_large_offset_loses_nothing():
    """Values 1e8 apart from their spread: raw sums (sum x^2 - n mean^2) cancel to noise; centred ones do not."""
    rng = np.random.default_rng(6)
    x, y = rng.integers(0, 100, 1000).astype(float), rng.integers(0, 100, 1000).astype(float)
    y += x  # correlated; both exact integers, and exact after the offset too
    for name in ("pearson", "r2_score", "spearman"):
        shifted = get_metric(name).compute(x + 1e8, y + 1e8).value
        assert shifted == pytest.approx(get_metric(name).compute(x, y).value, rel=1e-12)
    assert get_metric("pearson").compute(x + 1e8, y + 1e8).value == pytest.approx(
        scipy.stats.pearsonr(x, y).statistic, rel=1e-12
    )


@pytest.mark.parametrize(
    ("name", "predictions", "references", "reason"),
    [
        ("pearson", [2.0, 2.0, 2.0], [1.0, 2.0, 3.0], "the predictions are constant"),
        ("spearman", [1.0, 2.0, 3.0], [5.0, 5.0, 5.0], "the references are constant"),
        ("kendall_tau", [4.0, 4.0], [1.0, 2.0], "the predictions are constant"),
        ("r2_score", [1.0, 2.0, 3.0], [5.0, 5.0, 5.0], "the references are constant: R² divides by their variance"),
        ("pearson", [1.0], [2.0], "pearson needs at least 2 examples, got 1"),
        ("kendall_tau", [1.0], [2.0], "kendall_tau needs at least 2 examples, got 1"),
        ("r2_score", [1.0], [2.0], "r2_score needs at least 2 examples, got 1"),
        ("mse", [], [], "no examples to score"),
        ("spearman", [], [], "no examples to score"),
    ],
)
def test_undefined_values_are_nan_with_the_reason(name, predictions, references, reason):
    score = get_metric(name).compute(np.array(predictions), np.array(references))
    assert np.isnan(score.value) and score.undefined.startswith(reason)


def test_constant_inputs_are_undefined_where_scipy_says_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, reference in CORRELATIONS.items():
            assert np.isnan(reference([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]))
            assert np.isnan(get_metric(name).compute([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]).value)
        assert skm.r2_score([5.0, 5.0], [1.0, 2.0], force_finite=False) == -np.inf  # 1 - x / 0: no value either


def test_nan_policy_propagate_names_the_first_example():
    p, y = sample(7, 30, ties=False)
    p[[4, 9]] = np.nan
    y[2] = np.nan
    for name in (*ERRORS, *CORRELATIONS):
        score = get_metric(name).compute(p, y)
        assert np.isnan(score.value)
        assert score.undefined == (
            "3 examples hold a NaN prediction or reference (the first: example 2); nan_policy 'omit' leaves them out"
        )


def test_nan_policy_omit_leaves_the_pairs_out_like_scipy():
    p, y = sample(8, 60, ties=True)
    p[[3, 40]], y[7] = np.nan, np.nan
    keep = ~(np.isnan(p) | np.isnan(y))
    omit = {"nan_policy": "omit"}
    for name, reference in ERRORS.items():
        np.testing.assert_allclose(both_ways(name, p, y, omit), reference(y[keep], p[keep]), rtol=1e-12)
    np.testing.assert_allclose(
        both_ways("spearman", p, y, omit), scipy.stats.spearmanr(p, y, nan_policy="omit").statistic, rtol=1e-12
    )
    np.testing.assert_allclose(
        both_ways("kendall_tau", p, y, omit), scipy.stats.kendalltau(p, y, nan_policy="omit").statistic, rtol=1e-12
    )
    np.testing.assert_allclose(both_ways("pearson", p, y, omit), CORRELATIONS["pearson"](p[keep], y[keep]), rtol=1e-12)
    metric = get_metric("mae", omit)
    np.testing.assert_array_equal(np.isnan(metric.instance_scores(metric.statistics(p, y))), ~keep)


def test_nan_policy_omit_of_everything_is_undefined():
    nothing = np.full(4, np.nan)
    assert get_metric("mse", {"nan_policy": "omit"}).compute(nothing, np.ones(4)).undefined == (
        "every example holds a NaN, and nan_policy 'omit' left them all out"
    )
    assert get_metric("spearman", {"nan_policy": "omit"}).compute(nothing, np.ones(4)).undefined == (
        "spearman needs at least 2 examples, got 0 (after nan_policy 'omit')"
    )


def test_nan_policy_raise_is_one_line_naming_the_example():
    metric = get_metric("mse", {"nan_policy": "raise"})
    metric.statistics(np.ones(5), np.ones(5))  # a first batch of 5: the next batch's examples count from 5
    with pytest.raises(ValueError, match=r"^the reference of example 7 is NaN \(nan_policy 'raise'\)$"):
        metric.statistics(np.ones(3), np.array([1.0, 1.0, np.nan]))
    with pytest.raises(ValueError, match=r"^the prediction of example 1 is NaN \(nan_policy 'raise'\)$"):
        get_metric("kendall_tau", {"nan_policy": "raise"}).compute([1.0, np.nan], [1.0, 2.0])


@pytest.mark.parametrize(
    ("predictions", "references", "message"),
    [
        (["1.5", 2.0], [1.0, 2.0], "predictions: example 0 is '1.5', not a number"),
        ([1.0, None], [1.0, 2.0], "predictions: example 1 is None, not a number"),
        ([1.0, 2.0], [1.0, 2.0, 3.0], "predictions and references hold different numbers of examples: 2 vs 3"),
        (np.ones((2, 2)), np.ones(2), "predictions have 2 output(s) per example but references 1; they must match"),
        (np.ones((2, 2, 2)), np.ones(2), "predictions: shape [2, 2, 2] is not [n] or [n, outputs]"),
        ([[1.0, 2.0], [3.0]], [1.0, 2.0], "predictions: examples hold different numbers of values"),
    ],
)
def test_bad_input_is_one_line(predictions, references, message):
    with pytest.raises(ValueError) as err:
        get_metric("mse").compute(predictions, references)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_correlations_compare_one_output():
    with pytest.raises(ValueError, match=r"^spearman compares one output per example; the predictions have 2"):
        get_metric("spearman").compute(np.ones((3, 2)), np.ones((3, 2)))


@pytest.mark.parametrize("name", [*ERRORS, *CORRELATIONS])
def test_each_resample_is_the_metric_on_the_resampled_examples(name):
    """The bootstrap's values (vectorized where the metric has a block form) equal the metric recomputed on the
    resampled examples, NaN pairs left out as the policy says. (Ties only for the global metrics: additive rows
    that repeat are drawn as multinomial counts, the same distribution drawn differently.)"""
    p, y = sample(9, 40, ties=name in CORRELATIONS or name == "r2_score")
    p[5] = np.nan
    config = {"nan_policy": "omit"}
    metric = get_metric(name, config)
    statistics = metric.statistics(p, y)
    values = distribution(ExampleStats(metric, statistics=statistics), 30, seed=4)
    idx = np.random.default_rng(4).integers(0, len(p), (30, len(p)))  # scipy's draws, as the bootstrap makes them
    expected = [get_metric(name, config).compute(p[row], y[row]).value for row in idx]
    np.testing.assert_allclose(values, expected, rtol=1e-10, atol=1e-14)
    propagated = get_metric(name)
    values = distribution(ExampleStats(propagated, statistics=propagated.statistics(p, y)), 30, seed=4)
    np.testing.assert_array_equal(np.isnan(values), [5 in row for row in idx])


def test_mse_and_rmse_share_their_statistics_and_r2_does_not_share_the_correlations():
    assert get_metric("mse").shared_key() == get_metric("rmse").shared_key() != get_metric("mae").shared_key()
    assert get_metric("pearson").shared_key() == get_metric("kendall_tau").shared_key()
    assert get_metric("pearson").shared_key() != get_metric("r2_score").shared_key()
    assert get_metric("pearson").shared_key() != get_metric("pearson", {"nan_policy": "omit"}).shared_key()


def test_per_example_scores_are_the_errors_and_correlations_have_none():
    p, y = sample(10, 12, ties=False)
    for name, expected in (("mse", (p - y) ** 2), ("rmse", np.abs(p - y)), ("mae", np.abs(p - y))):
        metric = get_metric(name)
        np.testing.assert_allclose(metric.instance_scores(metric.statistics(p, y)), expected, rtol=1e-15)
    metric = get_metric("spearman")
    assert metric.instance_scores(metric.statistics(p, y)) is None


def test_directions():
    assert [get_metric(n).higher_is_better for n in ("mse", "rmse", "mae")] == [False, False, False]
    assert all(get_metric(n).higher_is_better for n in ("r2_score", *CORRELATIONS))


def test_an_unknown_nan_policy_is_refused():
    with pytest.raises(ValueError, match="nan_policy"):
        get_metric("mse", {"nan_policy": "ignore"})


@pytest.mark.parametrize("name", [*ERRORS, *CORRELATIONS])
def test_check_metric_holds(name):
    """olive_eval.testing's contract: compute equals reduce(statistics), one score per example where there are
    scores, the same value on a second call and on shuffled examples."""
    from olive_eval.testing import check_metric

    p, y = sample(11, 64, ties=True)
    reference = ERRORS.get(name)
    expected = reference(y, p) if reference else CORRELATIONS[name](p, y)
    instance = {"mse": (p - y) ** 2, "rmse": np.abs(p - y), "mae": np.abs(p - y)}.get(name)
    check_metric(name, p, y, global_target=expected, instance_targets=instance, rtol=1e-12)

"""Bootstrap kernels (``olive_eval.metrics.stats``) and resampling by metric kind (``resampling``).

Checked against:

* ``scipy.stats.bootstrap`` with the same seed: exact (1e-12) wherever our draws are scipy's index
  draws (continuous data: the index path of ``additive_distribution``, ``sample_distribution``, global
  metrics), within Monte-Carlo tolerance where the multinomial "counts" path draws the same distribution
  differently (0/1 scores, classification statistics);
* brute-force recomputation: leave-one-out values, and metrics recomputed from scratch on each resample;
* Unitxt's published CI vectors (``tests/library/test_metrics.py``): preds ``ABCDE*20`` vs refs
  ``BBCDE*20``, BCa, seed 42, 95 %.

No timing assertions here; ``bench/bench_bootstrap.py`` measures speed.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from olive_eval.metrics import get_metric, metric_registry, register_metric, resampling, stats
from olive_eval.metrics.resampling import ExampleStats

SCIPY_METHOD = {"percentile": "percentile", "basic": "basic", "bca": "BCa"}
EXACT = 1e-12

# Unitxt's CI test data (peer-metric-systems.md section 3, Unitxt item 3): 80 % accuracy
UNITXT_PREDS = ["A", "B", "C", "D", "E"] * 20
UNITXT_REFS = ["B", "B", "C", "D", "E"] * 20
UNITXT_ACCURACY_CI = (0.71, 0.87)  # Accuracy / AccuracyFast / TokenOverlap, 1000 resamples
UNITXT_F1_MICRO_CI = (0.83, 0.93)  # F1Micro(n_resamples=1000), F1Fast micro
UNITXT_F1_MICRO_100 = (0.8439306358381503, 0.9223675337263242)  # F1Micro, 100 resamples (global metric)
UNITXT_F1_MACRO_100 = (0.8809213119223925, 0.9439681645177271)  # F1Macro, 100 resamples (global metric)
LETTER = {c: i for i, c in enumerate("ABCDE")}


def encoded(labels):
    return np.array([LETTER[c] for c in labels])


def scipy_ci(data, statistic, method, n_resamples, level, seed, **kwargs):
    result = scipy.stats.bootstrap(
        (np.asarray(data),),
        statistic,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=level,
        method=SCIPY_METHOD[method],
        random_state=np.random.default_rng(seed),
        **kwargs,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def mean_rows(x):
    return np.column_stack([x, np.ones_like(x)])


def finalize_mean(totals):
    return totals[:, 0] / totals[:, 1]


def median(values, axis=-1):
    return np.median(values, axis=axis)


def continuous(n, seed):
    return np.random.default_rng(1000 + seed).lognormal(0.0, 0.75, n)  # skewed, so BCa corrects something


def zero_one(n, p, seed):
    """0/1 scores with exactly round(p * n) ones, shuffled."""
    x = np.zeros(n)
    x[: round(p * n)] = 1.0
    return np.random.default_rng(seed).permutation(x)


def multiclass(n, classes, seed, accuracy=0.7):
    rng = np.random.default_rng(seed)
    refs = rng.integers(0, classes, n)
    preds = np.where(rng.random(n) < accuracy, refs, rng.integers(0, classes, n))
    return preds, refs


def f1_metric(average, classes):
    return get_metric("f1_score", {"task": "multiclass", "num_classes": classes, "average": average})


def per_example(jackknife_values, rows):
    """Expand ``additive_jackknife`` values (one per distinct row) to one value per example."""
    _, inverse, _ = stats.unique_rows(rows.reshape(len(rows), -1))
    return jackknife_values[inverse]


# ------------------------------------------------------------------------------------------ fixtures
@pytest.fixture
def exact_match():
    """A user instance metric (mean aggregation), registered for the test and removed afterwards."""
    name = "test_stats_exact_match"

    def match(prediction, reference) -> float:
        return float(prediction == reference)

    register_metric(name=name, higher_is_better=True, kind="instance")(match)
    yield name
    metric_registry.unregister(name)


@pytest.fixture
def unitxt_f1():
    """Unitxt's F1 as a user global metric: sklearn-style F1 over the labels present in the references.

    Unitxt's ``F1`` passes ``labels=set(references)`` to the HF/sklearn f1, so a class that is only ever
    predicted (here "A") counts nowhere. Computed with our kernels: the statistics' class columns of the
    reference labels only.
    """
    name = "test_stats_unitxt_f1"

    def unitxt_f1_score(predictions, references, average: str = "micro") -> float:
        refs = np.asarray(references)
        metric = f1_metric(average, len(LETTER))
        statistics = metric.statistics(np.asarray(predictions), refs)
        return metric.reduce(statistics[:, np.unique(refs)]).value

    register_metric(name=name, higher_is_better=True, kind="global")(unitxt_f1_score)
    yield name
    metric_registry.unregister(name)


# ------------------------------------------------------------------------- index draws = scipy's draws
@pytest.mark.parametrize("chunk_elements", [None, 700])
@pytest.mark.parametrize("width", [1, 3])
def test_index_chunks_are_scipys_draws(monkeypatch, chunk_elements, width):
    if chunk_elements is not None:  # many chunks, the last one partial
        monkeypatch.setattr(stats, "CHUNK_ELEMENTS", chunk_elements)
    n, n_resamples, seed = 37, 101, 7
    chunks = list(stats.index_chunks(n, n_resamples, seed, width))
    if chunk_elements is not None:
        assert len(chunks) > 2
    expected = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
    np.testing.assert_array_equal(np.concatenate(chunks), expected)


# ------------------------------------------------------------------ continuous data: exactly scipy
@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
@pytest.mark.parametrize("level", [0.9, 0.95])
@pytest.mark.parametrize(("n", "seed"), [(5, 0), (40, 42), (301, 12345)])
def test_mean_interval_equals_scipy(n, seed, level, method):
    x = continuous(n, seed)
    rows = mean_rows(x)
    assert stats._distinct_rows(rows) is None  # distinct rows: the index path, scipy's draws
    theta_b = stats.additive_distribution(rows, finalize_mean, 1000, seed)
    jackknife = stats.additive_jackknife(rows, finalize_mean) if method == "bca" else None
    ours = stats.interval(theta_b, float(np.mean(x)), level, method, jackknife)
    np.testing.assert_allclose(ours, scipy_ci(x, np.mean, method, 1000, level, seed), rtol=0, atol=EXACT)


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_mean_interval_equals_scipy_across_chunks(monkeypatch, method):
    """Several index chunks (the last one partial), drawn one ahead in a thread, still give scipy's draws."""
    monkeypatch.setattr(stats, "CHUNK_ELEMENTS", 5000)
    x = continuous(301, 3)
    rows = mean_rows(x)
    theta_b = stats.additive_distribution(rows, finalize_mean, 999, 3)
    jackknife = stats.additive_jackknife(rows, finalize_mean)
    ours = stats.interval(theta_b, float(np.mean(x)), 0.95, method, jackknife)
    np.testing.assert_allclose(ours, scipy_ci(x, np.mean, method, 999, 0.95, 3), rtol=0, atol=EXACT)


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
@pytest.mark.parametrize("aggregation", ["mean", "median"])
def test_instance_metric_interval_equals_scipy(exact_match, aggregation, method):
    """The path a user instance metric takes (ExampleStats -> resampling) gives scipy's interval of its aggregation."""
    x = continuous(120, 5)
    metric = get_metric(exact_match, None, aggregation)
    sample = ExampleStats(metric, statistics=x)
    value = metric.reduce(x).value
    ours = resampling.confidence_interval(sample, value, method, 1000, 0.95, 42)
    statistic = np.mean if aggregation == "mean" else median
    np.testing.assert_allclose(ours, scipy_ci(x, statistic, method, 1000, 0.95, 42), rtol=0, atol=EXACT)


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
@pytest.mark.parametrize("level", [0.9, 0.95])
@pytest.mark.parametrize(("n", "seed"), [(6, 1), (51, 42), (200, 9)])
def test_median_interval_equals_scipy(n, seed, level, method):
    x = continuous(n, seed)
    theta_b = stats.sample_distribution(x, median, 1000, seed)
    jackknife = stats.sample_jackknife(x, median) if method == "bca" else None
    ours = stats.interval(theta_b, float(np.median(x)), level, method, jackknife)
    np.testing.assert_allclose(ours, scipy_ci(x, median, method, 1000, level, seed), rtol=0, atol=EXACT)


def test_global_metric_distribution_is_recomputation_on_scipys_draws(unitxt_f1):
    preds, refs = multiclass(50, 4, 2)
    metric = get_metric(unitxt_f1, {"average": "macro"})
    theta_b = resampling.distribution(ExampleStats(metric, fields=(preds, refs)), 64, 11)
    draws = np.random.default_rng(11).integers(0, 50, (64, 50))
    expected = [metric.compute(preds[idx], refs[idx]).value for idx in draws]
    np.testing.assert_allclose(theta_b, expected, rtol=0, atol=EXACT)


# ------------------------------------------------------------ 0/1 data: the counts path, Monte Carlo
@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
@pytest.mark.parametrize(("n", "seed"), [(100, 42), (500, 0), (2000, 7)])
def test_counts_path_agrees_with_scipy(n, seed, method):
    """0/1 scores (80 % accuracy) take the multinomial path: other draws, same distribution as scipy's."""
    x = zero_one(n, 0.8, seed)
    rows = mean_rows(x)
    assert stats._distinct_rows(rows) is not None  # two distinct rows: the counts path
    theta_b = stats.additive_distribution(rows, finalize_mean, 2000, seed)
    jackknife = stats.additive_jackknife(rows, finalize_mean)
    ours = stats.interval(theta_b, float(np.mean(x)), 0.95, method, jackknife)
    reference = scipy_ci(x, np.mean, method, 2000, 0.95, seed)
    assert abs(ours[0] - reference[0]) < 0.02
    assert abs(ours[1] - reference[1]) < 0.02


@pytest.mark.parametrize(("n", "p"), [(100, 0.8), (1000, 0.8), (400, 0.05)])
def test_counts_path_resample_moments(n, p):
    """Bootstrap means of 0/1 scores: mean p, variance p(1-p)/n (the empirical distribution's), within 4 SE."""
    n_resamples = 4000
    x = zero_one(n, p, 1)
    p_hat = float(np.mean(x))
    theta_b = stats.additive_distribution(mean_rows(x), finalize_mean, n_resamples, 1)
    variance = p_hat * (1 - p_hat) / n
    assert abs(theta_b.mean() - p_hat) < 4 * np.sqrt(variance / n_resamples)
    assert abs(theta_b.var(ddof=1) / variance - 1) < 4 * np.sqrt(2 / (n_resamples - 1))


def test_weighted_jackknife_equals_per_example_jackknife():
    """BCa from one jackknife value per distinct row (weighted) = BCa from every example's value."""
    x = zero_one(300, 0.8, 4)
    rows = mean_rows(x)
    theta_b = stats.additive_distribution(rows, finalize_mean, 1000, 4)
    weighted = stats.additive_jackknife(rows, finalize_mean)
    assert len(weighted.values) == 2
    expanded = stats.Jackknife(per_example(weighted.values, rows), np.ones(len(x)))
    for level in (0.9, 0.95):
        np.testing.assert_allclose(
            stats.interval(theta_b, 0.8, level, "bca", weighted),
            stats.interval(theta_b, 0.8, level, "bca", expanded),
            rtol=0,
            atol=EXACT,
        )


# ---------------------------------------------------------------------------- Unitxt's CI vectors
def test_unitxt_accuracy_instance_metric(exact_match):
    metric = get_metric(exact_match)
    sample = ExampleStats(metric, fields=(UNITXT_PREDS, UNITXT_REFS))
    value = metric.compute(UNITXT_PREDS, UNITXT_REFS).value
    assert value == pytest.approx(0.8, abs=EXACT)
    low, high = resampling.confidence_interval(sample, value, "bca", 1000, 0.95, 42)
    assert (round(low, 2), round(high, 2)) == UNITXT_ACCURACY_CI


def test_unitxt_accuracy_score_with_int_labels():
    metric = get_metric("accuracy_score", {"task": "multiclass", "num_classes": 5})
    preds, refs = encoded(UNITXT_PREDS), encoded(UNITXT_REFS)
    value = metric.compute(preds, refs).value
    assert value == pytest.approx(0.8, abs=EXACT)
    low, high = resampling.confidence_interval(ExampleStats(metric, fields=(preds, refs)), value, "bca", 1000, 0.95, 42)
    assert (round(low, 2), round(high, 2)) == UNITXT_ACCURACY_CI


def test_unitxt_f1_micro(exact_match):
    """Unitxt F1Micro -> [0.83, 0.93]; our ``f1_score`` micro over the 5 classes -> 0.8, [0.71, 0.87].

    The difference is not the resampling but the metric: Unitxt's ``F1`` computes sklearn's F1 with
    ``labels=set(references)``, so class "A" (predicted 20 times, never a reference) counts nowhere: its
    20 false positives vanish, micro precision is 80/80, recall 80/100, F1 = 0.8889. Our ``f1_score``
    (torchmetrics semantics, ``num_classes=5``) counts every class, and multiclass micro F1 equals
    accuracy: 0.8, the same statistics as ``accuracy_score`` and so the same interval.

    Restricting our statistics to the reference classes (columns B..E) reproduces Unitxt's value exactly;
    its interval comes from our multinomial counts path (the statistics repeat), not from scipy's index
    draws that Unitxt resamples with, so it is checked within 0.02 (it is [0.8235, 0.9305]).
    ``test_unitxt_global_path_reproduced_exactly`` reproduces Unitxt's index-draw intervals to 1e-12.
    """
    preds, refs = encoded(UNITXT_PREDS), encoded(UNITXT_REFS)
    f1 = f1_metric("micro", 5)
    sample = ExampleStats(f1, fields=(preds, refs))
    value = f1.compute(preds, refs).value
    assert value == pytest.approx(0.8, abs=EXACT)
    ours = resampling.confidence_interval(sample, value, "bca", 1000, 0.95, 42)
    accuracy = get_metric(exact_match)
    accuracy_ci = resampling.confidence_interval(
        ExampleStats(accuracy, fields=(UNITXT_PREDS, UNITXT_REFS)), 0.8, "bca", 1000, 0.95, 42
    )
    assert (round(ours[0], 2), round(ours[1], 2)) == UNITXT_ACCURACY_CI
    np.testing.assert_allclose(ours, accuracy_ci, rtol=0, atol=EXACT)

    reference_classes = sample.statistics[:, np.unique(refs)]
    restricted = ExampleStats(f1, statistics=reference_classes)
    value = f1.reduce(reference_classes).value
    assert value == pytest.approx(2 * 0.8 / 1.8, abs=EXACT)
    low, high = resampling.confidence_interval(restricted, value, "bca", 1000, 0.95, 42)
    assert abs(low - UNITXT_F1_MICRO_CI[0]) < 0.02
    assert abs(high - UNITXT_F1_MICRO_CI[1]) < 0.02


def test_unitxt_global_path_reproduced_exactly(unitxt_f1):
    """Unitxt's F1 as a global metric: recomputed on scipy's draws of seed 42, BCa: Unitxt's numbers."""
    preds, refs = encoded(UNITXT_PREDS), encoded(UNITXT_REFS)
    for average, n_resamples, expected in (
        ("micro", 100, UNITXT_F1_MICRO_100),
        ("macro", 100, UNITXT_F1_MACRO_100),
    ):
        metric = get_metric(unitxt_f1, {"average": average})
        value = metric.compute(preds, refs).value
        sample = ExampleStats(metric, fields=(preds, refs))
        ours = resampling.confidence_interval(sample, value, "bca", n_resamples, 0.95, 42)
        np.testing.assert_allclose(ours, expected, rtol=0, atol=EXACT)
    metric = get_metric(unitxt_f1, {"average": "micro"})
    assert metric.compute(preds, refs).value == pytest.approx(2 * 0.8 / 1.8, abs=EXACT)
    sample = ExampleStats(metric, fields=(preds, refs))
    low, high = resampling.confidence_interval(sample, metric.compute(preds, refs).value, "bca", 1000, 0.95, 42)
    assert (round(low, 2), round(high, 2)) == UNITXT_F1_MICRO_CI


def test_intervals_do_not_depend_on_call_order(exact_match):
    """Every call seeds its own generator (Unitxt's test_global_metric_confidence_interval property)."""
    preds, refs = encoded(UNITXT_PREDS), encoded(UNITXT_REFS)
    accuracy = ExampleStats(get_metric(exact_match), fields=(UNITXT_PREDS, UNITXT_REFS))
    f1 = ExampleStats(f1_metric("macro", 5), fields=(preds, refs))
    scores = ExampleStats(get_metric(exact_match), statistics=continuous(80, 0))  # the index path

    def ci(sample):
        return resampling.confidence_interval(sample, 0.8, "bca", 500, 0.95, 42)

    first = [ci(accuracy), ci(f1), ci(scores)]
    second = [ci(scores), ci(f1), ci(accuracy)][::-1]
    assert first == second
    np.random.seed(123)  # the legacy global state plays no part
    np.random.random(10)
    assert [ci(accuracy), ci(f1), ci(scores)] == first
    np.testing.assert_array_equal(resampling.distribution(f1, 200, 1), resampling.distribution(f1, 200, 1))


# ------------------------------------------------------------------------------------------ jackknife
@pytest.mark.parametrize("kind", ["continuous", "zero_one"])
def test_additive_jackknife_of_a_mean_is_leave_one_out(kind):
    x = continuous(25, 2) if kind == "continuous" else zero_one(25, 0.6, 2)
    rows = mean_rows(x)
    jackknife = stats.additive_jackknife(rows, finalize_mean)
    brute = np.array([np.mean(np.delete(x, i)) for i in range(len(x))])
    np.testing.assert_allclose(per_example(jackknife.values, rows), brute, rtol=0, atol=EXACT)
    assert jackknife.weights.sum() == len(x)
    assert len(jackknife.values) == (len(x) if kind == "continuous" else 2)


@pytest.mark.parametrize("average", ["micro", "macro", "weighted"])
def test_map_reduce_jackknife_is_leave_one_out(average):
    preds, refs = multiclass(30, 3, 5, accuracy=0.6)
    metric = f1_metric(average, 3)
    sample = ExampleStats(metric, fields=(preds, refs))
    jackknife = resampling.jackknife(sample)
    brute = [metric.compute(np.delete(preds, i), np.delete(refs, i)).value for i in range(len(preds))]
    np.testing.assert_allclose(per_example(jackknife.values, sample.statistics), brute, rtol=0, atol=EXACT)
    _, counts = np.unique(sample.statistics.reshape(30, -1), axis=0, return_counts=True)
    np.testing.assert_array_equal(jackknife.weights, counts)


@pytest.mark.parametrize("chunk_elements", [None, 50])
@pytest.mark.parametrize("n", [2, 21, 22])
def test_sample_jackknife_of_a_median_is_leave_one_out(monkeypatch, n, chunk_elements):
    if chunk_elements is not None:  # left-out examples in several blocks
        monkeypatch.setattr(stats, "CHUNK_ELEMENTS", chunk_elements)
    x = continuous(n, n)
    jackknife = stats.sample_jackknife(x, median)
    np.testing.assert_array_equal(jackknife.values, [np.median(np.delete(x, i)) for i in range(n)])
    np.testing.assert_array_equal(jackknife.weights, np.ones(n))


def test_calls_jackknife_is_leave_one_out(unitxt_f1):
    preds, refs = multiclass(20, 3, 8)
    metric = get_metric(unitxt_f1, {"average": "macro"})
    jackknife = resampling.jackknife(ExampleStats(metric, fields=(preds, refs)))
    brute = [metric.compute(np.delete(preds, i), np.delete(refs, i)).value for i in range(20)]
    np.testing.assert_allclose(jackknife.values, brute, rtol=0, atol=EXACT)


# ------------------------------------------------------------ map/reduce = recomputing the metric
@pytest.mark.parametrize("average", ["micro", "macro"])
def test_map_reduce_index_path_equals_recomputation(monkeypatch, average):
    """Forced onto the index path, summed statistics give exactly the metric recomputed on each resample."""
    monkeypatch.setattr(stats, "_distinct_rows", lambda rows: None)
    preds, refs = multiclass(40, 4, 3)
    metric = f1_metric(average, 4)
    theta_b = resampling.distribution(ExampleStats(metric, fields=(preds, refs)), 200, 5)
    brute = [metric.compute(preds[idx], refs[idx]).value for chunk in stats.index_chunks(40, 200, 5) for idx in chunk]
    np.testing.assert_allclose(theta_b, brute, rtol=0, atol=EXACT)


def test_map_reduce_counts_path_matches_recomputation_statistically():
    """The counts path (classification statistics repeat) has the distribution of recomputation on scipy's draws."""
    n, n_resamples = 60, 2000
    preds, refs = multiclass(n, 3, 6)
    metric = f1_metric("macro", 3)
    sample = ExampleStats(metric, fields=(preds, refs))
    assert stats._distinct_rows(sample.statistics.reshape(n, -1)) is not None
    theta_b = resampling.distribution(sample, n_resamples, 42)
    brute = np.array(
        [
            metric.compute(preds[idx], refs[idx]).value
            for chunk in stats.index_chunks(n, n_resamples, 42)
            for idx in chunk
        ]
    )
    sd = brute.std(ddof=1)
    assert abs(theta_b.mean() - brute.mean()) < 4 * sd * np.sqrt(2 / n_resamples)
    assert abs(theta_b.std(ddof=1) / sd - 1) < 4 / np.sqrt(n_resamples)
    value = metric.compute(preds, refs).value
    ours = stats.interval(theta_b, value, 0.95, "percentile")
    reference = stats.interval(brute, value, 0.95, "percentile")
    assert abs(ours[0] - reference[0]) < 0.03
    assert abs(ours[1] - reference[1]) < 0.03


def test_paired_distribution_of_a_model_with_itself_is_identical(exact_match, unitxt_f1):
    preds, refs = multiclass(50, 3, 9)
    samples = [
        ExampleStats(f1_metric("macro", 3), fields=(preds, refs)),  # map/reduce, counts path
        ExampleStats(get_metric(exact_match), fields=(list(preds), list(refs))),  # 0/1 mean
        ExampleStats(get_metric(exact_match), statistics=continuous(50, 9)),  # mean, index path
        ExampleStats(get_metric(exact_match, None, "median"), statistics=continuous(50, 9)),  # not additive
        ExampleStats(get_metric(unitxt_f1, {"average": "macro"}), fields=(preds, refs)),  # global
    ]
    for sample in samples:
        base, candidate = resampling.paired_distribution(sample, sample, 300, 42)
        np.testing.assert_array_equal(base, candidate)
        assert np.std(base) > 0


# --------------------------------------------------------------------------------- degenerate inputs
@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_all_equal_scores_collapse_to_the_value(exact_match, method):
    cases = [
        (ExampleStats(get_metric(exact_match), statistics=np.full(37, 0.7)), 0.7),  # counts path, one row
        (ExampleStats(get_metric(exact_match), statistics=np.ones(50)), 1.0),  # 100 % accuracy
        (ExampleStats(get_metric(exact_match, None, "median"), statistics=np.full(9, 0.3)), 0.3),
        (ExampleStats(f1_metric("macro", 3), fields=(np.arange(30) % 3, np.arange(30) % 3)), 1.0),
    ]
    for sample, value in cases:
        low, high = resampling.confidence_interval(sample, value, method, 200, 0.95, 0)
        assert low == pytest.approx(value, abs=EXACT)
        assert high == pytest.approx(value, abs=EXACT)


def test_too_small_to_resample_raises(exact_match):
    metric = get_metric(exact_match)
    one = ExampleStats(metric, statistics=np.array([0.5]))
    two = ExampleStats(metric, statistics=np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="at least 2 examples, got 1"):
        resampling.check_resamplable(1, 1000)
    with pytest.raises(ValueError, match="at least 2 examples, got 0"):
        resampling.check_resamplable(0, 1000)
    for n_resamples in (1, 0, -5):
        with pytest.raises(ValueError, match=f"at least 2 resamples, got {n_resamples}"):
            resampling.check_resamplable(100, n_resamples)
    with pytest.raises(ValueError, match="at least 2 examples, got 1"):
        resampling.confidence_interval(one, 0.5, "bca", 1000, 0.95, 42)
    with pytest.raises(ValueError, match="at least 2 examples, got 1"):
        resampling.paired_distribution(one, one, 1000, 42)
    with pytest.raises(ValueError, match="at least 2 resamples, got 1"):
        resampling.distribution(two, 1, 42)
    with pytest.raises(ValueError, match="at least 2 resamples, got 1"):
        resampling.independent_distribution(np.array([1.0, 2.0]), median, 1, 42)
    with pytest.raises(ValueError, match="paired samples differ in size: 2 and 1"):
        resampling.paired_distribution(two, one, 100, 42)


def test_interval_argument_errors():
    theta_b = continuous(100, 0)
    with pytest.raises(ValueError, match="unknown interval method 'normal'; valid: percentile, basic, bca"):
        stats.interval(theta_b, 1.0, 0.95, "normal")
    with pytest.raises(ValueError, match="bca method needs jackknife values"):
        stats.interval(theta_b, 1.0, 0.95, "bca")

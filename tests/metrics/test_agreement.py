"""matthews_corrcoef and cohen_kappa against scikit-learn in the same test: binary and multiclass labels of several
seeds, each kappa weighting, one class, ignored references, per-class scores, batches with different numbers of
classes, and bad input as one-line errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, matthews_corrcoef

from olive_eval.metrics import get_metric
from olive_eval.metrics.agreement import kernels
from olive_eval.metrics.resampling import ExampleStats, distribution

WEIGHTS = ("none", "linear", "quadratic")


def labels(seed: int, n: int, classes: int, right: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    references = rng.integers(0, classes, n)
    predictions = np.where(rng.random(n) < right, references, rng.integers(0, classes, n))
    return predictions, references


def kappa_reference(references: np.ndarray, predictions: np.ndarray, weights: str, classes: int) -> float:
    return cohen_kappa_score(
        references, predictions, weights=None if weights == "none" else weights, labels=np.arange(classes)
    )


def both_ways(name: str, predictions: np.ndarray, references: np.ndarray, config: dict | None = None) -> float:
    """``compute`` (from the sums directly) and ``reduce(statistics)`` (from the per-example rows) agree."""
    value = get_metric(name, config).compute(predictions, references).value
    metric = get_metric(name, config)
    np.testing.assert_allclose(metric.reduce(metric.statistics(predictions, references)).value, value, rtol=1e-13)
    return value


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("classes", [2, 3, 10])
@pytest.mark.parametrize("n", [5, 200])
def test_values_equal_scikit_learn(seed, classes, n):
    p, y = labels(seed, n, classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns where a small draw makes kappa 0 / 0
        np.testing.assert_allclose(
            both_ways("matthews_corrcoef", p, y), matthews_corrcoef(y, p), rtol=1e-12, atol=1e-15
        )
        for weights in WEIGHTS:
            expected = kappa_reference(y, p, weights, classes)
            value = both_ways("cohen_kappa", p, y, {"weights": weights})
            np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-15)


def test_kappa_weights_take_effect():
    """Ordinal ratings that miss by one class: the weightings rank the same data differently, each as scikit-learn."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 5, 400)
    p = np.clip(y + rng.choice([-1, 0, 1], 400, p=[0.2, 0.6, 0.2]), 0, 4)
    values = {w: both_ways("cohen_kappa", p, y, {"weights": w}) for w in WEIGHTS}
    for weights, value in values.items():
        assert value == pytest.approx(kappa_reference(y, p, weights, 5), rel=1e-12)
    assert values["none"] < values["linear"] < values["quadratic"]


def test_kappa_weights_follow_label_values_as_scikit_learn_given_every_label():
    """Label 1 appears nowhere: scikit-learn without ``labels`` spaces weights by rank among present labels."""
    y, p = np.array([0, 2, 2, 0, 2]), np.array([0, 2, 0, 2, 2])
    value = get_metric("cohen_kappa", {"weights": "linear"}).compute(p, y).value
    assert value == pytest.approx(cohen_kappa_score(y, p, weights="linear", labels=[0, 1, 2]))


def test_one_class_only():
    """Matthews is 0 where scikit-learn says 0 (a factor of its denominator is 0); kappa is 0 / 0, undefined."""
    y = np.ones(6, int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in (np.ones(6, int), np.array([1, 0, 1, 1, 0, 1])):
            assert both_ways("matthews_corrcoef", p, y) == matthews_corrcoef(y, p) == 0.0
        assert np.isnan(cohen_kappa_score(y, y))
    score = get_metric("cohen_kappa").compute(y, y)
    assert np.isnan(score.value)
    assert score.undefined == "the references and predictions all hold one and the same label: kappa is 0 / 0"


def test_no_examples_and_every_reference_ignored_are_undefined():
    for name in ("matthews_corrcoef", "cohen_kappa"):
        empty = get_metric(name).compute(np.array([], int), np.array([], int))
        ignored = get_metric(name, {"ignore_index": -1}).compute(np.array([0, 1]), np.array([-1, -1]))
        for score in (empty, ignored):
            assert np.isnan(score.value) and score.undefined.startswith("no examples to score")


def test_ignore_index_leaves_the_example_out():
    p, y = labels(4, 100, 3)
    y_ignored = y.copy()
    y_ignored[::7] = 255
    keep = y_ignored != 255
    config = {"ignore_index": 255}
    assert both_ways("matthews_corrcoef", p, y_ignored, config) == pytest.approx(matthews_corrcoef(y[keep], p[keep]))
    value = both_ways("cohen_kappa", p, y_ignored, {**config, "weights": "quadratic"})
    assert value == pytest.approx(kappa_reference(y[keep], p[keep], "quadratic", 3))


def test_per_class_scores_are_read_as_their_argmax_and_fix_the_classes():
    p, y = labels(5, 60, 4)
    scores = np.eye(4)[p] * 0.7 + 0.1
    assert get_metric("matthews_corrcoef").compute(scores, y).value == pytest.approx(matthews_corrcoef(y, p))
    with pytest.raises(ValueError, match=r"^references: example 0 is 4, outside \[0, 3\): the model's scores have 3"):
        get_metric("cohen_kappa").compute(np.full((2, 3), 0.3), np.array([4, 0]))


def test_logits_give_the_number_of_classes():
    """Labels taken from the model's logits: a reference outside its classes is an error, not one more class."""
    logits = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    with pytest.raises(ValueError, match=r"^references: example 2 is 2, outside \[0, 2\): the model's scores have 2"):
        get_metric("matthews_corrcoef").statistics(logits.argmax(axis=1), np.array([0, 1, 2]), logits)
    with pytest.raises(ValueError, match=r"^num_classes is 3 but the model's scores have 2 classes$"):
        get_metric("matthews_corrcoef", {"num_classes": 3}).statistics(logits.argmax(1), np.array([0, 1, 1]), logits)


def test_batches_with_fewer_classes_are_widened():
    p, y = labels(6, 90, 5)
    for name, config in (("matthews_corrcoef", None), ("cohen_kappa", {"weights": "linear"})):
        metric = get_metric(name, config)
        parts = [metric.statistics(p[:30] % 2, y[:30] % 2), metric.statistics(p[30:], y[30:])]  # 2 classes, then 5
        joined = metric.concat_statistics(parts)
        whole_p, whole_y = np.r_[p[:30] % 2, p[30:]], np.r_[y[:30] % 2, y[30:]]
        assert metric.reduce(joined).value == pytest.approx(get_metric(name, config).compute(whole_p, whole_y).value)


@pytest.mark.parametrize(
    ("predictions", "references", "message"),
    [
        ([0, 1, 2], [0, 1], "predictions and references hold different numbers of examples: 3 vs 2"),
        ([0, 1.5], [0, 1], "predictions: example 1 is 1.5, not an integer class label"),
        ([0, -1], [0, 1], "predictions: example 1 is -1, outside [0, 2)"),
        ([0, 1], [0, np.nan], "references: example 1 is NaN, not a class label (a missing label?)"),
        (["a", "b"], [0, 1], "predictions: example 0 is 'a', not a class label"),
    ],
)
def test_bad_input_is_one_line(predictions, references, message):
    for name in ("matthews_corrcoef", "cohen_kappa"):
        with pytest.raises(ValueError) as err:
            get_metric(name).compute(predictions, references)
        assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_an_unknown_weighting_is_refused():
    with pytest.raises(ValueError, match="weights"):
        get_metric("cohen_kappa", {"weights": "cubic"})


@pytest.mark.parametrize("weights", WEIGHTS)
def test_resampled_values_are_the_metric_on_the_resampled_examples(weights):
    """Rows repeat (few classes): the bootstrap draws multinomial counts of distinct rows; each total still is the
    confusion margins of some resample, so every value lies among values the metric takes on real resamples, and
    finalizing a resample's summed rows gives that resample's value."""
    p, y = labels(7, 80, 4)
    metric = get_metric("cohen_kappa", {"weights": weights})
    rows = metric.statistics(p, y)
    idx = np.random.default_rng(0).integers(0, 80, (20, 80))
    expected = [kappa_reference(y[row], p[row], weights, 4) for row in idx]
    np.testing.assert_allclose(metric.finalize_totals(np.stack([rows[row].sum(axis=0) for row in idx])), expected)
    values = distribution(ExampleStats(metric, statistics=rows), 200, seed=1)
    assert np.isfinite(values).all() and values.std() > 0


def test_functional_forms():
    p, y = labels(8, 50, 3)
    assert kernels.matthews_corrcoef(y, p) == pytest.approx(matthews_corrcoef(y, p), rel=1e-12)
    assert kernels.cohen_kappa(y, p, "quadratic") == pytest.approx(kappa_reference(y, p, "quadratic", 3), rel=1e-12)
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 2\)"):
        kernels.cohen_kappa([0, 2], [0, 1], num_classes=2)


def test_matthews_and_unweighted_kappa_share_their_rows():
    assert get_metric("matthews_corrcoef").shared_key() == get_metric("cohen_kappa").shared_key()
    assert get_metric("cohen_kappa", {"weights": "linear"}).shared_key() != get_metric("cohen_kappa").shared_key()


@pytest.mark.parametrize(("name", "config"), [("matthews_corrcoef", None), ("cohen_kappa", {"weights": "linear"})])
def test_check_metric_holds(name, config):
    """olive_eval.testing's contract: compute equals reduce(statistics), the same value again and on shuffled
    examples."""
    from olive_eval.testing import check_metric

    p, y = labels(9, 64, 4)
    expected = matthews_corrcoef(y, p) if config is None else kappa_reference(y, p, "linear", 4)
    check_metric(name, p, y, global_target=expected, metric_config=config, rtol=1e-12)

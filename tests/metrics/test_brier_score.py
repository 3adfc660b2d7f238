"""brier_score against scikit-learn's brier_score_loss (probabilities from scipy's softmax or expit where the scores
are logits), on random and edge data; its task option; and the calibration family's bad inputs, each a one-line
error naming the column and the example."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
from pydantic import ValidationError
from sklearn.metrics import brier_score_loss

import olive_eval
from olive_eval.metrics import get_metric
from olive_eval.testing import check_metric

EXACT = 1e-12


def brier(scores: np.ndarray, labels: np.ndarray, **config) -> float:
    return float(olive_eval.compute_metric("brier_score", scores, labels, **config))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("classes", [3, 10, 200])  # 200: several blocks of scores, the last one partial
def test_multiclass_equals_scikit_learn(seed, classes) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, 3000)
    logits = rng.normal(size=(3000, classes)) * 2
    probabilities = scipy.special.softmax(logits, axis=1)
    expected = brier_score_loss(labels, probabilities, labels=list(range(classes)))
    assert brier(logits, labels) == pytest.approx(expected, abs=EXACT)
    assert brier(probabilities, labels) == pytest.approx(expected, abs=EXACT)
    assert brier(logits.astype(np.float32), labels) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_binary_equals_scikit_learn(seed) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, 3000)
    logits = rng.normal(labels - 0.5, 1.5)
    positive = scipy.special.expit(logits)
    expected = brier_score_loss(labels, positive)
    assert brier(positive, labels) == pytest.approx(expected, abs=EXACT)
    assert brier(logits, labels) == pytest.approx(expected, abs=EXACT)
    assert brier(np.stack([1 - positive, positive], axis=1), labels) == pytest.approx(expected, abs=EXACT)
    assert brier(positive[:, None], labels) == pytest.approx(expected, abs=EXACT)


def test_edge_cases() -> None:
    labels = np.array([0, 2, 1, 2])
    assert brier(np.eye(3)[labels], labels) == 0.0  # certain and right
    assert brier(np.eye(3)[(labels + 1) % 3], labels) == 2.0  # certain and wrong: (1 - 0)^2 + (0 - 1)^2
    assert brier(np.array([1.0, 0.0]), np.array([0, 1])) == 1.0
    for one_class in (np.zeros(3, np.int64), np.ones(3, np.int64)):  # one class among the references
        p = np.array([0.1, 0.2, 0.7])
        assert brier(p, one_class) == pytest.approx(brier_score_loss(one_class, p, pos_label=1), abs=EXACT)
    p = scipy.special.softmax(np.random.default_rng(3).normal(size=(5, 4)), axis=1)
    zeros = np.zeros(5, np.int64)
    assert brier(p, zeros) == pytest.approx(brier_score_loss(zeros, p, labels=[0, 1, 2, 3]), abs=EXACT)


def test_task_takes_effect() -> None:
    """[N, 2] scores: binary (the positive column, scikit-learn halves the sum) by default, both columns as
    multiclass -- twice the binary value."""
    p = np.array([[0.9, 0.1], [0.4, 0.6], [0.3, 0.7]])
    y = np.array([0, 1, 0])
    assert brier(p, y) == pytest.approx(brier_score_loss(y, p[:, 1]), abs=EXACT)
    assert brier(p, y, task="multiclass") == pytest.approx(2 * brier(p, y), abs=EXACT)


def test_per_example_terms() -> None:
    p = scipy.special.softmax(np.random.default_rng(4).normal(size=(50, 3)), axis=1)
    y = np.random.default_rng(5).integers(0, 3, 50)
    check_metric("brier_score", p, y, instance_targets=((p - np.eye(3)[y]) ** 2).sum(axis=1))


@pytest.mark.parametrize("name", ["ece", "mce", "brier_score"])
def test_bad_input_is_one_line_naming_the_example(name) -> None:
    scores = np.full((4, 3), 1 / 3)
    labels = np.array([0, 1, 2, 0])
    bad = scores.copy()
    bad[2, 1] = np.nan
    cases = [
        (bad, labels, {}, r"^predictions: example 2 holds NaN or infinity, not a score$"),
        (np.array([0, 1, 2, 0]), labels, {}, r"^predictions: calibration needs class scores .*int64"),
        (scores, np.array([0, 1, 3, 0]), {}, r"^references: example 2 is 3, outside \[0, 3\): the scores have 3"),
        (scores, np.array([0, 1, 2]), {}, r"^predictions and references hold different numbers of examples: 4 vs 3$"),
        (scores, np.array([0, 1, np.nan, 0]), {}, r"^references: example 2 is NaN, not a class label"),
        (scores[:, 0], np.array([0, 1, 2, 0]), {}, r"^references: example 2 is 2, outside \[0, 2\): binary labels"),
        (
            scores,
            labels,
            {"task": "binary"},
            r"^binary scores must have shape \[N\], \[N, 1\] or \[N, 2\], got \[4, 3\]$",
        ),
        (scores[:, 0], labels, {"task": "multiclass"}, r"^multiclass scores must have shape \[N, C\] with C >= 2"),
        (scores, labels[:, None, None], {}, r"^references must be one class label per example, got shape \[4, 1, 1\]"),
    ]
    for predictions, references, config, message in cases:
        with pytest.raises(ValueError, match=message) as caught:
            get_metric(name, config).compute(predictions, references)
        assert "\n" not in str(caught.value)


def test_errors_number_examples_across_the_batches_of_a_pass() -> None:
    metric = get_metric("ece")
    metric.statistics(np.full((5, 3), 0.2), np.zeros(5, np.int64))
    with pytest.raises(ValueError, match=r"^references: example 6 is 7, outside \[0, 3\)"):
        metric.statistics(np.full((3, 3), 0.2), np.array([0, 7, 0]))


def test_bad_config() -> None:
    for config, message in (
        ({"n_bins": 0}, "greater than or equal to 1"),
        ({"binning": "quantile"}, "'uniform' or 'adaptive'"),
        ({"task": "multilabel"}, "'binary' or 'multiclass'"),
        ({"bins": 10}, "bins"),
    ):
        with pytest.raises(ValidationError, match=message):
            get_metric("ece", config)
    with pytest.raises(ValidationError, match="n_bins"):
        get_metric("brier_score", {"n_bins": 10})


def test_no_examples_is_undefined() -> None:
    for name in ("ece", "mce", "brier_score"):
        score = get_metric(name).compute(np.empty((0, 3)), np.empty(0, np.int64))
        assert np.isnan(score.value) and score.undefined == "no examples to score"
        with pytest.raises(ValueError, match="undefined here: no examples to score"):
            olive_eval.compute_metric(name, np.empty((0, 3)), np.empty(0, np.int64))

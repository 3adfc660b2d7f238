"""A metric's ratio form (``ratio_rows``): per-example numerators and denominators whose sums' ratio is the metric,
each ratio in ``example_range``; what a sequential run's anytime-valid bounds stand on."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from olive_eval.metrics.registry import get_metric


def _rows(metric, *fields):
    stats = metric.statistics(*fields)
    form = metric.ratio_rows(stats)
    assert form is not None
    num, den = form
    low, high = metric.example_range
    assert np.all(num >= low * den) and np.all(num <= high * den)
    return stats, num, den


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiclass_micro_accuracy_is_correct_over_counted_examples(seed):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((500, 4)).astype(np.float32)
    labels = rng.integers(0, 4, 500)
    metric = get_metric("accuracy_score", {"task": "multiclass", "num_classes": 4})
    stats, num, den = _rows(metric, logits.argmax(axis=1), labels, logits)
    assert num.sum() / den.sum() == pytest.approx(accuracy_score(labels, logits.argmax(axis=1)))
    assert num.sum() / den.sum() == pytest.approx(metric.reduce(stats).value)


def test_binary_accuracy():
    rng = np.random.default_rng(3)
    scores = rng.random(300)
    labels = rng.integers(0, 2, 300)
    metric = get_metric("accuracy_score", {"task": "binary"})
    _, num, den = _rows(metric, (scores > 0.5).astype(np.int64), labels, scores)
    assert num.sum() / den.sum() == pytest.approx(accuracy_score(labels, scores > 0.5))


def test_multilabel_micro_accuracy_counts_every_label_slot():
    rng = np.random.default_rng(4)
    scores = rng.random((200, 5))
    labels = rng.integers(0, 2, (200, 5))
    metric = get_metric("accuracy_score", {"task": "multilabel", "num_labels": 5})
    _, num, den = _rows(metric, (scores > 0.5).astype(np.int64), labels, scores)
    assert np.all(den == 5)
    assert num.sum() / den.sum() == pytest.approx(np.mean((scores > 0.5) == labels))


def test_one_example_all_right_and_all_wrong():
    metric = get_metric("accuracy_score", {"task": "multiclass", "num_classes": 3})
    logits = np.eye(3, dtype=np.float32)[[0, 1]]
    _, num, den = _rows(metric, np.array([0, 1]), np.array([0, 2]), logits)
    assert num.tolist() == [1.0, 0.0] and den.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("accuracy_score", {"task": "multiclass", "num_classes": 3, "average": "macro"}),
        ("f1_score", {"task": "multiclass", "num_classes": 3}),
        ("precision", {"task": "multiclass", "num_classes": 3}),
    ],
)
def test_averages_that_are_not_pooled_counts_have_no_ratio_form(name, config):
    metric = get_metric(name, config)
    logits = np.eye(3, dtype=np.float32)[[0, 1, 2, 1]]
    assert metric.ratio_rows(metric.statistics(np.array([0, 1, 2, 1]), np.array([0, 1, 1, 1]), logits)) is None


def test_exact_match_is_a_mean_of_zeros_and_ones():
    metric = get_metric("exact_match")
    predictions = ["Paris", "rome ", "Berlin", "x"]
    references = [["paris"], ["Rome"], ["Bonn"], ["y", "x"]]
    stats, num, den = _rows(metric, predictions, references)
    assert num.tolist() == [1.0, 1.0, 0.0, 1.0] and np.all(den == 1)
    assert num.mean() == metric.reduce(stats).value


def test_a_metric_without_a_declared_range_has_none():
    metric = get_metric("wer")
    assert metric.example_range is None
    assert metric.ratio_rows(metric.statistics(["a b"], ["a c"])) is None


def test_top1_agreement_is_a_mean_of_per_example_shares():
    rng = np.random.default_rng(5)
    candidate, baseline = rng.standard_normal((2, 100, 6)).astype(np.float32)
    from olive_eval.metrics.fidelity.measures import Top1Agreement

    metric = Top1Agreement()
    stats, num, den = _rows(metric, candidate, baseline)
    assert np.all(den == 1)
    assert num.mean() == pytest.approx(np.mean(candidate.argmax(axis=1) == baseline.argmax(axis=1)))
    assert num.mean() == pytest.approx(metric.reduce(stats).value)


def test_rouge_is_a_mean_of_per_example_f_measures():
    from rouge_score import rouge_scorer

    predictions = ["the cat sat on the mat", "a dog", "completely different words", ""]
    references = ["the cat is on the mat", "a big dog", "nothing alike here", "empty"]
    metric = get_metric("rouge1")
    _, num, _ = _rows(metric, predictions, references)
    scorer = rouge_scorer.RougeScorer(["rouge1"])
    expected = [scorer.score(r, p)["rouge1"].fmeasure for p, r in zip(predictions, references, strict=True)]
    assert num.tolist() == pytest.approx(expected)


def test_fidelity_cosine_similarity_is_a_mean_of_per_example_cosines_from_minus_one_to_one():
    from sklearn.metrics.pairwise import cosine_similarity as sk_cosine

    from olive_eval.metrics.fidelity.measures import CosineSimilarity

    rng = np.random.default_rng(6)
    candidate, baseline = rng.standard_normal((2, 200, 8))
    candidate[:3] = -baseline[:3]  # opposite: -1, the range's low end
    candidate[3:6] = 2.5 * baseline[3:6]  # parallel: 1, its high end
    metric = CosineSimilarity()
    assert metric.example_range == (-1.0, 1.0)
    stats, num, den = _rows(metric, candidate, baseline)
    assert np.all(den == 1)
    np.testing.assert_allclose(num, np.diag(sk_cosine(candidate, baseline)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(num[:6], [-1, -1, -1, 1, 1, 1], rtol=0, atol=1e-12)
    assert num.mean() == pytest.approx(metric.reduce(stats).value)

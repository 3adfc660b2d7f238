"""ece and mce against torchmetrics' CalibrationError (norm l1 and max) and against the same computation written out
in float64 here; equal-mass (adaptive) bins against a hand computation and a plain sort-and-split; the options.

torchmetrics bins multiclass confidences as float32 (it casts them), so it is met to 1e-5 there and exactly for
binary float64 scores; the float64 reference is met to 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
import torch
from torchmetrics.functional.classification import binary_calibration_error, multiclass_calibration_error

import olive_eval
from olive_eval.metrics import get_metric
from olive_eval.metrics.calibration.confidence import block_rows
from olive_eval.metrics.resampling import ExampleStats, confidence_interval
from olive_eval.testing import check_metric

EXACT = 1e-12
FLOAT32 = 1e-5


def torchmetrics_errors(scores: np.ndarray, labels: np.ndarray, n_bins: int = 15) -> tuple[float, float]:
    """torchmetrics' (ECE, MCE): multiclass for ``[N, C]`` scores, binary for ``[N]``."""
    p, y = torch.from_numpy(scores), torch.from_numpy(labels)
    if scores.ndim == 2:
        values = [multiclass_calibration_error(p, y, scores.shape[1], n_bins, norm) for norm in ("l1", "max")]
    else:
        values = [binary_calibration_error(p, y, n_bins, norm) for norm in ("l1", "max")]
    return float(values[0]), float(values[1])


def top_label(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Confidence and hit, from scipy's softmax when any score lies outside [0, 1]."""
    if scores.ndim == 1:
        p = scipy.special.expit(scores) if (scores.min() < 0 or scores.max() > 1) else scores
        return p.astype(np.float64), (labels == 1).astype(np.float64)
    p = scipy.special.softmax(scores.astype(np.float64), axis=1) if (scores.min() < 0 or scores.max() > 1) else scores
    return p.max(axis=1).astype(np.float64), (p.argmax(axis=1) == labels).astype(np.float64)


def written_out(confidence: np.ndarray, hit: np.ndarray, n_bins: int) -> tuple[float, float]:
    """torchmetrics' binning in float64: bucketize(right=True) - 1 over the edges k/n; (ECE, MCE) over the bins."""
    bins = np.searchsorted(np.arange(n_bins + 1) / n_bins, confidence, side="right") - 1
    ece = mce = 0.0
    for b in np.unique(bins):
        members = bins == b
        gap = abs(confidence[members].mean() - hit[members].mean())
        ece += members.mean() * gap
        mce = max(mce, gap)
    return ece, mce


def split_by_mass(confidence: np.ndarray, hit: np.ndarray, n_bins: int) -> tuple[float, float]:
    """Equal-mass bins the plain way: sort (misses first among equal confidences), array_split, loop."""
    order = np.lexsort((hit, confidence))
    ece = mce = 0.0
    for part in np.array_split(order, n_bins):
        if len(part):
            gap = abs(confidence[part].mean() - hit[part].mean())
            ece += len(part) / len(order) * gap
            mce = max(mce, gap)
    return ece, mce


def ours(scores: np.ndarray, labels: np.ndarray, **config) -> tuple[float, float]:
    return tuple(float(olive_eval.compute_metric(name, scores, labels, **config)) for name in ("ece", "mce"))


def random_multiclass(seed: int, n: int = 2000, classes: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, n)
    logits = rng.normal(size=(n, classes)) * 2
    logits[np.arange(n), labels] += rng.normal(1.0, 1.0, n)  # right more often than chance, not always
    return logits, labels


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n_bins", [1, 5, 15, 40])
@pytest.mark.parametrize("form", ["logits", "probabilities", "float32 probabilities"])
def test_multiclass_equals_torchmetrics_and_the_float64_computation(seed, n_bins, form) -> None:
    logits, labels = random_multiclass(seed)
    scores = logits if form == "logits" else scipy.special.softmax(logits, axis=1)
    if form == "float32 probabilities":
        scores = scores.astype(np.float32)
    got = ours(scores, labels, n_bins=n_bins)
    np.testing.assert_allclose(got, torchmetrics_errors(scores, labels, n_bins), atol=FLOAT32)
    np.testing.assert_allclose(got, written_out(*top_label(scores, labels), n_bins), atol=EXACT)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("form", ["probabilities", "logits", "two columns", "two logit columns"])
def test_binary_equals_torchmetrics(seed, form) -> None:
    """The positive class's probability against the label; [N, 2] scores are read as their positive column."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, 3000)
    logits = rng.normal(labels - 0.5, 1.5)
    positive = scipy.special.expit(logits) if form != "logits" else logits
    scores = {
        "probabilities": positive,
        "logits": logits,
        "two columns": np.stack([1 - positive, positive], axis=1),
        "two logit columns": np.stack([np.zeros_like(logits), logits], axis=1) + rng.normal(size=(3000, 1)),
    }[form]
    got = ours(scores, labels)
    np.testing.assert_allclose(got, torchmetrics_errors(positive, labels), atol=EXACT)
    np.testing.assert_allclose(got, written_out(*top_label(positive, labels), 15), atol=EXACT)


def test_scores_in_several_blocks() -> None:
    """200 classes: blocks of 1,024 examples, the last one partial, a tie for the top score in the middle one."""
    logits, labels = random_multiclass(8, n=2500, classes=200)
    assert block_rows(200) == 1024
    logits[1500, [3, 9]] = logits[1500].max() + 1.0  # class 3 wins the tie
    labels[1500] = 9
    stats = get_metric("ece").statistics(logits, labels)
    assert stats[1500, 1] == 0.0
    confidence, hit = top_label(logits, labels)
    np.testing.assert_allclose(stats, np.stack([confidence, hit], axis=1), rtol=1e-6, atol=0)
    np.testing.assert_allclose(ours(logits, labels), torchmetrics_errors(logits, labels), atol=FLOAT32)
    np.testing.assert_allclose(ours(logits, labels), written_out(confidence, hit, 15), atol=EXACT)


def test_all_right_all_wrong_and_one_class() -> None:
    labels = np.array([0, 1, 2, 1])
    sure = np.eye(3)[labels]
    assert ours(sure, labels) == (0.0, 0.0) == torchmetrics_errors(sure, labels)
    wrong = np.eye(3)[(labels + 1) % 3] * 0.7 + 0.1  # confident (0.8) and always wrong: ECE = MCE = 0.8
    np.testing.assert_allclose(ours(wrong, labels), (0.8, 0.8), atol=EXACT)
    np.testing.assert_allclose(torchmetrics_errors(wrong, labels), (0.8, 0.8), atol=FLOAT32)
    logits, _ = random_multiclass(3, n=500)
    zeros = np.zeros(500, np.int64)  # one class among the references
    np.testing.assert_allclose(ours(logits, zeros), torchmetrics_errors(logits, zeros), atol=FLOAT32)
    np.testing.assert_allclose(ours(logits, zeros), written_out(*top_label(logits, zeros), 15), atol=EXACT)


def test_a_confidence_on_an_edge_falls_in_the_bin_above_and_one_has_its_own_bin() -> None:
    """Edges k/4 are exact in float32 and float64: torchmetrics and the documented rule must agree exactly."""
    p = np.array([0.0, 0.2499999, 0.25, 0.5, 0.75, 0.75, 1.0, 1.0])
    y = np.array([0, 0, 1, 1, 0, 1, 0, 0])
    score = get_metric("ece", {"n_bins": 4}).compute(p, y)
    rows = score.details["reliability"]
    assert [(r["lower"], r["upper"], r["count"]) for r in rows] == [
        (0.0, 0.25, 2),
        (0.25, 0.5, 1),
        (0.5, 0.75, 1),
        (0.75, 1.0, 2),
        (1.0, 1.0, 2),  # confidence exactly 1: a bin of its own (its gap, 1, is the MCE)
    ]
    np.testing.assert_allclose(ours(p, y, n_bins=4), torchmetrics_errors(p, y, 4), atol=EXACT)
    assert ours(p, y, n_bins=4)[1] == 1.0
    top = np.array([[0.5, 0.25, 0.25], [0.75, 0.125, 0.125], [1.0, 0.0, 0.0], [0.125, 0.375, 0.5]], np.float32)
    labels = np.array([0, 1, 0, 2])
    for n_bins in (4, 8):
        np.testing.assert_allclose(ours(top, labels, n_bins=n_bins), torchmetrics_errors(top, labels, n_bins), atol=0)


def test_edges_are_the_float64_quotients_k_over_n() -> None:
    """0.3 is the float64 nearest 3/10, so it opens bin 3 of 10 (torch.linspace's own edge may round above it)."""
    rows = get_metric("ece", {"n_bins": 10}).compute(np.array([0.3, 0.7, 0.29999999999999993]), np.ones(3)).details
    counts = [r["count"] for r in rows["reliability"]]
    assert counts == [0, 0, 1, 1, 0, 0, 0, 1, 0, 0]


def test_ties_for_the_top_score_predict_the_first_class() -> None:
    scores = np.array([[0.42, 0.42, 0.16], [0.42, 0.42, 0.16], [0.26, 0.26, 0.48], [0.1, 0.45, 0.45]], np.float32)
    labels = np.array([0, 1, 2, 2])  # a hit, a miss (class 0 wins the tie), a hit, a miss
    stats = get_metric("ece").statistics(scores, labels)
    np.testing.assert_array_equal(stats[:, 1], [1, 0, 1, 0])
    np.testing.assert_allclose(ours(scores, labels), torchmetrics_errors(scores, labels), atol=FLOAT32)


def test_empty_bins_weigh_nothing_and_are_listed_empty() -> None:
    p, y = np.array([0.05, 0.95, 0.96]), np.array([0, 1, 0])
    score = get_metric("ece", {"n_bins": 40}).compute(p, y)
    assert score.value == pytest.approx(torchmetrics_errors(p, y, 40)[0], abs=EXACT)
    rows = score.details["reliability"]
    assert len(rows) == 40 and sum(r["count"] for r in rows) == 3
    assert rows[10] == {"lower": 0.25, "upper": 0.275, "count": 0, "confidence": None, "accuracy": None}
    assert rows[38]["count"] == 2 and rows[38]["accuracy"] == 0.5


def test_adaptive_bins_by_hand() -> None:
    """Sorted 0.3 (miss), 0.6 (hit) | 0.8 (miss), 0.9 (hit): gaps 0.05 and 0.35, ECE 0.2, MCE 0.35."""
    p, y = np.array([0.9, 0.8, 0.6, 0.3]), np.array([1, 0, 1, 0])
    np.testing.assert_allclose(ours(p, y, n_bins=2, binning="adaptive"), (0.2, 0.35), atol=EXACT)
    rows = get_metric("ece", {"n_bins": 2, "binning": "adaptive"}).compute(p, y).details["reliability"]
    assert [(r["lower"], r["upper"], r["count"]) for r in rows] == [(0.3, 0.6, 2), (0.8, 0.9, 2)]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n_bins", [1, 3, 15, 2500])
def test_adaptive_equals_a_plain_sort_and_split(seed, n_bins) -> None:
    logits, labels = random_multiclass(seed)
    logits[:400] = np.round(logits[:400])  # tied confidences across bin cuts
    got = ours(logits, labels, n_bins=n_bins, binning="adaptive")
    np.testing.assert_allclose(got, split_by_mass(*top_label(logits, labels), n_bins), atol=EXACT)


def test_options_take_effect() -> None:
    logits, labels = random_multiclass(5)
    assert len({ours(logits, labels, n_bins=n) for n in (5, 15, 30)}) == 3
    assert ours(logits, labels, binning="adaptive") != ours(logits, labels)
    shown = get_metric("ece", {"n_bins": 7, "binning": "adaptive"}).compute(logits, labels).details
    assert shown["binning"] == "adaptive" and len(shown["reliability"]) == 7
    assert len(get_metric("ece", {"n_bins": 7}).compute(logits, labels).details["reliability"]) == 7
    two = scipy.special.softmax(logits[:, :2], axis=1)  # [N, 2]: binary by default, top-label as multiclass
    binary = ours(two, (labels % 2))
    multiclass = ours(two, labels % 2, task="multiclass")
    assert binary == pytest.approx(torchmetrics_errors(np.ascontiguousarray(two[:, 1]), labels % 2), abs=EXACT)
    np.testing.assert_allclose(multiclass, torchmetrics_errors(two, labels % 2), atol=FLOAT32)
    assert binary != pytest.approx(multiclass, abs=1e-3)


@pytest.mark.parametrize("config", [{}, {"binning": "adaptive", "n_bins": 4}])
@pytest.mark.parametrize("name", ["ece", "mce"])
def test_statistics_reduce_to_the_value_in_any_order(name, config) -> None:
    logits, labels = random_multiclass(6, n=300)
    result = check_metric(name, logits, labels, metric_config=config)
    confidence, hit = top_label(logits, labels)
    np.testing.assert_allclose(result.instance_scores, np.abs(confidence - hit), atol=EXACT)


@pytest.mark.parametrize("config", [{}, {"binning": "adaptive", "n_bins": 6}])
@pytest.mark.parametrize("name", ["ece", "mce"])
def test_resamples_are_binned_anew(name, config) -> None:
    """Many resamples in one call equal the metric on each resample's examples, and an interval holds the value."""
    logits, labels = random_multiclass(7, n=200)
    metric = get_metric(name, config)
    stats = metric.statistics(logits, labels)
    idx = np.random.default_rng(0).integers(0, 200, (25, 200))
    one_by_one = [metric.reduce(stats[i]).value for i in idx]
    np.testing.assert_allclose(metric.reduce_resamples(stats, idx), one_by_one, rtol=EXACT, atol=EXACT)
    value = metric.reduce(stats).value
    low, high = confidence_interval(ExampleStats(metric, statistics=stats), value, "percentile", 300, 0.95, 0)
    assert low < high and low <= value + 0.05 and high >= value - 0.05

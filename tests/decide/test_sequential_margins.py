"""Goals as per-example margins: mean(z) is s (C - threshold) for every Olive goal (threshold_from's formulas), on
means and on ratios of sums (WER), and every z_i lies within the stated bounds, which the corners attain."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from olive_eval.decide.goals import meets, threshold_from
from olive_eval.decide.sequential.goal_margins import GOAL_TYPES, difference_margins, goal_margins

CASES = list(itertools.product(GOAL_TYPES, [True, False]))


def goal_value(goal_type: str, rng: np.random.Generator) -> float:
    if goal_type == "threshold":
        return float(rng.uniform(0.2, 0.8))
    return float(rng.uniform(0, 20) if goal_type.startswith("percent") else rng.uniform(0, 0.1))


@pytest.mark.parametrize(("goal_type", "higher_is_better"), CASES)
def test_mean_of_margins_is_the_goal_formula_on_means(goal_type, higher_is_better):
    rng = np.random.default_rng(len(goal_type) + higher_is_better)
    s = 1.0 if higher_is_better else -1.0
    outcomes = set()
    for _ in range(40):
        n = int(rng.integers(1, 300))
        b = rng.binomial(1, rng.uniform(0.3, 0.9), n).astype(float)
        c = np.where(rng.random(n) < rng.uniform(0.0, 0.3), 1 - b, b)
        value = goal_value(goal_type, rng)
        margins = goal_margins(goal_type, value, c, b, higher_is_better, 0.0, 1.0)
        threshold = threshold_from(goal_type, value, float(b.mean()), higher_is_better)
        assert margins.z.mean() == pytest.approx(s * (c.mean() - threshold), abs=1e-12)
        met = meets(float(c.mean()), threshold, higher_is_better)
        if abs(c.mean() - threshold) > 1e-9:
            assert (margins.z.mean() >= 0) == met
            outcomes.add(met)
        assert np.all(margins.z >= margins.low - 1e-12) and np.all(margins.z <= margins.high + 1e-12)
    assert outcomes == {True, False}


@pytest.mark.parametrize(("goal_type", "higher_is_better"), CASES)
def test_mean_of_margins_is_the_goal_formula_on_a_ratio_of_sums(goal_type, higher_is_better):
    """WER: errors over reference words, summed over the data; the margins are weighted by reference length."""
    rng = np.random.default_rng(7 * len(goal_type) + higher_is_better)
    s = 1.0 if higher_is_better else -1.0
    for _ in range(30):
        n = int(rng.integers(1, 200))
        words = rng.integers(0, 25, n).astype(float)
        words[0] = max(words[0], 1.0)
        base_errors = rng.binomial(words.astype(int), 0.2).astype(float)
        cand_errors = rng.binomial(words.astype(int) + 2, 0.15).astype(float)
        value = float(rng.uniform(0.0, 0.5)) if goal_type == "threshold" else goal_value(goal_type, rng)
        margins = goal_margins(goal_type, value, cand_errors, base_errors, higher_is_better, 0.0, 30.0, words)
        wer_c, wer_b = cand_errors.sum() / words.sum(), base_errors.sum() / words.sum()
        threshold = threshold_from(goal_type, value, float(wer_b), higher_is_better)
        assert margins.z.mean() == pytest.approx(s * (wer_c - threshold), abs=1e-12)
        assert np.all(margins.z >= margins.low - 1e-12) and np.all(margins.z <= margins.high + 1e-12)


@pytest.mark.parametrize(("goal_type", "higher_is_better"), CASES)
@pytest.mark.parametrize("weighted", [False, True])
def test_the_bounds_are_attained_at_the_corners(goal_type, higher_is_better, weighted):
    low, high, value = -1.0, 3.0, 5.0
    corners = list(itertools.product([low, high], [low, high], [0.0, 4.0] if weighted else [1.0]))
    c, b, w = (np.array(column) for column in zip(*corners, strict=True))
    margins = goal_margins(goal_type, value, c, b, higher_is_better, low, high, w if weighted else None)
    assert margins.z.min() == pytest.approx(margins.low) and margins.z.max() == pytest.approx(margins.high)
    inside = goal_margins(goal_type, value, c * 0 + 1.0, b * 0 + 2.0, higher_is_better, low, high, w * 0 + 2.0)
    assert margins.low <= inside.z.min() and inside.z.max() <= margins.high


def test_paired_accuracy_max_degradation_has_the_plain_bounds():
    """The bench's case: z = c - b + 0.01 on 0/1 accuracy, within [-0.99, 1.01]."""
    c, b = np.array([1.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0])
    margins = goal_margins("max-degradation", 0.01, c, b, True, 0.0, 1.0)
    np.testing.assert_allclose(margins.z, c - b + 0.01)
    assert (margins.low, margins.high) == pytest.approx((-0.99, 1.01))


@pytest.mark.parametrize("higher_is_better", [True, False])
def test_difference_margins_say_which_model_is_better(higher_is_better):
    rng = np.random.default_rng(9)
    s = 1.0 if higher_is_better else -1.0
    for _ in range(20):
        a, b = rng.random(50), rng.random(50)
        margins = difference_margins(a, b, higher_is_better, 0.0, 1.0)
        assert margins.z.mean() == pytest.approx(s * (a.mean() - b.mean()))
        assert (margins.low, margins.high) == (-1.0, 1.0)


def test_bad_inputs_are_one_line_errors():
    ones = np.ones(3)
    cases = [
        (("bigger", 0.1, ones, ones, True, 0.0, 1.0), r"^unknown goal type 'bigger'; expected one of threshold"),
        (("threshold", 0.1, ones, ones, True, 1.0, 1.0), r"^the bounds need low < high \(both finite\)"),
        (("threshold", float("nan"), ones, ones, True, 0.0, 1.0), r"^the goal value must be finite, got nan$"),
        (("threshold", 0.1, ones * 2, ones, True, 0.0, 1.0), r"^3 candidate value\(s\) outside the stated bounds"),
        (("threshold", 0.1, ones, -ones, True, 0.0, 1.0), r"^3 baseline value\(s\) outside the stated bounds"),
        (("threshold", 0.1, ones, ones[:2], True, 0.0, 1.0), r"^candidate and baseline need one value per example"),
        (("threshold", 0.1, np.ones((3, 1)), ones, True, 0.0, 1.0), r"^candidate must be one value per example"),
        (("threshold", 0.1, ones * np.nan, ones, True, 0.0, 1.0), r"^candidate must be finite$"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            goal_margins(*args)
    with pytest.raises(ValueError, match=r"^weights need one value per example, got 2 for 3 examples$"):
        goal_margins("threshold", 0.1, ones, ones, True, 0.0, 1.0, ones[:2])
    for weights in (-ones, ones * 0, ones * np.inf):
        with pytest.raises(ValueError, match=r"^weights \(the shared denominators\) must be finite, >= 0 and not all"):
            goal_margins("threshold", 0.1, ones, ones, True, 0.0, 1.0, weights)

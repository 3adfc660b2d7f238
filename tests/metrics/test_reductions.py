"""Reduction kernels (issue 19): pass@k against the exact binomial formula, mean, and maj@k / take_first."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from olive_eval.data.filters import Repeats, apply_filters, build_filter
from olive_eval.metrics.reductions import (
    build_reduction,
    mean_scores,
    pass_at_k,
    passed_counts,
    reduction_registry,
)


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    """1 - C(n - c, k) / C(n, k), exactly (math.comb is 0 when n - c < k)."""
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


@pytest.mark.parametrize("seed", range(5))
def test_pass_at_k_equals_the_exact_binomial_formula(seed):
    rng = random.Random(seed)
    for _ in range(200):
        n = rng.randint(1, 200)
        k = rng.randint(1, n)
        c = np.array([rng.randint(0, n) for _ in range(7)])
        got = pass_at_k(np.full(7, n), c, k)
        want = [float(exact_pass_at_k(n, int(ci), k)) for ci in c]
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (n, k, c)


def test_pass_at_k_edges_and_mixed_sample_counts():
    assert pass_at_k(np.array([5, 5, 5]), np.array([0, 5, 1]), 1) == pytest.approx([0.0, 1.0, 0.2], abs=1e-15)
    assert pass_at_k(np.array([4]), np.array([2]), 3).tolist() == [1.0]  # n - c < k: every draw of 3 passes one
    got = pass_at_k(np.array([3, 10, 10]), np.array([1, 3, 0]), 2)
    assert got == pytest.approx([float(exact_pass_at_k(3, 1, 2)), 1 - 21 / 45, 0.0])
    assert pass_at_k(np.zeros(0, np.int64), np.zeros(0, np.int64), 1).shape == (0,)


def test_pass_at_k_is_stable_where_the_binomials_are_huge():
    n, c, k = 2000, 3, 1000  # C(2000, 1000) has 600 digits: no float holds it
    assert pass_at_k(np.array([n]), np.array([c]), k)[0] == pytest.approx(float(exact_pass_at_k(n, c, k)), rel=1e-12)


def test_pass_at_k_needs_k_at_most_n():
    with pytest.raises(ValueError) as info:
        pass_at_k(np.array([8, 3]), np.array([1, 1]), 4)
    assert str(info.value) == "pass@4 needs at least 4 samples per example; example 1 has 3"


def test_mean_and_passed_counts_over_consecutive_samples():
    scores = np.array([1.0, 0.0, 1.0, 0.5, 0.25, 1.0])
    assert mean_scores(scores, np.array([3, 2, 1])).tolist() == [2 / 3, 0.375, 1.0]
    assert passed_counts(np.array([1.0, 0.0, 1.0, 1.0]), np.array([2, 2])).tolist() == [1, 2]
    with pytest.raises(ValueError) as info:
        passed_counts(scores, np.array([3, 2, 1]))
    assert str(info.value).startswith(
        "pass@k counts a sample as passed at score 1 and failed at 0; sample 3 scored 0.5"
    )


def test_score_reductions_reduce_per_example():
    counts = np.array([4, 4])
    scores = np.array([1, 0, 0, 1, 0, 0, 0, 0], np.float64)
    assert build_reduction("mean").reduce(scores, counts).tolist() == [0.5, 0.0]
    assert build_reduction({"type": "pass_at_k", "k": 2}).reduce(scores, counts) == pytest.approx([5 / 6, 0.0])


@pytest.mark.parametrize(
    ("reduction", "expected"),
    [
        ("take_first", ["b", "x", "plain"]),
        ("majority_vote", ["a", "x", "plain"]),  # a: 2 of 3; a tie goes to the first seen
    ],
)
def test_prediction_reductions_on_hand_cases(reduction, expected):
    built = build_reduction(reduction)
    assert built.prediction_filter is not None
    flt = build_filter({"type": built.prediction_filter})
    predictions = [Repeats(["b", "a", "a"]), Repeats(["x", "y"]), "plain"]
    assert apply_filters([flt], predictions) == expected


def test_the_built_in_reductions():
    assert reduction_registry.names() == ["majority_vote", "mean", "pass_at_k", "take_first"]
    assert build_reduction({"type": "pass_at_k", "k": 4}).label() == "pass@4"

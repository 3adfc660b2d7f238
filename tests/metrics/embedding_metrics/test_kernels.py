"""The numpy kernels against hand-computed values: cosine rows, BERTScore's greedy matching."""

from __future__ import annotations

import numpy as np
import pytest

from olive_eval.metrics.embeddings.kernels import cosine_rows, greedy_match


def test_cosine_rows_by_hand():
    a = np.array([[1.0, 0.0], [3.0, 4.0], [0.0, 0.0], [1.0, 1.0]])
    b = np.array([[0.0, 2.0], [6.0, 8.0], [1.0, 0.0], [-1.0, -1.0]])
    np.testing.assert_allclose(cosine_rows(a, b), [0.0, 1.0, 0.0, -1.0])


def test_greedy_match_by_hand():
    # candidate: [CLS] x y [SEP]; reference: [CLS] x z [SEP] (special tokens weigh 0 but can be matched)
    cls, sep = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    x, y, z = np.array([0.0, 1.0, 0.0]), np.array([1.0, 1.0, 0.0]), np.array([0.0, 1.0, 1.0])
    cand, ref = np.stack([cls, x, y, sep]), np.stack([cls, x, z, sep])
    w = np.array([0.0, 1.0, 1.0, 0.0])
    p, r, f = greedy_match(cand, w, ref, w)
    # x matches x (1); y = (1,1,0)/sqrt2 best with cls or x: 1/sqrt2. z = (0,1,1)/sqrt2 best with x or sep: 1/sqrt2.
    half = 1 / np.sqrt(2)
    assert p == pytest.approx((1 + half) / 2) and r == pytest.approx((1 + half) / 2)
    assert f == pytest.approx(2 * p * r / (p + r))


def test_a_negative_best_cosine_counts_as_zero_and_an_empty_side_scores_zero():
    cand = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    ref = np.array([[-1.0, 0.0], [-1.0, 0.0], [-1.0, 0.0]])
    w = np.array([0.0, 1.0, 0.0])
    assert greedy_match(cand, w, ref, w) == (0.0, 0.0, 0.0)
    assert greedy_match(cand, w, cand, np.zeros(3)) == (0.0, 0.0, 0.0)
    assert greedy_match(cand, np.zeros(3), cand, w) == (0.0, 0.0, 0.0)
    assert greedy_match(cand, w, cand, w) == pytest.approx((1.0, 1.0, 1.0))


def test_precision_and_recall_differ_with_lengths():
    # candidate tokens a, b; reference token a only: precision averages a (1) and b (cos(a, b) = 0.6)
    a, b = np.array([1.0, 0.0]), np.array([0.6, 0.8])
    p, r, f = greedy_match(np.stack([a, b]), np.ones(2), np.stack([a]), np.ones(1))
    assert (p, r) == pytest.approx((0.8, 1.0)) and f == pytest.approx(2 * 0.8 / 1.8)

"""ROC AUC and average precision from curve_sums: the C extension (_curves.c) and the numpy form equal each other
and scikit-learn, on random scores, ties, float32 scores, zeros (and -0.0), one-class columns and empty input."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm

from olive_eval.metrics.classification import curves as CC
from olive_eval.metrics.classification.auroc import auroc
from olive_eval.metrics.classification.curves import CurveSums, curve_sums, curves_extension

SK_TOL = 1e-12


def test_the_c_extension_is_built():
    """The dev install builds it (``python setup.py build_ext --inplace``); an install without a compiler runs
    the numpy form, which the tests below hold equal to it."""
    assert curves_extension is not None


def _scores(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    s = rng.random(n)
    if kind == "ties":
        s = np.round(s, 2)
    elif kind == "float32":
        s = s.astype(np.float32).astype(np.float64)
    elif kind == "zeros":
        s = np.where(rng.random(n) < 0.3, 0.0, s)
        s[rng.random(n) < 0.2] = -0.0
    elif kind == "tiny":
        s = s * 1e-300  # subnormals and their neighbours
    return s


def _same(a: CurveSums, b: CurveSums) -> None:
    assert (a.positives, a.negatives, a.twice_area) == (b.positives, b.negatives, b.twice_area)
    assert a.ap_sum == pytest.approx(b.ap_sum, rel=1e-13, abs=1e-13)  # summed in another order than numpy's dot


@pytest.mark.parametrize("kind", ["random", "ties", "float32", "zeros", "tiny"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_c_and_numpy_sums_equal_and_match_sklearn(kind, seed):
    rng = np.random.default_rng(seed)
    for n in (1, 2, 7, 33, 500, 20_000):  # below and above the insertion-sort and top-digit sizes
        s, y = _scores(rng, n, kind), rng.random(n) < rng.uniform(0.05, 0.95)
        native, plain = curve_sums(s, y), curve_sums(s, y, native=False)
        _same(native, plain)
        if 0 < y.sum() < n:
            assert native.roc_auc == pytest.approx(skm.roc_auc_score(y, s), abs=SK_TOL)
            assert native.average_precision == pytest.approx(skm.average_precision_score(y, s), abs=SK_TOL)


def test_sums_of_degenerate_input():
    empty = curve_sums(np.empty(0), np.empty(0, bool))
    assert (empty.positives, empty.negatives, empty.twice_area, empty.ap_sum) == (0, 0, 0, 0.0)
    assert np.isnan(empty.roc_auc) and np.isnan(empty.average_precision)
    s = np.array([0.2, 0.9, 0.9, 0.0])
    for y in (np.zeros(4, bool), np.ones(4, bool)):
        _same(curve_sums(s, y), curve_sums(s, y, native=False))
        assert np.isnan(curve_sums(s, y).roc_auc)
    assert curve_sums(s, np.ones(4, bool)).average_precision == 1.0
    same = curve_sums(np.full(5, 0.5), np.array([1, 0, 1, 0, 0], bool))  # one tie group: the diagonal
    assert same.roc_auc == 0.5 and same.average_precision == pytest.approx(0.4)


def test_negative_scores_take_the_numpy_form():
    rng = np.random.default_rng(3)
    s, y = rng.normal(size=1000), rng.random(1000) < 0.4
    assert curve_sums(s, y).roc_auc == pytest.approx(skm.roc_auc_score(y, s), abs=SK_TOL)
    _same(curve_sums(s, y), curve_sums(s, y, native=False))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("kind", ["random", "ties", "float32"])
def test_class_sums_equal_each_column(order, kind):
    rng = np.random.default_rng(4)
    n, c = 3000, 6
    s = np.asarray(np.stack([_scores(rng, n, kind) for _ in range(c)], axis=1), order=order)
    y = rng.integers(-1, c, n)
    y[y == 2] = 3  # class 2 without positives
    got = curves_extension.class_curve_sums(s, y)
    assert len(got) == c
    for k in range(c):
        _same(CurveSums(*got[k]), curve_sums(s[:, k], y == k, native=False))


def test_class_sums_reject_bad_buffers():
    with pytest.raises(TypeError, match="labels: expected a 1-D int64 buffer"):
        curves_extension.class_curve_sums(np.zeros((3, 2)), np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="scores: expected a 2-D float64 buffer"):
        curves_extension.class_curve_sums(np.zeros((3, 2), np.float32), np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="positive: expected a 1-D bool buffer"):
        curves_extension.curve_sums(np.zeros(3), np.zeros(2, bool))


@pytest.mark.parametrize("seed", [0, 1])
def test_multiclass_curves_match_sklearn_without_and_with_the_extension(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    n, c = 4000, 5
    y = rng.integers(0, c, n)
    logits = rng.normal(size=(n, c))
    logits[np.arange(n), y] += 1.0
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    p[:, 1] = np.round(p[:, 1], 2)  # ties in one column (the rows no longer sum to 1: sklearn's indicator form)
    one_hot = np.eye(c, dtype=int)[y]
    sk_roc = skm.roc_auc_score(one_hot, p, average=None)
    sk_ap = skm.average_precision_score(one_hot, p, average=None)
    with_c = CC.roc_auc(p, y), CC.average_precision(p, y), auroc(p, y, task="multiclass", average="none")
    monkeypatch.setattr(CC, "curves_extension", None)
    without = CC.roc_auc(p, y), CC.average_precision(p, y), auroc(p, y, task="multiclass", average="none")
    for ours in (with_c, without):
        np.testing.assert_allclose(ours[0], sk_roc, atol=SK_TOL, rtol=0)
        np.testing.assert_allclose(ours[1], sk_ap, atol=SK_TOL, rtol=0)
        np.testing.assert_allclose(ours[2], sk_roc, atol=SK_TOL, rtol=0)
    np.testing.assert_array_equal(with_c[0], without[0])  # ROC AUC: exact integer sums on both paths
    np.testing.assert_array_equal(with_c[2], without[2])
    np.testing.assert_allclose(with_c[1], without[1], rtol=1e-13, atol=0)
    for average in ("macro", "weighted"):  # sklearn's one-vs-rest of the indicator matrix
        expected = skm.roc_auc_score(one_hot, p, average=average)
        assert auroc(p, y, task="multiclass", average=average) == pytest.approx(expected, abs=SK_TOL)
    assert auroc(p, y, task="multiclass", average="micro") == pytest.approx(
        skm.roc_auc_score(one_hot, p, average="micro"), abs=SK_TOL
    )

"""The threaded C class sums (``_curves.c``'s ``class_curve_sums`` on 1, 2 and 4 threads), the per-column numpy
form and scikit-learn agree on every registered curve sub-type; and the thread count's rule and override."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm

import olive_eval
from olive_eval.metrics.classification import curve_threads as CT
from olive_eval.metrics.classification import curves as CC
from olive_eval.metrics.classification.auroc import auroc
from olive_eval.metrics.classification.curves import CurveSums, binary_curve, curves_extension, numpy_curve_sums

SK_TOL = 1e-12


def _scores(rng: np.random.Generator, n: int, c: int, kind: str) -> np.ndarray:
    logits = rng.normal(size=(n, c))
    s = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    if kind == "ties":
        s = np.round(s, 2)
    elif kind == "float32":
        s = s.astype(np.float32).astype(np.float64)  # 29 low bits zero in every score
    elif kind == "zeros":
        s[rng.random((n, c)) < 0.3] = 0.0
        s[rng.random((n, c)) < 0.1] = -0.0
    elif kind == "tiny":
        s = s * 1e-300  # subnormals
    elif kind == "constant":
        s[:, 0] = 0.25  # one column a single tie group
    return s


def _labels(rng: np.random.Generator, n: int, c: int, kind: str) -> np.ndarray:
    y = rng.integers(-1 if kind == "no_label" else 0, c, n)
    if kind == "absent":
        y[y == 1] = 0  # class 1 never present
    elif kind == "one_class":
        y[:] = c - 1
    return y


def _numpy_sums(s: np.ndarray, y: np.ndarray) -> list[CurveSums]:
    return [numpy_curve_sums(binary_curve(s[:, k], y == k)) for k in range(s.shape[1])]


def _same(got: list, expected: list[CurveSums]) -> None:
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        a = CurveSums(*a) if isinstance(a, tuple) else a
        assert (a.positives, a.negatives, a.twice_area) == (b.positives, b.negatives, b.twice_area)
        assert a.ap_sum == pytest.approx(b.ap_sum, rel=1e-13, abs=1e-13)  # numpy's dot sums in another order


@pytest.mark.parametrize("kind", ["random", "ties", "float32", "zeros", "tiny", "constant"])
@pytest.mark.parametrize("labels", ["all", "no_label", "absent", "one_class"])
def test_threads_single_thread_and_numpy_agree(kind, labels):
    rng = np.random.default_rng(len(kind) * 7 + len(labels))
    for n, c in ((1, 3), (2, 5), (40, 3), (3000, 6), (70_000, 7)):  # below and above the insertion and thread sizes
        s, y = _scores(rng, n, c, kind), _labels(rng, n, c, labels)
        one = curves_extension.class_curve_sums(s, y, 1)
        assert curves_extension.class_curve_sums(s, y, 2) == one  # bit for bit: a column's work is one thread's
        assert curves_extension.class_curve_sums(s, y, 4) == one
        assert curves_extension.class_curve_sums(np.asfortranarray(s), y, 3) == one
        _same(one, _numpy_sums(s, y))


def test_more_threads_than_rows_or_columns_and_empty_input():
    s, y = np.array([[0.3, 0.7]]), np.array([1])
    assert curves_extension.class_curve_sums(s, y, 16) == curves_extension.class_curve_sums(s, y, 1)
    assert curves_extension.class_curve_sums(np.empty((0, 3)), np.empty(0, np.int64), 4) == [(0, 0, 0, 0.0)] * 3


def test_negative_or_nan_scores_return_none_on_every_thread_count():
    rng = np.random.default_rng(5)
    s, y = rng.random((5000, 4)), rng.integers(0, 4, 5000)
    for bad in (-1e-9, np.nan, -np.nan):
        t = s.copy()
        t[4321, 2] = bad
        for threads in (1, 2, 4):
            assert curves_extension.class_curve_sums(t, y, threads) is None
    t = s.copy()
    t[0, 0] = np.inf  # ordered above every finite score, as the numpy form does
    _same(curves_extension.class_curve_sums(t, y, 2), _numpy_sums(t, y))


def _every_subtype(s: np.ndarray, y: np.ndarray) -> dict[str, object]:
    c = s.shape[1]
    out = {
        "roc_auc": olive_eval.compute_metric("roc_auc", s, y).per_class,
        "average_precision": olive_eval.compute_metric("average_precision", s, y).per_class,
    }
    for average in ("macro", "weighted", "micro", "none"):
        out[f"auroc {average}"] = auroc(s, y, task="multiclass", num_classes=c, average=average)
    out["binary"] = auroc(s[:, 0], (y == 0).astype(int), task="binary")
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_registered_subtypes_equal_on_threads_one_thread_numpy_and_sklearn(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    n, c = 60_000, 5  # 300k keys: two threads by the rule
    y = rng.integers(0, c, n)
    logits = rng.normal(size=(n, c))
    logits[np.arange(n), y] += 1.0
    s = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    s[:, 1] = np.round(s[:, 1], 3)  # ties in one column
    monkeypatch.setattr(CT.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert CT.curve_threads(n, c) == 1 + (n * c >= 2 * CT.KEYS_PER_THREAD)
    threaded = _every_subtype(s, y)
    monkeypatch.setenv(CT.ENV_VAR, "1")
    single = _every_subtype(s, y)
    monkeypatch.setattr(CC, "curves_extension", None)
    plain = _every_subtype(s, y)
    one_hot = np.eye(c, dtype=int)[y]
    for name in threaded:
        np.testing.assert_array_equal(threaded[name], single[name])
        np.testing.assert_allclose(threaded[name], plain[name], rtol=1e-13, atol=0)
    np.testing.assert_allclose(threaded["roc_auc"], skm.roc_auc_score(one_hot, s, average=None), atol=SK_TOL)
    np.testing.assert_allclose(
        threaded["average_precision"], skm.average_precision_score(one_hot, s, average=None), atol=SK_TOL
    )
    for average in ("macro", "weighted", "micro"):
        expected = skm.roc_auc_score(one_hot, s, average=average)
        assert threaded[f"auroc {average}"] == pytest.approx(expected, abs=SK_TOL)
    assert threaded["binary"] == pytest.approx(skm.roc_auc_score(y == 0, s[:, 0]), abs=SK_TOL)


def test_the_thread_count_follows_the_keys_the_columns_and_the_cores(monkeypatch):
    monkeypatch.delenv(CT.ENV_VAR, raising=False)
    monkeypatch.setattr(CT.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    k = CT.KEYS_PER_THREAD
    assert [CT.curve_threads(rows, 10) for rows in (0, 10, k // 10, k // 5, 3 * k // 10, 10**6)] == [1, 1, 1, 2, 3, 4]
    assert CT.curve_threads(10**6, 1) == 1  # one column: one thread
    assert CT.curve_threads(10**6, 3) == 3
    monkeypatch.setattr(CT.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert CT.curve_threads(10**6, 10) == 2


def test_the_environment_variable_forces_a_count(monkeypatch):
    monkeypatch.setenv(CT.ENV_VAR, "1")
    assert CT.curve_threads(10**7, 10) == 1
    monkeypatch.setenv(CT.ENV_VAR, "3")
    assert CT.curve_threads(10, 1) == 3
    calls = []
    monkeypatch.setattr(CC, "curves_extension", _Recorder(calls))
    CC.roc_auc(np.random.default_rng(0).random((50, 2)), np.arange(50) % 2)
    assert calls == [3]


class _Recorder:
    """Stands in for the extension: records the thread count it is called with."""

    def __init__(self, calls: list) -> None:
        self.calls = calls

    def class_curve_sums(self, scores: np.ndarray, labels: np.ndarray, threads: int) -> list:
        self.calls.append(threads)
        return curves_extension.class_curve_sums(scores, labels, threads)


@pytest.mark.parametrize("value", ["0", "two", "-1", "1.5"])
def test_a_bad_thread_count_is_named(value, monkeypatch):
    monkeypatch.setenv(CT.ENV_VAR, value)
    with pytest.raises(
        ValueError, match=f"^environment variable OLIVE_EVAL_CURVE_THREADS must be a whole number >= 1, got '{value}'$"
    ):
        CT.curve_threads(100, 2)

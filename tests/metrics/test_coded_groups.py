"""Confusion rows taken from a table of label pairs are exactly the rows computed example by example, and grouping
them by their pairs' codes gives exactly :func:`unique_rows`' groups (the byte order), on random and edge-case data:
binary, multiclass, top-k, ignore_index, codes past the binned range, chunks below the table's size; multilabel and
per-token rows come without codes and are grouped by :func:`unique_rows` as before."""

from __future__ import annotations

import numpy as np
import pytest

from olive_eval.metrics import row_groups
from olive_eval.metrics.classification.confusion_rows import multiclass_confusion, pair_rows
from olive_eval.metrics.classification.stat_scores import coded_stat_scores, stat_scores
from olive_eval.metrics.registry import get_metric
from olive_eval.metrics.row_groups import coded_groups, unique_rows
from olive_eval.metrics.stats import LastGrouping


def per_example(pred: np.ndarray, tgt: np.ndarray, valid: np.ndarray, classes: int) -> np.ndarray:
    """The rows from their definition, one class at a time (``classes == 1``: binary, class 1 positive)."""
    ids = np.array([1]) if classes == 1 else np.arange(classes)
    p, t, v = pred[:, None] == ids, tgt[:, None] == ids, valid[:, None]
    counts = [p & t & v, p & ~t & v, ~p & t & v, ~p & ~t & v]
    return np.stack(counts, axis=-1).astype(np.int8)


def assert_same_groups(rows: np.ndarray, codes: np.ndarray) -> None:
    flat = rows.reshape(len(rows), int(np.prod(rows.shape[1:])))
    for ours, theirs in zip(coded_groups(flat, codes), unique_rows(flat), strict=True):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("n", [0, 1, 3, 50, 101, 102, 2000])
@pytest.mark.parametrize("classes", [2, 3, 10])
def test_pair_rows_are_the_rows_of_their_definition(n, classes):
    rng = np.random.default_rng(n * 10 + classes)
    pred, tgt = rng.integers(0, classes, n), rng.integers(0, classes, n)
    valid = rng.random(n) < 0.8
    rows, codes = pair_rows(pred, tgt, valid, classes, multiclass_confusion(classes))
    assert rows.dtype == np.int8 and rows.shape == (n, classes, 4)
    np.testing.assert_array_equal(rows, per_example(pred, tgt, valid, classes))
    assert_same_groups(rows, codes)


@pytest.mark.parametrize("n", [0, 1, 4, 5, 7, 600, 8192])
@pytest.mark.parametrize("ignore_index", [None, -1])
def test_binary_stat_scores(n, ignore_index):
    rng = np.random.default_rng(n)
    scores = rng.random(n)
    tgt = rng.integers(0, 2, n)
    if ignore_index is not None:
        tgt[rng.random(n) < 0.2] = ignore_index
    stats, codes = coded_stat_scores(scores, tgt, task="binary", ignore_index=ignore_index)
    valid = tgt != ignore_index
    np.testing.assert_array_equal(stats, per_example((scores > 0.5).astype(int), tgt, valid, 1))
    np.testing.assert_array_equal(stats, stat_scores(scores, tgt, task="binary", ignore_index=ignore_index))
    assert_same_groups(stats, codes)


@pytest.mark.parametrize("n", [0, 1, 99, 100, 101, 511, 512, 8192])
@pytest.mark.parametrize("top_k", [1, 2])
@pytest.mark.parametrize("ignore_index", [None, 3])
def test_multiclass_stat_scores(n, top_k, ignore_index):
    rng = np.random.default_rng(n + top_k)
    classes = 10
    logits = rng.normal(size=(n, classes)).astype(np.float32)
    logits[: n // 4, 1] = logits[: n // 4, 0]  # ties: the lower class first
    tgt = rng.integers(0, classes, n)
    stats, codes = coded_stat_scores(
        logits, tgt, task="multiclass", num_classes=classes, top_k=top_k, ignore_index=ignore_index
    )
    valid = tgt != ignore_index if ignore_index is not None else np.ones(n, bool)
    ranked = np.argsort(-logits, axis=1, kind="stable")[:, :top_k]
    hit = (ranked == np.where(valid, tgt, 0)[:, None]).any(axis=1)
    pred = np.where(hit, np.where(valid, tgt, 0), logits.argmax(axis=1) if n else np.zeros(0, int))
    np.testing.assert_array_equal(stats, per_example(pred, np.where(valid, tgt, 0), valid, classes))
    assert_same_groups(stats, codes)


def test_predicted_labels_and_every_pair_present():
    classes = 4
    pairs = np.array([(t, p) for t in range(classes) for p in range(classes)] * 40)
    rng = np.random.default_rng(5)
    rng.shuffle(pairs)
    stats, codes = coded_stat_scores(pairs[:, 1], pairs[:, 0], task="multiclass", num_classes=classes)
    assert len(unique_rows(stats.reshape(len(stats), -1))[0]) == classes * classes
    np.testing.assert_array_equal(stats, per_example(pairs[:, 1], pairs[:, 0], np.ones(len(pairs), bool), classes))
    assert_same_groups(stats, codes)


def test_codes_past_the_binned_range_are_sorted():
    classes = 300  # codes up to 90,000: np.unique's branch; more pairs than examples: rows computed directly
    rng = np.random.default_rng(9)
    pred, tgt = rng.integers(0, classes, 3000), rng.integers(0, classes, 3000)
    stats, codes = coded_stat_scores(pred, tgt, task="multiclass", num_classes=classes)
    assert codes.max() >= row_groups.BINNED_CODES
    np.testing.assert_array_equal(stats, per_example(pred, tgt, np.ones(3000, bool), classes))
    assert_same_groups(stats, codes)


def test_rows_without_one_label_per_example_have_no_codes():
    rng = np.random.default_rng(2)
    scores, tgt = rng.random((700, 5)), rng.integers(0, 2, (700, 5))
    stats, codes = coded_stat_scores(scores, tgt, task="multilabel")
    assert codes is None and stats.shape == (700, 5, 4)
    tokens, token_tgt = rng.integers(0, 4, (700, 6)), rng.integers(0, 4, (700, 6))
    summed, codes = coded_stat_scores(tokens, token_tgt, task="multiclass", num_classes=4)
    assert codes is None and summed.dtype == np.int32


def test_the_grouping_uses_the_codes_of_the_array_they_were_told_for():
    rng = np.random.default_rng(4)
    stats, codes = coded_stat_scores(rng.integers(0, 6, 3000), rng.integers(0, 6, 3000), task="multiclass")
    grouping = LastGrouping()
    grouping.remember(stats, codes)
    unique, inverse = grouping(stats)
    expected, expected_inverse, _ = unique_rows(stats.reshape(len(stats), -1))
    np.testing.assert_array_equal(unique, expected)
    np.testing.assert_array_equal(inverse, expected_inverse)
    other = stats.copy()  # equal content, no codes told: grouped by unique_rows
    grouping.remember(stats, np.zeros(len(stats), dtype=np.intp))  # codes that would be wrong for ``other``
    unique, inverse = grouping(other)
    np.testing.assert_array_equal(unique, expected)
    np.testing.assert_array_equal(inverse, expected_inverse)


def test_per_example_scores_of_a_chunk_are_those_of_its_rows():
    rng = np.random.default_rng(6)
    tgt = rng.integers(0, 10, 8192)
    logits = rng.normal(size=(8192, 10)) + 2 * np.eye(10)[tgt]
    for name in ("accuracy_score", "f1_score", "precision"):
        metric = get_metric(name, {"task": "multiclass", "num_classes": 10, "average": "macro"})
        stats = metric.statistics(logits, tgt)
        np.testing.assert_array_equal(metric.instance_scores(stats), metric.finalize_totals(stats))

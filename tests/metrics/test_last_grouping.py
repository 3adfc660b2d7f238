"""Per-example scores of map/reduce metrics group a chunk's statistics rows once for the sub-types sharing them;
the groups are numpy's ``unique(axis=0)`` and a new array (even at a freed one's address) is grouped anew."""

from __future__ import annotations

import weakref

import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_score

from olive_eval.metrics.classification.stat_scores import stat_scores
from olive_eval.metrics.registry import get_metric
from olive_eval.metrics.stats import LastGrouping


def reference_groups(rows: np.ndarray) -> np.ndarray:
    return np.unique(rows.reshape(len(rows), -1), axis=0)


def test_groups_are_numpys_and_the_same_array_is_grouped_once():
    rng = np.random.default_rng(0)
    grouping = LastGrouping()
    stats = rng.integers(0, 3, (500, 4, 2)).astype(np.int8)
    unique, inverse = grouping(stats)
    expected_unique = reference_groups(stats)
    order = np.lexsort(unique.T[::-1])  # ours may list the distinct rows in another order
    np.testing.assert_array_equal(unique[order], expected_unique)
    np.testing.assert_array_equal(unique[inverse], stats.reshape(len(stats), -1))
    again = grouping(stats)
    assert again[0] is unique and again[1] is inverse
    for _ in range(20):  # freed arrays: a new one at a freed address is never taken for the old one
        freed = weakref.ref(stats)
        del stats, unique, inverse, again
        # freed by its reference count, at once (no cycle holds it): 20 gc.collect() calls of the heap the imports
        # leave took 27-44 s on a busy machine and freed nothing more
        assert freed() is None
        stats = rng.integers(0, 3, (500, 4, 2)).astype(np.int8)
        unique, inverse = grouping(stats)
        np.testing.assert_array_equal(unique[inverse], stats.reshape(len(stats), -1))
        again = grouping(stats.copy())  # equal content, another array: grouped again, equal
        np.testing.assert_array_equal(again[0][again[1]], stats.reshape(len(stats), -1))


def test_shared_statistics_give_each_sub_types_own_per_example_scores():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 5, 300)
    p = np.where(rng.random(300) < 0.7, y, rng.integers(0, 5, 300))
    stats = stat_scores(p, y, task="multiclass", num_classes=5)
    for name, score in (("f1_score", f1_score), ("precision", precision_score)):
        metric = get_metric(name, {"task": "multiclass", "num_classes": 5, "average": "macro"})
        per_example = metric.instance_scores(stats)  # the second call reuses the first one's groups
        np.testing.assert_allclose(per_example, metric.finalize_totals(stats))  # each row its own total, ungrouped
        whole = score(y, p, labels=range(5), average="macro", zero_division=0)
        assert metric.reduce(stats).value == pytest.approx(whole)  # the statistics are sklearn's

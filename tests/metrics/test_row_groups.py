"""Grouping equal rows through hashes gives exactly the byte sort's groups: the reference is Python's own sort of
each row's bytes (``sorted(set(row.tobytes()))``), on random and edge-case rows, and on hashes forced to collide."""

from __future__ import annotations

import numpy as np
import pytest

from olive_eval.metrics import row_groups
from olive_eval.metrics.classification.stat_scores import stat_scores
from olive_eval.metrics.row_groups import unique_rows


def reference(rows: np.ndarray) -> tuple[list[bytes], list[int], list[int]]:
    keys = [row.tobytes() for row in np.ascontiguousarray(rows)]
    distinct = sorted(set(keys))
    at = {key: i for i, key in enumerate(distinct)}
    inverse = [at[key] for key in keys]
    return distinct, inverse, [inverse.count(i) for i in range(len(distinct))]


def check(rows: np.ndarray) -> None:
    unique, inverse, counts = unique_rows(rows)
    distinct, ref_inverse, ref_counts = reference(rows)
    assert [row.tobytes() for row in unique] == distinct
    assert inverse.tolist() == ref_inverse and counts.tolist() == ref_counts
    assert unique.dtype == rows.dtype


@pytest.mark.parametrize("n", [0, 1, 7, row_groups.HASHED_FROM - 1, row_groups.HASHED_FROM, 3000])
@pytest.mark.parametrize(
    ("width", "dtype"), [(40, np.int8), (3, np.uint8), (5, np.int16), (2, np.float32), (1, np.int64)]
)
def test_random_rows_group_as_their_bytes_sort(n, width, dtype):
    rng = np.random.default_rng(n * 100 + width)
    rows = rng.integers(-2, 3, size=(n, width)).astype(dtype)
    check(rows)


def test_confusion_rows_of_a_chunk():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 10, 8192)
    p = np.where(rng.random(8192) < 0.9, y, rng.integers(0, 10, 8192))
    check(stat_scores(p, y, task="multiclass", num_classes=10).reshape(8192, -1))


def test_signed_zero_and_nan_rows_are_told_apart_by_their_bytes():
    rows = np.zeros((1000, 2), dtype=np.float64)
    rows[::3, 0] = -0.0
    rows[::5, 1] = np.nan
    rows[::7] = [1.5, -np.inf]
    check(rows)
    assert len(unique_rows(rows)[0]) == len({r.tobytes() for r in rows}) > 3


def test_all_equal_and_all_distinct():
    check(np.ones((2000, 9), dtype=np.int8))
    check(np.arange(4000, dtype=np.int32).reshape(-1, 2))


def test_colliding_hashes_fall_back_to_the_byte_sort(monkeypatch):
    monkeypatch.setattr(row_groups, "MULTIPLIERS", np.zeros(64, dtype=np.uint64))  # every row hashes to 0
    rows = np.random.default_rng(3).integers(0, 3, size=(1500, 6)).astype(np.int8)
    assert row_groups.hashed_groups(rows) is None
    check(rows)

"""The default dataloader cuts batches across chunks of any size, array and list columns alike, from a cursor
into the first chunk (the rest of a chunk is not sliced off at each batch)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from olive_eval.data.collate import DataloaderParams, DefaultDataloader
from olive_eval.data.prepared import Prepared


def prepared(sizes: list[int]) -> Prepared:
    def chunks():
        start = 0
        for size in sizes:
            rows = range(start, start + size)
            yield {"x": np.arange(start, start + size, dtype=np.float32), "text": [f"t{i}" for i in rows]}
            start += size

    return Prepared("d", chunks, ["x"], None, ["x", "text"])


@pytest.mark.parametrize("sizes", [[10], [5, 1, 4], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [3, 3, 3, 1], [0, 7, 0, 3]])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batches_of_three_hold_the_rows_in_order_whatever_the_chunks(sizes, drop_last):
    loader = DefaultDataloader(DataloaderParams(type="default_dataloader", batch_size=3, drop_last=drop_last))
    batches = list(loader.batches(prepared(sizes)))
    expected = [3, 3, 3] if drop_last else [3, 3, 3, 1]
    assert [b.size for b in batches] == expected
    assert [b.start for b in batches] == [0, 3, 6, 9][: len(expected)]
    x = np.concatenate([b.columns["x"] for b in batches])
    assert x.dtype == np.float32 and x.tolist() == list(range(sum(expected)))
    assert [t for b in batches for t in b.columns["text"]] == [f"t{i}" for i in range(sum(expected))]
    assert all(isinstance(b.columns["text"], list) for b in batches)


@pytest.mark.parametrize("seed", range(6))
def test_random_chunks_and_batch_sizes_give_the_rows_of_one_table(seed):
    """Batches inside one chunk (sliced from it) and across chunks (joined) hold the rows slicing the whole
    table gives: 2-D arrays, lists, and a tuple column (cut as a list)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 9, size=rng.integers(1, 8)).tolist()
    total, size = sum(sizes), int(rng.integers(1, 6))
    starts = np.cumsum([0, *sizes])

    def chunks():
        for a, b in itertools.pairwise(starts):
            rows = range(int(a), int(b))
            yield {"x": np.arange(2 * a, 2 * b, dtype=np.int64).reshape(-1, 2), "text": [f"t{i}" for i in rows],
                   "tag": tuple(i % 3 for i in rows)}  # fmt: skip

    loader = DefaultDataloader(DataloaderParams(type="default_dataloader", batch_size=size))
    batches = list(loader.batches(Prepared("d", chunks, ["x"], None, ["x", "text", "tag"])))
    assert [b.start for b in batches] == list(range(0, total, size))
    x = np.arange(2 * total, dtype=np.int64).reshape(-1, 2)
    for b in batches:
        stop = min(b.start + size, total)
        np.testing.assert_array_equal(b.columns["x"], x[b.start : stop])
        assert b.columns["text"] == [f"t{i}" for i in range(b.start, stop)]
        assert b.columns["tag"] == [i % 3 for i in range(b.start, stop)] and isinstance(b.columns["tag"], list)

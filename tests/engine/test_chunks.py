"""Scoring in chunks of consecutive batches: the values and the records are those of scoring batch by batch
(the reference: chunks of one batch), and a batch whose arrays would not join the buffer closes the chunk."""

from __future__ import annotations

import json

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.engine.passes import chunks
from olive_eval.engine.passes.chunks import Chunker
from olive_eval.records.parquet import read_records


def fields(n: int, width: int = 3, dtype=np.float32, start: int = 0) -> dict:
    return {
        "prediction": np.arange(start * width, (start + n) * width, dtype=dtype).reshape(n, width),
        "references": np.arange(start, start + n),
        "text": [f"t{i}" for i in range(start, start + n)],
    }


def test_buffered_batches_join_in_order_and_the_buffer_empties():
    chunker = Chunker(["prediction", "references", "text", "absent"])
    chunker.add(fields(2), 10, 2)
    assert chunker.joins(fields(3, start=2))
    chunker.add(fields(3, start=2), 12, 3)
    start, n, joined = chunker.take()
    assert (start, n) == (10, 5)
    assert sorted(joined) == ["prediction", "references", "text"]
    np.testing.assert_array_equal(joined["prediction"], np.arange(15, dtype=np.float32).reshape(5, 3))
    np.testing.assert_array_equal(joined["references"], np.arange(5))
    assert joined["text"] == [f"t{i}" for i in range(5)]
    assert chunker.size == 0 and chunker.joins(fields(1, width=7))


@pytest.mark.parametrize(
    "other", [fields(2, width=4), fields(2, dtype=np.float64), {**fields(2), "prediction": [[0.0] * 3] * 2}]
)
def test_a_batch_of_another_width_dtype_or_kind_does_not_join(other):
    chunker = Chunker(["prediction", "references", "text"])
    chunker.add(fields(2), 0, 2)
    assert not chunker.joins(other)


def kind(column) -> tuple:
    """What must agree for two batches' columns to join (the reference): a dense array's dtype and trailing
    shape; anything else (a list, an array of objects) joins rows."""
    if isinstance(column, np.ndarray) and column.dtype != object:
        return ("array", column.dtype, column.shape[1:])
    return ("rows",)


COLUMNS = [
    np.zeros(2, np.int64),
    np.zeros(2, np.float32),
    np.zeros((2, 3), np.float32),
    np.zeros((2, 3, 1), np.float32),
    np.array(["a", "bc"], dtype=object),
    np.array([None, [1, 2]], dtype=object),
    ["a", "b"],
    [np.zeros(3), np.zeros(4)],
]


@pytest.mark.parametrize("first", range(len(COLUMNS)))
def test_a_column_joins_the_buffered_one_when_their_kinds_agree(first):
    """Every pair of column kinds (arrays of each dtype and width, arrays of objects, lists), in either role."""
    for other in COLUMNS:
        chunker = Chunker(["prediction"])
        chunker.add({"prediction": COLUMNS[first]}, 0, 2)
        assert chunker.joins({"prediction": other}) is (kind(COLUMNS[first]) == kind(other))


def test_full_by_examples_and_by_bytes(monkeypatch):
    chunker = Chunker(["prediction"])
    chunker.add(fields(chunks.CHUNK_EXAMPLES - 1), 0, chunks.CHUNK_EXAMPLES - 1)
    assert not chunker.full
    chunker.add(fields(1), chunks.CHUNK_EXAMPLES - 1, 1)
    assert chunker.full
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 100)
    small = Chunker(["prediction"])
    small.add(fields(9), 0, 9)  # 9 x 3 float32 = 108 bytes
    assert small.full


METRICS = [
    {
        "name": "acc",
        "type": "accuracy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1},
            {"name": "f1_score", "metric_config": {"average": "macro"}},
            {"name": "precision", "metric_config": {"average": "macro"}},
        ],
        "sample_log_num": 20,
    }
]


def run_and_read(config: dict, tmp_path, name: str) -> tuple[dict, list[str], list[str]]:
    config = {**config, "output_dir": str(tmp_path / name)}
    result = evaluate(config)
    values = {m: {k: v.value for k, v in r.metrics.items()} for m, r in result.models.items()}
    instances = [json.dumps(r) for r in read_records(tmp_path / name / "instances" / "cand" / "acc.parquet")]
    samples = (tmp_path / name / "samples" / "cand" / "acc_samples.jsonl").read_text().splitlines()
    return values, instances, samples


def test_chunked_scoring_gives_the_values_and_records_of_batch_by_batch(toy, tmp_path, monkeypatch):
    config = toy.config({"cand": 0.5}, METRICS)
    chunked = run_and_read(config, tmp_path, "chunked")  # 120 examples in batches of 16: one chunk
    monkeypatch.setattr(chunks, "CHUNK_EXAMPLES", 1)  # every batch is a chunk of its own
    per_batch = run_and_read(config, tmp_path, "per_batch")
    assert chunked == per_batch
    values, instances, samples = chunked
    assert len(instances) == 120 and len(samples) == 20
    first = json.loads(instances[0])
    assert list(first) == ["index", "prediction", "references", "accuracy_score", "f1_score", "precision"]
    assert [json.loads(line)["index"] for line in instances] == list(range(120))
    mean = np.mean([json.loads(line)["accuracy_score"] for line in instances])
    assert mean == pytest.approx(values["cand"]["acc-accuracy_score"])

"""Instance records as Parquet: typed columns read back as the values written (pyarrow and pandas), JSON text
where Arrow has no type, chunk after chunk, and one command that prints them as JSON lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from olive_eval.records.json_text import MAX_VALUES_PER_RECORD, jsonable
from olive_eval.records.parquet import ParquetSink, main, read_records

N = 4
COLUMNS = {
    "index": np.arange(N),
    "prediction": np.array([[0.5, -1.25], [np.nan, np.inf], [1e-8, 3.0], [-0.0, 2.0]], dtype=np.float32),
    "references": np.array([1, 0, 1, 1], dtype=np.int64),
    "accuracy_score": np.array([1.0, 0.0, 1.0, 0.0]),
    "texts": ["a", 'quote " ü 模型', "", "tab\t"],
    "dicts": [{"boxes": [1, 2]}, {}, {"a": None}, [1, "x"]],
    "wide": np.zeros((N, MAX_VALUES_PER_RECORD + 1)),
    "missing": None,
}


def write(path: Path, chunks: list[tuple[dict, int]]) -> list[OSError]:
    errors: list[OSError] = []
    sink = ParquetSink(path, lambda _path, exc: errors.append(exc))
    for columns, n in chunks:
        sink.write(columns, n)
    sink.close()
    return errors


def expected(columns: dict, i: int) -> dict:
    """The record's reference: each value as ``jsonable`` gives it (the JSON-lines records' values)."""
    return {k: None if v is None else jsonable(v[i]) for k, v in columns.items()}


def test_records_read_back_as_the_values_written(tmp_path: Path):
    assert write(tmp_path / "m.parquet", [(COLUMNS, N)]) == []
    assert list(read_records(tmp_path / "m.parquet")) == [expected(COLUMNS, i) for i in range(N)]


def test_columns_are_typed_where_arrow_has_a_type(tmp_path: Path):
    write(tmp_path / "m.parquet", [(COLUMNS, N)])
    schema = pq.read_schema(tmp_path / "m.parquet")
    assert schema.field("index").type == pa.int64()
    assert schema.field("prediction").type == pa.list_(pa.float32())
    assert schema.field("accuracy_score").type == pa.float64()
    assert schema.field("texts").type == pa.string() and schema.field("dicts").type == pa.string()
    frame = pd.read_parquet(tmp_path / "m.parquet")
    assert frame["prediction"][0].tolist() == [0.5, -1.25] and np.signbit(frame["prediction"][3][0])
    assert frame["texts"].tolist() == COLUMNS["texts"]
    assert frame["wide"][0] == json.dumps({"shape": [MAX_VALUES_PER_RECORD + 1]})


def test_chunks_become_one_file_cast_to_the_first_chunks_types(tmp_path: Path):
    first = {"index": np.arange(2), "p": np.array([[1, 2], [3, 4]], dtype=np.int32), "d": [{"a": 1}, None]}
    later = {"index": np.arange(2, 3), "p": np.array([[5, 6, 7]]), "d": ["text"]}
    assert write(tmp_path / "m.parquet", [(first, 2), (later, 1)]) == []
    assert pq.ParquetFile(tmp_path / "m.parquet").metadata.num_row_groups == 2
    assert list(read_records(tmp_path / "m.parquet")) == [
        {"index": 0, "p": [1, 2], "d": {"a": 1}},
        {"index": 1, "p": [3, 4], "d": None},
        {"index": 2, "p": [5, 6, 7], "d": "text"},
    ]


def test_a_chunk_that_cannot_fit_the_file_drops_it_and_is_reported(tmp_path: Path):
    errors = write(tmp_path / "m.parquet", [({"p": ["a", "b"]}, 2), ({"p": [{"a": 1}]}, 1)])
    assert [e.strerror for e in errors] == [
        "a chunk's columns do not fit the file's (values Arrow has no type for, after a typed chunk)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_the_file_appears_only_when_closed_and_a_run_with_no_example_still_writes_one(tmp_path: Path):
    sink = ParquetSink(tmp_path / "m.parquet", lambda _path, exc: None)
    sink.write({"index": np.arange(3)}, 3)
    assert not (tmp_path / "m.parquet").exists()
    sink.close()
    assert len(list(read_records(tmp_path / "m.parquet"))) == 3
    assert write(tmp_path / "empty.parquet", []) == [] and list(read_records(tmp_path / "empty.parquet")) == []


def test_the_command_prints_json_lines(tmp_path: Path):
    write(tmp_path / "m.parquet", [(COLUMNS, N)])
    done = subprocess.run(
        [sys.executable, "-m", "olive_eval.records.parquet", str(tmp_path / "m.parquet")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert [json.loads(line) for line in done.stdout.splitlines()] == [expected(COLUMNS, i) for i in range(N)]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "usage: python -m olive_eval.records.parquet PATH\n"),
        (["a", "b"], "usage: python -m olive_eval.records.parquet PATH\n"),
    ],
)
def test_the_command_without_one_path_prints_its_usage(argv, message, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err == message


def test_the_command_on_a_file_that_is_not_parquet_names_it(tmp_path: Path, capsys):
    (tmp_path / "m.jsonl").write_text("{}\n")
    assert main([str(tmp_path / "m.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"olive-eval: error: {tmp_path / 'm.jsonl'}: ") and err.count("\n") == 1

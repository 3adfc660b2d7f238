"""Instance records are encoded a column at a time. Below ARROW_MIN_VALUES each line is the text ``json.dumps``
gives the record (the reference); above, each value reads back exactly at its own precision."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from olive_eval.records.json_text import ARROW_MIN_VALUES, MAX_VALUES_PER_RECORD, json_lines, jsonable
from olive_eval.records.sinks import RecordSink

N = 5
COLUMNS = {
    "ints": np.array([0, -3, 7, 2**40, 9], dtype=np.int64),
    "int8": np.array([1, 2, 3, 4, 5], dtype=np.int8),
    "bools": np.array([True, False, True, True, False]),
    "floats": np.array([0.1, 1e-300, 2.5e20, -0.0, 3.0]),
    "float32": np.array([0.1, 1.5, 2.0, 1e-8, 7.25], dtype=np.float32),
    "non_finite": np.array([np.nan, np.inf, -np.inf, 1.0, 0.5]),
    "strings": ["plain", 'quote " and \\ back', "naïve ü 模型", "tab\there", ""],
    "nested": [[1, 2], [], [3.5], [[1], [2]], ["a"]],
    "dicts": [{"boxes": [1, 2]}, {}, {"a": None}, {"b": "x"}, {"n": float("nan")}],
    "rows_2d": np.arange(10, dtype=np.float32).reshape(5, 2),
    "wide": np.zeros((5, MAX_VALUES_PER_RECORD + 1)),
    "missing": None,
    "mixed": ["a", 1, None, 2.5, True],
    'key {with} "braces"': np.arange(5),
}


def reference_lines(columns: dict, n: int) -> list[str]:
    """The record format as first written: one ``json.dumps`` per record of ``jsonable`` values."""
    out = []
    for i in range(n):
        record = {key: None if values is None else jsonable(values[i]) for key, values in columns.items()}
        out.append(json.dumps(record))
    return out


@pytest.mark.parametrize("key", list(COLUMNS))
def test_each_column_kind_encodes_as_json_dumps(key):
    columns = {"index": np.arange(10, 10 + N), key: COLUMNS[key]}
    assert json_lines(columns, N).splitlines() == reference_lines(columns, N)


def test_all_columns_in_one_record_keep_their_order():
    text = json_lines(COLUMNS, N)
    assert text.endswith("\n")
    assert text.splitlines() == reference_lines(COLUMNS, N)
    assert list(json.loads(text.splitlines()[0])) == list(COLUMNS)


def test_non_finite_values_are_strings_as_before():
    record = json.loads(json_lines({"v": COLUMNS["non_finite"]}, N).splitlines()[0])
    assert record == {"v": "nan"}


def _walked(array):
    """An array value by value: Python numbers, NaN and infinity as their strings."""
    if isinstance(array, np.ndarray) and array.ndim:
        return [_walked(row) for row in array]
    value = array.item() if isinstance(array, (np.ndarray, np.generic)) else array
    return str(value) if isinstance(value, float) and not np.isfinite(value) else value


@pytest.mark.parametrize(
    "array",
    [
        np.array([[1, -2], [3, 2**40]], dtype=np.int64),
        np.array([7, 8], dtype=np.uint8),
        np.array([True, False]),
        np.array([0.1, -0.0, 1e-300], dtype=np.float64),
        np.array([[0.1, 1.5]], dtype=np.float32),
        np.array([1.0, np.nan, -np.inf], dtype=np.float32),
        np.array([1, "a", None], dtype=object),
    ],
    ids=["int64-2d", "uint8", "bool", "float64", "float32-2d", "non-finite", "object"],
)
def test_a_small_array_becomes_python_values_and_non_finite_strings(array):
    got = jsonable(array)
    assert got == _walked(array)
    assert json.dumps(got) == json.dumps(_walked(array))  # the same types: no numpy scalar left to encode
    assert all(type(v) in (int, float, bool, str, type(None)) for v in np.ravel(np.array(got, dtype=object)))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([3, 1, 2], [3, 1, 2]),
        ((1, "a", None, True), [1, "a", None, True]),
        ([1, 0.5, float("nan")], [1, 0.5, "nan"]),
        ([1, np.int64(2), np.float32(0.5)], [1, 2, 0.5]),
        ({"ids": [1, 2], "mask": (1, 1)}, {"ids": [1, 2], "mask": [1, 1]}),
    ],
    ids=["ints", "tuple-of-plain", "nan-in-a-list", "numpy-scalars", "dict-of-lists"],
)
def test_a_list_becomes_a_list_of_json_values(value, expected):
    got = jsonable(value)
    assert got == expected and json.dumps(got) == json.dumps(expected)


def test_sink_writes_records_and_honours_its_limit(tmp_path: Path):
    errors: list = []
    sink = RecordSink(tmp_path / "s.jsonl", lambda path, exc: errors.append(exc), limit=7)
    sink.write({"index": np.arange(5), "target": np.arange(5) * 2}, 5)
    sink.write({"index": np.arange(5, 10), "target": None}, 5)
    assert sink.full
    sink.write({"index": np.arange(10, 12), "target": None}, 2)
    sink.close()
    lines = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert lines == [{"index": i, "target": 2 * i} for i in range(5)] + [{"index": 5, "target": None}] + [
        {"index": 6, "target": None}
    ]
    assert sink.count == 7 and not errors


def parsed(column, n: int) -> list:
    return [json.loads(line)["v"] for line in json_lines({"v": column}, n).splitlines()]


def test_large_number_arrays_read_back_as_their_values():
    """Past ARROW_MIN_VALUES, rows are formatted by Arrow: each value reads back exactly at its own precision."""
    rng = np.random.default_rng(0)
    n = ARROW_MIN_VALUES // 4 + 1
    logits = (rng.standard_normal((n, 4)) * 10.0 ** rng.integers(-8, 20, (n, 4))).astype(np.float32)
    back = np.array(parsed(logits, n))
    assert np.array_equal(back.astype(np.float32), logits)
    wide = logits.astype(np.float64) / 3
    assert np.array_equal(np.array(parsed(wide, n)), wide)
    ints = rng.integers(-(2**40), 2**40, (n, 4))
    assert parsed(ints, n) == ints.tolist()


def test_large_float_arrays_keep_whole_numbers_floats_and_name_non_finite_values():
    n = ARROW_MIN_VALUES
    values = np.zeros((n, 2))
    values[0] = [1.0, -0.0]
    values[1] = [np.nan, -np.inf]
    values[2] = [1e22, 123456789.0]
    rows = parsed(values, n)
    assert rows[0] == [1.0, -0.0] and all(isinstance(v, float) for v in rows[0] + rows[2])
    assert rows[1] == ["nan", "-inf"]
    assert rows[2] == [1e22, 123456789.0]
    assert np.signbit(rows[0][1])

"""JSON data files (JSON lines, or one array of records) read with pyarrow, with errors that say which line.

pyarrow's errors name neither the file nor the line ("JSON parse error: Invalid value. in row 1", "Empty JSON
stream"). When reading fails, the file is read again with :mod:`json` to find the first line at fault and say what
is wrong there: text that is not JSON, a row that is not an object, or a column holding a string in one row and a
list in another (a mixed answer column). Only a file that fails pays for the second read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from olive_eval.errors import EvaluationError

#: Bytes of JSON lines parsed at a time (a block's rows make one chunk).
BLOCK_BYTES = 1 << 24


def read_json(path: str, name: str, schema_only: bool = False) -> Iterator[pa.Table]:
    """The file's rows as tables (one per block), or an empty table of its schema. A file pyarrow cannot read
    is an :class:`EvaluationError` naming the data config ``name``, the file, and the line at fault."""
    array = _is_array(path)
    try:
        yield from (_records if array else _lines)(path, schema_only)
    except (pa.ArrowException, ValueError, TypeError, AttributeError) as exc:
        fault = (_records_fault if array else _lines_fault)(path)
        text = str(exc).strip().splitlines()
        raise EvaluationError(
            f"data config '{name}': {path}: {fault or 'cannot be read: ' + (text[0] if text else type(exc).__name__)}"
        ) from exc


def _is_array(path: str) -> bool:
    """One JSON array of records rather than JSON lines."""
    with open(path, "rb") as handle:
        return handle.read(64).lstrip().startswith(b"[")


def _records(path: str, schema_only: bool) -> Iterator[pa.Table]:
    with open(path, encoding="utf-8") as handle:
        table = pa.Table.from_pylist(json.load(handle))
    yield table.slice(0, 0) if schema_only else table


def _lines(path: str, schema_only: bool) -> Iterator[pa.Table]:
    import pyarrow.json as pjson

    reader = pjson.open_json(path, read_options=pjson.ReadOptions(block_size=BLOCK_BYTES))
    if schema_only:
        yield pa.Table.from_batches([], schema=reader.schema)
        return
    for batch in reader:
        yield pa.Table.from_batches([batch])


# ---------------------------------------------------------------------------------------------- diagnosis
def _lines_fault(path: str) -> str | None:
    def rows() -> Iterator[tuple[str, Any]]:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        yield f"line {number}", json.loads(line.rstrip("\r\n"))
                    except json.JSONDecodeError as exc:
                        yield f"line {number}", _NotJson(f"{exc.msg} (column {exc.colno})")

    return _first_fault(rows(), "no rows: it holds only blank lines")


def _records_fault(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            records = json.load(handle)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno} is not valid JSON: {exc.msg} (column {exc.colno})"
    return _first_fault(((f"record {i}", row) for i, row in enumerate(records)), "no records: the array is empty")


class _NotJson(str):
    """A line that does not parse, with the parser's reason."""


def _first_fault(rows: Iterable[tuple[str, Any]], empty: str) -> str | None:
    """The first row that is not JSON or not an object, or whose column holds another type than in earlier rows."""
    seen: dict[str, tuple[str, str]] = {}
    count = 0
    for where, row in rows:
        count += 1
        if isinstance(row, _NotJson):
            return f"{where} is not valid JSON: {row}"
        if not isinstance(row, dict):
            return f"{where} is {_kind(row)}, not an object of columns"
        for column, value in row.items():
            if value is None:
                continue
            kind = _kind(value)
            first_where, first_kind = seen.setdefault(column, (where, kind))
            if kind != first_kind:
                return (
                    f"column '{column}' holds {kind} at {where} but {first_kind} at {first_where}; a column holds one "
                    "type in every row (for several answers, a list in every row)"
                )
    return None if count else empty


def _kind(value: Any) -> str:
    """How a message names a JSON value's type (a list's elements are pyarrow's to check)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "a string", list: "a list"}.get(type(value), "an object")

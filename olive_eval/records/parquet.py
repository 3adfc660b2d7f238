"""Instance records as one Parquet file per metric: a row group per chunk of batches, columns typed as they come.

Parquet, not JSON lines: formatting each example's logits as text cost 12-20% of a run on a small model; an
Arrow column is built from the arrays as they are. Number arrays become number and list columns; a list of
strings a string column; anything else (dicts, mixed lists, images), and a prediction of more than
:data:`~olive_eval.records.json_text.MAX_VALUES_PER_RECORD` values (written as ``{"shape": [...]}``), a string column
of JSON text that :func:`read_records` decodes (its field metadata says so).

Read one: ``python -m olive_eval.records.parquet PATH`` (JSON lines) or ``pandas.read_parquet(PATH)``.
"""

from __future__ import annotations

import errno
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from olive_eval.records.json_text import MAX_VALUES_PER_RECORD, json_texts, jsonable
from olive_eval.records.sinks import OnWriteError, RecordSink

#: Field metadata marking a string column of JSON text (values Arrow has no column type for).
JSON_FIELD = {b"olive_eval.encoding": b"json"}


def arrow_column(values: Any, n: int, as_json: bool = False) -> tuple[pa.Array, bool]:
    """One column's values for ``n`` examples, with whether they are JSON text (``as_json``: whatever they are)."""
    if as_json:
        return _strings(json_texts(values, n)), True
    if values is None:
        return pa.nulls(n), False
    if isinstance(values, np.ndarray) and values.dtype != object and values.dtype.kind in "biuf":
        if values.dtype == np.float16:
            values = values.astype(np.float32)
        if values.ndim == 1:
            return _numbers(values), False
        if values[0].size > MAX_VALUES_PER_RECORD:
            return _strings([json.dumps({"shape": list(values.shape[1:])})] * n), True
        if values.ndim == 2:
            offsets = _numbers(np.arange(0, values.size + 1, values.shape[1], dtype=np.int32))
            return pa.ListArray.from_arrays(offsets, _numbers(values.reshape(-1))), False
    elif isinstance(values, list) and all(type(v) is str for v in values):
        return _strings(values), False
    return _strings(json_texts(values, n)), True


# Arrays are built from their buffers: ``pa.array`` imports pandas (a second or more) to check for its types.


def _numbers(values: np.ndarray) -> pa.Array:
    """A 1-D number or bool array as an Arrow array over the same values."""
    if values.dtype == np.bool_:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    values = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("="))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def _strings(texts: list[str]) -> pa.Array:
    encoded = [t.encode("utf-8", "replace") for t in texts]  # "replace": a lone surrogate cannot be UTF-8
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets), data])


def record_table(columns: dict[str, Any], n: int, json_keys: frozenset[str] = frozenset()) -> pa.Table:
    """The columns as one table; those in ``json_keys`` as JSON text whatever their values."""
    arrays, fields = [], []
    for key, values in columns.items():
        array, is_json = arrow_column(values, n, key in json_keys)
        arrays.append(array)
        fields.append(pa.field(key, array.type, metadata=JSON_FIELD if is_json else None))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


class ParquetSink(RecordSink):
    """A Parquet file written a row group per :meth:`write`, moved into place by :meth:`close`.

    The first chunk fixes the columns' types; a later chunk is cast to them (a wider integer, a null column;
    JSON text where the first chunk's was). One that cannot be is an error like a full disk: the file is
    dropped, the metric kept.
    """

    binary = True

    def __init__(self, path: Path, on_error: OnWriteError, out_dir: Path | None = None) -> None:
        self._writer: pq.ParquetWriter | None = None
        #: Columns the first chunk wrote as JSON text: later chunks follow it.
        self._json_keys: frozenset[str] = frozenset()
        super().__init__(path, on_error, out_dir=out_dir)

    def write(self, columns: dict[str, Any], n: int) -> None:
        self.count += n
        if self._handle is None or not n:
            return
        try:
            table = record_table(columns, n, self._json_keys)
            if self._writer is None:
                # Dictionary-encoding numbers (logits) costs more than they take to write: strings only.
                strings = [f.name for f in table.schema if f.type == pa.string()]
                self._writer = pq.ParquetWriter(self._handle, table.schema, use_dictionary=strings)
                self._json_keys = frozenset(f.name for f in table.schema if f.metadata == JSON_FIELD)
            elif any(f.metadata == JSON_FIELD for f in table.schema if f.name not in self._json_keys):
                raise pa.ArrowInvalid("values Arrow has no type for, after a typed chunk")
            elif table.schema != self._writer.schema:
                table = table.cast(self._writer.schema)
            self._writer.write_table(table)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            self._fail(OSError(errno.EINVAL, f"a chunk's columns do not fit the file's ({exc})"))
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        try:
            if self._handle is not None and self._writer is None:  # no chunk came: an empty file still has columns
                self._writer = pq.ParquetWriter(self._handle, pa.schema([pa.field("index", pa.int64())]))
            if self._writer is not None:
                self._writer.close()  # the footer; the file itself stays open for the rename
                self._writer = None
        except OSError as exc:
            self._fail(exc)
        super().close()

    def discard(self) -> None:
        self._writer = None
        super().discard()


def read_records(path: Path | str) -> Iterator[dict[str, Any]]:
    """Each example's record as the JSON value it stands for (NaN and infinity as ``"nan"``, ``"inf"``...)."""
    parquet = pq.ParquetFile(path)
    decoded = {f.name for f in parquet.schema_arrow if f.metadata == JSON_FIELD}
    for batch in parquet.iter_batches():
        for row in batch.to_pylist():
            yield {k: json.loads(v) if k in decoded and v is not None else jsonable(v) for k, v in row.items()}


def main(argv: list[str]) -> int:
    """``python -m olive_eval.records.parquet PATH``: the records as JSON lines on stdout."""
    if len(argv) != 1:
        print("usage: python -m olive_eval.records.parquet PATH", file=sys.stderr)
        return 2
    try:
        for record in read_records(argv[0]):
            sys.stdout.write(json.dumps(record) + "\n")
    except (OSError, pa.ArrowInvalid) as exc:
        print(f"olive-eval: error: {argv[0]}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

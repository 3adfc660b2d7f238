"""Per-example records: ``instances/<model>/<metric>.parquet`` (:mod:`olive_eval.records.parquet`) and Olive's
``sample_log_num`` sample log (JSON lines, this module).

Records are written a chunk of batches at a time as a pass goes (memory does not grow with the dataset), each
column converted to JSON text in one call, to a temporary file that replaces the final one when the pass is
done, so a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable
from itertools import chain, repeat
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.records.output_dir import folder_names
from olive_eval.records.output_manifest import may_replace, record_written
from olive_eval.records.results import file_mode

#: Predictions with more values than this per example (e.g. LM logits) are written as their shape only.
MAX_VALUES_PER_RECORD = 256


def jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.size > MAX_VALUES_PER_RECORD:
            return {"shape": list(value.shape)}
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return {"bytes": len(value)}
    if hasattr(value, "size") and hasattr(value, "mode"):  # a PIL image
        return {"image": list(value.size), "mode": value.mode}
    return value


def rows(values: Any) -> list[Any]:
    """Per-example JSON values, converted in one call per array (not one per row)."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        if values.ndim > 1 and values[0].size > MAX_VALUES_PER_RECORD:
            return [{"shape": list(values.shape[1:])}] * len(values)
        if not np.issubdtype(values.dtype, np.floating) or np.isfinite(values).all():
            return values.tolist()  # nothing for JSON to choke on: skip the per-value walk
        return jsonable(values.tolist())
    return [jsonable(v) for v in values]


#: Number arrays with more values than this are converted to text by Arrow (its import costs about 20 ms once).
ARROW_MIN_VALUES = 16384


def json_texts(values: Any, n: int) -> list[str]:
    """Each example's value as JSON text, converted one array at a time (10k records of 10 logits: about 15 ms,
    where one ``json.dumps`` per record took 150).

    Integers and strings read as ``json.dumps`` writes them; floats in their shortest round-trip form at their
    own precision (a float32 logit as ``0.19819158``), always with a point or exponent; NaN and infinity as the
    strings ``"nan"``, ``"inf"``, ``"-inf"``. ``None`` stands for a missing column (``null`` for every example).
    """
    if values is None:
        return ["null"] * n
    if isinstance(values, np.ndarray) and values.dtype != object and values.ndim in (1, 2):
        wide = values.ndim == 2 and values.shape[1] > MAX_VALUES_PER_RECORD
        if values.dtype == np.bool_ and values.ndim == 1:
            return ["true" if v else "false" for v in values.tolist()]
        if np.issubdtype(values.dtype, np.integer) and values.ndim == 1:
            return list(map(str, values.tolist()))
        if np.issubdtype(values.dtype, np.floating) and values.ndim == 1 and values.dtype.itemsize <= 8:
            bits = np.ascontiguousarray(values).view(f"u{values.dtype.itemsize}")  # -0.0 stays apart from 0.0
            _, first, inverse = np.unique(bits, return_index=True, return_inverse=True)
            texts = [json.dumps(jsonable(value)) for value in values[first].tolist()]
            return list(map(texts.__getitem__, inverse.reshape(-1).tolist()))
        numeric = np.issubdtype(values.dtype, np.integer) or values.dtype in (np.float32, np.float64)
        if numeric and not wide and values.size >= ARROW_MIN_VALUES:
            return _arrow_rows(values)
    elif isinstance(values, list) and all(type(v) is str for v in values):
        return list(map(encode_basestring_ascii, values))
    return list(map(json.dumps, rows(values)))


def _arrow_rows(values: np.ndarray) -> list[str]:
    """Rows of a 2-D number array as JSON lists, formatted by Arrow (C++, shortest round-trip for floats)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    flat = pa.array(np.ascontiguousarray(values).reshape(-1))
    text = pc.cast(flat, pa.string())
    floating = np.issubdtype(values.dtype, np.floating)
    if floating and np.any(values == np.trunc(values)):  # Arrow writes 1.0 as "1": keep it a float
        whole = pc.match_substring_regex(text, r"^-?[0-9]+$")
        text = pc.if_else(whole, pc.binary_join_element_wise(text, ".0", ""), text)
    if floating and not np.isfinite(values).all():  # NaN and infinity as strings, as jsonable does
        quoted = pc.binary_join_element_wise('"', text, '"', "")
        text = pc.if_else(pc.is_finite(flat), text, quoted)
    offsets = pa.array(np.arange(0, values.size + 1, values.shape[1], dtype=np.int64))
    joined = pc.binary_join(pa.LargeListArray.from_arrays(offsets, text), ", ")
    return pc.binary_join_element_wise("[", joined, "]", "").to_pylist()


def json_lines(columns: dict[str, Any], n: int) -> str:
    """``n`` records, one JSON object per line with the columns' keys in order: the text ``json.dumps`` gives
    each record (``{"index": 0, "prediction": 3}``), joined from the columns' texts in one pass."""
    if not columns:
        return "{}\n" * n
    parts: list[Iterable[str]] = []
    for k, (key, values) in enumerate(columns.items()):
        parts += [repeat(("{" if k == 0 else ", ") + json.dumps(key) + ": "), json_texts(values, n)]
    parts.append(repeat("}\n"))
    return "".join(chain.from_iterable(zip(*parts, strict=False)))  # the repeat() parts are endless


#: Told about a record file that could not be written (the file's final path, the OS error).
OnWriteError = Callable[[Path, OSError], None]


class RecordSink:
    """A JSON-lines file written in pieces, moved into place by :meth:`close` (dropped by :meth:`discard`).

    A write error (a full disk) drops the file and goes to ``on_error``; later writes do nothing, so the
    metric's values, which do not depend on the file, are kept.
    """

    #: Whether the file is written as bytes (a subclass's binary format) rather than UTF-8 text.
    binary = False

    def __init__(
        self, path: Path, on_error: OnWriteError, limit: int | None = None, out_dir: Path | None = None
    ) -> None:
        self.path = path
        #: The run's output folder: the file is listed in its mark, and never written over a file of the user's.
        self.out_dir = out_dir
        self.limit = limit
        self.count = 0
        self._on_error = on_error
        self._tmp = ""
        self._handle: Any = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, self._tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            if out_dir is not None:  # listed before it is written to: a run that dies leaves nothing unlisted
                record_written(out_dir, Path(self._tmp), partial=True)
            self._handle = os.fdopen(fd, "wb") if self.binary else os.fdopen(fd, "w", encoding="utf-8")
        except OSError as exc:
            self._fail(exc)

    @property
    def full(self) -> bool:
        return self.limit is not None and self.count >= self.limit

    def write(self, columns: dict[str, Any], n: int) -> None:
        """``n`` records from per-example columns (arrays or lists, each ``n`` long; ``None`` for null)."""
        if self.limit is not None:
            n = min(n, max(0, self.limit - self.count))
            columns = {key: None if values is None else values[:n] for key, values in columns.items()}
        self.count += n
        if self._handle is None or not n:
            return
        try:
            self._handle.write(json_lines(columns, n))
        except OSError as exc:
            self._fail(exc)

    def write_file(self, data: bytes) -> None:
        """The whole file as an earlier evaluation wrote it (a model served from the result cache), moved into
        place as :meth:`close` moves a file written in pieces; nothing else may be written to this sink."""
        if self._handle is None:
            return
        try:
            (self._handle if self.binary else self._handle.buffer).write(data)
        except OSError as exc:
            self._fail(exc)
            return
        RecordSink.close(self)  # the bytes are the whole file: no subclass adds to them (a Parquet footer)

    def close(self) -> None:
        if self._handle is None:
            return
        try:
            self._handle.flush()
            os.fchmod(self._handle.fileno(), file_mode())
            self._handle.close()
            self._handle = None
            if self.out_dir is not None and not may_replace(self.out_dir, self.path):
                raise OSError(errno.EEXIST, "a file olive-eval did not write (or one changed since) is there; kept")
            os.replace(self._tmp, self.path)
            self._tmp = ""
            if self.out_dir is not None:
                record_written(self.out_dir, self.path)
        except OSError as exc:
            self._fail(exc)

    def discard(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):  # closing flushes what is buffered, which a full disk refuses
                self._handle.close()
            self._handle = None
        if self._tmp:
            Path(self._tmp).unlink(missing_ok=True)
            self._tmp = ""

    def _fail(self, exc: OSError) -> None:
        """Drop the partial file and report the error."""
        with contextlib.suppress(OSError):
            self.discard()
        self._on_error(self.path, exc)


class InstanceWriter:
    """Opens the per-example files of a run's output directory.

    ``model_folder`` arguments are the folders :func:`olive_eval.records.output_dir.folder_names` gave each
    model; metric files are named the same way, so no two models or metrics ever share a file. The first
    file that cannot be written is kept in :attr:`errors` (one is enough to tell a full disk); the run
    goes on without the files.
    """

    def __init__(self, output_dir: Path, metric_names: list[str] | None = None) -> None:
        self.output_dir = output_dir
        self._metric_files = folder_names(metric_names or [])
        #: The first file that could not be written, with the OS error (empty when all were written).
        self.errors: dict[str, str] = {}

    def _file(self, metric: str) -> str:
        return self._metric_files.get(metric) or folder_names([metric])[metric]

    def _failed(self, path: Path, exc: OSError) -> None:
        if not self.errors:
            self.errors[str(path)] = exc.strerror or str(exc)

    def instances_path(self, model_folder: str, metric: str) -> Path:
        return self.output_dir / "instances" / model_folder / f"{self._file(metric)}.parquet"

    def sample_log_path(self, model_folder: str, metric: str, log_dir: Path | None) -> Path:
        root = log_dir if log_dir is not None else self.output_dir / "samples"
        return root / model_folder / f"{self._file(metric)}_samples.jsonl"

    def instances(self, model_folder: str, metric: str) -> RecordSink:
        """A Parquet file (:mod:`olive_eval.records.parquet`, imported here: pyarrow only when records are written)."""
        from olive_eval.records.parquet import ParquetSink

        return ParquetSink(self.instances_path(model_folder, metric), self._failed, out_dir=self.output_dir)

    def sample_log(self, model_folder: str, metric: str, n: int, log_dir: Path | None) -> RecordSink:
        """Olive's format: the first ``n`` records ``{"index", "prediction", "target"}``."""
        path = self.sample_log_path(model_folder, metric, log_dir)
        return RecordSink(path, self._failed, limit=n, out_dir=self.output_dir)


class HeldSink:
    """Records kept in memory, in order, instead of written: a shard of a sharded pass hands its rows' records
    back to the run, which writes them (:meth:`replay`) into the one file a one-process pass writes."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.count = 0
        self.chunks: list[tuple[dict[str, Any], int]] = []

    @property
    def full(self) -> bool:
        return self.limit is not None and self.count >= self.limit

    def write(self, columns: dict[str, Any], n: int) -> None:
        if self.limit is not None:  # a sample log: only its first records can be written
            n = min(n, max(0, self.limit - self.count))
            columns = {key: None if values is None else values[:n] for key, values in columns.items()}
        if n:
            self.chunks.append((columns, n))
            self.count += n

    def replay(self, sink: RecordSink) -> None:
        """Write the held records to ``sink`` as they came (the caller closes it)."""
        for columns, n in self.chunks:
            sink.write(columns, n)

    def close(self) -> None:
        """Nothing to move into place: the records go back to the run as they are."""

    def discard(self) -> None:
        self.chunks = []


class HeldRecords:
    """An :class:`InstanceWriter` look-alike whose files are :class:`HeldSink` objects, by (metric, kind)."""

    def __init__(self) -> None:
        self.sinks: dict[tuple[str, str], HeldSink] = {}

    def instances(self, model_folder: str, metric: str) -> HeldSink:
        return self.sinks.setdefault((metric, "instances"), HeldSink())

    def sample_log(self, model_folder: str, metric: str, n: int, log_dir: Path | None) -> HeldSink:
        return self.sinks.setdefault((metric, "samples"), HeldSink(n))

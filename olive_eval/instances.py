"""Per-example records: ``instances/<model>/<metric>.jsonl`` and Olive's ``sample_log_num`` sample log.

Records are written batch by batch as a pass goes (memory does not grow with the dataset) to a
temporary file that replaces the final one when the pass is done, so a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from olive_eval.output_dir import folder_names
from olive_eval.results import file_mode

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


#: Told about a record file that could not be written (the file's final path, the OS error).
OnWriteError = Callable[[Path, OSError], None]


class RecordSink:
    """A JSON-lines file written in pieces, moved into place by :meth:`close` (dropped by :meth:`discard`).

    A write error (a full disk) drops the file and goes to ``on_error``; later writes do nothing, so the
    metric's values, which do not depend on the file, are kept.
    """

    def __init__(self, path: Path, on_error: OnWriteError, limit: int | None = None) -> None:
        self.path = path
        self.limit = limit
        self.count = 0
        self._on_error = on_error
        self._tmp = ""
        self._handle: TextIO | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, self._tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            self._handle = os.fdopen(fd, "w", encoding="utf-8")
        except OSError as exc:
            self._fail(exc)

    @property
    def full(self) -> bool:
        return self.limit is not None and self.count >= self.limit

    def write(self, records: list[dict[str, Any]]) -> None:
        if self.limit is not None:
            records = records[: max(0, self.limit - self.count)]
        self.count += len(records)
        if self._handle is None:
            return
        try:
            self._handle.write("".join(json.dumps(r) + "\n" for r in records))
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        if self._handle is None:
            return
        try:
            self._handle.flush()
            os.fchmod(self._handle.fileno(), file_mode())
            self._handle.close()
            self._handle = None
            os.replace(self._tmp, self.path)
            self._tmp = ""
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

    ``model_folder`` arguments are the folders :func:`olive_eval.output_dir.folder_names` gave each
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

    def instances(self, model_folder: str, metric: str) -> RecordSink:
        return RecordSink(self.output_dir / "instances" / model_folder / f"{self._file(metric)}.jsonl", self._failed)

    def sample_log(self, model_folder: str, metric: str, n: int, log_dir: Path | None) -> RecordSink:
        """Olive's format: the first ``n`` records ``{"index", "prediction", "target"}``."""
        root = log_dir if log_dir is not None else self.output_dir / "samples"
        return RecordSink(root / model_folder / f"{self._file(metric)}_samples.jsonl", self._failed, limit=n)

"""Where a pass's per-example records go: a file written in pieces and moved into place when the pass is done
(:class:`RecordSink`; a reader never sees half a file), or records held in memory for the run to write
(:class:`HeldSink`, a shard's).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from olive_eval.records.json_text import json_lines
from olive_eval.records.output_manifest import may_replace, record_written
from olive_eval.records.results import file_mode

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

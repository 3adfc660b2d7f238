"""The baseline's outputs, kept from its own pass for the fidelity metrics of every candidate.

The baseline's pass writes the fields its fidelity metrics compare (``logits``, ``prediction``, named outputs) to
Arrow IPC files in the output folder (``outputs/<baseline>/<data config>/part-<first example>.arrow``), a record
batch every :data:`FLUSH_BYTES`; a candidate's pass reads back, memory-mapped, the rows of each batch it scores.
The outputs are never held whole: memory stays at about one record batch whatever the data's size. A sharded
pass writes one part per shard. The files are per-example records of the baseline: the output folder's mark lists
them, and the result cache keeps and restores them with its entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.config.metric import MetricConfig
from olive_eval.data.batch import Column, Columns
from olive_eval.engine.model.runtime_settings import Settings, settings_key
from olive_eval.engine.passes.fields import OUTPUT
from olive_eval.errors import EvaluationError
from olive_eval.metrics.fidelity.measures import BASELINE
from olive_eval.records.output_manifest import record_written

#: Bytes of outputs buffered before a record batch is written.
FLUSH_BYTES = 8 << 20
SHAPE = "#shape"


@dataclass(frozen=True)
class BaselineLink:
    """Where a run's baseline keeps its outputs, and whether the model being evaluated is that baseline."""

    #: the run's output folder, whose mark lists the files
    out_dir: Path
    #: ``<output dir>/outputs/<baseline folder>``
    root: Path
    baseline: str
    is_baseline: bool
    #: why the baseline has no outputs (it failed), for a candidate's fidelity metrics to say
    missing: str | None = None

    def folder(self, data_config: str, settings: Settings, kind: str = "") -> Path:
        """The folder of one pass's kept outputs (``kind``: another kind of work's, apart from the pass's)."""
        key = settings_key(settings)
        suffix = f"-{hashlib.sha256(key.encode()).hexdigest()[:12]}" if key else ""
        return self.root / f"{data_config}{suffix}{'.' + kind if kind else ''}"


def compared_fields(metrics: Sequence[MetricConfig]) -> list[str]:
    """The fields the metrics read from the baseline's outputs (without the ``baseline.`` prefix)."""
    reads = {name for m in metrics for s in m.sub_types for name in m.reads(s)}
    return sorted(name.removeprefix(BASELINE) for name in reads if name.startswith(BASELINE))


def missing_output(name: str, fields: Columns) -> str:
    """What a model lacks that a fidelity metric compares, and what it has."""
    outputs = sorted(f.removeprefix(OUTPUT) for f in fields if f.startswith(OUTPUT))
    if name.startswith(OUTPUT):
        return (
            f"the model has no output '{name.removeprefix(OUTPUT)}'; its outputs: {', '.join(outputs) or 'none named'}"
        )
    return f"the pass gives no '{name}'"


class OutputsCapture:
    """The baseline's pass: each batch's compared fields appended to a part file (a consumer of the pass)."""

    def __init__(self, folder: Path, names: list[str], start: int, out_dir: Path | None) -> None:
        self.names, self.out_dir = names, out_dir
        self.path = folder / f"part-{start:012d}.arrow"
        self._tmp = folder / f".part-{start:012d}.arrow.{os.getpid()}"
        self._writer: Any = None
        self._pending: list[Any] = []
        self._bytes = 0
        self.error: Exception | None = None

    def pass_reads(self) -> set[str]:
        return set(self.names)

    def check_fields(self, available: list[str]) -> None:
        """Named outputs (``output.<name>``) are known only once the model answers; the rest are checked here."""
        missing = [n for n in self.names if n not in available and not n.startswith("output.")]
        if missing:
            self.error = EvaluationError(f"the pass gives no {', '.join(missing)} to keep for the fidelity metrics")
            self._note(str(self.error))

    def update(self, fields: Columns, start: int, cache: dict[Any, Any]) -> None:
        if self.error is not None:
            return
        try:
            self._add(fields)
        except Exception as exc:  # the candidates' fidelity metrics say why the outputs are missing; this pass goes on
            self.error = exc
            self.discard()
            self._note(f"could not keep its outputs: {exc}")

    def _note(self, why: str) -> None:
        """Why this part is missing, for the candidates' fidelity metrics to say."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.with_suffix(".error").write_text(why)
            if self.out_dir is not None:
                record_written(self.out_dir, self.path.with_suffix(".error"))
        except OSError:
            pass

    def _add(self, fields: Columns) -> None:
        import pyarrow as pa

        columns: dict[str, Any] = {}
        for name in self.names:
            if name not in fields:
                raise EvaluationError(missing_output(name, fields))
            columns.update(_encode(name, fields[name]))
        batch = pa.RecordBatch.from_pydict(columns)
        if self._writer is None:
            self._tmp.parent.mkdir(parents=True, exist_ok=True)
            if self.out_dir is not None:  # listed first, so that a run that dies here leaves nothing unlisted
                record_written(self.out_dir, self._tmp, partial=True)
            self._writer = pa.ipc.new_file(str(self._tmp), batch.schema)
        self._pending.append(batch)
        self._bytes += batch.nbytes
        if self._bytes >= FLUSH_BYTES:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self._pending:
            self._writer.write_table(pa.Table.from_batches(self._pending).combine_chunks())
        self._pending, self._bytes = [], 0

    def finish(self) -> None:
        """The part in place (atomically) and listed in the output folder's mark."""
        if self.error is not None or self._writer is None:
            return
        self._flush()
        self._writer.close()
        self._writer = None
        os.replace(self._tmp, self.path)
        if self.out_dir is not None:
            record_written(self.out_dir, self.path)

    def discard(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None
        self._tmp.unlink(missing_ok=True)


def _encode(name: str, column: Column) -> dict[str, Any]:
    """Arrow columns for one field: numbers as flat lists with each row's shape, text as strings, else JSON."""
    import pyarrow as pa

    if isinstance(column, np.ndarray) and column.dtype != object:
        rows = column.reshape(len(column), -1)
        offsets = pa.array(np.arange(len(rows) + 1, dtype=np.int64) * rows.shape[1])
        flat = pa.LargeListArray.from_arrays(offsets, pa.array(rows.ravel()))
        ndim = column.ndim - 1
        shapes = pa.ListArray.from_arrays(
            pa.array(np.arange(len(column) + 1, dtype=np.int32) * ndim),
            pa.array(np.tile(np.asarray(column.shape[1:], dtype=np.int64), len(column))),
        )
        return {name: flat, name + SHAPE: shapes}
    items = list(column)
    if all(isinstance(item, str) for item in items):
        return {name: pa.array(items, type=pa.large_string())}
    if all(isinstance(item, np.ndarray) and item.dtype != object for item in items):
        flat = pa.array([item.ravel() for item in items], type=pa.large_list(pa.from_numpy_dtype(items[0].dtype)))
        return {name: flat, name + SHAPE: pa.array([list(item.shape) for item in items], type=pa.list_(pa.int64()))}
    return {name + "#json": pa.array([json.dumps(item, default=_jsonable) for item in items], type=pa.large_string())}


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} cannot be kept as the baseline's output")


class BaselineReader:
    """A candidate's pass: the baseline's kept outputs, read back by example range from the memory-mapped parts."""

    def __init__(self, folder: Path, link: BaselineLink, data_config: str) -> None:
        import pyarrow as pa

        self.link, self.data_config = link, data_config
        parts = sorted(folder.glob("part-*.arrow")) if folder.is_dir() else []
        notes = sorted(folder.glob("part-*.error")) if folder.is_dir() else []
        if notes:
            raise EvaluationError(
                f"baseline '{link.baseline}' has no outputs on data config '{data_config}' to compare with: it "
                + notes[0].read_text(errors="replace").strip()
            )
        if not parts:
            why = f" (it {link.missing})" if link.missing else ""
            raise EvaluationError(
                f"baseline '{link.baseline}' left no outputs on data config '{data_config}' to compare with{why}"
            )
        self._parts: list[tuple[int, Any]] = []
        for part in parts:
            start = int(part.stem.split("-")[1])
            self._parts.append((start, pa.ipc.open_file(pa.memory_map(str(part))).read_all()))

    @property
    def examples(self) -> int:
        return sum(table.num_rows for _, table in self._parts)

    def read(self, name: str, start: int, n: int) -> Column:
        import pyarrow as pa

        pieces = []
        for first, table in self._parts:
            lo, hi = max(start, first), min(start + n, first + table.num_rows)
            if lo < hi:
                pieces.append(table.slice(lo - first, hi - lo))
        got = sum(p.num_rows for p in pieces)
        if got != n:
            raise EvaluationError(
                f"baseline '{self.link.baseline}' has outputs for {self.examples} examples of data config "
                f"'{self.data_config}'; this pass reached example {start + n}: the two passes saw different data"
            )
        return _decode(name, pa.concat_tables(pieces) if len(pieces) > 1 else pieces[0])


def _decode(name: str, table: Any) -> Column:
    if name + "#json" in table.column_names:
        return [json.loads(text) for text in table.column(name + "#json").to_pylist()]
    column = table.column(name).combine_chunks()
    if name + SHAPE not in table.column_names:
        return column.to_pylist()
    values = column.flatten().to_numpy(zero_copy_only=False)
    shape_lists = table.column(name + SHAPE).combine_chunks()
    ndims = np.diff(shape_lists.offsets.to_numpy())
    if len(ndims) and (ndims == ndims[0]).all():  # one rank: the shapes as a matrix, compared at once
        dims = shape_lists.flatten().to_numpy(zero_copy_only=False).reshape(len(ndims), int(ndims[0]))
        if (dims == dims[0]).all():
            return values.reshape(len(ndims), *dims[0].tolist())
    shapes = shape_lists.to_pylist()
    offsets = column.offsets.to_numpy()
    base = offsets[0]
    return [
        values[a - base : b - base].reshape(shape)
        for a, b, shape in zip(offsets[:-1], offsets[1:], shapes, strict=True)
    ]


class BaselineFields:
    """The ``baseline.<field>`` columns a pass's scorers read, batch by batch: the baseline's own fields in its
    pass (the identity), the kept outputs in a candidate's. One per pass, shared by its metrics."""

    def __init__(self, names: list[str], open_reader: Callable[[], BaselineReader] | None) -> None:
        """``open_reader``: how a candidate's pass opens the kept outputs (None: the baseline's own pass), called
        on the first batch, so that outputs that are missing fail the fidelity metrics alone."""
        self.names, self._open = names, open_reader
        self.reader: BaselineReader | None = None
        self._last: tuple[int, int, Columns] | None = None

    def provides(self) -> list[str]:
        return [BASELINE + name for name in self.names]

    def __call__(self, fields: Columns, start: int, n: int) -> Columns:
        if self._last is not None and self._last[:2] == (start, n):
            return self._last[2]
        if self._open is None:
            missing = next((name for name in self.names if name not in fields), None)
            if missing is not None:
                raise EvaluationError(missing_output(missing, fields))
            extra = {BASELINE + name: fields[name] for name in self.names}
        else:
            if self.reader is None:
                self.reader = self._open()
            extra = {BASELINE + name: self.reader.read(name, start, n) for name in self.names}
        self._last = (start, n, extra)
        return extra


def no_baseline() -> BaselineReader:
    raise EvaluationError("fidelity compares with the baseline's outputs, which only a run of the baseline keeps")


def pass_baseline(
    link: BaselineLink | None, metrics: Sequence[MetricConfig], data_config: str, settings: Settings, start: int = 0
) -> tuple[OutputsCapture | None, BaselineFields | None]:
    """For a pass (or the shard of it starting at example ``start``) whose metrics compare with the baseline: the
    capture that keeps the baseline's outputs (in the baseline's own pass) and the fields its scorers read."""
    names = compared_fields(metrics)
    if not names:
        return None, None
    if link is None:
        return None, BaselineFields(names, no_baseline)
    folder = link.folder(data_config, settings)
    if link.is_baseline:
        return OutputsCapture(folder, names, start, link.out_dir), BaselineFields(names, None)
    return None, BaselineFields(names, lambda: BaselineReader(folder, link, data_config))

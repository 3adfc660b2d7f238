"""Instance files read the same way whatever wrote them: each row's key, its per-example scores, and the texts
shown beside them (the model's answer and the reference).

Two layouts are written under ``instances/``: the engine's (``index``, ``prediction``, ``references`` and a
numeric column per instance or map/reduce sub-type) and lm-eval's per-sample log (``task``, ``doc_id``,
``filter``, ``prompt``, ``target``, ``response``, ``filtered`` and a JSON-text column per lm-eval metric, null
where a task does not produce it). lm-eval's scores are split per task and filter into the sub-type names
results.json uses (``task/metric,filter``, or ``task/metric`` for no filter), so each is compared on its own rows.

Files are read through ``ParquetFile`` (``pq.read_table`` imports pyarrow.dataset and pandas, half a second): the
keys and scores in one read per file, the texts in one more only where rows are shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.lm_eval.names import NO_FILTER

#: The engine's columns that are not scores.
RECORD_COLUMNS = ("index", "prediction", "references")
#: lm-eval's columns that are not scores; the key of a row is (task, filter, doc_id).
LM_EVAL_COLUMNS = ("task", "doc_id", "filter", "prompt", "target", "response", "filtered")
#: Characters of a prediction or reference shown.
MAX_TEXT = 240
#: Where each layout keeps the texts shown: the model's answer and the reference.
_TEXTS = {
    "engine": {"prediction": "prediction", "references": "references"},
    "lm_eval": {"prediction": "filtered", "references": "target"},
}


def _layout(names: list[str]) -> str | None:
    if "index" in names:
        return "engine"
    if {"task", "doc_id", "filter"} <= set(names):
        return "lm_eval"
    return None


def _json_number(text: Any) -> float:
    """A JSON-text score as a float; null, text or anything else not a number is NaN (not scored there)."""
    value = json.loads(text) if isinstance(text, str) else text
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else np.nan


def sub_type_name(task: str, metric: str, filter_: str) -> str:
    """The name results.json gives lm-eval's value: ``task/metric,filter``, or ``task/metric`` for no filter."""
    return f"{task}/{metric}" if filter_ == NO_FILTER else f"{task}/{metric},{filter_}"


class InstanceFiles:
    """Reads instance files once each; ``numbers(path)`` holds ``"index"`` (the row keys) and a float array per
    score column (NaN where an example has no score)."""

    def __init__(self) -> None:
        self._files: dict[Path, Any] = {}
        self._numbers: dict[Path, dict[str, np.ndarray]] = {}
        self._texts: dict[Path, Any] = {}

    def file(self, path: Path) -> Any:
        import pyarrow.parquet as pq

        if path not in self._files:
            self._files[path] = pq.ParquetFile(path)
        return self._files[path]

    def readable(self, path: Path) -> bool:
        """Whether the file is in a layout this page reads."""
        return _layout(self.file(path).schema_arrow.names) is not None

    def score_columns(self, path: Path) -> list[str]:
        return [name for name in self.numbers(path) if name != "index"]

    def numbers(self, path: Path) -> dict[str, np.ndarray]:
        if path not in self._numbers:
            names = self.file(path).schema_arrow.names
            self._numbers[path] = self._engine(path) if _layout(names) == "engine" else self._lm_eval(path)
        return self._numbers[path]

    def _engine(self, path: Path) -> dict[str, np.ndarray]:
        import pyarrow as pa

        numeric = (pa.types.is_floating, pa.types.is_integer, pa.types.is_boolean)
        schema = self.file(path).schema_arrow
        scores = [f.name for f in schema if f.name not in RECORD_COLUMNS and any(t(f.type) for t in numeric)]
        table = self.file(path).read(columns=["index", *scores])
        return {n: table.column(n).to_numpy().astype(np.float64, copy=False) for n in table.column_names}

    def _lm_eval(self, path: Path) -> dict[str, np.ndarray]:
        schema = self.file(path).schema_arrow
        metrics = [name for name in schema.names if name not in LM_EVAL_COLUMNS]
        table = self.file(path).read(columns=["task", "filter", "doc_id", *metrics])
        task, filter_, doc = (np.asarray(table.column(n).to_pylist(), dtype=str) for n in ("task", "filter", "doc_id"))
        out = {"index": np.asarray([f"{t} #{d} ({f})" for t, d, f in zip(task, doc, filter_, strict=True)])}
        for metric in metrics:
            values = np.fromiter((_json_number(v) for v in table.column(metric).to_pylist()), float, len(task))
            for group in sorted({(t, f) for t, f in zip(task, filter_, strict=True)}):
                rows = (task == group[0]) & (filter_ == group[1])
                if np.isfinite(values[rows]).any():
                    out[sub_type_name(group[0], metric, group[1])] = np.where(rows, values, np.nan)
        return out

    def texts(self, path: Path, kind: str, rows: np.ndarray) -> list[Any]:
        """The ``kind`` texts (``prediction`` or ``references``) of ``rows``, as stored (JSON text decoded)."""
        names = self.file(path).schema_arrow.names
        column = _TEXTS[_layout(names) or "engine"][kind]
        if path not in self._texts:
            wanted = [c for c in _TEXTS[_layout(names) or "engine"].values() if c in names]
            self._texts[path] = self.file(path).read(columns=wanted)
        table = self._texts[path]
        if column not in table.column_names:
            return [None] * len(rows)
        values = table.column(column).take(rows).to_pylist()
        field = self.file(path).schema_arrow.field(column)
        if field.metadata and field.metadata.get(b"olive_eval.encoding") == b"json":
            values = [json.loads(v) if isinstance(v, str) else v for v in values]
        if _layout(names) == "lm_eval":  # lm-eval lists one filtered answer per request: show a lone one as itself
            values = [v[0] if isinstance(v, list) and len(v) == 1 else v for v in values]
        return values


def short_text(value: Any) -> str:
    """A stored value as page text: numbers short, lists of floats to 16, anything else as JSON; cut to
    :data:`MAX_TEXT` characters."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    elif isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, list) and value and all(isinstance(v, float) for v in value):
        text = "[" + ", ".join(f"{v:.3g}" for v in value[:16]) + (", ..." if len(value) > 16 else "") + "]"
    else:
        text = json.dumps(value, default=str)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def aligned_rows(base_index: np.ndarray, cand_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row positions of the examples both files hold, baseline's and candidate's."""
    if len(base_index) == len(cand_index) and np.array_equal(base_index, cand_index):
        rows = np.arange(len(base_index))
        return rows, rows
    _, b, c = np.intersect1d(base_index, cand_index, assume_unique=True, return_indices=True)
    return b, c

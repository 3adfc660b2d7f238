"""Per-example records: ``instances/<model>/<metric>.jsonl`` and Olive's ``sample_log_num`` sample log."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.output_dir import folder_names
from olive_eval.results import atomic_write_text

#: Predictions with more values than this per example (e.g. LM logits) are written as their shape only.
MAX_VALUES_PER_RECORD = 256


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.size > MAX_VALUES_PER_RECORD:
            return {"shape": list(value.shape)}
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _rows(values: Any) -> list[Any]:
    """Per-example JSON values, converted in one call per array (not one per row)."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        if values.ndim > 1 and values[0].size > MAX_VALUES_PER_RECORD:
            return [{"shape": list(values.shape[1:])}] * len(values)
        if not np.issubdtype(values.dtype, np.floating) or np.isfinite(values).all():
            return values.tolist()  # nothing for JSON to choke on: skip the per-value walk
        return _jsonable(values.tolist())
    return [_jsonable(v) for v in values]


def instance_records(predictions: Any, references: Any, scores: dict[str, np.ndarray]) -> Iterator[dict[str, Any]]:
    preds, refs = _rows(predictions), _rows(references)
    columns = {name: _rows(np.asarray(values, dtype=np.float64)) for name, values in scores.items()}
    for i in range(len(refs)):
        record = {"index": i, "prediction": preds[i], "references": refs[i]}
        record.update({name: values[i] for name, values in columns.items()})
        yield record


def _write_jsonl(path: Path, records: Iterator[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in records))


class InstanceWriter:
    """Writes per-example files under a run's output directory.

    ``model_folder`` arguments are the folders :func:`olive_eval.output_dir.folder_names` gave each
    model; metric files are named the same way, so no two models or metrics ever share a file.
    """

    def __init__(self, output_dir: Path, metric_names: list[str] | None = None) -> None:
        self.output_dir = output_dir
        self._metric_files = folder_names(metric_names or [])

    def _file(self, metric: str) -> str:
        return self._metric_files.get(metric) or folder_names([metric])[metric]

    def instances(
        self, model_folder: str, metric: str, predictions: Any, references: Any, scores: dict[str, np.ndarray]
    ) -> Path:
        path = self.output_dir / "instances" / model_folder / f"{self._file(metric)}.jsonl"
        return _write_jsonl(path, instance_records(predictions, references, scores))

    def sample_log(
        self, model_folder: str, metric: str, predictions: Any, references: Any, n: int, log_dir: Path | None
    ) -> Path:
        """Olive's format: the first ``n`` records ``{"index", "prediction", "target"}``."""
        root = log_dir if log_dir is not None else self.output_dir / "samples"
        path = root / model_folder / f"{self._file(metric)}_samples.jsonl"
        count = min(n, len(references))
        preds, refs = _rows(predictions[:count]), _rows(references[:count])
        records = ({"index": i, "prediction": preds[i], "target": refs[i]} for i in range(count))
        return _write_jsonl(path, records)

"""Evidence as plain arrays and JSON, and back, so a cache entry never holds pickled objects.

A prediction metric's evidence is its per-example statistics or the columns it read, plus the state the
metric learnt while scoring (e.g. the classification task it inferred); the metric object itself, and the
working objects it names ``transient`` (a loaded model, a matching), are built again from the run's config. A timing metric's evidence is its timed runs. Columns are numeric or string
arrays, lists of JSON values, lists of arrays (ragged rows) or detection's per-image tables; anything else
cannot be stored without pickle, and :class:`Unstorable` says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from olive_eval.engine.model.evidence import Evidence
from olive_eval.metrics.detection.per_image import PerImage, Table
from olive_eval.metrics.performance import TimingSample
from olive_eval.metrics.resampling import ExampleStats

#: Builds the metric object of a joint key (``metric-sub_type``) as the run's config makes it.
MetricFactory = Callable[[str], Any]


class Unstorable(ValueError):
    """Evidence that only pickle could store (an object array, a custom per-example table)."""


def _plain(value: Any) -> bool:
    """JSON round-trips it exactly (no tuples, no numpy scalars)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


class _Writer:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def array(self, value: np.ndarray, what: str) -> str:
        if value.dtype.hasobject:
            raise Unstorable(f"{what} is an array of Python objects")
        name = f"a{len(self.arrays)}"
        self.arrays[name] = value
        return name

    def column(self, value: Any, what: str) -> dict[str, Any]:
        if isinstance(value, np.ndarray):
            return {"array": self.array(value, what)}
        if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
            shapes = np.array([v.shape for v in value], dtype=np.int64).reshape(len(value), -1)
            if len({v.dtype for v in value}) != 1 or shapes.shape[1] != value[0].ndim:
                raise Unstorable(f"{what} holds rows of different dtypes or ranks")
            flat = np.concatenate([v.ravel() for v in value])
            return {"ragged": self.array(flat, what), "shapes": self.array(shapes, what)}
        if isinstance(value, list) and _plain(value):
            text = json.dumps(value, allow_nan=True)
            return {"json": self.array(np.frombuffer(text.encode(), dtype=np.uint8), what)}
        if isinstance(value, PerImage):  # detection's per-image tables: arrays all the way down
            tables = {
                name: {
                    "offsets": self.array(table.offsets, what),
                    "columns": {column: self.array(v, what) for column, v in table.columns.items()},
                }
                for name, table in value.tables.items()
            }
            return {"per_image": self.array(value.category_ids, what), "tables": tables}
        raise Unstorable(f"{what} is a {type(value).__name__} that only pickle could store")


def _state(metric: Any, what: str) -> dict[str, Any]:
    """What the metric learnt while scoring: its instance attributes other than its config and its working
    objects (``Metric.transient``: a model, a matching, built again when needed), if plain."""
    # ``reads`` on an instance comes from its config (a fidelity measure's output), set again when it is built
    skip = {"config", "reads", *getattr(metric, "transient", ())}
    state = {k: v for k, v in vars(metric).items() if k not in skip}
    for name, value in state.items():
        if not (
            value is None or isinstance(value, (str, bool, int)) or (isinstance(value, float) and math.isfinite(value))
        ):
            raise Unstorable(f"{what}: the metric's attribute '{name}' is a {type(value).__name__}")
    return state


def encode(evidence: dict[str, Evidence]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``(manifest, arrays)``: the manifest is JSON and names the arrays. Raises :class:`Unstorable`."""
    writer = _Writer()
    manifest: dict[str, Any] = {}
    for key, item in evidence.items():
        what = f"the evidence of '{key}'"
        if item.sample is not None:
            sample = item.sample
            manifest[key] = {
                "kind": "sample",
                "state": _state(sample.metric, what),
                "statistics": None if sample.statistics is None else writer.column(sample.statistics, what),
                "fields": None
                if sample.fields is None
                else [writer.column(field, f"{what}, field {i}") for i, field in enumerate(sample.fields)],
            }
        elif item.timings is not None:
            timings = item.timings
            manifest[key] = {
                "kind": "timings",
                "batch_size": int(timings.batch_size),
                "rounds": [writer.array(np.asarray(r, dtype=np.float64), what) for r in timings.rounds],
                "loads": [float(v) for v in timings.loads],
                "first_calls": [float(v) for v in timings.first_calls],
            }
        else:
            raise Unstorable(f"{what} holds neither examples nor timings")
    return manifest, writer.arrays


def _column(spec: dict[str, Any], arrays: Any) -> Any:
    if "array" in spec:
        return arrays[spec["array"]]
    if "ragged" in spec:
        flat, shapes = arrays[spec["ragged"]], arrays[spec["shapes"]]
        sizes = [int(np.prod(shape)) for shape in shapes]
        bounds = np.cumsum([0, *sizes])
        return [flat[bounds[i] : bounds[i + 1]].reshape(tuple(shape)) for i, shape in enumerate(shapes)]
    if "per_image" in spec:
        tables = {
            name: Table(arrays[t["offsets"]], {column: arrays[a] for column, a in t["columns"].items()})
            for name, t in spec["tables"].items()
        }
        return PerImage(arrays[spec["per_image"]], tables)
    return json.loads(arrays[spec["json"]].tobytes().decode())


def decode(
    manifest: dict[str, Any],
    arrays: Any,
    metric: MetricFactory,
    statistic: Callable[[str, int], Callable[[np.ndarray], Any]],
) -> dict[str, Evidence]:
    """The evidence back; ``metric(key)`` builds a joint key's metric object, ``statistic(key, batch_size)``
    a timing sub-type's statistic. A malformed manifest raises ValueError, KeyError or TypeError."""
    out: dict[str, Evidence] = {}
    for key, spec in manifest.items():
        if spec["kind"] == "timings":
            rounds = [arrays[name] for name in spec["rounds"]]
            sample = TimingSample(int(spec["batch_size"]), rounds, list(spec["loads"]), list(spec["first_calls"]))
            out[key] = Evidence(timings=sample, statistic=statistic(key, sample.batch_size))
            continue
        if spec["kind"] != "sample":
            raise ValueError(f"unknown evidence kind {spec['kind']!r}")
        built = metric(key)
        for name, value in spec["state"].items():
            if name not in vars(built):
                raise ValueError(f"metric of '{key}' has no attribute '{name}' to restore")
            setattr(built, name, value)
        statistics = None if spec["statistics"] is None else _column(spec["statistics"], arrays)
        fields = None if spec["fields"] is None else tuple(_column(f, arrays) for f in spec["fields"])
        out[key] = Evidence(sample=ExampleStats(built, statistics=statistics, fields=fields))
    return out

"""What a child process or a worker runs: one unit, on an evaluator built there from the run's config.

A unit travels as bytes (:func:`pack`): the config's JSON, whose user scripts are imported first (so the metrics
and components they register exist where the unit is unpickled), then the pickled config, unit and, where the
executor could share it, the run's loaded data (:func:`shared_data`), so a child does not read it again.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olive_eval.config import RunConfig
from olive_eval.engine.data_store import DataStore
from olive_eval.engine.plan import make_plan
from olive_eval.engine.runner import ModelEvaluator, Progress, _quiet
from olive_eval.engine.unit import ModelEvaluation, ModelUnit, run_unit
from olive_eval.instances import InstanceWriter


@dataclass
class Packed:
    """A unit as it travels: the config's JSON (for its user scripts) and the pickled rest."""

    config_json: dict[str, Any]
    base_dir: str
    payload: bytes  # pickle of (RunConfig, ModelUnit)
    data: bytes | None = None  # pickle of the run's data store's held state (:func:`shared_data`)


def shared_data(store: DataStore) -> bytes | None:
    """The store's opened sources (their first chunk held) and prepared data, pickled once for every child; None
    when they do not pickle (a source holding a live handle): the child then opens the data itself."""
    try:
        return pickle.dumps({"sources": store._sources, "prepared": store._prepared}, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return None


def pack(run: RunConfig, unit: ModelUnit, config_json: dict[str, Any], data: bytes | None = None) -> Packed:
    """``config_json``: ``run.model_dump(mode="json", by_alias=True)``, made once per run by the caller."""
    base = run.source_dir or Path.cwd()
    return Packed(config_json, str(base), pickle.dumps((run, unit), protocol=pickle.HIGHEST_PROTOCOL), data)


def unpack(packed: Packed) -> tuple[RunConfig, ModelUnit, dict[str, Any] | None]:
    from olive_eval.config.loader import import_user_scripts

    import_user_scripts(packed.config_json, Path(packed.base_dir))
    run, unit = pickle.loads(packed.payload)
    return run, unit, pickle.loads(packed.data) if packed.data is not None else None


def evaluate_unit(
    run: RunConfig,
    unit: ModelUnit,
    output_dir: Path | None,
    progress: Progress = _quiet,
    data: dict[str, Any] | None = None,
) -> ModelEvaluation:
    """``unit`` evaluated here, on an evaluator of its own (per-example files under ``output_dir``)."""
    store = DataStore(run)
    if data is not None:
        store._sources.update(data["sources"])
        store._prepared.update(data["prepared"])
    writer = InstanceWriter(output_dir, [m.name for m in run.all_metrics]) if output_dir is not None else None
    evaluator = ModelEvaluator(run, make_plan(run), store, progress, writer, run.source_dir)
    return run_unit(evaluator, unit)

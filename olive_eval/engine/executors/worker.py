"""What a child process or a worker runs: one unit, on an evaluator built there from the run's config.

A unit travels as bytes (:func:`pack`): the config's JSON, whose user scripts are imported first (so the metrics
and components they register exist where the unit is unpickled), then the pickled config, unit and, where the
executor could share it, the run's loaded data (:func:`shared_data`), so a child does not read it again; what a
child tokenized goes back to the parent (:func:`prepared_since`) for the next children.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from olive_eval.config import RunConfig
from olive_eval.data.prepared import Prepared
from olive_eval.engine.model.runner import ModelEvaluator
from olive_eval.engine.model.unit import ModelEvaluation, ModelUnit, run_unit
from olive_eval.engine.run.context import RunContext
from olive_eval.engine.run.data_store import DataSnapshot, DataStore
from olive_eval.engine.run.judges import RunJudges
from olive_eval.engine.run.plan import make_plan
from olive_eval.progress import Progress, silent
from olive_eval.records.writer import InstanceWriter

if TYPE_CHECKING:
    from olive_eval.engine.passes.shards import Sharding


@dataclass
class Packed:
    """A unit as it travels: the config's JSON (for its user scripts) and the pickled rest."""

    config_json: dict[str, Any]
    base_dir: str
    payload: bytes  # pickle of (RunConfig, ModelUnit)
    data: bytes | None = None  # pickle of the run's data store's snapshot (:func:`shared_data`)


@dataclass
class HeldChunks:
    """Prepared data held in memory, as a ``chunks`` callable that pickles (a closure does not)."""

    chunks: list[Any]

    def __call__(self) -> Iterator[Any]:
        return iter(self.chunks)


def portable(prepared: Prepared) -> Prepared:
    """Data prepared with a tokenizer or processor (held in memory) in a form that pickles."""
    if prepared.processor_key is None or isinstance(prepared.chunks, HeldChunks):
        return prepared
    return replace(prepared, chunks=HeldChunks(list(prepared.chunks())))


def shared_data(store: DataStore) -> bytes | None:
    """The store's opened sources (their first chunk held) and the data it holds tokenized, pickled once for
    every child; None when they do not pickle (a source holding a live handle): the child opens them itself."""
    held = store.snapshot()
    prepared = {k: portable(v) for k, v in held.prepared.items() if v.processor_key is not None}
    store.restore(DataSnapshot({}, prepared))  # the same data, held alike
    try:
        return pickle.dumps(DataSnapshot(held.sources, prepared), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return None


def pack(run: RunConfig, unit: ModelUnit, config_json: dict[str, Any], data: bytes | None = None) -> Packed:
    """``config_json``: ``run.model_dump(mode="json", by_alias=True)``, made once per run by the caller."""
    base = run.source_dir or Path.cwd()
    return Packed(config_json, str(base), pickle.dumps((run, unit), protocol=pickle.HIGHEST_PROTOCOL), data)


def unpack(packed: Packed) -> tuple[RunConfig, ModelUnit, DataSnapshot | None]:
    from olive_eval.config.loader import import_user_scripts

    import_user_scripts(packed.config_json, Path(packed.base_dir))
    run, unit = pickle.loads(packed.payload)
    return run, unit, pickle.loads(packed.data) if packed.data is not None else None


def store_with(run: RunConfig, data: DataSnapshot | None) -> DataStore:
    """A data store for ``run`` holding what another process had opened and prepared (``data``)."""
    store = DataStore(run)
    if data is not None:
        store.restore(data)
    return store


def prepared_since(store: DataStore, data: DataSnapshot | None) -> bytes | None:
    """Data this store pre-processed with a tokenizer or processor that ``data`` did not hold, pickled for the
    parent to keep and send on to the next models (None: nothing new, or it does not pickle)."""
    known = data.prepared if data is not None else {}
    held = store.snapshot().prepared
    new = {k: portable(v) for k, v in held.items() if k not in known and v.processor_key is not None}
    if not new:
        return None
    try:
        return pickle.dumps(new, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return None


def evaluate_unit(
    run: RunConfig,
    unit: ModelUnit,
    output_dir: Path | None,
    progress: Progress = silent,
    data: DataSnapshot | None = None,
    store: DataStore | None = None,
    sharding: Sharding | None = None,
) -> ModelEvaluation:
    """``unit`` evaluated here, on an evaluator of its own (per-example files under ``output_dir``), on ``store``
    or a store holding ``data``; each pass in ``sharding``'s shards, where given. The judges its metrics ask are
    loaded here, with the run's context, and closed when the unit is done."""
    store = store if store is not None else store_with(run, data)
    writer = InstanceWriter(output_dir, [m.name for m in run.all_metrics]) if output_dir is not None else None
    plan, context = make_plan(run), RunContext.of(run)
    judges = RunJudges(plan.judges, context)
    evaluator = ModelEvaluator(run, plan, store, progress, writer, run.source_dir, context, judges)
    try:
        return run_unit(evaluator, unit, sharding)
    finally:
        judges.close()

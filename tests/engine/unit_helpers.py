"""Helpers the engine tests drive directly: one model evaluated from its config alone, one pass in shards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olive_eval.config import RunConfig
from olive_eval.config.loader import load_run_config
from olive_eval.engine.model.runner import ModelEvaluator
from olive_eval.engine.model.unit import ModelEvaluation, ModelUnit, run_unit
from olive_eval.engine.passes.pass_loop import PassRecord
from olive_eval.engine.passes.scored import Scored
from olive_eval.engine.passes.shards import Mapper, Settings, merge_shards, plan_shards, score_shard
from olive_eval.engine.run.data_store import DataStore
from olive_eval.engine.run.plan import make_plan
from olive_eval.progress import Progress, silent
from olive_eval.records.output_dir import folder_names
from olive_eval.records.writer import InstanceWriter
from olive_eval.runtimes.base import ModelConfig


def evaluate_model(
    config: RunConfig | dict[str, Any] | str | Path,
    model_name: str,
    *,
    output_dir: str | Path | None = None,
    progress: Progress = silent,
) -> ModelEvaluation:
    """Evaluate one model of the run from its config alone (in another process); per-example files go under
    ``output_dir`` when it is given."""
    run = load_run_config(config)
    models = {m.display_name(): m for m in run.models()}
    if model_name not in models:
        raise KeyError(f"no model '{model_name}' in the run; models: {', '.join(models)}")
    folders = folder_names(list(models))
    writer = InstanceWriter(Path(output_dir), [m.name for m in run.all_metrics]) if output_dir is not None else None
    evaluator = ModelEvaluator(run, make_plan(run), DataStore(run), progress, writer, run.source_dir)
    return run_unit(evaluator, ModelUnit(models[model_name], folders[model_name]))


def run_sharded(
    run: RunConfig,
    model: ModelConfig,
    data_config: str,
    metrics: list[str],
    shards: int,
    mapper: Mapper = map,
    settings: Settings | None = None,
    store: DataStore | None = None,
) -> tuple[PassRecord, dict[str, list[Scored]]]:
    """One model's pass over ``data_config`` in ``shards`` shards, each run by ``mapper``; merged."""
    store = store if store is not None else DataStore(run)
    works = plan_shards(run, model, data_config, settings or {}, metrics, shards, store)
    parts = list(mapper(score_shard, works))
    return merge_shards(run, works, parts, run.source_dir)

"""One model's evaluation as a self-contained, picklable unit of work.

Given the run config and a model's name, :func:`evaluate_model` loads the config (importing its user
scripts, so their metrics and components are registered where it runs), evaluates that model's
per-model work (prediction passes, file sizes, user functions) and returns its results with the evidence
paired goals need. It runs the same in this process, a spawned one, or on another machine; its result
pickles (function metrics by their registered name). Latency is not part of it: timing is only
comparable on one machine, so the interleaved timing phase stays with the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olive_eval.config import RunConfig, load_run_config
from olive_eval.engine.data_store import DataStore
from olive_eval.engine.evidence import Evidence
from olive_eval.engine.plan import make_plan
from olive_eval.engine.runner import ModelEvaluator, Progress, _quiet
from olive_eval.instances import InstanceWriter
from olive_eval.output_dir import folder_names
from olive_eval.results import ModelResult


@dataclass
class ModelEvaluation:
    """What a unit returns: the model's results and, by joint key, what each value rests on."""

    result: ModelResult
    evidence: dict[str, Evidence]


def evaluate_model(
    config: RunConfig | dict[str, Any] | str | Path,
    model_name: str,
    *,
    output_dir: str | Path | None = None,
    progress: Progress = _quiet,
) -> ModelEvaluation:
    """Evaluate one model of the run; per-example files go under ``output_dir`` when it is given."""
    run = load_run_config(config)
    models = {m.display_name(): m for m in run.models()}
    if model_name not in models:
        raise KeyError(f"no model '{model_name}' in the run; models: {', '.join(models)}")
    folders = folder_names(list(models))
    writer = InstanceWriter(Path(output_dir), [m.name for m in run.all_metrics]) if output_dir is not None else None
    evaluator = ModelEvaluator(run, make_plan(run), DataStore(run), progress, writer, run.source_dir)
    result = evaluator.evaluate(models[model_name], folders[model_name])
    return ModelEvaluation(result, evaluator.evidence[model_name])

"""The public Python surface: ``evaluate(config)`` and ``compute_metric(name, predictions, references)``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.config import RunConfig, load_run_config
from olive_eval.config.run import joint_key
from olive_eval.engine.evidence import Evidence
from olive_eval.engine.plan import make_plan
from olive_eval.engine.runner import DataStore, ModelEvaluator, Progress, _quiet
from olive_eval.engine.significance import confident_goal
from olive_eval.instances import InstanceWriter
from olive_eval.metrics import get_metric
from olive_eval.output_dir import OutputDir, folder_names
from olive_eval.ranking import Objective, apply_goals, mark_pareto, rank
from olive_eval.results import GoalResult, ModelResult, RunResult, SubMetricResult

DEFAULT_OUTPUT_DIR = Path("olive-eval-output")


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run, after results.json was written with what finished (``result``)."""

    def __init__(self, result: RunResult, model: str | None) -> None:
        super().__init__()
        self.result = result
        self.model = model


def evaluate(
    config: RunConfig | dict[str, Any] | str | Path,
    *,
    output_dir: str | Path | None = None,
    progress: Progress = _quiet,
) -> RunResult:
    """Evaluate the baseline and every candidate, check goals, rank, and write results.json.

    ``config`` is a path to a JSON file, a dict of the same shape, or a :class:`RunConfig`.
    The output directory is checked and held for the run before any model runs. results.json is
    rewritten atomically after each model, so an interrupted run keeps what it had. A model that
    fails is recorded with its error; the others still run. Ctrl-C raises :class:`RunInterrupted`.
    """
    run = load_run_config(config)
    plan = make_plan(run)
    out_dir = (Path(output_dir) if output_dir is not None else (run.output_dir or DEFAULT_OUTPUT_DIR)).resolve()
    models = run.models()
    folders = folder_names([m.display_name() for m in models])
    result = RunResult(
        baseline=run.baseline_name,
        models={m.display_name(): ModelResult(status="pending", folder=folders[m.display_name()]) for m in models},
        objectives=[o.key for o in objectives_of(run)],
        output_dir=str(out_dir),
    )
    writer = InstanceWriter(out_dir, [m.name for m in run.all_metrics])
    evaluator = ModelEvaluator(run, plan, DataStore(run), progress, writer, run.source_dir)
    with OutputDir(out_dir):
        result.write(out_dir)
        current: str | None = None
        try:
            for model in models:
                current = model.display_name()
                result.models[current] = evaluator.evaluate(model, folders[current])
                _finish(run, result, evaluator.evidence)
                result.write(out_dir)
            current = None
        except KeyboardInterrupt:
            if current is not None:
                interrupted = evaluator.current or result.models[current]
                interrupted.status, interrupted.error = "interrupted", "stopped by Ctrl-C"
                result.models[current] = interrupted
            _finish(run, result, evaluator.evidence)
            result.write(out_dir)
            raise RunInterrupted(result, current) from None
    return result


def objectives_of(run: RunConfig) -> list[Objective]:
    """The ranked sub-types, most important first."""
    ranked = sorted(run.ranked(), key=lambda ms: ms[1].priority)
    return [Objective(joint_key(m, s), s.priority, bool(s.higher_is_better)) for m, s in ranked]


def _finish(run: RunConfig, result: RunResult, evidence: dict[str, dict[str, Evidence]]) -> None:
    """Resolve goals against the baseline, rank the candidates, mark the Pareto front."""
    sub_types = {joint_key(metric, sub): sub for metric in run.all_metrics for sub in metric.sub_types}
    goals = {key: (sub.goal.type, sub.goal.value) for key, sub in sub_types.items() if sub.goal is not None}

    def check(model: str, key: str, cand: SubMetricResult, base: SubMetricResult) -> GoalResult | None:
        goal = sub_types[key].goal
        if goal is None or goal.confidence is None or cand.value is None or base.value is None:
            return None
        base_evidence = evidence.get(result.baseline, {}).get(key)
        cand_evidence = evidence.get(model, {}).get(key)
        if base_evidence is None or cand_evidence is None:
            return None
        return confident_goal(goal, bool(cand.higher_is_better), base.value, cand.value, base_evidence, cand_evidence)

    objectives = objectives_of(run)
    apply_goals(result, goals, check)
    candidates = [m.display_name() for m in run.candidates]
    result.ranking = rank(result, objectives, candidates)
    result.best = result.ranking[0] if result.ranking else None
    mark_pareto(result, objectives)


def compute_metric(name: str, predictions: Any, references: Any, **metric_config: Any) -> float:
    """One accuracy sub-type on arrays, without a model: ``compute_metric("f1_score", p, r, task="binary")``.

    Raises ValueError when a prediction is NaN or infinite, or when the metric is undefined on this
    data (AUROC with one class present), rather than returning a number that looks like a result.
    """
    metric = get_metric(name, metric_config)
    preds = np.asarray(predictions)
    if np.issubdtype(preds.dtype, np.floating) and not np.isfinite(preds).all():
        bad = ~np.isfinite(preds.reshape(len(preds), -1)).all(axis=1) if preds.ndim else ~np.isfinite(preds[None])
        raise ValueError(
            f"{name}: predictions hold NaN or infinity in {int(bad.sum())} of {bad.size} examples "
            f"(first: example {int(np.argmax(bad))})"
        )
    score = metric.compute(preds, np.asarray(references))
    if score.undefined is not None:
        raise ValueError(f"{name} is undefined here: {score.undefined}")
    return float(score.value)

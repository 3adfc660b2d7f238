"""The public Python surface: ``evaluate(config)``; ``compute_metric`` lives in :mod:`olive_eval.metrics.compute`."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from olive_eval.config import RunConfig, load_run_config
from olive_eval.config.run import joint_key
from olive_eval.engine.data_store import DataStore
from olive_eval.engine.evidence import Evidence
from olive_eval.engine.plan import Plan, TimingRun, make_plan
from olive_eval.engine.runner import ModelEvaluator, Progress, _quiet, settle_status
from olive_eval.engine.significance import RATIO_LEVEL, confident_goal, ratio_interval
from olive_eval.engine.timing_phase import TimingPhase, timing_inputs
from olive_eval.instances import InstanceWriter
from olive_eval.metrics.compute import compute_metric
from olive_eval.metrics.performance import SPREAD_STATISTICS
from olive_eval.output_dir import OutputDir, folder_names
from olive_eval.provenance import environment
from olive_eval.ranking import Objective, apply_goals, mark_pareto, rank
from olive_eval.results import RESULTS_FILE, GoalResult, ModelResult, RunResult, SubMetricResult

__all__ = ["RunInterrupted", "compute_metric", "evaluate"]

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
    allow_download: bool | None = None,
) -> RunResult:
    """Evaluate the baseline and every candidate, check goals, rank, and write results.json.

    ``config`` is a path to a JSON file, a dict of the same shape, or a :class:`RunConfig`.
    The output directory is checked and held for the run before any model runs. results.json is
    rewritten atomically before each model (which it marks ``running``, so a process that dies with it
    leaves its name) and after it, so an interrupted run keeps what it had. A model that fails is
    recorded with its error; the others still run. A file that cannot be written (a full disk) does not
    stop the run: it is listed in ``write_errors``. Ctrl-C raises :class:`RunInterrupted`.
    ``allow_download`` overrides the config's ``allow_download`` (the CLI's ``--allow-download``).
    """
    started_at = datetime.now(timezone.utc)
    clock = time.perf_counter()
    run = load_run_config(config, allow_download=allow_download)
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
    source = run.model_dump(mode="json") if isinstance(config, RunConfig) else config
    result.environment = environment(config_source=source, device=run.device, started=started_at, seeds=run.seeds())
    writer = InstanceWriter(out_dir, [m.name for m in run.all_metrics])
    data = DataStore(run)
    evaluator = ModelEvaluator(run, plan, data, progress, writer, run.source_dir)
    with OutputDir(out_dir) as held:
        if held.previous_run_note is not None:
            progress("warning", held.previous_run_note)
            result.environment["previous_run"] = held.previous_run_note
        current: str | None = None
        try:
            # one-time setup is the run's, not the first model's; a data error found here (exit 2) leaves no
            # results.json behind, since no model was evaluated
            data.preload(plan.data_configs())
            _save(result, out_dir, writer)
            result.stage_seconds["setup"] = round(time.perf_counter() - clock, 6)
            clock = time.perf_counter()
            for model in models:
                current = model.display_name()
                result.models[current].status = "running"
                _save(result, out_dir, writer)
                result.models[current] = evaluator.evaluate(model, folders[current])
                evaluator.current = None  # done: an interruption from here on is not this model's
                _finish(run, result, evaluator.evidence)
                _save(result, out_dir, writer)
            current = None
            result.stage_seconds["models"] = round(time.perf_counter() - clock, 6)
            if plan.timings:
                clock = time.perf_counter()
                _timing_phase(run, plan, data, evaluator, result, progress)
                result.stage_seconds["timing"] = round(time.perf_counter() - clock, 6)
                _finish(run, result, evaluator.evidence)
            _save(result, out_dir, writer)
        except KeyboardInterrupt:
            if current is not None:
                interrupted = evaluator.current or result.models[current]
                interrupted.status, interrupted.error = "interrupted", "stopped by Ctrl-C"
                result.models[current] = interrupted
            _finish(run, result, evaluator.evidence)
            _save(result, out_dir, writer)
            raise RunInterrupted(result, current) from None
    return result


def _save(result: RunResult, out_dir: Path, writer: InstanceWriter) -> None:
    """Write results.json; a failure (a full disk) is kept in ``write_errors`` for the caller to report.

    The run goes on and the next save tries again, so ``write_errors`` says whether the file on disk is
    current; the record writer's first failure is kept beside it.
    """
    failed: dict[str, str] = {}
    try:
        result.write(out_dir)
    except OSError as exc:
        failed[str(out_dir / RESULTS_FILE)] = exc.strerror or str(exc)
    result.write_errors = {**failed, **writer.errors}


def _timing_phase(
    run: RunConfig, plan: Plan, data: DataStore, evaluator: ModelEvaluator, result: RunResult, progress: Progress
) -> None:
    """Every model's latency runs, interleaved in rounds unless the config says otherwise."""
    models = [
        m
        for m in run.models()
        if result.models[m.display_name()].status != "failed" or result.models[m.display_name()].metrics
    ]

    def statistics(job: TimingRun, batch_size: int) -> list[Any]:
        return [
            metric.metric_type.statistic(sub.name, batch_size)
            for metric, sub in job.sub_types
            if metric.metric_type.can_resample(sub.name)
        ]

    phase = TimingPhase(run, timing_inputs(run, data), statistics, progress)
    outcomes = phase.measure(models, plan.timings)
    for name, model_outcomes in outcomes.items():
        evaluator.record_timing(name, result.models[name], plan.timings, model_outcomes)
        settle_status(result.models[name])
    _ratios_to_baseline(result, evaluator.evidence)


def _ratios_to_baseline(result: RunResult, evidence: dict[str, dict[str, Evidence]]) -> None:
    """Each candidate's latency and throughput as a ratio to the baseline's, with a paired interval."""
    base = result.models[result.baseline]
    for name, model in result.models.items():
        if name == result.baseline:
            continue
        for key, sub in model.metrics.items():
            base_sub = base.metrics.get(key)
            spread = key.rsplit("-", 1)[-1] in SPREAD_STATISTICS  # a ratio of spreads says little
            if sub.timing is None or spread or not sub.measured or base_sub is None or not base_sub.measured:
                continue
            assert sub.value is not None and base_sub.value is not None
            if base_sub.value == 0:
                continue
            sub.timing.ratio_to_baseline = sub.value / base_sub.value
            pair = evidence.get(result.baseline, {}).get(key), evidence.get(name, {}).get(key)
            if pair[0] is not None and pair[1] is not None:
                sub.timing.ratio_ci_low, sub.timing.ratio_ci_high = ratio_interval(pair[0], pair[1])
                sub.timing.ratio_level = RATIO_LEVEL


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

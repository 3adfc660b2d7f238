"""The run, as the engine owns it: per-model units through an executor, timing rounds, goals against the
baseline, ranking and the Pareto front, and results.json written as each model starts and when the run ends.

:class:`Run` holds one run open: the config's plan, its loaded data and the results so far. The session
(:mod:`olive_eval.engine.session.session`) drives it; ``evaluate()`` is the session over the config's candidates.
Each candidate's latency is compared with the baseline's from the same interleaved rounds (``paired``):
a batch run times every model together, a session times the baseline again beside each new candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from olive_eval.config import RunConfig
from olive_eval.config.executor import ExecutorConfig
from olive_eval.config.metric_key import metric_keys
from olive_eval.config.metric_set import joint_key
from olive_eval.decide.goals import apply_goals
from olive_eval.decide.headline import mark_headline
from olive_eval.decide.pareto import mark_pareto
from olive_eval.decide.ranking import Objective, rank
from olive_eval.engine.cache.result_cache import ResultCache
from olive_eval.engine.cache.reuse import Reuse
from olive_eval.engine.executors.base import Executor, build_executor
from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.model.recorder import Recorder
from olive_eval.engine.model.runner import ModelEvaluator, Progress, settle_status
from olive_eval.engine.model.unit import ModelEvaluation, ModelUnit
from olive_eval.engine.passes.baseline_outputs import BaselineLink
from olive_eval.engine.passes.repeats import check_generations
from olive_eval.engine.passes.shards import check_shards
from olive_eval.engine.run.context import RunContext
from olive_eval.engine.run.data_store import DataStore
from olive_eval.engine.run.goals import goal_check, stages
from olive_eval.engine.run.judges import RunJudges
from olive_eval.engine.run.plan import make_plan
from olive_eval.engine.run.sequential_run import SequentialRun, finished, open_sequential
from olive_eval.engine.run.significance import RATIO_LEVEL, ratio_interval
from olive_eval.engine.timing.timing_phase import TimingPhase, timing_inputs
from olive_eval.engine.timing.timing_results import record_timing, timed_here, timing_statistics
from olive_eval.engine.work.prediction_pass import PredictionPass
from olive_eval.engine.work.timing import TimingRun
from olive_eval.metrics.performance import SPREAD_STATISTICS
from olive_eval.records.output_dir import folder_names
from olive_eval.records.results import RESULTS_FILE, ModelResult, RunResult, SubMetricResult
from olive_eval.records.sequential import decisions
from olive_eval.records.writer import InstanceWriter
from olive_eval.runtimes.base import ModelConfig


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run, after results.json was written with what finished (``result``)."""

    def __init__(self, result: RunResult, model: str | None) -> None:
        super().__init__()
        self.result, self.model = result, model


def objectives_of(run: RunConfig) -> list[Objective]:
    """The ranked sub-types, most important first."""
    ranked = sorted(run.ranked(), key=lambda ms: ms[1].priority)
    return [Objective(joint_key(m, s), s.priority, bool(s.higher_is_better)) for m, s in ranked]


class Run:
    """One run held open: evaluate models one unit at a time, time them in rounds, rank, save."""

    def __init__(
        self,
        run: RunConfig,
        out_dir: Path,
        progress: Progress,
        environment: dict[str, Any],
        executor: Executor | ExecutorConfig | None = None,
        cache: ResultCache | None = None,
        kept: dict[str, ModelResult] | None = None,
    ) -> None:
        self.config = run
        self.plan = make_plan(run)
        #: the timing runs the timing phase measures after the per-model work
        self.timing_runs = self.plan.units_of(TimingRun)
        #: the data configs the prediction passes read (a candidate added later must suit them)
        self.pass_data = [job.data_config for job in self.plan.units_of(PredictionPass)]
        self.sequential, cache = SequentialRun.of(run, self.plan.units_of(PredictionPass), cache)
        self.out_dir = out_dir
        self.progress = progress
        self.candidates = list(run.candidates)
        models = run.models()
        self.folders = folder_names([m.display_name() for m in models])
        self.result = RunResult(
            baseline=run.baseline_name,
            models={
                m.display_name(): ModelResult(status="pending", folder=self.folders[m.display_name()]) for m in models
            },
            objectives=[o.key for o in objectives_of(run)],
            output_dir=str(out_dir),
            environment=environment,
            sequential=self.sequential.lines if self.sequential is not None else {},
        )
        self.writer = InstanceWriter(out_dir, [m.name for m in run.all_metrics])
        #: whether a metric compares each model's outputs with the baseline's: the baseline's pass keeps them
        self.compares_with_baseline = any(m.metric_type.reads_baseline for m in run.all_metrics)
        self.data = DataStore(run)
        self.context = RunContext.of(run)
        #: the judges the metrics ask, loaded with the run's context on first use and closed with the run
        self.judges = RunJudges(self.plan.judges, self.context)
        self.evaluator = ModelEvaluator(
            run, self.plan, self.data, progress, self.writer, run.source_dir, self.context, self.judges
        )
        #: each pass's shards, where the executor's config says (one built by the caller may shard as it likes)
        self.shards = 1
        if executor is None or isinstance(executor, ExecutorConfig):  # the config's, or one given in its place
            self.shards = (executor or run.executor).shards
            executor = build_executor(executor or run.executor, run, self.evaluator, out_dir, progress)
        self.executor: Executor = executor
        #: candidate -> the baseline's timing results and evidence from the rounds it was timed in
        self.paired: dict[str, tuple[dict[str, SubMetricResult], dict[str, Evidence]]] = {}
        self.current: str | None = None
        self._running: set[str] = set()  #: models of an :meth:`evaluate_many` batch on the executor's workers
        timing_keys = {joint_key(m, s) for job in self.timing_runs for m, s in job.sub_types}
        self.reuse = Reuse(run, cache, kept or {}, self.writer, self.folders, progress, timing_keys)
        self.written = False  #: whether results.json was written since the claim (the first model's start)

    @property
    def evidence(self) -> dict[str, dict[str, Evidence]]:
        return self.evaluator.evidence

    def open(self, claim: Callable[[], None] = lambda: None) -> None:
        """Load and check the data once (that it has a batch for each shard, that its generations fit), then
        ``claim`` the output folder: a data or config error here (exit 2) leaves the folder as it was (earlier
        results included); results.json is first written as the first model starts."""
        self.data.preload(self.plan.data_configs())
        check_generations(self.config, self.plan.units_of(PredictionPass), self.data.source)
        check_shards(self.config, self.shards, self.pass_data, self.data)
        open_sequential(self.sequential, {name: self.data.source(name) for name in self.pass_data}, self.progress)
        claim()

    def add_candidate(self, model: ModelConfig) -> None:
        """A candidate the config did not list (the session's), pending until evaluated."""
        name = model.display_name()
        self.candidates.append(model)
        taken = list(self.folders.values())
        self.folders[name] = folder_names([*taken, name])[name]
        self.result.models[name] = ModelResult(status="pending", folder=self.folders[name])

    def evaluate(self, model: ModelConfig, durable: bool = True, save: bool = True) -> ModelResult:
        """The model's unit through the executor, saved before (``running``) and after (``durable``: fsynced)
        unless ``save`` is False (the next model's ``running`` write or the run's last one follows)."""
        name = model.display_name()
        self.current = name
        self.result.models[name].status = "running"
        self.save(durable=False)  # the marker is for a crash of this process, which the atomic rename survives
        evaluation = self.reuse.reused(model)
        if evaluation is None:
            evaluation = self.executor.run(self._unit(model))
            self.reuse.store_fresh(name, evaluation)
        self._record(name, evaluation)
        self.current = None
        self.finish()
        if save:
            self.save(durable)
        return evaluation.result

    def evaluate_many(self, models: list[ModelConfig], durable: bool = True, save: bool = True) -> list[ModelResult]:
        """Several models' units submitted together (``executor.run_all``), each recorded and saved as it
        finishes; one at a time as :meth:`evaluate` does for an executor that runs one unit at a time (each
        model's results written with the next one's ``running`` marker). ``save`` as for :meth:`evaluate`."""
        if not self.executor.concurrent:
            last = len(models) - 1
            return [self.evaluate(model, durable, save=save and i == last) for i, model in enumerate(models)]
        names = [model.display_name() for model in models]
        units = []
        for model in models:
            self.result.models[model.display_name()].status = "running"
        self.save(durable=False)
        for model in models:
            reused = self.reuse.reused(model)
            if reused is None:
                units.append(self._unit(model))
            else:
                self._record(model.display_name(), reused)
        self._running = {unit.name for unit in units}
        by_folder = {self.folders[name]: name for name in self._running}
        for evaluation in self.executor.run_all(units):
            name = by_folder[evaluation.result.folder or ""]
            self._running.discard(name)
            self.reuse.store_fresh(name, evaluation)
            self._record(name, evaluation)
            self.finish()
            self.save(durable=False)
        self.finish()
        if save:
            self.save(durable)
        return [self.result.models[name] for name in names]

    def _baseline_outputs(self, name: str) -> BaselineLink | None:
        """Where the baseline keeps its outputs, when a metric compares with them (fidelity)."""
        if not self.compares_with_baseline:
            return None
        base = self.result.baseline
        result = self.result.models.get(base)
        missing = f"failed: {result.error}" if result is not None and result.status == "failed" else None
        root = self.writer.outputs_dir(self.folders[base])
        return BaselineLink(self.out_dir, root, base, name == base, missing)

    def _unit(self, model: ModelConfig, full: bool = False) -> ModelUnit:
        """The model's unit; a candidate's carries the baseline for early stop, its goals for sequential."""
        name, base = model.display_name(), self.result.baseline
        unit = ModelUnit(model, self.folders[name], baseline_outputs=self._baseline_outputs(name))
        if self.sequential is not None and name != base and not full:
            unit = replace(unit, sequential=self.sequential.unit(self.result, self.evidence, name))
        if self.config.early_stop and name != base:
            unit = replace(
                unit,
                stages=stages(self.config),
                baseline=self.result.models[base],
                baseline_evidence=self.evidence.get(base, {}),
            )
        return unit

    def _record(self, name: str, evaluation: ModelEvaluation) -> None:
        self.result.models[name] = evaluation.result
        self.evidence[name] = evaluation.evidence

    def time(self, models: list[ModelConfig]) -> None:
        """The timing rounds of ``models`` (the baseline first), interleaved unless the config says otherwise;
        each candidate is paired with the baseline's measurement from these rounds."""
        if not self.timing_runs:
            return
        models = [m for m in models if self.timeable(m.display_name()) and m.display_name() not in self.reuse.timed]
        inputs = timing_inputs(self.config, self.data)
        phase = TimingPhase(self.config, inputs, timing_statistics, self.progress, self.context)
        outcomes = phase.measure(models, self.timing_runs)
        base = self.result.baseline
        for name, model_outcomes in outcomes.items():
            recorder = Recorder(name, self.result.models[name], self.evidence.setdefault(name, {}))
            record_timing(recorder, self.timing_runs, model_outcomes)
            settle_status(self.result.models[name], metric_keys(self.config.all_metrics))
            timed_here(self.result.models[name], self.executor.node)
        if base in outcomes:
            keys = {joint_key(m, s) for job in self.timing_runs for m, s in job.sub_types}
            base_result, base_evidence = self.result.models[base], self.evidence.get(base, {})
            pair = (
                {k: v for k, v in base_result.metrics.items() if k in keys},
                {k: v for k, v in base_evidence.items() if k in keys},
            )
            for name in outcomes:
                if name != base:
                    self.paired[name] = pair
                    self._ratios_to_baseline(name)
        if self.config.cache_timings:
            for name in outcomes:
                self.reuse.store(name, ModelEvaluation(self.result.models[name], self.evidence.get(name, {})))
        self.finish()

    def timeable(self, name: str) -> bool:
        """Failed before any value, or stopped early: no timing rounds."""
        model = self.result.models[name]
        return (model.status != "failed" or bool(model.metrics)) and model.early_stopped is None

    def _baseline_for(self, name: str) -> tuple[ModelResult, dict[str, Evidence]]:
        """The baseline as ``name`` is compared with: its timing values from the rounds ``name`` ran in."""
        base = self.result.models[self.result.baseline]
        evidence = self.evidence.get(self.result.baseline, {})
        if name not in self.paired:
            return base, evidence
        metrics, paired_evidence = self.paired[name]
        return replace(base, metrics={**base.metrics, **metrics}), {**evidence, **paired_evidence}

    def _ratios_to_baseline(self, name: str) -> None:
        """The candidate's latency and throughput as a ratio to the baseline's, with a paired interval."""
        base, base_evidence = self._baseline_for(name)
        keys = metric_keys(self.config.all_metrics)
        for key, sub in self.result.models[name].metrics.items():
            base_sub = base.metrics.get(key)
            spread = key in keys and keys[key].sub_type in SPREAD_STATISTICS  # a ratio of spreads says little
            if sub.timing is None or spread or not sub.measured or base_sub is None or not base_sub.measured:
                continue
            assert sub.value is not None and base_sub.value is not None
            if base_sub.value == 0:
                continue
            sub.timing.ratio_to_baseline = sub.value / base_sub.value
            pair = base_evidence.get(key), self.evidence.get(name, {}).get(key)
            if pair[0] is not None and pair[1] is not None:
                sub.timing.ratio_ci_low, sub.timing.ratio_ci_high = ratio_interval(pair[0], pair[1])
                sub.timing.ratio_level = RATIO_LEVEL

    def finish(self) -> None:
        """Resolve goals against the baseline, rank the candidates, mark the Pareto front and the headline."""
        run, result = self.config, self.result
        sub_types = {joint_key(metric, sub): sub for metric in run.all_metrics for sub in metric.sub_types}
        goals = {key: (sub.goal.type, sub.goal.value) for key, sub in sub_types.items() if sub.goal is not None}
        for name in result.models:
            if name == result.baseline:
                result.models[name].goals_met = None
                continue
            base, base_evidence = self._baseline_for(name)
            view = RunResult(baseline=result.baseline, models={result.baseline: base, name: result.models[name]})
            check = goal_check(run, base_evidence, self.evidence.get(name, {}), decisions(view.models[name].sequential))
            apply_goals(view, goals, check)
        objectives = objectives_of(run)
        result.ranking = rank(result, objectives, [m.display_name() for m in self.candidates])
        result.best = result.ranking[0] if result.ranking else None
        mark_pareto(result, objectives)
        mark_headline(result, run.score_name)

    def finish_best(self) -> None:
        """``sequential.finish: best``: the best candidate evaluated again on all the data."""
        todo = self.sequential.to_finish(self.result, self.candidates) if self.sequential is not None else None
        if todo is not None:
            (model, kept), name = todo, todo[0].display_name()
            fresh = self.executor.run(self._unit(model, full=True))
            self._record(name, finished(fresh, self.result.models[name], self.evidence.get(name, {}), kept))
            self.finish()
            self.save()

    def interrupted(self) -> RunInterrupted:
        """Record a Ctrl-C on the model being evaluated, save, and say so."""
        current = self.current
        if current is not None:
            interrupted = self.evaluator.result_of(current) or self.result.models[current]
            interrupted.status, interrupted.error = "interrupted", "stopped by Ctrl-C"
            self.result.models[current] = interrupted
        for name in self._running:  # a batch's models on the workers, stopped with the run
            self.result.models[name].status, self.result.models[name].error = "interrupted", "stopped by Ctrl-C"
        current = current or next(iter(sorted(self._running)), None)
        self._running = set()
        self.finish()
        self.save()
        return RunInterrupted(self.result, current)

    def close(self) -> None:
        """Close what the run loaded for itself: its judges and their models."""
        self.judges.close()

    def save(self, durable: bool = True) -> None:
        """Write results.json (``durable=False``, the intermediate writes: no fsync, see ``atomic_write_text`` in
        :mod:`olive_eval.records.results`). A failure (a full disk) is kept in ``write_errors`` for the caller to
        report; the run goes on and the next save tries again, so ``write_errors`` says whether the file on disk
        is current; the record writer's first failure is kept beside it."""
        failed: dict[str, str] = {}
        self.written = True
        try:
            self.result.write(self.out_dir, durable)
        except OSError as exc:
            failed[str(self.out_dir / RESULTS_FILE)] = exc.strerror or str(exc)
        self.result.write_errors = {**failed, **self.writer.errors}

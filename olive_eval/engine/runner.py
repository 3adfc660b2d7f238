"""Evaluating one model: each prediction pass once, each user function once, file sizes; timing is a phase
of its own (:mod:`olive_eval.engine.timing_phase`).

A model's evaluation is a self-contained unit of work: given the run config and the model, it returns the
model's results and the evidence for paired goals (see :func:`evaluate_model`). The runner talks to
runtimes only through the ``Runtime`` interface and to metrics only through the registered metric types,
so a new runtime or metric family changes nothing here.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.config.metric_key import MetricKey, metric_keys
from olive_eval.config.metric_set import joint_key
from olive_eval.config.run import RunConfig
from olive_eval.engine.context import RunContext
from olive_eval.engine.custom import call_user_function
from olive_eval.engine.data_store import DataStore
from olive_eval.engine.evidence import Evidence
from olive_eval.engine.passes import run_pass
from olive_eval.engine.plan import Plan, PredictionPass, Settings, TimingRun, settings_key
from olive_eval.engine.repeats import with_repeats
from olive_eval.engine.scoring import CustomScorer, MetricScorer, Scored
from olive_eval.engine.timing_phase import TimingOutcome
from olive_eval.errors import EvaluationError, OliveEvalError, failure_location
from olive_eval.instances import InstanceWriter
from olive_eval.lm_eval_run.plan import LmEvalRun
from olive_eval.metrics import Score
from olive_eval.metrics.performance import latency_ms
from olive_eval.progress import start_task
from olive_eval.results import ConfidenceInterval, ModelResult, SubMetricResult, TimedRuns, TimingInfo
from olive_eval.runtimes.base import Runtime

Progress = Callable[[str, str], None]  # (model name, message)

#: A timing run's coefficient of variation (percent) above which the table warns of a busy machine.
BUSY_CV = 25.0


def _quiet(model: str, message: str) -> None:
    pass


def _note_runtime(result: ModelResult, description: dict[str, Any], metrics: list[str]) -> None:
    """Add ``metrics`` to the runtime entry with this description (a new entry for new settings)."""
    for entry in result.runtimes:
        if {k: v for k, v in entry.items() if k != "metrics"} == description:
            entry["metrics"].extend(m for m in metrics if m not in entry["metrics"])
            return
    result.runtimes.append({**description, "metrics": list(dict.fromkeys(metrics))})


def settle_status(result: ModelResult, keys: Mapping[str, MetricKey]) -> None:
    """``ok``, or ``partial``/``failed`` by how many of the model's metrics carry an error; the failed metrics are
    named from ``keys`` (result key -> :class:`MetricKey`), never by splitting the key."""
    if result.status == "failed" and not result.metrics:
        return  # it did not load: the error says why
    failed = list(
        dict.fromkeys(keys[key].metric if key in keys else key for key, sub in result.metrics.items() if sub.error)
    )
    measured = any(sub.error is None for sub in result.metrics.values())
    result.status = "ok" if not failed else "partial" if measured else "failed"
    result.error = None
    if failed:
        first = next(sub.error for sub in result.metrics.values() if sub.error)
        result.error = f"metric(s) {', '.join(failed)} failed: {first}"


def _failure_message(exc: BaseException) -> str:
    """Our own errors carry a message a user can act on. Anything else is unforeseen (a bug of ours, or a
    library failing oddly): say what it is and where it was raised, so it can be found."""
    if isinstance(exc, OliveEvalError):
        return str(exc)
    lines = str(exc).strip().splitlines()
    where = failure_location(exc)
    return f"unexpected {type(exc).__name__}" + (f": {lines[0]}" if lines else "") + (f" (at {where})" if where else "")


def _traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


@dataclass
class _Context:
    run: RunConfig
    model_name: str
    result: ModelResult
    runtimes: dict[str, Runtime]
    evidence: dict[str, Evidence] = field(default_factory=dict)
    folder: str | None = None

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Add the wall time of the block to ``stage_seconds[name]``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            seconds = self.result.stage_seconds.get(name, 0.0) + time.perf_counter() - start
            self.result.stage_seconds[name] = round(seconds, 6)


class _Guarded:
    """A metric's scorer in a pass: an error while it scores stops that metric, not the pass."""

    def __init__(self, metric: MetricConfig, scorer: MetricScorer | CustomScorer) -> None:
        self.metric, self.scorer = metric, scorer
        self.error: Exception | None = None

    def check_fields(self, available: list[str]) -> None:
        try:
            self.scorer.check_fields(available)
        except Exception as exc:
            self._stop(exc)

    def update(self, fields: Any, start: int, cache: dict[Any, np.ndarray]) -> None:
        if self.error is None:
            try:
                self.scorer.update(fields, start, cache)
            except Exception as exc:
                self._stop(_scoring_error(self.metric, exc))

    def finish(self) -> list[Scored]:
        return self.scorer.finish()

    def discard(self) -> None:
        self.scorer.discard()

    def _stop(self, exc: Exception) -> None:
        self.error = exc
        self.scorer.discard()


def _scoring_error(metric: MetricConfig, exc: Exception) -> Exception:
    """A metric kernel's complaint about the data (a ValueError) as the user's error, naming the metric."""
    if isinstance(exc, (ValueError, TypeError, IndexError)) and not isinstance(exc, OliveEvalError):
        error = EvaluationError(f"metric '{metric.name}' cannot score the model output: {exc}")
        error.__cause__ = exc
        return error
    return exc


class ModelEvaluator:
    def __init__(
        self,
        run: RunConfig,
        plan: Plan,
        data: DataStore,
        progress: Progress = _quiet,
        writer: InstanceWriter | None = None,
        base_dir: Path | None = None,
        context: RunContext | None = None,
    ) -> None:
        self.run = run
        self.context = context or RunContext.of(run)
        self.plan = plan
        self.data = data
        self.progress = progress
        self.writer = writer
        self.base_dir = base_dir
        #: model name -> joint key -> what the value rests on, for paired goal checks after all models ran
        self.evidence: dict[str, dict[str, Evidence]] = {}
        #: the result of the model being evaluated (kept by the caller when a run is interrupted)
        self.current: ModelResult | None = None
        #: each prediction pass in this many shards, mapped by ``shard_map`` (set by the executor, ``shards``)
        self.shards = 1
        self.shard_map: Callable[..., Any] = map
        #: data config -> examples its last pass went over: a pass's progress total where the data does not say
        self.examples_seen: dict[str, int] = {}

    def evaluate(
        self,
        model_config: Any,
        folder: str | None = None,
        stages: Sequence[Sequence[str]] | None = None,
        stop: Callable[[ModelResult], str | None] | None = None,
    ) -> ModelResult:
        """One model: load each runtime variant, then run every unit of work of the plan.

        A unit that fails (a pass, a timing run, a user function) fails only its own metrics; the others
        keep their values and the model is ``partial``. A model that does not load is ``failed``.
        ``stages`` (metric names) are measured in turn; when ``stop`` names a missed goal after one, the
        rest are not measured (``early_stopped``). KeyboardInterrupt is not caught: the caller records it.
        """
        name = model_config.display_name()
        result = ModelResult(status="pending", folder=folder)
        self.current = result
        started = time.perf_counter()
        ctx = _Context(self.run, name, result, {}, folder=folder)
        self.evidence[name] = ctx.evidence
        try:
            self._load(ctx, model_config)
        except Exception as exc:
            result.status, result.error = "failed", _failure_message(exc)
            result.tracebacks.append(_traceback(exc))
        else:
            for names in stages if stages is not None else [None]:
                for metrics, run_unit in self._units(ctx, model_config, names):
                    try:
                        run_unit()
                    except Exception as exc:
                        self._fail(ctx, metrics, exc)
                if stop is not None and (missed := stop(result)) is not None:
                    result.early_stopped = missed
                    break
            settle_status(result, metric_keys(self.run.all_metrics))
        finally:
            for runtime in ctx.runtimes.values():
                runtime.close()
        result.seconds = round(time.perf_counter() - started, 3)
        return result

    def _load(self, ctx: _Context, model_config: Any) -> None:
        for variant, metric_names in self.plan.settings_variants():
            self.progress(ctx.model_name, "loading model")
            with ctx.stage("load"):
                runtime = self.context.load(model_config, variant)
            ctx.runtimes[settings_key(variant)] = runtime
            ctx.result.runtimes.append({**runtime.describe(), "metrics": metric_names})

    def _units(
        self, ctx: _Context, model_config: Any, names: Sequence[str] | None = None
    ) -> Iterator[tuple[list[tuple[MetricConfig, SubType]], Callable[[], None]]]:
        """The plan's units of work for this model (of the metrics ``names``, when given): the sub-types each
        one measures, and how to run it."""

        def wanted(metric: MetricConfig) -> bool:
            return names is None or metric.name in names

        for job in self.plan.passes:
            if names is not None:
                job = replace(job, metrics=[m for m in job.metrics if wanted(m)])
            if job.metrics:
                yield (
                    [(m, s) for m in job.metrics for s in m.sub_types],
                    partial(self._predict_and_score, ctx, job, model_config),
                )
        for metric, sub in self.plan.file_sizes:
            if wanted(metric):
                yield [(metric, sub)], partial(self._file_size, ctx, metric, sub, model_config)
        for metric in self.plan.user_functions:
            if wanted(metric):
                yield [(metric, s) for s in metric.sub_types], partial(self._evaluate_func, ctx, metric)
        for job in self.plan.lm_eval_runs:
            if any(wanted(m) for m in job.metrics):
                yield [(m, s) for m in job.metrics for s in m.sub_types], partial(self._lm_eval, ctx, job)

    def _fail(self, ctx: _Context, sub_types: list[tuple[MetricConfig, SubType]], exc: Exception) -> None:
        """Record ``exc`` on every sub-type of the unit that has no value yet."""
        message = _failure_message(exc)
        ctx.result.tracebacks.append(_traceback(exc))
        for metric, sub in sub_types:
            key = joint_key(metric, sub)
            if key not in ctx.result.metrics:
                ctx.result.metrics[key] = SubMetricResult(
                    value=None,
                    priority=sub.priority,
                    higher_is_better=sub.higher_is_better,
                    unit=metric.metric_type.unit_of(sub.name),
                    error=message,
                )

    def _file_size(self, ctx: _Context, metric: MetricConfig, sub: SubType, model_config: Any) -> None:
        self._record(ctx, metric, sub, metric.metric_type.score_model(model_config))

    # ------------------------------------------------------------------ steps
    def _runtime(self, ctx: _Context, settings: Settings) -> Runtime:
        return ctx.runtimes[settings_key(settings)]

    def _examples(self, job: PredictionPass, view: Any) -> int | None:
        """A pass's examples, for its progress: the prepared data's count, else an earlier pass's (a JSON lines
        file's rows are known only once read), else unknown."""
        return view.prepared.num_rows or self.examples_seen.get(job.data_config)

    def _predict_and_score(self, ctx: _Context, job: PredictionPass, model_config: Any) -> None:
        """One pass over the data config: every metric of the pass scores as the batches stream by."""
        if self.shards > 1:
            from olive_eval.engine.shards import sharded_pass

            return sharded_pass(self, ctx, job, model_config)
        view = self.data.view(job.data_config, model_config)
        runtime, view = with_repeats(self._runtime(ctx, job.settings), view, job.metrics, model_config)
        folder = ctx.folder or ctx.model_name
        consumers = [
            _Guarded(
                metric,
                CustomScorer(metric, ctx.model_name, self.writer, folder)
                if metric.type == "custom"
                else MetricScorer(metric, self.base_dir, self.writer, folder),
            )
            for metric in job.metrics
        ]
        self.progress(ctx.model_name, f"predicting on '{job.data_config}' and scoring {len(consumers)} metric(s)")
        try:
            total = self._examples(job, view)
            with (
                ctx.stage(f"pass:{job.data_config}"),
                start_task(self.progress, ctx.model_name, f"'{job.data_config}'", total, "ex") as task,
            ):
                record = run_pass(runtime, view, consumers, lambda note: self.progress(ctx.model_name, note), task)
            self.examples_seen[job.data_config] = record.examples
        except BaseException:
            for consumer in consumers:
                consumer.discard()
            raise
        ctx.result.passes[job.data_config] = record.summary()
        ctx.result.warnings.extend(f"{count} {note} on '{job.data_config}'" for note, count in record.notes.items())
        self.progress(ctx.model_name, f"finishing the scores of {len(consumers)} metric(s) on '{job.data_config}'")
        for consumer in consumers:
            metric = consumer.metric
            if consumer.error is not None:
                self._fail(ctx, [(metric, sub) for sub in metric.sub_types], consumer.error)
                continue
            try:
                for scored in consumer.finish():
                    if scored.error is not None:  # that sub-type alone
                        self._fail(ctx, [(metric, scored.sub)], _scoring_error(metric, scored.error))
                        continue
                    self._record(ctx, metric, scored.sub, scored.score, scored.evidence)
            except Exception as exc:
                self._fail(ctx, [(metric, sub) for sub in metric.sub_types], _scoring_error(metric, exc))

    def record_timing(
        self, name: str, result: ModelResult, jobs: list[TimingRun], outcomes: list[TimingOutcome]
    ) -> None:
        """The timing phase's measurements of one model, as sub-type results (and evidence for goals)."""
        ctx = _Context(self.run, name, result, {}, evidence=self.evidence.setdefault(name, {}), folder=result.folder)
        for job, outcome in zip(jobs, outcomes, strict=True):
            if outcome.error is not None:
                self._fail(ctx, job.sub_types, outcome.error)
                continue
            sample = outcome.sample
            assert sample is not None
            _note_runtime(result, outcome.description, [metric.name for metric, _ in job.sub_types])
            config = job.timing
            info = TimingInfo(
                runs=sample.runs,
                rounds=len(sample.rounds),
                warmup_num=config.warmup_num,
                loop="yield" if config.yield_between_runs else "back_to_back",
                interleaved=outcome.interleaved,
                adaptive=config.adaptive,
                target_rel_ci=config.target_rel_ci,
                target_reached=outcome.target_reached,
                loads=len(sample.loads),
            )
            timed = TimedRuns.from_seconds(
                sample.batch_size,
                sample.rounds,
                data_config=job.data_config,
                loads=sample.loads,
                first_calls=sample.first_calls,
                quantities=sample.quantities,
                counts=sample.counts,
            )
            for metric_name in dict.fromkeys(metric.name for metric, _ in job.sub_types):
                result.timings[metric_name] = timed
            for metric, sub in job.sub_types:
                mtype = metric.metric_type
                evidence = None
                if mtype.can_resample(sub.name):
                    own = mtype.sample_for(sample, sub.name)  # a generation sub-type's own quantity
                    evidence = Evidence(timings=own, statistic=mtype.statistic(sub.name, own.batch_size))
                self._record(ctx, metric, sub, Score(mtype.score(sample, sub.name)), evidence)
                ctx.result.metrics[joint_key(metric, sub)].timing = replace(info)
            if sample.runs > 1:
                cv = float(latency_ms(sample.seconds, "cv"))
                if cv > BUSY_CV:
                    where = f"'{job.data_config}'" if job.data_config else "dummy inputs"
                    result.warnings.append(
                        f"the machine was busy: timing CV {cv:.0f}% over {sample.runs} runs on {where}"
                    )

    def _evaluate_func(self, ctx: _Context, metric: MetricConfig) -> None:
        runtime = self._runtime(ctx, metric.user_config.settings_override())
        self.progress(ctx.model_name, f"custom metric '{metric.name}'")
        with runtime.call_scope():  # what the function calls on the model runs as the model's pass does
            values = call_user_function(
                metric,
                ctx.model_name,
                "evaluate_func",
                (runtime.handle, self.context.device, self.context.provider_names),
                metric.user_config.evaluate_func_kwargs,
            )
        for sub in metric.sub_types:
            self._record(ctx, metric, sub, values[sub.name])

    def _lm_eval(self, ctx: _Context, job: LmEvalRun) -> None:
        """One lm-eval run over the job's tasks; every sub-type of its metrics reads its value from it."""
        from olive_eval.lm_eval_run.evaluate import evaluate_tasks, record_stderr, write_records

        self.progress(ctx.model_name, f"lm-eval tasks {', '.join(job.options.tasks)}")
        with ctx.stage("lm_eval"):
            runtime = self._runtime(ctx, job.settings)
            outcome = evaluate_tasks(runtime, ctx.model_name, job, self.context.allow_download)
        record = ctx.result.lm_eval = ctx.result.lm_eval or {}
        record.setdefault("tasks", {}).update(outcome.provenance["tasks"])
        record["lm_eval_version"] = outcome.provenance["lm_eval_version"]
        if self.writer is not None:
            write_records(self.writer, ctx.folder or ctx.model_name, job, outcome)
        for metric in job.metrics:
            for sub in metric.sub_types:
                value = outcome.values[job.resolved[(metric.name, sub.name)].name]
                evidence = Evidence(sample=value.evidence) if value.evidence is not None else None
                self._record(ctx, metric, sub, Score(value.value), evidence)
                record_stderr(ctx.result.metrics[joint_key(metric, sub)], value, job.options)

    @staticmethod
    def _record(
        ctx: _Context, metric: MetricConfig, sub: SubType, score: Score, evidence: Evidence | None = None
    ) -> None:
        key = joint_key(metric, sub)
        undefined = score.undefined
        if undefined is None and not np.isfinite(score.value):
            undefined = f"the value is {score.value}"
        result = SubMetricResult(
            value=None if undefined is not None else float(score.value),
            priority=sub.priority,
            higher_is_better=sub.higher_is_better,
            unit=metric.metric_type.unit_of(sub.name),
            per_class=None if score.per_class is None else [v if np.isfinite(v) else None for v in score.per_class],
            aggregation=sub.aggregation,
            undefined=undefined,
            details=score.details,
        )
        ci = sub.confidence_interval
        if ci is not None and evidence is not None and result.value is not None:
            try:
                result.ci_low, result.ci_high = evidence.interval(
                    result.value, ci.method, ci.n_resamples, ci.level, ci.seed
                )
            except ValueError as exc:
                raise EvaluationError(f"metric '{key}': cannot compute a confidence interval: {exc}") from exc
            result.confidence_interval = ConfidenceInterval(ci.method, ci.n_resamples, ci.level, ci.seed)
        if evidence is not None:
            ctx.evidence[key] = evidence
        ctx.result.metrics[key] = result

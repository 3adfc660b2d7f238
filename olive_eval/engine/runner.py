"""Evaluating one model: each prediction pass once, each user function once, file sizes; timing is a phase
of its own (:mod:`olive_eval.engine.timing_phase`).

A model's evaluation is a self-contained unit of work: given the run config and the model, it returns the
model's results and the evidence for paired goals (see :func:`olive_eval.engine.unit.run_unit`). The runner talks to
runtimes only through the ``Runtime`` interface and to metrics only through the registered metric types,
so a new runtime or metric family changes nothing here. Every kind of work records its values through the
model's :class:`~olive_eval.engine.recorder.Recorder`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.config.metric_key import MetricKey, metric_keys
from olive_eval.config.run import RunConfig
from olive_eval.engine.context import RunContext
from olive_eval.engine.custom import call_user_function
from olive_eval.engine.data_store import DataStore, DataView
from olive_eval.engine.evidence import Evidence
from olive_eval.engine.guard import Guarded, failure_message, format_traceback, scoring_error
from olive_eval.engine.judges import RunJudges
from olive_eval.engine.passes import run_pass
from olive_eval.engine.plan import Plan, PredictionPass, Settings, settings_key
from olive_eval.engine.recorder import Recorder
from olive_eval.engine.repeats import with_repeats
from olive_eval.engine.scoring import CustomScorer, MetricScorer
from olive_eval.judges.base import Judges
from olive_eval.lm_eval_run.plan import LmEvalRun
from olive_eval.metrics import Score
from olive_eval.progress import Progress, silent, start_task
from olive_eval.records.results import ModelResult
from olive_eval.records.writer import InstanceWriter
from olive_eval.runtimes.base import ModelConfig, Runtime

if TYPE_CHECKING:
    from olive_eval.engine.shards import Sharding


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


class ModelEvaluator:
    """One model's per-model work (passes, file sizes, user functions, lm-eval runs) on the run's plan and data."""

    def __init__(
        self,
        run: RunConfig,
        plan: Plan,
        data: DataStore,
        progress: Progress = silent,
        writer: InstanceWriter | None = None,
        base_dir: Path | None = None,
        context: RunContext | None = None,
        judges: Judges | None = None,
    ) -> None:
        self.run = run
        self.context = context or RunContext.of(run)
        #: the run's judges, by spec key (the caller closes them; by default the plan's, loaded on first use)
        self.judges = judges if judges is not None else RunJudges(plan.judges, self.context)
        self.plan = plan
        self.data = data
        self.progress = progress
        self.writer = writer
        self.base_dir = base_dir
        #: model name -> joint key -> what the value rests on, for paired goal checks after all models ran
        self.evidence: dict[str, dict[str, Evidence]] = {}
        #: the model being evaluated and its result so far (see :meth:`result_of`)
        self._current: tuple[str, ModelResult] | None = None
        #: the runtimes of the model being evaluated, by settings key, and how its passes are sharded
        self._runtimes: dict[str, Runtime] = {}
        self._sharding: Sharding | None = None
        #: data config -> examples its last pass went over: a pass's progress total where the data does not say
        self.examples_seen: dict[str, int] = {}

    def result_of(self, name: str) -> ModelResult | None:
        """The result of model ``name`` as far as this evaluator got with it (kept when a run is interrupted
        while the model is evaluated); None when it never evaluated that model."""
        if self._current is not None and self._current[0] == name:
            return self._current[1]
        return None

    def evaluate(
        self,
        model_config: ModelConfig,
        folder: str | None = None,
        stages: Sequence[Sequence[str]] | None = None,
        stop: Callable[[ModelResult], str | None] | None = None,
        sharding: Sharding | None = None,
    ) -> ModelResult:
        """One model: load each runtime variant, then run every unit of work of the plan.

        A unit that fails (a pass, a timing run, a user function) fails only its own metrics; the others
        keep their values and the model is ``partial``. A model that does not load is ``failed``.
        ``stages`` (metric names) are measured in turn; when ``stop`` names a missed goal after one, the
        rest are not measured (``early_stopped``). ``sharding`` (the executor's choice): each prediction pass in
        that many shards, mapped as it says. KeyboardInterrupt is not caught: the caller records it.
        """
        name = model_config.display_name()
        result = ModelResult(status="pending", folder=folder)
        self._current = (name, result)
        started = time.perf_counter()
        recorder = Recorder(name, result, folder=folder)
        self.evidence[name] = recorder.evidence
        self._runtimes, self._sharding = {}, sharding
        try:
            self._load(recorder, model_config)
        except Exception as exc:
            result.status, result.error = "failed", failure_message(exc)
            result.tracebacks.append(format_traceback(exc))
        else:
            for names in stages if stages is not None else [None]:
                for metrics, run_unit in self._units(recorder, model_config, names):
                    try:
                        run_unit()
                    except Exception as exc:
                        recorder.fail(metrics, exc)
                if stop is not None and (missed := stop(result)) is not None:
                    result.early_stopped = missed
                    break
            settle_status(result, metric_keys(self.run.all_metrics))
        finally:
            for runtime in self._runtimes.values():
                runtime.close()
            self._runtimes = {}
        result.seconds = round(time.perf_counter() - started, 3)
        return result

    def _load(self, recorder: Recorder, model_config: ModelConfig) -> None:
        for variant, metric_names in self.plan.settings_variants():
            self.progress(recorder.model_name, "loading model")
            with recorder.stage("load"):
                runtime = self.context.load(model_config, variant)
            self._runtimes[settings_key(variant)] = runtime
            recorder.result.runtimes.append({**runtime.describe(), "metrics": metric_names})

    def _units(
        self, recorder: Recorder, model_config: ModelConfig, names: Sequence[str] | None = None
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
                    partial(self._predict_and_score, recorder, job, model_config),
                )
        for metric, sub in self.plan.file_sizes:
            if wanted(metric):
                yield [(metric, sub)], partial(self._file_size, recorder, metric, sub, model_config)
        for metric in self.plan.user_functions:
            if wanted(metric):
                yield [(metric, s) for s in metric.sub_types], partial(self._evaluate_func, recorder, metric)
        for job in self.plan.lm_eval_runs:
            if any(wanted(m) for m in job.metrics):
                yield [(m, s) for m in job.metrics for s in m.sub_types], partial(self._lm_eval, recorder, job)

    def _file_size(self, recorder: Recorder, metric: MetricConfig, sub: SubType, model_config: ModelConfig) -> None:
        recorder.record(metric, sub, metric.metric_type.score_model(model_config))

    # ------------------------------------------------------------------ steps
    def _runtime(self, settings: Settings) -> Runtime:
        return self._runtimes[settings_key(settings)]

    def _examples(self, job: PredictionPass, view: DataView) -> int | None:
        """A pass's examples, for its progress: the prepared data's count, else an earlier pass's (a JSON lines
        file's rows are known only once read), else unknown."""
        return view.prepared.num_rows or self.examples_seen.get(job.data_config)

    def _predict_and_score(self, recorder: Recorder, job: PredictionPass, model_config: ModelConfig) -> None:
        """One pass over the data config: every metric of the pass scores as the batches stream by."""
        if self._sharding is not None and self._sharding.shards > 1:
            from olive_eval.engine.shards import sharded_pass

            return sharded_pass(
                self.run,
                self.data,
                self._sharding,
                job,
                model_config,
                recorder,
                self.writer,
                self.base_dir,
                self.progress,
                self.judges,
            )
        name = recorder.model_name
        view = self.data.view(job.data_config, model_config)
        runtime, view = with_repeats(self._runtime(job.settings), view, job.metrics, model_config)
        folder = recorder.records_folder
        consumers = [
            Guarded(
                metric,
                CustomScorer(metric, name, self.writer, folder)
                if metric.type == "custom"
                else MetricScorer(metric, self.base_dir, self.writer, folder, self.judges),
            )
            for metric in job.metrics
        ]
        self.progress(name, f"predicting on '{job.data_config}' and scoring {len(consumers)} metric(s)")
        try:
            total = self._examples(job, view)
            with (
                recorder.stage(f"pass:{job.data_config}"),
                start_task(self.progress, name, f"'{job.data_config}'", total, "ex") as task,
            ):
                record = run_pass(runtime, view, consumers, lambda note: self.progress(name, note), task)
            self.examples_seen[job.data_config] = record.examples
        except BaseException:
            for consumer in consumers:
                consumer.discard()
            raise
        recorder.record_pass(job.data_config, record)
        self.progress(name, f"finishing the scores of {len(consumers)} metric(s) on '{job.data_config}'")
        for consumer in consumers:
            metric = consumer.metric
            if consumer.error is not None:
                recorder.fail_metric(metric, consumer.error)
                continue
            try:
                recorder.record_scored(metric, consumer.finish())
            except Exception as exc:
                recorder.fail_metric(metric, scoring_error(metric, exc))

    def _evaluate_func(self, recorder: Recorder, metric: MetricConfig) -> None:
        runtime = self._runtime(metric.user_config.settings_override())
        self.progress(recorder.model_name, f"custom metric '{metric.name}'")
        with runtime.call_scope():  # what the function calls on the model runs as the model's pass does
            values = call_user_function(
                metric,
                recorder.model_name,
                "evaluate_func",
                (runtime.handle, self.context.device, self.context.provider_names),
                metric.user_config.evaluate_func_kwargs,
            )
        for sub in metric.sub_types:
            recorder.record(metric, sub, values[sub.name])

    def _lm_eval(self, recorder: Recorder, job: LmEvalRun) -> None:
        """One lm-eval run over the job's tasks; every sub-type of its metrics reads its value from it."""
        from olive_eval.lm_eval_run.evaluate import evaluate_tasks, record_stderr, write_records

        self.progress(recorder.model_name, f"lm-eval tasks {', '.join(job.options.tasks)}")
        with recorder.stage("lm_eval"):
            runtime = self._runtime(job.settings)
            outcome = evaluate_tasks(runtime, recorder.model_name, job, self.context.allow_download)
        result = recorder.result
        record = result.lm_eval = result.lm_eval or {}
        record.setdefault("tasks", {}).update(outcome.provenance["tasks"])
        record["lm_eval_version"] = outcome.provenance["lm_eval_version"]
        if self.writer is not None:
            write_records(self.writer, recorder.records_folder, job, outcome)
        for metric in job.metrics:
            for sub in metric.sub_types:
                value = outcome.values[job.resolved[(metric.name, sub.name)].name]
                evidence = Evidence(sample=value.evidence) if value.evidence is not None else None
                record_stderr(recorder.record(metric, sub, Score(value.value), evidence), value, job.options)

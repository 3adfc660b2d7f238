"""Prediction passes: metrics that read predictions from the same data config with the same runtime settings
share one pass of each model over the data, scored as the batches stream by."""

from __future__ import annotations

from dataclasses import dataclass, replace

from olive_eval.config.metric import MetricConfig
from olive_eval.config.run import RunConfig
from olive_eval.engine.model.guard import Guarded, scoring_error
from olive_eval.engine.model.runtime_settings import settings_key
from olive_eval.engine.passes.baseline_outputs import pass_baseline
from olive_eval.engine.passes.pass_loop import run_pass
from olive_eval.engine.passes.repeats import with_repeats
from olive_eval.engine.passes.scoring import scorer_for
from olive_eval.engine.passes.sequential import SequentialStop
from olive_eval.engine.passes.shards import sharded_pass
from olive_eval.engine.run.data_store import DataView
from olive_eval.engine.run.preflight import check_outputs
from olive_eval.engine.work.base import ModelUnit, UnitContext, WorkKind, WorkUnit, register_work
from olive_eval.metrics.types import PREDICTION_PASS
from olive_eval.progress import start_task


@dataclass
class PredictionPass(ModelUnit):
    """One pass of a model over a labelled data config; every listed metric scores its output."""

    data_config: str = ""

    def narrowed(self, metrics: list[MetricConfig]) -> PredictionPass:
        return replace(self, metrics=metrics)

    def run(self, ctx: UnitContext) -> None:
        if ctx.sharding is not None and ctx.sharding.shards > 1:
            sharded_pass(
                ctx.run, ctx.data, ctx.sharding, self.data_config, self.settings, self.metrics, ctx.model, ctx.recorder,
                ctx.writer, ctx.base_dir, ctx.progress, ctx.judges, ctx.baseline,
            )  # fmt: skip
            return
        recorder = ctx.recorder
        view = ctx.data.view(self.data_config, ctx.model)
        runtime, view = with_repeats(ctx.runtime(self.settings), view, self.metrics, ctx.model)
        capture, baseline = pass_baseline(ctx.baseline, self.metrics, self.data_config, self.settings)
        folder = recorder.records_folder
        consumers = [
            Guarded(
                metric, scorer_for(metric, recorder.model_name, ctx.base_dir, ctx.writer, folder, ctx.judges, baseline)
            )
            for metric in self.metrics
        ]
        ctx.note(f"predicting on '{self.data_config}' and scoring {len(consumers)} metric(s)")
        stopper = None
        if ctx.sequential is not None:
            stopper = SequentialStop(ctx.sequential, self.data_config, consumers, view.prepared.num_rows or 0)
        try:
            with (
                recorder.stage(f"pass:{self.data_config}"),
                start_task(
                    ctx.progress, recorder.model_name, f"'{self.data_config}'", self._examples(ctx, view), "ex"
                ) as task,
            ):
                record = run_pass(runtime, view, [*([capture] if capture else []), *consumers], ctx.note, task, stopper)
            if stopper is None:
                ctx.examples_seen[self.data_config] = record.examples
        except BaseException:
            for consumer in [*([capture] if capture else []), *consumers]:
                consumer.discard()
            raise
        if capture is not None:
            capture.finish()
        recorder.record_pass(self.data_config, record)
        if stopper is not None:
            recorder.record_sequential(self.data_config, stopper.record())
        ctx.note(f"finishing the scores of {len(consumers)} metric(s) on '{self.data_config}'")
        for consumer in consumers:
            metric = consumer.metric
            if consumer.error is not None:
                recorder.fail_metric(metric, consumer.error)
                continue
            try:
                recorder.record_scored(metric, consumer.finish())
            except Exception as exc:
                recorder.fail_metric(metric, scoring_error(metric, exc))

    def _examples(self, ctx: UnitContext, view: DataView) -> int | None:
        """The pass's examples, for its progress: the prepared data's count, else an earlier pass's (a JSON lines
        file's rows are known only once read), else unknown."""
        return view.prepared.num_rows or ctx.examples_seen.get(self.data_config)


@register_work
class PredictionPassWork(WorkKind):
    """Metrics scoring a model's outputs on a data config: one pass per (data config, runtime settings)."""

    name = PREDICTION_PASS
    order = 0

    def plan(self, run: RunConfig, metrics: list[MetricConfig]) -> list[WorkUnit]:
        passes: dict[tuple[str, str], PredictionPass] = {}
        for metric in metrics:
            assert metric.data_config is not None  # resolved by RunConfig validation
            settings = metric.user_config.settings_override()
            key = (metric.data_config, settings_key(settings))
            passes.setdefault(key, PredictionPass([], settings, metric.data_config)).metrics.append(metric)
        check_outputs(run, list(dict.fromkeys(job.data_config for job in passes.values())))
        return list(passes.values())

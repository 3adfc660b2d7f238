"""The ``lm_eval`` kind of work: one lm-eval run per set of options and runtime settings, on the loaded model
through its adapter; every sub-type of its metrics reads its value from the run."""

from __future__ import annotations

from dataclasses import dataclass, field

from olive_eval.config.metric import MetricConfig
from olive_eval.config.run import RunConfig
from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.model.runtime_settings import settings_key
from olive_eval.engine.work.base import ModelUnit, UnitContext, WorkKind, WorkUnit, register_work
from olive_eval.lm_eval_run.plan import LmEvalRun, new_run, plan_lm_eval
from olive_eval.metrics import Score


@dataclass
class LmEvalUnit(ModelUnit):
    """One lm-eval run over the job's tasks (its metrics share it: a stage naming one of them runs all)."""

    job: LmEvalRun = field(kw_only=True)

    def run(self, ctx: UnitContext) -> None:
        from olive_eval.lm_eval_run.evaluate import evaluate_tasks, record_stderr, write_records

        job, recorder = self.job, ctx.recorder
        ctx.note(f"lm-eval tasks {', '.join(job.options.tasks)}")
        with recorder.stage("lm_eval"):
            outcome = evaluate_tasks(ctx.runtime(job.settings), recorder.model_name, job, ctx.context.allow_download)
        result = recorder.result
        record = result.lm_eval = result.lm_eval or {}
        record.setdefault("tasks", {}).update(outcome.provenance["tasks"])
        record["lm_eval_version"] = outcome.provenance["lm_eval_version"]
        if ctx.writer is not None:
            write_records(ctx.writer, recorder.records_folder, job, outcome)
        for metric in job.metrics:
            for sub in metric.sub_types:
                value = outcome.values[job.resolved[(metric.name, sub.name)].name]
                evidence = Evidence(sample=value.evidence) if value.evidence is not None else None
                record_stderr(recorder.record(metric, sub, Score(value.value), evidence), value, job.options)


@register_work
class LmEvalWork(WorkKind):
    """Metrics whose options differ only in ``tasks`` (and that share runtime settings) share one lm-eval run."""

    name = "lm_eval"
    order = 40

    def plan(self, run: RunConfig, metrics: list[MetricConfig]) -> list[WorkUnit]:
        jobs: dict[tuple[str, str], LmEvalRun] = {}
        for metric in metrics:
            settings = metric.user_config.settings_override()
            key = (metric.lm_eval_options().run_key(), settings_key(settings))
            if key in jobs:
                jobs[key].add(metric)
            else:
                jobs[key] = new_run(metric, settings)
        plan_lm_eval(run, list(jobs.values()))
        return [LmEvalUnit(job.metrics, job.settings, job=job) for job in jobs.values()]

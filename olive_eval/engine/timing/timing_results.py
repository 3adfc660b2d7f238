"""The timing phase's measurements of one model as its sub-type results: values, how they were timed, the
evidence paired goals resample, and a warning where the machine was too busy to trust them.

The phase (:mod:`olive_eval.engine.timing.timing_phase`) measures; this records, through the model's
:class:`~olive_eval.engine.model.recorder.Recorder`, as every other kind of work does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.model.recorder import Recorder
from olive_eval.engine.timing.timing_phase import TimingOutcome
from olive_eval.engine.work.timing import TimingRun
from olive_eval.errors import EvaluationError
from olive_eval.metrics import Score
from olive_eval.metrics.performance import latency_ms
from olive_eval.records.results import ModelResult, TimedRuns, TimingInfo

#: A timing run's coefficient of variation (percent) above which the table warns of a busy machine.
BUSY_CV = 25.0


def note_runtime(result: ModelResult, description: dict[str, Any], metrics: list[str]) -> None:
    """Add ``metrics`` to the runtime entry with this description (a new entry for new settings)."""
    for entry in result.runtimes:
        if {k: v for k, v in entry.items() if k != "metrics"} == description:
            entry["metrics"].extend(m for m in metrics if m not in entry["metrics"])
            return
    result.runtimes.append({**description, "metrics": list(dict.fromkeys(metrics))})


def record_timing(recorder: Recorder, jobs: list[TimingRun], outcomes: list[TimingOutcome]) -> None:
    """The timing phase's measurements of one model, as sub-type results (and evidence for goals)."""
    result = recorder.result
    for job, outcome in zip(jobs, outcomes, strict=True):
        if outcome.error is not None:
            recorder.fail(job.sub_types, outcome.error)
            continue
        sample = outcome.sample
        assert sample is not None
        note_runtime(result, outcome.description, [metric.name for metric, _ in job.sub_types])
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
            try:
                score = Score(mtype.score(sample, sub.name))
            except (ValueError, EvaluationError) as exc:  # what the run could not measure: that sub-type alone fails
                recorder.fail([(metric, sub)], exc)
                continue
            evidence = None
            if mtype.can_resample(sub.name):
                own = mtype.sample_for(sample, sub.name)  # a generation sub-type's own quantity
                evidence = Evidence(timings=own, statistic=mtype.statistic(sub.name, own.batch_size))
            recorder.record(metric, sub, score, evidence).timing = replace(info)
        if sample.runs > 1:
            cv = float(latency_ms(sample.seconds, "cv"))
            if cv > BUSY_CV:
                where = f"'{job.data_config}'" if job.data_config else "dummy inputs"
                result.warnings.append(f"the machine was busy: timing CV {cv:.0f}% over {sample.runs} runs on {where}")


def timed_here(result: ModelResult, node: Callable[[], dict[str, str]]) -> None:
    """A model whose accuracy ran on another node (its runtimes name one): its timing runtimes name this one."""
    if any("node" in entry for entry in result.runtimes):
        here = node()
        for entry in result.runtimes:
            entry.setdefault("node", here)


def timing_statistics(job: TimingRun, batch_size: int) -> list[Any]:
    """The functions of the timed seconds that adaptive repeats must pin down."""
    return [
        metric.metric_type.statistic(sub.name, batch_size)
        for metric, sub in job.sub_types
        if metric.metric_type.can_resample(sub.name)
    ]

"""Timing: repeated calls on one batch. Sub-types with the same data, runtime settings and timing config share
one timing run (latency and throughput included). The run's timing phase measures the runs, in rounds that
interleave the models (:mod:`olive_eval.engine.timing.timing_phase`), so a timing run is planned here and not run per
model."""

from __future__ import annotations

from dataclasses import dataclass, field

from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.config.run import RunConfig
from olive_eval.engine.model.runtime_settings import settings_key
from olive_eval.engine.work.base import WorkKind, WorkUnit, register_work
from olive_eval.metrics.performance import TimingConfig
from olive_eval.metrics.types import TIMING


@dataclass
class TimingRun(WorkUnit):
    """Repeated calls on one batch; ``data_config`` None means dummy inputs from the model's own shapes."""

    timing: TimingConfig = field(default_factory=TimingConfig)
    sub_types: list[tuple[MetricConfig, SubType]] = field(default_factory=list)

    def measures(self) -> list[tuple[MetricConfig, SubType]]:
        return list(self.sub_types)


@register_work
class TimingWork(WorkKind):
    name = TIMING
    order = 10

    def plan(self, run: RunConfig, metrics: list[MetricConfig]) -> list[WorkUnit]:
        timings: dict[tuple[str | None, str, str], TimingRun] = {}
        for metric in metrics:
            settings = metric.user_config.settings_override()
            for sub in metric.sub_types:
                timing = metric.parsed_config(sub)
                key = (metric.data_config, settings_key(settings), timing.model_dump_json())
                job = timings.setdefault(key, TimingRun([], settings, metric.data_config, timing))
                if metric not in job.metrics:
                    job.metrics.append(metric)
                job.sub_types.append((metric, sub))
        return list(timings.values())

"""File sizes: a type that scores the model's files (the size on disk) reads them, without loading the model."""

from __future__ import annotations

from dataclasses import dataclass

from olive_eval.config.metric import MetricConfig
from olive_eval.config.run import RunConfig
from olive_eval.engine.work.base import ModelUnit, UnitContext, WorkKind, WorkUnit, register_work
from olive_eval.metrics.types import MODEL_FILES


@dataclass
class FileSizes(ModelUnit):
    """One metric's sub-types, each scored from the model's config (its files), not from a runtime."""

    loads_model = False

    def run(self, ctx: UnitContext) -> None:
        for metric, sub in self.measures():
            ctx.recorder.record(metric, sub, metric.metric_type.score_model(ctx.model))


@register_work
class ModelFilesWork(WorkKind):
    name = MODEL_FILES
    order = 20

    def plan(self, run: RunConfig, metrics: list[MetricConfig]) -> list[WorkUnit]:
        return [FileSizes([metric], None) for metric in metrics]

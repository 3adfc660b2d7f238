"""User functions: a custom metric's ``evaluate_func`` runs the model itself, once per model, and returns a value
for each of the metric's sub-types."""

from __future__ import annotations

from dataclasses import dataclass

from olive_eval.config.metric import MetricConfig
from olive_eval.config.run import RunConfig
from olive_eval.engine.model.custom import call_user_function
from olive_eval.engine.work.base import ModelUnit, UnitContext, WorkKind, WorkUnit, register_work
from olive_eval.metrics.types import USER_FUNCTION


@dataclass
class UserFunction(ModelUnit):
    """One metric's ``evaluate_func``, called with the model's handle, the device and the providers."""

    def run(self, ctx: UnitContext) -> None:
        (metric,) = self.metrics
        runtime = ctx.runtime(self.settings)
        ctx.note(f"custom metric '{metric.name}'")
        with runtime.call_scope():  # what the function calls on the model runs as the model's pass does
            values = call_user_function(
                metric,
                ctx.recorder.model_name,
                "evaluate_func",
                (runtime.handle, ctx.context.device, ctx.context.provider_names),
                metric.user_config.evaluate_func_kwargs,
            )
        for sub in metric.sub_types:
            ctx.recorder.record(metric, sub, values[sub.name])


@register_work
class UserFunctionWork(WorkKind):
    name = USER_FUNCTION
    order = 30

    def plan(self, run: RunConfig, metrics: list[MetricConfig]) -> list[WorkUnit]:
        return [UserFunction([metric], metric.user_config.settings_override()) for metric in metrics]

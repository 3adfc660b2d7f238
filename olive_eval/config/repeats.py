"""The config checks of a metric's ``repeats`` and ``reduction`` (see :mod:`olive_eval.metrics.reductions`).

``repeats`` sits on the metric, beside the filters and the reduction that consume the samples, so every check
of it is local to one metric config: a metric with repeats needs a reduction, and pass@k needs k <= repeats.
The pass over a data config samples as many repeats as its metrics ask for; a metric with fewer reads the first
ones (:mod:`olive_eval.engine.repeats`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from olive_eval.config.components import nested_error
from olive_eval.data.filters import build_filters
from olive_eval.metrics.base import Kind
from olive_eval.metrics.reductions import build_reduction
from olive_eval.metrics.registry import metric_registry

if TYPE_CHECKING:
    from olive_eval.config.metric import MetricConfig


def check_repeats(config: MetricConfig) -> None:
    """Raise the nested config error for a reduction that cannot work with this metric's repeats."""
    if config.reduction is None:
        if config.repeats > 1 and not any(f.reduces_repeats for f in build_filters(config.filters)):
            raise nested_error(
                "repeats",
                f"metric '{config.name}' samples {config.repeats} repeats of each example but does not reduce them: "
                "set 'reduction' (take_first, majority_vote, mean, pass_at_k) or end 'filters' with take_first or "
                "majority_vote",
            )
        return
    try:
        reduction = build_reduction(config.reduction)
    except ValueError as exc:
        where, _, message = str(exc).partition(": ")
        raise nested_error(where, message) from None
    if reduction.samples_needed > config.repeats:
        raise nested_error(
            "reduction.k",
            f"{reduction.label()} needs at least {reduction.samples_needed} samples per example, and metric "
            f"'{config.name}' has repeats {config.repeats}; raise repeats to {reduction.samples_needed} or lower k",
        )
    if reduction.prediction_filter is None:
        for i, sub in enumerate(config.sub_types):
            metric = (
                metric_registry.get(sub.name) if config.type == "accuracy" and sub.name in metric_registry else None
            )
            if metric is None or metric.kind is not Kind.INSTANCE or config.backend != "torch_metrics":
                raise nested_error(
                    f"sub_types[{i}].name",
                    f"reduction '{reduction.name}' reduces each example's sample scores, which '{sub.name}' does not "
                    "have (it needs an accuracy metric with one score per example, such as exact_match)",
                )

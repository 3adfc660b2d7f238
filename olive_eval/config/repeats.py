"""The config checks of a metric's ``repeats`` and ``reduction`` (see :mod:`olive_eval.metrics.reductions`).

``repeats`` sits on the metric, beside the filters and the reduction that consume the samples, so every check
of it is local to one metric config: a metric with repeats needs a reduction, and pass@k needs k <= repeats.
The pass over a data config samples as many repeats as its metrics ask for; a metric with fewer reads the first
ones (:mod:`olive_eval.engine.passes.repeats`), all from one seed: metrics sharing a pass with different ``repeat_seed``
values are a config error (:func:`olive_eval.config.metric_set.check_shared_seeds`), not a surprise after the model loaded.

Bounds, so a typo cannot take the machine's memory: ``repeats`` is at most :data:`MAX_REPEATS`, and a pass
generates at most :data:`MAX_GENERATIONS` samples (repeats x examples, checked when the data is opened).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from olive_eval.config.components import nested_error
from olive_eval.data.filters import build_filters
from olive_eval.metrics.base import Kind
from olive_eval.metrics.reductions import build_reduction
from olive_eval.metrics.registry import metric_registry

#: The most repeats a metric may ask for.
MAX_REPEATS = 1000
#: The most samples (repeats x examples) one pass may generate: every sample is held until the pass is scored.
MAX_GENERATIONS = 1_000_000


class Named(Protocol):
    """A sub-type, as far as the repeats check reads it."""

    @property
    def name(self) -> str: ...


class RepeatedMetric(Protocol):
    """A metric config, as far as the repeats check reads it (the config's module calls the check, so this
    module cannot import the config's class)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def repeats(self) -> int | None: ...
    @property
    def reduction(self) -> str | dict[str, Any] | None: ...
    @property
    def filters(self) -> list[dict[str, Any]]: ...
    @property
    def sub_types(self) -> Sequence[Named]: ...


def check_repeats(config: RepeatedMetric) -> None:
    """Raise the nested config error for a reduction that cannot work with this metric's repeats."""
    if config.reduction is None:
        if (config.repeats or 1) > 1 and not any(f.reduces_repeats for f in build_filters(config.filters)):
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
    if reduction.samples_needed > (config.repeats or 1):
        raise nested_error(
            "reduction.k",
            f"{reduction.label()} needs at least {reduction.samples_needed} samples per example, and metric "
            f"'{config.name}' has repeats {config.repeats or 1}; raise repeats to {reduction.samples_needed} or lower k",
        )
    if reduction.prediction_filter is None:
        for i, sub in enumerate(config.sub_types):
            metric = (
                metric_registry.get(sub.name)
                if config.metric_type.sub_types_are_metrics and sub.name in metric_registry
                else None
            )
            if metric is None or metric.kind is not Kind.INSTANCE or config.backend != "torch_metrics":
                raise nested_error(
                    f"sub_types[{i}].name",
                    f"reduction '{reduction.name}' reduces each example's sample scores, which '{sub.name}' does not "
                    "have (it needs an accuracy metric with one score per example, such as exact_match)",
                )

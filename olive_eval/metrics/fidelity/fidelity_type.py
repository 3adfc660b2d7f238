"""The ``fidelity`` metric type: sub-types compare each model's outputs on a data config with the baseline's
outputs on the same examples, so the data needs no labels. The baseline's own values are the identity
(agreement 1, divergence 0). Sub-types are the fidelity measures (:mod:`olive_eval.metrics.fidelity.measures`)
and every registered metric that scores predictions against references, run with the baseline's predictions as
the references (``exact_match``, ``rougeL``, ``wer``, ``map``...)."""

from __future__ import annotations

from typing import Any

from olive_eval.metrics.base import Metric
from olive_eval.metrics.fidelity.measures import (
    BASELINE,
    TEACHER_FORCED,
    TOKEN_MEASURES,
    fidelity_registry,
    output_field,
)
from olive_eval.metrics.registry import metric_registry
from olive_eval.metrics.types import PREDICTION_PASS, MetricType, model_keys, register_metric_type

#: What a registered metric must read to run against the baseline's predictions.
AGAINST_REFERENCES = {"prediction", "references"}


def _against_references(name: str) -> bool:
    return name in metric_registry and set(metric_registry.get(name).reads) >= AGAINST_REFERENCES


def _with_baseline_references(reads: tuple[str, ...]) -> tuple[str, ...]:
    """A metric's fields with the baseline's predictions in place of the references."""
    return tuple(BASELINE + "prediction" if name == "references" else name for name in reads)


def _metric_class(sub_type: str) -> type[Metric]:
    return fidelity_registry.get(sub_type) if sub_type in fidelity_registry else metric_registry.get(sub_type)


@register_metric_type
class FidelityType(MetricType):
    name = "fidelity"
    work = PREDICTION_PASS
    resamplable = True
    reads_baseline = True

    def work_of(self, config: Any) -> str:
        """Token-level measures feed each model the baseline's tokens; the others compare a pass's outputs."""
        return TEACHER_FORCED if any(s.name in TOKEN_MEASURES for s in config.sub_types) else PREDICTION_PASS

    def reads_data(self, config: Any) -> bool:
        return True

    def config_problem(self, config: Any) -> tuple[str, str] | None:
        if (config.repeats or 1) > 1:
            return "repeats", "fidelity compares one output per example with the baseline's; leave out repeats"
        tokens = [s.name in TOKEN_MEASURES for s in config.sub_types]
        if any(tokens) and not all(tokens):
            i = tokens.index(not tokens[0])
            return (
                f"sub_types[{i}].name",
                f"{', '.join(TOKEN_MEASURES)} feed each model the baseline's generated tokens, apart from the pass the "
                "other sub-types compare: give them a fidelity metric of their own",
            )
        return None

    def sub_type_names(self) -> list[str]:
        return [*fidelity_registry.names(), *(n for n in metric_registry.names() if _against_references(n))]

    def check_sub_type(self, sub_type: str) -> None:
        if sub_type in fidelity_registry:
            return
        if sub_type in metric_registry and not _against_references(sub_type):
            reads = ", ".join(metric_registry.get(sub_type).reads)
            raise ValueError(
                f"metric '{sub_type}' reads {reads}, not predictions and references; a fidelity sub-type is a fidelity "
                "measure or a metric that scores predictions against references (the baseline's predictions stand for "
                "them)"
            )
        super().check_sub_type(sub_type)

    def default_higher_is_better(self, sub_type: str) -> bool:
        return _metric_class(sub_type).higher_is_better

    def is_scalar(self, sub_type: str) -> bool:
        return _metric_class(sub_type).scalar

    def config_keys(self, sub_type: str) -> set[str]:
        return model_keys(_metric_class(sub_type).Config)

    def parse_metric_config(self, sub_type: str, raw: dict[str, Any] | None) -> Any:
        return _metric_class(sub_type).Config.model_validate(raw or {})

    def build_metric(self, sub_type: str, raw: dict[str, Any] | None, aggregation: str | None) -> Metric:
        metric = _metric_class(sub_type).from_config(raw, aggregation)
        if sub_type not in fidelity_registry:  # the baseline's predictions stand for the references
            metric.reads = _with_baseline_references(metric.reads)  # type: ignore[misc]
        return metric

    def reads_of(self, sub_type: str, raw: dict[str, Any] | None) -> tuple[str, ...]:
        if sub_type in TOKEN_MEASURES:
            return ()
        if sub_type in fidelity_registry:
            field = output_field(self.parse_metric_config(sub_type, raw))
            return (field, BASELINE + field)
        return _with_baseline_references(metric_registry.get(sub_type).reads)

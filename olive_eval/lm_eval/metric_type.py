"""The ``lm_eval`` metric type: lm-evaluation-harness tasks as an Olive metric type.

It lives with lm-eval's options, not with the metrics: the metrics floor knows nothing of lm-eval. The metric
type registry finds it by name (:data:`olive_eval.metrics.types.metric_type_registry` lists this module).
"""

from __future__ import annotations

from typing import Any

from olive_eval.lm_eval.options import LmEvalOptions
from olive_eval.metrics.types import MetricType, metric_type_registry


class LmEvalType(MetricType):
    """lm-evaluation-harness tasks (:mod:`olive_eval.lm_eval`): the metric-level ``metric_config`` names the tasks;
    sub-types are the (task, metric, filter) values they report, resolved with their directions when the run is
    planned; none given measures all of them."""

    name = "lm_eval"
    work = "lm_eval"  # one lm-eval run per set of options (olive_eval.lm_eval_run.work)
    resamplable = True
    options = LmEvalOptions
    sub_types_known_at_load = False
    own_data = "lm-eval's tasks bring their own data, filters and repeats: set them in the task's YAML file"

    def sub_type_names(self) -> None:
        return None

    def default_higher_is_better(self, sub_type: str) -> None:
        return None

    def evidence_metric(self) -> Any:
        from olive_eval.lm_eval.evidence import SampleMetric

        return SampleMetric()

    def parse_metric_config(self, sub_type: str, raw: dict[str, Any] | None) -> Any:
        if raw:
            raise ValueError(
                "lm_eval sub-types take no metric_config; the tasks and their options go in the "
                "metric's own metric_config"
            )
        return None


metric_type_registry.register(LmEvalType.name, LmEvalType())

"""Olive's metrics in, Olive's ``MetricResult`` out.

In: the metrics of a workflow evaluator reach the evaluator as Olive objects with every default filled in
(each torchmetrics argument, each data component's signature defaults). The user's config is recovered by
dropping what equals Olive's own default, so olive-eval's strict validation sees what the user wrote.

Out: one ``metric-sub_type`` key per sub-type olive-eval measured (Olive's joint key), with its priority and
direction, so Olive's goals, search and footprints read olive-eval's values unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from enum import Enum
from typing import Any

from olive_eval.errors import ConfigError, EvaluationError
from olive_eval.olive.data_configs import FillIn, data_config
from olive_eval.records.results import ModelResult

_SOURCE = "<olive evaluator>"


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def _olive_defaults(metric: Any, sub_name: str) -> dict[str, Any]:
    """The ``metric_config`` Olive fills in for a sub-type nobody configured."""
    from olive.evaluator.metric import Metric

    probe = Metric(name="probe", type=metric.type, backend=metric.backend, sub_types=[{"name": sub_name}])
    config = probe.sub_types[0].metric_config
    return config.to_json() if config is not None else {}


def _sub_type(metric: Any, sub: Any) -> dict[str, Any]:
    name = str(_plain(sub.name))
    out: dict[str, Any] = {"name": name, "priority": sub.priority, "higher_is_better": sub.higher_is_better}
    if sub.goal is not None:
        out["goal"] = {"type": _plain(sub.goal.type), "value": sub.goal.value}
    if sub.metric_config is not None:
        given = sub.metric_config if isinstance(sub.metric_config, dict) else sub.metric_config.to_json()
        defaults = _olive_defaults(metric, name)
        changed = {k: v for k, v in given.items() if k not in defaults or defaults[k] != v}
        if changed:
            out["metric_config"] = changed
    return out


def _user_config(metric: Any) -> dict[str, Any]:
    given = metric.user_config.to_json() if metric.user_config is not None else {}
    return {k: v for k, v in given.items() if v is not None and v is not False}


def config_from_olive(metrics: Iterable[Any], fill_in: FillIn | None = None) -> dict[str, Any]:
    """``{"metrics": [...], "data_configs": [...]}`` for an olive-eval run from Olive's metric objects;
    ``fill_in``: what Olive's run config copied from the input model into the data configs (dropped)."""
    out_metrics: list[dict[str, Any]] = []
    data_configs: dict[str, dict[str, Any]] = {}
    for metric in metrics:
        entry: dict[str, Any] = {"name": metric.name, "type": _plain(metric.type)}
        if metric.backend not in (None, "torch_metrics"):
            entry["backend"] = metric.backend
        entry["sub_types"] = [_sub_type(metric, sub) for sub in metric.sub_types]
        user_config = _user_config(metric)
        if user_config:
            entry["user_config"] = user_config
        if metric.data_config is not None:
            converted = data_config(metric.data_config, fill_in)
            data_configs.setdefault(converted["name"], converted)
            entry["data_config"] = converted["name"]
        out_metrics.append(entry)
    return {"metrics": out_metrics, "data_configs": list(data_configs.values())}


def check_mirrors(metrics: Iterable[Any], measured: dict[str, tuple[int, bool | None]]) -> None:
    """Olive's metrics beside an olive-eval config are the objectives Olive ranks by: each must be a sub-type
    olive-eval measures (``measured``: joint key → priority, direction), with the same priority and direction."""
    for i, metric in enumerate(metrics):
        for j, sub in enumerate(metric.sub_types):
            key = f"{metric.name}-{_plain(sub.name)}"
            path = f"metrics[{i}].sub_types[{j}]"
            if key not in measured:
                raise ConfigError(
                    f"Olive metric '{key}' is not in the olive-eval config; it measures: {', '.join(measured)}",
                    path=path,
                    source=_SOURCE,
                )
            priority, higher = measured[key]
            if sub.priority != priority or sub.higher_is_better != higher:
                raise ConfigError(
                    f"Olive metric '{key}' has priority {sub.priority} and higher_is_better {sub.higher_is_better}; "
                    f"the olive-eval config gives {priority} and {higher}: make them agree",
                    path=path,
                    source=_SOURCE,
                )


def metric_result(model: ModelResult, name: str, measured: dict[str, tuple[int, bool | None]]) -> Any:
    """Olive's ``MetricResult`` for one evaluated model: every sub-type olive-eval measures (``measured``: joint
    key → priority, direction), float64 values. A sub-type that failed, is undefined on this data, or was not
    measured because an early-stop goal stopped the model reads NaN, which meets no goal (why is in
    results.json). A model olive-eval could not evaluate raises, so that Olive records the step as failed."""
    from olive.evaluator.metric_result import MetricResult

    if model.status not in ("ok", "partial"):
        raise EvaluationError(f"olive-eval could not evaluate model '{name}': {model.error or model.status}")
    root: dict[str, dict[str, Any]] = {}
    for key, (priority, higher) in measured.items():
        sub = model.metrics.get(key)
        value = math.nan if sub is None or sub.value is None else float(sub.value)
        root[key] = {"value": value, "priority": priority, "higher_is_better": bool(higher)}
    return MetricResult.model_validate(root)

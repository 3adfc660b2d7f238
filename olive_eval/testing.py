"""Helpers for people writing metrics: ``check_metric`` runs a metric the way olive-eval will and
compares it with the values you expect, at full precision.

Example (in your own tests)::

    from olive_eval.testing import check_metric

    check_metric("my_metric", predictions=["a", "b"], references=["a", "c"],
                 instance_targets=[1.0, 0.0], global_target=0.5)

As Unitxt's ``test_metric``: ``task_data`` gives each example's extra fields (the columns a metric ``reads``
beside its prediction and references), and ``interval_target`` the expected bounds of the value's bootstrap
interval (Unitxt's ``score_ci_low`` and ``score_ci_high``), computed as a run computes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from olive_eval.config.metric import ConfidenceIntervalConfig
from olive_eval.metrics import Metric, get_metric
from olive_eval.metrics.resampling import ExampleStats, confidence_interval

#: Fields a metric reads that are the model's output, given as ``predictions``.
PREDICTION_FIELDS = ("prediction", "logits")


@dataclass
class CheckResult:
    value: float
    instance_scores: np.ndarray | None
    ci_low: float | None = None  # with ``interval_target``: the interval computed
    ci_high: float | None = None


def _resolve(metric: str | Metric | type[Metric], metric_config: dict[str, Any] | None) -> Metric:
    if isinstance(metric, str):
        return get_metric(metric, metric_config)
    if isinstance(metric, type) and issubclass(metric, Metric):
        return metric.from_config(metric_config)
    if isinstance(metric, Metric):
        return metric
    raise TypeError(f"metric must be a registered name, a Metric subclass or instance, not {type(metric).__name__}")


def _array(values: Any) -> Any:
    return values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object if _texts(values) else None)


def _texts(values: Any) -> bool:
    return isinstance(values, Sequence) and bool(values) and isinstance(values[0], str)


def _columns(task_data: Sequence[Mapping[str, Any]] | Mapping[str, Sequence[Any]], n: int) -> dict[str, Any]:
    """Per-example dicts (Unitxt's form) or columns by name, as columns of ``n`` examples."""
    if isinstance(task_data, Mapping):
        columns = {name: list(values) for name, values in task_data.items()}
    else:
        if len(task_data) != n:
            raise ValueError(f"task_data has {len(task_data)} examples for {n} predictions")
        names = {name for row in task_data for name in row}
        for i, row in enumerate(task_data):
            missing = sorted(names - set(row))
            if missing:
                raise ValueError(f"task_data[{i}] has no '{missing[0]}' (other examples give it)")
        columns = {name: [row[name] for row in task_data] for name in sorted(names)}
    for name, values in columns.items():
        if len(values) != n:
            raise ValueError(f"task_data['{name}'] has {len(values)} values for {n} predictions")
    return {name: _array(values) for name, values in columns.items()}


def _fields(m: Metric, preds: Any, refs: Any, task_data: Any) -> tuple[Any, ...]:
    """The columns of ``m.reads``: predictions, references, and the rest from ``task_data``."""
    if task_data is None:
        return preds, refs
    columns = _columns(task_data, len(refs))
    out = []
    for name in m.reads:
        if name in columns:
            out.append(columns[name])
        elif name == "references":
            out.append(refs)
        elif name in PREDICTION_FIELDS:
            out.append(preds)
        else:
            raise ValueError(f"metric '{m.name}' reads '{name}', which task_data does not give")
    return tuple(out)


def _interval(
    m: Metric, fields: tuple[Any, ...], value: float, settings: Mapping[str, Any] | None
) -> tuple[float, float]:
    """The bootstrap interval a run reports for ``m`` with these ``confidence_interval`` settings."""
    ci = ConfidenceIntervalConfig.model_validate(dict(settings or {}))
    return confidence_interval(ExampleStats(m, fields=fields), value, ci.method, ci.n_resamples, ci.level, ci.seed)


def check_metric(
    metric: str | Metric | type[Metric],
    predictions: Any,
    references: Any,
    *,
    instance_targets: Sequence[float] | None = None,
    global_target: float | None = None,
    metric_config: dict[str, Any] | None = None,
    rtol: float = 1e-12,
    atol: float = 0.0,
    task_data: Sequence[Mapping[str, Any]] | Mapping[str, Sequence[Any]] | None = None,
    interval_target: tuple[float, float] | None = None,
    confidence_interval: Mapping[str, Any] | None = None,
    interval_atol: float | None = None,
) -> CheckResult:
    """Compute ``metric`` and assert it behaves: raises AssertionError with the first difference.

    Checks, beyond the targets you give:
    * the value from ``compute`` equals the reduction of the per-example statistics;
    * one instance score per example (instance and map/reduce kinds);
    * the value does not change when the examples are shuffled, nor on a second call.

    ``task_data``: per-example dicts (or columns by name) of the other fields the metric ``reads``.
    ``interval_target``: the expected ``(ci_low, ci_high)`` of the seeded bootstrap interval, with
    ``confidence_interval`` settings as a sub-type's (method, n_resamples, level, seed; their defaults),
    compared within ``interval_atol`` when given (bounds written to two decimals), else ``rtol``/``atol``.
    """
    m = _resolve(metric, metric_config)
    preds, refs = _array(predictions), _array(references)
    if len(preds) != len(refs):
        raise AssertionError(f"{len(preds)} predictions but {len(refs)} references")
    fields = _fields(m, preds, refs, task_data)
    value = m.compute(*fields).value
    scores = None
    if m.decomposes:
        statistics = m.statistics(*fields)
        reduced = m.reduce(statistics).value
        np.testing.assert_allclose(reduced, value, rtol=rtol, atol=atol, err_msg="compute() != reduce(statistics())")
        scores = m.instance_scores(statistics)  # None: the metric has statistics but no per-example score (mAP)
        if scores is not None and len(scores) != len(refs):
            raise AssertionError(f"{len(scores)} instance scores for {len(refs)} examples")
        if instance_targets is not None:
            if scores is None:
                raise AssertionError(f"'{m.name}' has no per-example scores to compare")
            np.testing.assert_allclose(
                scores,
                np.asarray(instance_targets, dtype=np.float64),
                rtol=rtol,
                atol=atol,
                err_msg=f"instance scores of '{m.name}'",
            )
    elif instance_targets is not None:
        raise AssertionError(f"'{m.name}' is a global metric: it has no instance scores to compare")
    if global_target is not None:
        np.testing.assert_allclose(value, global_target, rtol=rtol, atol=atol, err_msg=f"global value of '{m.name}'")
    ci: tuple[float | None, float | None] = (None, None)
    if interval_target is not None:
        ci = _interval(m, fields, value, confidence_interval)
        tolerance = {"rtol": rtol, "atol": atol} if interval_atol is None else {"rtol": 0.0, "atol": interval_atol}
        np.testing.assert_allclose(
            ci, np.asarray(interval_target, dtype=np.float64), **tolerance, err_msg=f"confidence interval of '{m.name}'"
        )
    again = m.compute(*fields).value
    np.testing.assert_allclose(again, value, rtol=rtol, atol=atol, err_msg="a second call gave another value")
    if len(refs) > 1:
        order = np.random.default_rng(0).permutation(len(refs))
        shuffled = m.compute(*(field[order] for field in fields)).value
        np.testing.assert_allclose(shuffled, value, rtol=1e-9, atol=1e-12, err_msg="the value depends on example order")
    return CheckResult(value, scores, *ci)

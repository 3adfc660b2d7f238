"""Helpers for people writing metrics: ``check_metric`` runs a metric the way olive-eval will and
compares it with the values you expect, at full precision.

Example (in your own tests)::

    from olive_eval.testing import check_metric

    check_metric("my_metric", predictions=["a", "b"], references=["a", "c"],
                 instance_targets=[1.0, 0.0], global_target=0.5)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from olive_eval.metrics import Metric, get_metric


@dataclass
class CheckResult:
    value: float
    instance_scores: np.ndarray | None


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
) -> CheckResult:
    """Compute ``metric`` and assert it behaves: raises AssertionError with the first difference.

    Checks, beyond the targets you give:
    * the value from ``compute`` equals the reduction of the per-example statistics;
    * one instance score per example (instance and map/reduce kinds);
    * the value does not change when the examples are shuffled, nor on a second call.
    """
    m = _resolve(metric, metric_config)
    preds, refs = _array(predictions), _array(references)
    if len(preds) != len(refs):
        raise AssertionError(f"{len(preds)} predictions but {len(refs)} references")
    value = m.compute(preds, refs).value
    scores = None
    if m.decomposes:
        statistics = m.statistics(preds, refs)
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
    again = m.compute(preds, refs).value
    np.testing.assert_allclose(again, value, rtol=rtol, atol=atol, err_msg="a second call gave another value")
    if len(refs) > 1:
        order = np.random.default_rng(0).permutation(len(refs))
        shuffled = m.compute(preds[order], refs[order]).value
        np.testing.assert_allclose(shuffled, value, rtol=1e-9, atol=1e-12, err_msg="the value depends on example order")
    return CheckResult(value, scores)

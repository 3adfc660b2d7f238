"""Registering metrics (``@register_metric`` on a class or a function) and looking them up by name.

The registry itself is :data:`olive_eval.metrics.base.metric_registry`, beside the class it holds, so that
metrics made from functions can rebuild themselves by name without importing this module back.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from olive_eval.metrics.base import Kind, Metric, metric_registry
from olive_eval.metrics.function_metric import metric_from_function
from olive_eval.metrics.output_types import check_output_type

__all__ = ["get_metric", "metric_names", "metric_registry", "register_metric"]

M = TypeVar("M", bound=type[Metric])


def register_metric(
    target: Any = None,
    /,
    *,
    name: str | None = None,
    higher_is_better: bool | None = None,
    kind: str | Kind = Kind.INSTANCE,
    aggregation: str = "mean",
    reads: tuple[str, ...] | None = None,
    input: str | None = None,
    reduce: Callable[..., float] | None = None,
    requires: tuple[str, ...] = (),
    extra: str | None = None,
    output_type: str | None = None,
    prediction_type: Any = None,
    single_reference_per_prediction: bool = False,
) -> Any:
    """Register a metric, usable by name as an accuracy sub-type in JSON.

    ``@register_metric`` on a :class:`Metric` subclass registers it under its ``name``. On a function::

        @register_metric(name="char_match", higher_is_better=True, kind="instance", aggregation="mean")
        def char_match(prediction, reference, ignore_case: bool = False) -> float: ...

    ``kind``: ``instance`` (per-example score), ``map_reduce`` (per-example additive statistics plus
    ``reduce=``) or ``global`` (``fn(predictions, references)``). See :mod:`olive_eval.metrics.function_metric`.
    ``output_type``: lm-eval's (``generate_until``, ``loglikelihood``, ``multiple_choice``,
    ``loglikelihood_rolling``), checked against each pass's call mode when the run is planned
    (:mod:`olive_eval.metrics.output_types`).
    ``prediction_type`` (``str``, ``float``, ``list[str]``...) and ``single_reference_per_prediction`` check every
    example before the function sees it (:mod:`olive_eval.metrics.prediction_type`).
    """
    if inspect.isclass(target) and issubclass(target, Metric):
        check_output_type(target.name, target.output_type)
        metric_registry.register(target.name, target)
        return target
    fields = _fields(name, reads, input)
    check_output_type(str(name), output_type)

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        if name is None or higher_is_better is None:
            raise TypeError("@register_metric on a function needs name= and higher_is_better=")
        cls = metric_from_function(
            func,
            name=name,
            higher_is_better=higher_is_better,
            kind=Kind(kind),
            aggregation=aggregation,
            reads=fields,
            reduce=reduce,
            requires=requires,
            extra=extra,
            output_type=output_type,
            prediction_type=prediction_type,
            single_reference_per_prediction=single_reference_per_prediction,
        )
        metric_registry.register(name, cls, origin=_where(func))
        return func

    if target is not None:
        raise TypeError("use @register_metric on a Metric subclass, or @register_metric(name=..., ...) on a function")
    return wrap


#: ``input=``, the older way to say what a metric reads: the post-processed output or the raw one.
_INPUTS = {"preds": "prediction", "logits": "logits"}


def _fields(name: str | None, reads: tuple[str, ...] | None, input: str | None) -> tuple[str, ...]:
    if input is not None:
        if input not in _INPUTS:
            raise ValueError(f"metric '{name}': input={input!r} is not one of {', '.join(map(repr, _INPUTS))}")
        if reads is not None:
            raise ValueError(f"metric '{name}': give reads= or input=, not both")
        return (_INPUTS[input], "references")
    return tuple(reads) if reads is not None else ("prediction", "references")


def _where(func: Callable[..., Any]) -> str:
    code = getattr(func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else str(getattr(func, "__module__", "?"))


def get_metric(name: str, metric_config: dict[str, Any] | None = None, aggregation: str | None = None) -> Metric:
    """A configured metric instance; raises RegistryError (with the known names) for an unknown name."""
    return metric_registry.get(name).from_config(metric_config, aggregation)


def metric_names() -> list[str]:
    return metric_registry.names()

"""The one metric registry. Built-in families are lazy entries, imported on first lookup."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from olive_eval.metrics.base import METRIC_INPUTS, Kind, Metric
from olive_eval.metrics.function_metric import metric_from_function
from olive_eval.registry import Registry

BUILTIN_FAMILIES = (
    "olive_eval.metrics.classification",
    "olive_eval.metrics.language_modeling",
)

metric_registry: Registry[type[Metric]] = Registry("metric", lazy_modules=BUILTIN_FAMILIES)

M = TypeVar("M", bound=type[Metric])


def register_metric(
    target: Any = None,
    /,
    *,
    name: str | None = None,
    higher_is_better: bool | None = None,
    kind: str | Kind = Kind.INSTANCE,
    aggregation: str = "mean",
    input: str = "preds",
    reduce: Callable[..., float] | None = None,
    requires: tuple[str, ...] = (),
    extra: str | None = None,
) -> Any:
    """Register a metric, usable by name as an accuracy sub-type in JSON.

    ``@register_metric`` on a :class:`Metric` subclass registers it under its ``name``. On a function::

        @register_metric(name="char_match", higher_is_better=True, kind="instance", aggregation="mean")
        def char_match(prediction, reference, ignore_case: bool = False) -> float: ...

    ``kind``: ``instance`` (per-example score), ``map_reduce`` (per-example additive statistics plus
    ``reduce=``) or ``global`` (``fn(predictions, references)``). See :mod:`olive_eval.metrics.function_metric`.
    """
    if inspect.isclass(target) and issubclass(target, Metric):
        if target.input not in METRIC_INPUTS:
            raise ValueError(
                f"metric '{target.name}': input={target.input!r} is not one of {', '.join(map(repr, METRIC_INPUTS))}"
            )
        metric_registry.register(target.name, target)
        return target

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        if name is None or higher_is_better is None:
            raise TypeError("@register_metric on a function needs name= and higher_is_better=")
        cls = metric_from_function(
            func,
            name=name,
            higher_is_better=higher_is_better,
            kind=Kind(kind),
            aggregation=aggregation,
            input=input,
            reduce=reduce,
            requires=requires,
            extra=extra,
        )
        metric_registry.register(name, cls, origin=_where(func))
        return func

    if target is not None:
        raise TypeError("use @register_metric on a Metric subclass, or @register_metric(name=..., ...) on a function")
    return wrap


def _where(func: Callable[..., Any]) -> str:
    code = getattr(func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else str(getattr(func, "__module__", "?"))


def get_metric(name: str, metric_config: dict[str, Any] | None = None, aggregation: str | None = None) -> Metric:
    """A configured metric instance; raises RegistryError (with the known names) for an unknown name."""
    return metric_registry.get(name).from_config(metric_config, aggregation)


def metric_names() -> list[str]:
    return metric_registry.names()

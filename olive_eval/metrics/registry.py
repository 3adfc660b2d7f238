"""The one metric registry. Built-in families are lazy entries, imported on first lookup."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from olive_eval.metrics.base import Metric
from olive_eval.registry import Registry

BUILTIN_FAMILIES = (
    "olive_eval.metrics.classification",
    "olive_eval.metrics.language_modeling",
)

metric_registry: Registry[type[Metric]] = Registry("metric", lazy_modules=BUILTIN_FAMILIES)

M = TypeVar("M", bound=type[Metric])


def register_metric(cls: M) -> M:
    """Class decorator: register a :class:`Metric` subclass under its ``name``."""
    metric_registry.register(cls.name, cls)
    return cls


def get_metric(name: str, metric_config: dict[str, Any] | None = None) -> Metric:
    """A configured metric instance; raises RegistryError (with the known names) for an unknown name."""
    return metric_registry.get(name).from_config(metric_config)


def metric_names() -> list[str]:
    return metric_registry.names()


MetricFactory = Callable[[dict[str, Any] | None], Metric]

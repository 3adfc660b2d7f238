"""Aggregations: how an instance metric's per-example scores become one value.

Built-ins work along the last axis of a ``[..., n]`` array, so bootstrap resamples aggregate in one call.
A user aggregation is a plain ``f(scores) -> float`` over a 1-D array, applied row by row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from olive_eval.registry import Registry


@dataclass(frozen=True)
class Aggregation:
    name: str
    func: Callable[..., float | np.ndarray]
    vectorized: bool = False

    def __call__(self, scores: np.ndarray) -> np.ndarray | float:
        """Aggregate along the last axis of ``scores``."""
        scores = np.asarray(scores, dtype=np.float64)
        if self.vectorized:
            return self.func(scores, axis=-1)
        if scores.ndim == 1:
            return float(self.func(scores))
        return np.apply_along_axis(lambda row: float(self.func(row)), -1, scores)

    @property
    def is_mean(self) -> bool:
        """The mean is additive, which lets resampling use sums instead of whole samples."""
        return self.name == "mean"


def _adopt(name: str, func: object, origin: str) -> None:
    """An aggregation from another package's entry point (group ``olive_eval.aggregations``): ``f(scores) -> float``."""
    if not callable(func):
        raise TypeError(f"is not a function f(scores) -> float (it is a {type(func).__name__})")
    aggregation_registry.register(name, Aggregation(name, func), origin=origin)


aggregation_registry: Registry[Aggregation] = Registry("aggregation", group="olive_eval.aggregations", adopt=_adopt)

for _name, _func in (("mean", np.mean), ("median", np.median), ("max", np.max), ("min", np.min)):
    aggregation_registry.register(_name, Aggregation(_name, _func, vectorized=True), origin="olive_eval built-in")


def register_aggregation(name: str) -> Callable[[Callable[[np.ndarray], float]], Callable[[np.ndarray], float]]:
    """Decorator: ``@register_aggregation("trimmed_mean")`` over ``f(scores: 1-D array) -> float``."""

    def wrap(func: Callable[[np.ndarray], float]) -> Callable[[np.ndarray], float]:
        aggregation_registry.register(name, Aggregation(name, func), origin=_where(func))
        return func

    return wrap


def _where(func: Callable) -> str:
    code = getattr(func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else getattr(func, "__module__", "?")


def get_aggregation(name: str) -> Aggregation:
    return aggregation_registry.get(name)

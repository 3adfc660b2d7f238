"""Aggregations: how an instance metric's per-example scores become one value.

Built-ins work along the last axis of a ``[..., n]`` array, so bootstrap resamples aggregate in one call.
A user aggregation is a plain ``f(scores) -> float`` over a 1-D array, applied row by row.

lm-eval's ``matthews_corrcoef`` aggregation is not one of these: it takes each document's (gold, pred) pair, two
values an instance metric's one score per example cannot carry, and its value is not a function of per-example
scores at all. The built-in metric ``matthews_corrcoef`` (:mod:`olive_eval.metrics.agreement`) scores exactly those
pairs (the reference and the prediction of each example), resampled by its per-example agreement rows; asking for
the aggregation by that name is a one-line error that says so (:data:`PAIRED`).
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


#: lm-eval's aggregations over (gold, pred) pairs, by name → the olive-eval sub-type that scores those pairs.
PAIRED = {"matthews_corrcoef": "matthews_corrcoef"}


def get_aggregation(name: str) -> Aggregation:
    """The aggregation ``name``; a registered one of that name wins over :data:`PAIRED`'s error."""
    if name in PAIRED and name not in aggregation_registry:
        raise ValueError(
            f"aggregation '{name}' (lm-eval's) takes (gold, pred) pairs, not per-example scores: use the sub-type "
            f"'{PAIRED[name]}', which scores each example's reference and prediction"
        )
    return aggregation_registry.get(name)

"""The shape every metric has: a name, a direction, a kind and a typed config.

Kinds (how a metric reduces):

* ``instance``   -- one score per example, then an aggregation (mean by default);
* ``map_reduce`` -- per-example sufficient statistics, then a reduce (F1 from tp/fp/fn counts);
* ``global``     -- computed only over the whole set (AUROC).

Instance and map/reduce metrics expose ``statistics()`` so resampling (confidence intervals, paired
comparisons) can reuse per-example work instead of recomputing the metric from scratch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

import numpy as np

from olive_eval.strict_model import StrictModel


class Kind(str, Enum):
    INSTANCE = "instance"
    MAP_REDUCE = "map_reduce"
    GLOBAL = "global"


class NoConfig(StrictModel):
    """For metrics that take no metric_config."""


@dataclass
class Score:
    """A metric's value, plus per-class values when the metric was asked for them (``average: none``)."""

    value: float
    per_class: list[float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Metric:
    """Base class of every registered metric.

    Subclasses set the class attributes and implement ``statistics`` + ``reduce`` (instance and
    map/reduce kinds) or ``compute`` (global kind). ``input`` says which model output the metric
    reads: ``"preds"`` (after the data config's post-processing) or ``"logits"`` (raw output).
    """

    name: ClassVar[str]
    higher_is_better: ClassVar[bool]
    kind: ClassVar[Kind]
    aggregation: ClassVar[str] = "mean"
    input: ClassVar[str] = "preds"
    Config: ClassVar[type[StrictModel]] = NoConfig

    def __init__(self, config: StrictModel | None = None) -> None:
        self.config = config if config is not None else self.Config()

    @classmethod
    def from_config(cls, metric_config: dict[str, Any] | None) -> Metric:
        return cls(cls.Config.model_validate(metric_config or {}))

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        """Per-example scores (instance) or sufficient statistics (map/reduce), first axis = examples."""
        raise NotImplementedError(f"{type(self).__name__} is a global metric and has no per-example statistics")

    def reduce(self, statistics: np.ndarray) -> Score:
        raise NotImplementedError(f"{type(self).__name__} does not reduce statistics")

    def compute(self, predictions: Any, references: Any) -> Score:
        """The metric over the whole set. Global metrics override this."""
        return self.reduce(self.statistics(predictions, references))

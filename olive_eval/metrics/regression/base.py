"""What every regression metric shares: its config (``nan_policy``), what it reads, and how it numbers examples.

Errors number examples across the batches of a pass (``seen``), so that a bad value points at its line of data.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from olive_eval.metrics.base import Metric, Score
from olive_eval.metrics.regression.inputs import NanPolicy, check_nan, paired
from olive_eval.strict_model import StrictModel

__all__ = ["RegressionConfig", "RegressionMetric"]


class RegressionConfig(StrictModel):
    """metric_config of the regression sub-types."""

    nan_policy: NanPolicy = Field(
        "propagate",
        description="A NaN prediction or reference: 'propagate' (the value is undefined, naming the example), "
        "'omit' (the example is left out) or 'raise' (an error naming it); scipy.stats' option",
    )


class RegressionMetric(Metric):
    """Reads the prediction (a number or a vector of outputs per example) and the reference of the same shape."""

    reads = ("prediction", "references")
    Config: ClassVar[type[StrictModel]] = RegressionConfig

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self.seen = 0  # examples of the earlier batches of a pass, to number examples in errors

    @property
    def nan_policy(self) -> NanPolicy:
        return self.config.nan_policy  # type: ignore[attr-defined]

    def columns(self, predictions: Any, references: Any) -> tuple[np.ndarray, np.ndarray]:
        """The batch as float64 ``[n, k]`` predictions and references, NaN checked under ``raise``."""
        p, r = paired(predictions, references, start=self.seen)
        check_nan(p, r, self.nan_policy, start=self.seen)
        self.seen += len(p)
        return p, r

    def compute(self, *fields: Any) -> Score:
        """The whole set: examples numbered from 0."""
        self.seen = 0
        return super().compute(*fields)

    def adopt(self, producer: Metric) -> None:
        self.seen = getattr(producer, "seen", self.seen)

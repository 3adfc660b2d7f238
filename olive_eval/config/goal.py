"""A sub-type's goal: Olive's goal types, and the paired bootstrap that can back one.

A goal is config: its type names one of Olive's formulas (:func:`olive_eval.decide.goals.threshold_from`), which the
ranking applies against the baseline's value; the ranking itself takes the type as a plain name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from olive_eval.strict_model import StrictModel

#: Upper bound of bootstrap resamples: intervals stop moving long before this.
MAX_RESAMPLES = 100_000


#: Olive's goal types (their formulas are :func:`olive_eval.decide.goals.threshold_from`'s).
GoalType = Literal[
    "threshold", "min-improvement", "percent-min-improvement", "max-degradation", "percent-max-degradation"
]


class Goal(StrictModel):
    type: GoalType
    value: float
    confidence: float | None = Field(
        None,
        gt=0.5,
        lt=1,
        description="Require the goal to hold at this confidence, by a paired bootstrap against the baseline.",
    )
    n_resamples: int = Field(
        2000,
        ge=100,
        le=MAX_RESAMPLES,
        description=f"Bootstrap resamples for a goal with a confidence (100 to {MAX_RESAMPLES:,}).",
    )
    seed: int = 42

    @model_validator(mode="after")
    def _non_negative(self) -> Goal:
        if self.type != "threshold" and self.value < 0:
            raise ValueError(f"value must be non-negative for a {self.type} goal")
        return self

    def check_range(self, higher_is_better: bool) -> None:
        """Olive's open ranges for percent goals: a percentage that would flip the sign is rejected."""
        upper_bounded = (self.type == "percent-min-improvement" and not higher_is_better) or (
            self.type == "percent-max-degradation" and higher_is_better
        )
        if self.type.startswith("percent") and not (self.value > 0 and (self.value < 100 or not upper_bounded)):
            bound = "(0, 100)" if upper_bounded else "(0, inf)"
            direction = "higher" if higher_is_better else "lower"
            raise ValueError(f"a {self.type} goal on a {direction}-is-better metric needs a value in {bound}")

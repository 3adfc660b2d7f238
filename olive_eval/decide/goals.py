"""Goals resolved against the baseline: Olive's goal formulas, and each candidate's goal results.

Differences from Olive, on purpose:
* threshold-only goals are honoured (Olive drops every goal when no relative goal needs a baseline);
* goals on unranked sub-types are checked too (Olive ignores them silently).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from olive_eval.records.results import GoalResult, RunResult, SubMetricResult

T = TypeVar("T", float, np.ndarray)


def resolve_threshold(goal_type: str, value: float, baseline: float | None, higher_is_better: bool) -> float | None:
    """The value a candidate must reach (inclusive); None when a relative goal has no baseline."""
    if goal_type == "threshold":
        return value
    if baseline is None or not math.isfinite(baseline):
        return None
    return threshold_from(goal_type, value, baseline, higher_is_better)


def threshold_from(goal_type: str, value: float, baseline: T, higher_is_better: bool) -> T:
    """Olive's goal formulas; ``baseline`` may be a number or an array of resampled baseline values."""
    sign = 1.0 if higher_is_better else -1.0
    if goal_type == "threshold":
        return baseline * 0 + value
    if goal_type == "min-improvement":
        return baseline + sign * value
    if goal_type == "max-degradation":
        return baseline - sign * value
    if goal_type == "percent-min-improvement":
        return baseline * (1 + sign * value / 100)
    if goal_type == "percent-max-degradation":
        return baseline * (1 - sign * value / 100)
    raise ValueError(f"unknown goal type {goal_type}")


def meets(value: float, threshold: float, higher_is_better: bool) -> bool:
    return value >= threshold if higher_is_better else value <= threshold


#: ``(model name, joint key, candidate value, baseline value)`` → a goal result, or None for the plain check.
GoalCheck = Callable[[str, str, SubMetricResult, SubMetricResult], "GoalResult | None"]


def apply_goals(result: RunResult, goals: dict[str, tuple[str, float]], check: GoalCheck | None = None) -> None:
    """Fill each candidate's goal results and ``goals_met`` (``goals``: joint key → (type, value)).

    Goals are relative to the baseline, so the baseline itself gets none (``goals_met`` None); an unfinished
    model's are unknown (None) and a failed one's are not met (False). A run without goals has none to meet: every
    ``goals_met`` is None, and :func:`~olive_eval.decide.ranking.rank` ranks every evaluated candidate. A goal whose
    value is missing (the metric failed or is undefined) is not met, and says why. ``check`` may replace
    the point comparison (goals with a confidence use it).
    """
    base = result.models.get(result.baseline)
    base_metrics = base.metrics if base is not None and base.evaluated else {}
    for name, model in result.models.items():
        if name == result.baseline or not goals:
            model.goals_met = None
            continue
        if not model.evaluated:
            model.goals_met = None if model.unfinished else False
            continue
        all_met = True
        for key, sub in model.metrics.items():
            if key not in goals:
                continue
            goal_type, goal_value = goals[key]
            base_sub = base_metrics.get(key)
            base_value = base_sub.value if base_sub is not None and base_sub.measured else None
            threshold = resolve_threshold(goal_type, goal_value, base_value, bool(sub.higher_is_better))
            if sub.value is None or not sub.measured:
                reason = f"no value: {sub.error or sub.undefined or 'not finite'}"
                sub.goal = GoalResult(goal_type, goal_value, threshold, False, reason=reason)
            elif threshold is None:
                reason = "the baseline has no value for this metric"
                sub.goal = GoalResult(goal_type, goal_value, None, False, reason=reason)
            else:
                reason = None
                met = meets(sub.value, threshold, bool(sub.higher_is_better))
                sub.goal = GoalResult(
                    goal_type, goal_value, threshold, met, None if met else abs(sub.value - threshold)
                )
            if check is not None and reason is None and base_sub is not None:
                sub.goal = check(name, key, sub, base_sub) or sub.goal
            all_met = all_met and sub.goal.met
        missing = [k for k in goals if k not in model.metrics]
        model.goals_met = all_met and not missing

"""Goals resolved against the baseline, lexicographic ranking by priority, and the Pareto front.

Differences from Olive, on purpose:
* threshold-only goals are honoured (Olive drops every goal when no relative goal needs a baseline);
* goals on unranked sub-types are checked too (Olive ignores them silently);
* a candidate missing a ranked metric sorts last whatever the metric's direction (Olive sorts a
  missing lower-is-better metric first).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from olive_eval.results import GoalResult, ModelResult, RunResult, SubMetricResult

T = TypeVar("T", float, np.ndarray)


@dataclass(frozen=True)
class Objective:
    key: str
    priority: int
    higher_is_better: bool


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
    ``goals_met`` is None, and :func:`rank` ranks every evaluated candidate. A goal whose
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


def ranking_key(model: ModelResult, objectives: list[Objective]) -> tuple[tuple[int, float], ...]:
    """Ascending key: better first; a missing or non-finite value sorts after every real one."""
    key = []
    for obj in objectives:
        sub = model.metrics.get(obj.key)
        if sub is None or not sub.measured:
            key.append((1, 0.0))
        else:
            value = float(sub.value or 0.0)
            key.append((0, -value if obj.higher_is_better else value))
    return tuple(key)


def rank(result: RunResult, objectives: list[Objective], candidates: list[str]) -> list[str]:
    """Candidates meeting every goal (every evaluated one, in a run without goals), best first: by priority, ties falling through, then config order."""
    eligible = [
        name for name in candidates if result.models[name].evaluated and result.models[name].goals_met is not False
    ]
    return sorted(eligible, key=lambda name: ranking_key(result.models[name], objectives))


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` is at least as good as ``b`` on every objective and better on one; values oriented so that higher
    is better. Equal points do not dominate each other."""
    return not any(x < y for x, y in zip(a, b, strict=True)) and any(x > y for x, y in zip(a, b, strict=True))


def _dominates(a: ModelResult, b: ModelResult, objectives: list[Objective]) -> bool:
    def oriented(model: ModelResult) -> list[float]:
        return [(1.0 if o.higher_is_better else -1.0) * model.metrics[o.key].value for o in objectives]

    return dominates(oriented(a), oriented(b))


def mark_pareto(result: RunResult, objectives: list[Objective]) -> None:
    """Mark models no other model dominates on the ranked metrics (equal points do not dominate).

    An unfinished model's standing is unknown (None).
    """
    complete = [
        m
        for m in result.models.values()
        if m.evaluated and all(o.key in m.metrics and m.metrics[o.key].measured for o in objectives)
    ]
    complete_ids = {id(m) for m in complete}
    for model in result.models.values():
        if model.unfinished:
            model.pareto = None
        else:
            model.pareto = id(model) in complete_ids and not any(_dominates(o, model, objectives) for o in complete)

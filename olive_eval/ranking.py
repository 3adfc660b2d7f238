"""Goals resolved against the baseline, lexicographic ranking by priority, and the Pareto front.

Differences from Olive, on purpose:
* threshold-only goals are honoured (Olive drops every goal when no relative goal needs a baseline);
* goals on unranked sub-types are checked too (Olive ignores them silently);
* a candidate missing a ranked metric sorts last whatever the metric's direction (Olive sorts a
  missing lower-is-better metric first).
"""

from __future__ import annotations

import math
from collections.abc import Callable
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
    """Fill each model's goal results and ``goals_met`` (``goals``: joint key → (type, value)).

    ``check`` may replace the point comparison for candidates (goals with a confidence use it).
    """
    base = result.models.get(result.baseline)
    for name, model in result.models.items():
        if model.status != "ok":
            model.goals_met = False
            continue
        all_met = True
        for key, sub in model.metrics.items():
            if key not in goals:
                continue
            goal_type, goal_value = goals[key]
            base_sub = base.metrics.get(key) if base is not None and base.status == "ok" else None
            threshold = resolve_threshold(
                goal_type, goal_value, base_sub.value if base_sub else None, bool(sub.higher_is_better)
            )
            met = (
                threshold is not None
                and math.isfinite(sub.value)
                and meets(sub.value, threshold, bool(sub.higher_is_better))
            )
            missed_by = None if met or threshold is None else abs(sub.value - threshold)
            sub.goal = GoalResult(goal_type, goal_value, threshold, met, missed_by)
            if check is not None and base_sub is not None and name != result.baseline:
                sub.goal = check(name, key, sub, base_sub) or sub.goal
            all_met = all_met and sub.goal.met
        missing = [k for k in goals if k not in model.metrics]
        model.goals_met = all_met and not missing


def ranking_key(model: ModelResult, objectives: list[Objective]) -> tuple[tuple[int, float], ...]:
    """Ascending key: better first; a missing or non-finite value sorts after every real one."""
    key = []
    for obj in objectives:
        sub = model.metrics.get(obj.key)
        if sub is None or not math.isfinite(sub.value):
            key.append((1, 0.0))
        else:
            key.append((0, -sub.value if obj.higher_is_better else sub.value))
    return tuple(key)


def rank(result: RunResult, objectives: list[Objective], candidates: list[str]) -> list[str]:
    """Candidates meeting every goal, best first: by priority, ties falling through, then config order."""
    eligible = [name for name in candidates if result.models[name].status == "ok" and result.models[name].goals_met]
    return sorted(eligible, key=lambda name: ranking_key(result.models[name], objectives))


def _dominates(a: ModelResult, b: ModelResult, objectives: list[Objective]) -> bool:
    better_somewhere = False
    for obj in objectives:
        va, vb = a.metrics[obj.key].value, b.metrics[obj.key].value
        if not obj.higher_is_better:
            va, vb = -va, -vb
        if va < vb:
            return False
        better_somewhere = better_somewhere or va > vb
    return better_somewhere


def mark_pareto(result: RunResult, objectives: list[Objective]) -> None:
    """Mark models no other model dominates on the ranked metrics (equal points do not dominate)."""
    complete = [
        m
        for m in result.models.values()
        if m.status == "ok" and all(o.key in m.metrics and math.isfinite(m.metrics[o.key].value) for o in objectives)
    ]
    complete_ids = {id(m) for m in complete}
    for model in result.models.values():
        model.pareto = id(model) in complete_ids and not any(_dominates(o, model, objectives) for o in complete)

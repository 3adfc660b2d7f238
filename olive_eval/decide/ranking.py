"""Lexicographic ranking by priority: candidates meeting every goal, best first.

Difference from Olive, on purpose: a candidate missing a ranked metric sorts last whatever the metric's direction
(Olive sorts a missing lower-is-better metric first).
"""

from __future__ import annotations

from dataclasses import dataclass

from olive_eval.records.results import ModelResult, RunResult


@dataclass(frozen=True)
class Objective:
    """A ranked sub-type: its joint key, its priority (1 ranks first) and its direction."""

    key: str
    priority: int
    higher_is_better: bool


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

"""The CI gate (``--fail-on-miss``): did the candidates meet their goals, and if not, one line saying which goal
each missed.

``True`` passes when some candidate meets every goal; a list of names passes when each of them does. A candidate
that failed, was stopped early, or whose goals are not known (``goals_met`` None) has not met them: a gate never
passes on what was not measured.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from olive_eval.errors import UsageError
from olive_eval.records.results import RunResult, SubMetricResult

#: Candidates described in the line; the others missing goals are counted.
SHOWN = 3
#: The longest error message quoted for a failed candidate.
ERROR_CHARS = 120


def goals_missed(result: RunResult, candidates: bool | Iterable[str] = True) -> str | None:
    """None when the gate passes; else one line naming the goal each failing candidate missed.

    ``candidates``: True, some candidate must meet every goal; names, each of them must; False, no gate.
    UsageError for a name that is not a candidate of ``result``, or a run with no goal results to gate on.
    """
    if candidates is False:
        return None
    everyone = [name for name in result.models if name != result.baseline]
    names = everyone if candidates is True else list(candidates)
    unknown = [name for name in names if name not in everyone]
    if unknown:
        listed = ", ".join(everyone) or "none"
        raise UsageError(f"no candidate named '{unknown[0]}' in the results; candidates: {listed}")
    if not names:
        return "no candidate was evaluated; no candidate meets every goal"
    if all(result.models[name].goals_met is None for name in everyone) and not _goal_keys(result):
        raise UsageError("the results hold no goal to gate on: the run sets no goals, or no candidate finished")
    short = [name for name in names if result.models[name].goals_met is not True]
    if not short or (candidates is True and len(short) < len(names)):
        return None
    parts = [_missed(result, name) for name in short[:SHOWN]]
    if len(short) > SHOWN:
        parts.append(f"{len(short) - SHOWN} more candidates miss goals")
    if candidates is True:
        parts.append("no candidate meets every goal")
    return "; ".join(parts)


def _goal_keys(result: RunResult) -> list[str]:
    """Every metric a goal was checked on, for any model, in the order first seen."""
    keys: dict[str, None] = {}
    for model in result.models.values():
        keys.update((key, None) for key, sub in model.metrics.items() if sub.goal is not None)
    return list(keys)


def _missed(result: RunResult, name: str) -> str:
    """What one candidate missed: its first missed goal, and how many more it missed or did not measure."""
    model = result.models[name]
    if model.status == "failed":
        error = model.error or "no error recorded"
        error = error if len(error) <= ERROR_CHARS else error[: ERROR_CHARS - 3] + "..."
        return f"'{name}' failed to evaluate: {error}"
    if model.goals_met is None:
        return f"'{name}' has no goal result (status {model.status})"
    misses = [_goal_text(key, sub) for key, sub in model.metrics.items() if sub.goal is not None and not sub.goal.met]
    unmeasured = [key for key in _goal_keys(result) if key not in model.metrics]
    if not misses:
        misses = [f"{unmeasured.pop(0)}: not measured"] if unmeasured else ["a goal"]
    more = [f"{len(misses) - 1} more missed"] if len(misses) > 1 else []
    more += [f"{len(unmeasured)} not measured"] if unmeasured else []
    stopped = " (stopped early)" if model.early_stopped else ""
    return f"'{name}' misses {misses[0]}" + (f" (+{', '.join(more)})" if more else "") + stopped


def _goal_text(key: str, sub: SubMetricResult) -> str:
    """``key >= threshold (the goal; measured value)``, or why the goal could not be checked."""
    goal = sub.goal
    assert goal is not None
    if goal.reason is not None or sub.value is None or goal.threshold is None:
        return f"{key}: {goal.reason or 'no value'}"
    op = ">=" if sub.higher_is_better else "<="
    threshold, value = _distinct(goal.threshold, sub.value)
    spec = [] if goal.type == "threshold" else [f"{goal.type} {goal.value:g}"]
    if goal.confidence is None:
        return f"{key} {op} {threshold} ({'; '.join([*spec, f'measured {value}'])})"
    if goal.margin_bound is None or not math.isfinite(goal.margin_bound):
        bound = "bound undefined"
    else:
        sign = 1.0 if sub.higher_is_better else -1.0
        bound = f"bound {_distinct(goal.threshold + sign * goal.margin_bound, goal.threshold)[0]}"
    level = f"{goal.confidence * 100:g}%"
    return f"{key} {op} {threshold} at {level} confidence ({'; '.join([*spec, f'measured {value}, {bound}'])})"


def _distinct(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` with the fewest significant digits (at least 4) that tell them apart."""
    for digits in range(4, 13):
        if f"{a:.{digits}g}" != f"{b:.{digits}g}":
            break
    return f"{a:.{digits}g}", f"{b:.{digits}g}"

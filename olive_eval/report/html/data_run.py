"""Pure extraction from a run's results: the models in page order, each numeric metric across them, the
ranking with its goals, and the Pareto front of any two metrics. No HTML, no figures."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from olive_eval.decide.pareto import dominates
from olive_eval.records.results import GoalResult, RunResult


def model_order(result: RunResult) -> list[str]:
    """The baseline first, then ranked candidates best first, then the rest in the run's order."""
    names = [result.baseline] if result.baseline in result.models else []
    names += [n for n in result.ranking if n in result.models and n not in names]
    names += [n for n in result.models if n not in names]
    return names


def finite(value: float | None) -> float | None:
    """The value, or None when it is missing or not a finite number (JSON and plots have no NaN)."""
    return value if value is not None and math.isfinite(value) else None


@dataclass
class MetricSeries:
    """One sub-type across the models (in :func:`model_order`): values, intervals, direction, unit."""

    key: str
    unit: str | None
    higher_is_better: bool | None
    priority: int
    values: list[float | None] = field(default_factory=list)
    ci_low: list[float | None] = field(default_factory=list)
    ci_high: list[float | None] = field(default_factory=list)

    @property
    def has_interval(self) -> bool:
        return any(lo is not None for lo in self.ci_low)

    @property
    def label(self) -> str:
        return f"{self.key} [{self.unit}]" if self.unit else self.key


def metric_keys(result: RunResult) -> list[str]:
    """Every sub-type key, in the order the models first give them."""
    keys: dict[str, None] = {}
    for model in result.models.values():
        keys.update(dict.fromkeys(model.metrics))
    return list(keys)


def numeric_series(result: RunResult, names: list[str]) -> dict[str, MetricSeries]:
    """Sub-types with a finite value on at least one model (structured-only sub-types have none)."""
    out: dict[str, MetricSeries] = {}
    for key in metric_keys(result):
        subs = [result.models[n].metrics.get(key) for n in names]
        if not any(s is not None and s.measured for s in subs):
            continue
        sample = next(s for s in subs if s is not None)
        series = MetricSeries(key, sample.unit, sample.higher_is_better, sample.priority)
        for sub in subs:
            measured = sub is not None and sub.measured
            series.values.append(sub.value if measured and sub is not None else None)
            series.ci_low.append(finite(sub.ci_low) if measured and sub is not None else None)
            series.ci_high.append(finite(sub.ci_high) if measured and sub is not None else None)
        out[key] = series
    return out


def default_axes(result: RunResult, series: dict[str, MetricSeries]) -> tuple[str, str] | None:
    """The two highest-priority objectives; failing those, the ranked metrics, then any, in order."""
    ranked = sorted((s for s in series.values() if s.priority > 0), key=lambda s: s.priority)
    keys = [k for k in result.objectives if k in series]
    keys += [s.key for s in ranked if s.key not in keys]
    keys += [k for k in series if k not in keys]
    return (keys[0], keys[1]) if len(keys) >= 2 else None


def pareto_front(xs: list[float | None], ys: list[float | None], x_higher: bool, y_higher: bool) -> list[int]:
    """Indices of the points no other point dominates (better or equal on both, better on one), by x.

    A point missing either value is on no front. Equal points do not dominate each other (as the ranking's).
    """
    sx, sy = (1.0 if x_higher else -1.0), (1.0 if y_higher else -1.0)
    points = [
        (i, sx * x, sy * y) for i, (x, y) in enumerate(zip(xs, ys, strict=True)) if x is not None and y is not None
    ]
    front = [i for i, x, y in points if not any(dominates((ox, oy), (x, y)) for _, ox, oy in points)]
    return sorted(front, key=lambda i: xs[i] or 0.0)


@dataclass
class GoalCell:
    """One goal of one candidate: its value beside the baseline's, and met or missed by how much."""

    key: str
    value: float | None
    baseline: float | None
    threshold: float | None
    met: bool
    missed_by: float | None
    op: str
    reason: str | None


@dataclass
class RankingRow:
    name: str
    is_baseline: bool
    rank: int | None
    status: str
    goals_met: bool | None
    pareto: bool | None
    error: str | None
    goals: list[GoalCell] = field(default_factory=list)


def _shortfall(goal: GoalResult) -> float | None:
    """How far short a missed goal fell, in the metric's units: the bound's for a goal with a confidence."""
    if goal.met:
        return None
    if goal.confidence is not None and goal.margin_bound is not None and math.isfinite(goal.margin_bound):
        return -goal.margin_bound
    return finite(goal.missed_by)


def goal_keys(result: RunResult) -> list[str]:
    """Sub-types with a goal on any model, in metric order."""
    return [k for k in metric_keys(result) if any(k in m.metrics and m.metrics[k].goal for m in result.models.values())]


def ranking_rows(result: RunResult, names: list[str]) -> list[RankingRow]:
    """One row per model: rank (None when not ranked), status, goals and Pareto standing, each goal's outcome."""
    keys = goal_keys(result)
    base = result.models.get(result.baseline)
    rows = []
    for name in names:
        model = result.models[name]
        rank = result.ranking.index(name) + 1 if name in result.ranking else None
        row = RankingRow(name, name == result.baseline, rank, model.status, model.goals_met, model.pareto, model.error)
        for key in keys:
            sub = model.metrics.get(key)
            goal = sub.goal if sub is not None else None
            if sub is None or goal is None:
                continue
            base_sub = base.metrics.get(key) if base is not None else None
            row.goals.append(
                GoalCell(
                    key,
                    finite(sub.value),
                    finite(base_sub.value) if base_sub is not None else None,
                    finite(goal.threshold),
                    goal.met,
                    _shortfall(goal),
                    ">=" if sub.higher_is_better else "<=",
                    goal.reason,
                )
            )
        rows.append(row)
    return rows

"""A sequential run's look at a candidate's evidence at each chunk end, and its stop.

Every model of a sequential run reads the data in one seeded random order
(:meth:`olive_eval.data.prepared.Prepared.reordered`), so a candidate's first n examples are a random sample
and pair with the baseline's first n. At each chunk end the pass asks :class:`SequentialStop`: each goal's
per-example margins over its threshold (:func:`~olive_eval.decide.sequential.goal_margins.goal_margins`) go
to an anytime-valid confidence sequence (:func:`~olive_eval.decide.sequential.decision.decide`); the pass ends
once every goal is decided, or one is missed (the candidate is out of the ranking then whatever the others say),
or, racing, once a candidate evaluated before is better on the top objective with the goal's confidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from olive_eval.config.sequential import SequentialSettings, checkpoints
from olive_eval.decide.sequential.decision import decide
from olive_eval.decide.sequential.goal_margins import Margins, difference_margins, goal_margins
from olive_eval.records.sequential import GoalDecision, SequentialPass


@dataclass(frozen=True)
class Rows:
    """One model's per-example numerators and denominators of a sub-type (in the run's order), whose sums'
    ratio is the value, each ratio in ``[low, high]``."""

    num: np.ndarray
    den: np.ndarray
    low: float
    high: float

    def __len__(self) -> int:
        return len(self.num)


def rows_of(metric: Any, statistics: Any) -> Rows | None:
    """The metric's ratio form over ``statistics``, checked against the metric's own value; None: it has none."""
    if metric.example_range is None or statistics is None or len(statistics) == 0:
        return None
    form = metric.ratio_rows(statistics)
    if form is None:
        return None
    num, den = (np.asarray(a, dtype=np.float64) for a in form)
    value = metric.reduce(statistics).value
    total = den.sum()
    if total <= 0 or not np.isclose(num.sum() / total, value, rtol=1e-9, atol=1e-12):
        return None  # not the metric's value (another average than the pooled one): never stop on it
    low, high = metric.example_range
    return Rows(num, den, float(low), float(high))


@dataclass(frozen=True)
class SequentialGoal:
    """A ranked goal with a confidence on a metric of a pass, and the baseline's rows it is checked against."""

    key: str
    metric: str
    sub_type: str
    goal_type: str
    value: float
    alpha: float
    higher_is_better: bool
    baseline: Rows


@dataclass(frozen=True)
class SequentialUnit:
    """What a candidate's unit carries in a sequential run: the settings, its goals, and for racing the top
    objective's goal and the rows of the candidates evaluated before it on it."""

    settings: SequentialSettings
    goals: tuple[SequentialGoal, ...]
    #: per data config, why its pass runs in full (None where it may stop early)
    full: dict[str, str | None]
    top: SequentialGoal | None = None
    rivals: tuple[tuple[str, Rows], ...] = ()


def _paired(candidate: Rows, baseline: Rows, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """Per-example values of both models on the first ``n`` examples (numerators with shared weights where the
    denominators vary); None when the denominators differ between the models (they do not pair)."""
    den, base_den = candidate.den[:n], baseline.den[:n]
    if not np.array_equal(den, base_den):
        return None
    if np.all(den == den[0]) and den[0] > 0:
        return candidate.num[:n] / den[0], baseline.num[:n] / den[0], None
    return candidate.num[:n], baseline.num[:n], den


class SequentialStop:
    """Asked by the pass after each batch (``stop(examples)``); looks at the evidence at each chunk end."""

    def __init__(self, unit: SequentialUnit, data_config: str, consumers: Sequence[Any], total: int) -> None:
        metrics = {c.metric.name for c in consumers}
        self.unit, self.consumers, self.total = unit, consumers, total
        self.full = unit.full.get(data_config)
        self.goals = [g for g in unit.goals if g.metric in metrics] if self.full is None else []
        self.ends = checkpoints(unit.settings, total)
        self.looked: list[int] = []
        self._next = 0  # the chunk end looked at next
        self.decided: dict[str, GoalDecision] = {}
        #: goals whose margins could not be formed (a value outside the declared range), and why
        self.undecidable: dict[str, str] = {}
        self.looks: dict[str, list[list[float]]] = {g.key: [] for g in self.goals}
        self.stopped: str | None = None
        self.seen = 0

    def __call__(self, seen: int) -> bool:
        self.seen = seen
        if not self.goals or self.stopped is not None or self._next >= len(self.ends) or seen < self.ends[self._next]:
            return False
        self.looked.append(seen)
        while self._next < len(self.ends) and self.ends[self._next] <= seen:  # a batch may pass several ends
            self._next += 1
        rows = self._rows()
        for goal in self.goals:
            if goal.key not in self.decided and goal.key not in self.undecidable:
                self._look(goal, rows.get(goal.key), seen)
        states = [self.decided[g.key].state if g.key in self.decided else "open" for g in self.goals]
        if "missed" in states or all(state != "open" for state in states):
            self.stopped = "decided"
        elif (rival := self._dominating(rows, seen)) is not None:
            self.stopped = f"dominated by {rival}"
        return self.stopped is not None and seen < self.total

    def _rows(self) -> dict[str, Rows]:
        out: dict[str, Rows] = {}
        wanted = {(g.metric, g.sub_type): g.key for g in [*self.goals, *([self.unit.top] if self.unit.top else [])]}
        for consumer in self.consumers:
            for sub, (metric, statistics) in consumer.statistics_so_far().items():
                key = wanted.get((consumer.metric.name, sub))
                if key is not None and (found := rows_of(metric, statistics)) is not None:
                    out[key] = found
        return out

    def _look(self, goal: SequentialGoal, rows: Rows | None, seen: int) -> None:
        paired = _paired(rows, goal.baseline, seen) if rows is not None and len(rows) >= seen else None
        if paired is None:
            return
        cand, base, weights = paired
        try:
            margins = goal_margins(
                goal.goal_type, goal.value, cand, base, goal.higher_is_better, rows.low, rows.high, weights
            )
        except ValueError as exc:  # a value outside the metric's declared range: this goal stays open to the end
            self.undecidable[goal.key] = str(exc)
            return
        decision = decide(margins, goal.alpha, self.looked, self.unit.settings.method)
        self.looks[goal.key].append([seen, decision.lower, decision.upper])
        if decision.state != "open":
            self.decided[goal.key] = GoalDecision(
                decision.state, decision.examples, decision.lower, decision.upper, self.looks[goal.key]
            )

    def _dominating(self, rows: dict[str, Rows], seen: int) -> str | None:
        """Racing: a candidate evaluated before that is better on the top objective with confidence."""
        top = self.unit.top
        if top is None or top.key not in rows:
            return None
        for name, rival in self.unit.rivals:
            if len(rival) < seen:
                continue
            paired = _paired(rows[top.key], rival, seen)
            if paired is None:
                continue
            mine, theirs, weights = paired
            margins: Margins = difference_margins(mine, theirs, top.higher_is_better, rival.low, rival.high, weights)
            if decide(margins, top.alpha, self.looked, self.unit.settings.method).state == "missed":
                return name
        return None

    def record(self) -> SequentialPass:
        """The pass's record: the examples used, each goal's decision (open ones with their last bounds)."""
        goals = dict(self.decided)
        for goal in self.goals:
            if goal.key not in goals:
                looks = self.looks[goal.key]
                last = looks[-1] if looks else [self.seen, None, None]
                goals[goal.key] = GoalDecision("open", self.seen, last[1], last[2], looks)
        stopped = self.stopped if self.seen < self.total else None
        full = self.full or "; ".join(f"{key}: {why}" for key, why in self.undecidable.items()) or None
        return SequentialPass(self.seen, self.total, goals, stopped, full)

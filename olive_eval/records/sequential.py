"""What a sequential run records per candidate and pass: the examples used, and each goal's decision."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class GoalDecision:
    """One goal decided chunk by chunk: ``met``, ``missed`` or ``open`` (undecided when the data ran out)."""

    state: str
    #: examples seen at the look that decided it (all the examples seen, when open)
    examples: int
    #: the anytime-valid bounds on the mean per-example margin over the goal's threshold, at that look
    lower: float | None = None
    upper: float | None = None
    #: ``[examples, lower, upper]`` at every look, for the report's drawing
    looks: list[list[float]] = field(default_factory=list)


@dataclass
class SequentialPass:
    """One prediction pass of a sequential run, for one candidate."""

    #: examples the candidate was run on, of ``total`` in the data
    examples: int
    total: int
    goals: dict[str, GoalDecision] = field(default_factory=dict)
    #: why the pass stopped before the end: ``decided``, or ``dominated by <candidate>`` (racing); None: it ran on
    #: every example
    stopped: str | None = None
    #: why it could not stop early (a metric without per-example additive statistics, a goal without a
    #: confidence); None: it could
    full: str | None = None
    #: True once the candidate was evaluated again on all the data (``finish: best``)
    finished: bool = False


def decisions(passes: dict[str, SequentialPass]) -> dict[str, GoalDecision]:
    """A candidate's goals decided chunk by chunk, over its passes, by joint key."""
    return {key: d for p in passes.values() for key, d in p.goals.items()}

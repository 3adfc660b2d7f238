"""Goals that know about noise: met only if the bound at the asked confidence satisfies them.

A paired bootstrap draws the same examples for the baseline and the candidate, resolves the goal's
threshold from each resampled baseline value, and looks at the candidate's margin over it. The goal
is met when the margin's lower ``1 - confidence`` quantile is at least zero.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from olive_eval.config.goal import Goal
from olive_eval.decide.goals import threshold_from
from olive_eval.engine.model.evidence import Evidence, paired_distribution
from olive_eval.metrics.resampling import ExampleStats
from olive_eval.records.results import GoalResult
from olive_eval.records.sequential import GoalDecision


def thresholds(goal_type: str, value: float, baseline: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """The goal's threshold for each (resampled) baseline value."""
    return threshold_from(goal_type, value, np.asarray(baseline, dtype=np.float64), higher_is_better)


def confident_goal(
    goal: Goal,
    higher_is_better: bool,
    base_value: float,
    cand_value: float,
    base: Evidence,
    candidate: Evidence,
) -> GoalResult:
    assert goal.confidence is not None
    base_b, cand_b = paired_distribution(base, candidate, goal.n_resamples, goal.seed)
    sign = 1.0 if higher_is_better else -1.0
    margins = sign * (cand_b - thresholds(goal.type, goal.value, base_b, higher_is_better))
    margins = margins[np.isfinite(margins)]
    threshold = float(thresholds(goal.type, goal.value, np.array([base_value]), higher_is_better)[0])
    bound = float(np.quantile(margins, 1 - goal.confidence)) if len(margins) else float("nan")
    change = cand_b - base_b
    tail = (1 - goal.confidence) / 2
    low, high = np.quantile(change[np.isfinite(change)], [tail, 1 - tail])
    met = bool(np.isfinite(bound) and bound >= 0)
    point_margin = sign * (cand_value - threshold)
    return GoalResult(
        type=goal.type,
        value=goal.value,
        threshold=threshold,
        met=met,
        missed_by=None if met else max(0.0, -bound) if np.isfinite(bound) else None,
        confidence=goal.confidence,
        change=cand_value - base_value,
        change_ci_low=float(low),
        change_ci_high=float(high),
        probability=float(np.mean(margins >= 0)) if len(margins) else None,
        margin=point_margin,
        margin_bound=bound,
    )


def first_examples(sample: ExampleStats, n: int) -> ExampleStats:
    """The baseline's evidence on the first ``n`` examples of the run's order (a candidate that stopped there)."""
    if sample.statistics is None:
        raise ValueError("a global metric's evidence is never cut: its pass runs on all the data")
    return ExampleStats(sample.metric, statistics=sample.statistics[:n])


def sequential_verdict(result: GoalResult, decision: GoalDecision) -> GoalResult:
    """A goal a sequential run decided: met or missed by the confidence sequence, its bound the margin bound
    (an open goal keeps the bootstrap's verdict on the examples seen)."""
    if decision.state == "open" or decision.lower is None or decision.upper is None:
        return result
    met = decision.state == "met"
    bound = decision.lower if met else decision.upper
    return replace(result, met=met, missed_by=None if met else max(0.0, -bound), margin_bound=bound)


#: Resamples and level of the candidate/baseline ratio given with every latency and throughput value.
RATIO_RESAMPLES, RATIO_LEVEL = 2000, 0.95


def ratio_interval(base: Evidence, candidate: Evidence, seed: int = 0) -> tuple[float, float]:
    """A percentile interval of candidate / baseline, from the paired bootstrap (rounds pair up when the
    models were timed interleaved)."""
    base_b, cand_b = paired_distribution(base, candidate, RATIO_RESAMPLES, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = cand_b / base_b
    ratios = ratios[np.isfinite(ratios)]
    tail = (1 - RATIO_LEVEL) / 2
    low, high = np.quantile(ratios, [tail, 1 - tail])
    return float(low), float(high)

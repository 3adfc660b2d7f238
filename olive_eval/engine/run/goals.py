"""Goals against the baseline as the engine checks them: on paired evidence, and for early stop.

Early stop: a candidate that misses a ranked goal on a cheap metric is not measured on the expensive ones.

The per-model metrics are measured in stages, cheapest first (``order``, else every metric in config order);
after each stage the candidate's ranked goals so far are checked against the baseline. Latency and
throughput come last, in the timing rounds, which a stopped candidate skips.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from olive_eval.config.goal import Goal
from olive_eval.config.metric_set import joint_key
from olive_eval.config.run import RunConfig
from olive_eval.decide.goals import GoalCheck, apply_goals
from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.run.significance import confident_goal, first_examples, sequential_verdict
from olive_eval.records.results import GoalResult, ModelResult, RunResult, SubMetricResult
from olive_eval.records.sequential import GoalDecision


def goal_check(
    run: RunConfig,
    base_evidence: dict[str, Evidence],
    candidate_evidence: dict[str, Evidence],
    decided: Mapping[str, GoalDecision] | None = None,
) -> GoalCheck:
    """Goals with a confidence, decided on the paired evidence of the candidate and the baseline; ``decided``: a
    sequential run's decisions, which stand for the bootstrap's verdict (a candidate that stopped early is
    compared with the baseline on the examples it used: the first ones of the run's order)."""
    goals = {joint_key(m, s): s.goal for m in run.all_metrics for s in m.sub_types}

    def check(model: str, key: str, cand: SubMetricResult, base_sub: SubMetricResult) -> GoalResult | None:
        goal = goals[key]
        if goal is None or goal.confidence is None or cand.value is None or base_sub.value is None:
            return None
        base_ev, cand_ev = base_evidence.get(key), candidate_evidence.get(key)
        if base_ev is None or cand_ev is None:
            return None
        base_value = base_sub.value
        if cand_ev.sample is not None and base_ev.sample is not None and len(cand_ev.sample) < len(base_ev.sample):
            base_ev = Evidence(sample=first_examples(base_ev.sample, len(cand_ev.sample)))
            base_value = base_ev.sample.metric.reduce(base_ev.sample.statistics).value
        decision = (decided or {}).get(key)
        checked = end_of_data_goal(goal) if decision is not None and decision.state == "open" else goal
        result = confident_goal(checked, bool(cand.higher_is_better), base_value, cand.value, base_ev, cand_ev)
        result = replace(result, confidence=goal.confidence)  # the stated confidence, whatever the split
        return result if decision is None else sequential_verdict(result, decision)

    return check


def end_of_data_goal(goal: Goal) -> Goal:
    """The check of a goal the confidence sequence left open at the end of the data: at one-sided ``alpha / 2``.

    The sequence wrongly keeps a candidate on the boundary with probability at most ``alpha / 2`` (one side of a
    two-sided ``1 - alpha`` sequence); a second, full-data check at one-sided ``alpha`` would add its own ``alpha``
    (measured: 6.0% kept at a stated 5%). Spending the other ``alpha / 2`` here keeps the whole procedure's error at
    most ``alpha`` (docs/sequential.md, "The guarantee").
    """
    assert goal.confidence is not None
    return goal.model_copy(update={"confidence": 1 - (1 - goal.confidence) / 2})


def stages(run: RunConfig) -> tuple[tuple[str, ...], ...]:
    """The per-model metrics' names by stage: one per metric named in ``order``, then the rest together.

    Without ``early_stop`` everything is one stage.
    """
    names = [m.name for m in run.all_metrics if not m.timed]
    if not run.early_stop:
        return (tuple(names),)
    listed = [name for name in run.order or [] if name in names]
    rest = tuple(name for name in names if name not in listed)
    return tuple((name,) for name in listed) + ((rest,) if rest else ())


def stopping_goal(
    run: RunConfig, baseline: ModelResult, name: str, candidate: ModelResult, check: GoalCheck | None
) -> str | None:
    """The first ranked goal (by priority) the candidate has missed among the metrics measured so far."""
    ranked = sorted((sub.priority, joint_key(m, sub), sub) for m, sub in run.ranked() if sub.goal is not None)
    measured = [(key, sub) for _, key, sub in ranked if key in candidate.metrics]
    goals = {key: (sub.goal.type, sub.goal.value) for key, sub in measured if sub.goal is not None}
    if not goals:
        return None
    # the candidate is still being evaluated; its goals so far are checked as if it were done
    view = RunResult(baseline="\0baseline", models={"\0baseline": baseline, name: replace(candidate, status="ok")})
    apply_goals(view, goals, check)
    for key, _ in measured:
        goal = candidate.metrics[key].goal
        if goal is not None and not goal.met:
            return key
    return None

"""What a sequential run may stop early, decided when the run is planned, and each candidate's sequential unit.

A prediction pass stops early only when every sub-type it scores is a mean (or a pooled ratio) of per-example
values in a known range (accuracy, exact_match: ``Metric.example_range``), so its value on the first examples
of a random order estimates the full-data value without bias, and it carries a ranked goal with a
``confidence`` (every ranked goal on it has one). Any other pass (AUROC, mAP, a macro F1, a user function's
metric) runs on all the data, and the plan says why.
"""

from __future__ import annotations

from pathlib import Path

from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.config.metric_set import joint_key
from olive_eval.config.run import RunConfig
from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.passes.sequential import Rows, SequentialGoal, SequentialUnit, rows_of
from olive_eval.metrics.base import Kind


def pass_scope(metrics: list[MetricConfig], base_dir: Path | None) -> str | None:
    """Why a pass over ``metrics`` runs in full; None when its goals may stop it early."""
    ranked = [(m, s) for m in metrics for s in m.sub_types if s.priority > 0 and s.goal is not None]
    if not any(s.goal is not None and s.goal.confidence is not None for _, s in ranked):
        return "no ranked goal with a confidence is on it"
    for metric, sub in ranked:
        if sub.goal is not None and sub.goal.confidence is None:
            return f"the goal of {joint_key(metric, sub)} has no confidence (it is checked on all the data)"
    for metric in metrics:
        if metric.metric_type.scored_by_user:
            return f"metric '{metric.name}' is scored by a user function"
        for sub in metric.sub_types:
            scorer = metric.scorer(sub, base_dir)
            mean = scorer.kind is Kind.MAP_REDUCE or (scorer.kind is Kind.INSTANCE and scorer.aggregator.is_mean)
            if not mean or scorer.example_range is None:
                what = "a global metric" if scorer.kind is Kind.GLOBAL else "not a mean in a known per-example range"
                return f"{joint_key(metric, sub)} is {what}"
    return None


def _pass_goals(run: RunConfig) -> list[tuple[MetricConfig, SubType]]:
    """The ranked goals scored on a prediction pass: a timed goal (latency) on the same data config is measured in
    timing rounds, never by the pass, so it neither stops the pass nor keeps it running."""
    return [(m, s) for m, s in run.ranked() if s.goal is not None and m.uses_predictions]


def plan_scope(run: RunConfig, passes: dict[str, list[MetricConfig]]) -> dict[str, str | None]:
    """Per data config of a prediction pass: why it runs in full, or None where it may stop early."""
    return {name: pass_scope(metrics, run.source_dir) for name, metrics in passes.items()}


def scope_lines(run: RunConfig, scope: dict[str, str | None]) -> dict[str, str]:
    """The plan's line per data config, as results.json and the progress say it."""
    out = {}
    for name, reason in scope.items():
        if reason is None:
            keys = [joint_key(m, s) for m, s in _pass_goals(run) if m.data_config == name]
            out[name] = f"stops early once {', '.join(keys)} decided (confidence sequence)"
        else:
            out[name] = f"runs in full: {reason}"
    return out


def _goal(metric: MetricConfig, sub_name: str, base: Evidence | None) -> SequentialGoal | None:
    sub = next(s for s in metric.sub_types if s.name == sub_name)
    sample = base.sample if base is not None else None
    rows = rows_of(sample.metric, sample.statistics) if sample is not None else None
    if rows is None or sub.goal is None or sub.goal.confidence is None:
        return None
    key = joint_key(metric, sub)
    return SequentialGoal(
        key, metric.name, sub.name, sub.goal.type, sub.goal.value, 1 - sub.goal.confidence,
        bool(sub.higher_is_better), rows,
    )  # fmt: skip


def sequential_unit(
    run: RunConfig,
    scope: dict[str, str | None],
    baseline: dict[str, Evidence],
    rivals: dict[str, dict[str, Evidence]],
) -> SequentialUnit:
    """A candidate's sequential unit: its goals against the baseline's rows; racing, the rivals' rows."""
    assert run.sequential is not None
    full = dict(scope)
    goals: list[SequentialGoal] = []
    for metric, sub in _pass_goals(run):
        name = metric.data_config or ""
        if full.get(name) is not None:
            continue
        goal = _goal(metric, sub.name, baseline.get(joint_key(metric, sub)))
        if goal is None:
            full[name] = f"the baseline's {joint_key(metric, sub)} has no per-example ratio form"
        else:
            goals.append(goal)
    data_of = {m.name: m.data_config or "" for m in run.all_metrics}
    goals = [g for g in goals if full.get(data_of[g.metric]) is None]  # a pass a later goal made full keeps none
    top = None
    rows: list[tuple[str, Rows]] = []
    if run.sequential.race:
        first = sorted(run.ranked(), key=lambda ms: ms[1].priority)[0]
        top = next((g for g in goals if g.key == joint_key(*first)), None)
        for name, evidence in rivals.items():
            sample = evidence.get(top.key).sample if top is not None and top.key in evidence else None
            found = rows_of(sample.metric, sample.statistics) if sample is not None else None
            if found is not None:
                rows.append((name, found))
    return SequentialUnit(run.sequential, tuple(goals), full, top, tuple(rows))

"""The console table's verdict: what a missed goal is missed by, confidence bounds, and a ranking without goals."""

from __future__ import annotations

from olive_eval.decide.goals import apply_goals
from olive_eval.decide.ranking import Objective, rank
from olive_eval.records.results import GoalResult, ModelResult, RunResult, SubMetricResult
from olive_eval.report.console import NO_GOALS, render


def run_of(values: dict[str, float | None], goals: dict[str, tuple[str, float]], higher_is_better=True) -> RunResult:
    """Models with one ranked metric ``acc`` (``None``: the model failed), goals applied and candidates ranked."""
    models = {
        name: ModelResult(status="ok", metrics={"acc": SubMetricResult(value, 1, higher_is_better)})
        if value is not None
        else ModelResult(status="failed", error="boom")
        for name, value in values.items()
    }
    result = RunResult(baseline="base", models=models, objectives=["acc"])
    apply_goals(result, goals)
    result.ranking = rank(result, [Objective("acc", 1, higher_is_better)], [n for n in values if n != "base"])
    result.best = result.ranking[0] if result.ranking else None
    return result


def confident(threshold: float, value: float, margin_bound: float, higher_is_better: bool = True) -> GoalResult:
    """A max-degradation goal at 95% confidence as the paired bootstrap fills it."""
    sign = 1.0 if higher_is_better else -1.0
    met = margin_bound >= 0
    return GoalResult(
        "max-degradation",
        0.05,
        threshold,
        met,
        missed_by=None if met else -margin_bound,
        confidence=0.95,
        margin=sign * (value - threshold),
        margin_bound=margin_bound,
    )


def test_plain_goal_is_missed_by_threshold_minus_value():
    result = run_of({"base": 0.85, "cand": 0.55}, {"acc": ("max-degradation", 0.05)})
    out = render(result)
    assert "0.5500 MISS >=0.8000\n" in out
    assert "  cand: acc 0.5500 vs >=0.8000 (missed by 0.2500)" in out
    lower = run_of({"base": 10.0, "cand": 12.5}, {"acc": ("max-degradation", 1.0)}, higher_is_better=False)
    assert "  cand: acc 12.500 vs <=11.000 (missed by 1.500)" in render(lower)


def test_confident_goal_names_value_threshold_and_bound():
    """The bound the goal was judged on is shown beside the value and the threshold, each named; "missed by"
    stays threshold - value and "short by" is the bound's shortfall (results.json's ``missed_by``)."""
    result = run_of({"base": 0.851, "far": 0.551, "noisy": 0.81, "sure": 0.84}, {"acc": ("max-degradation", 0.05)})
    goals = {"far": confident(0.801, 0.551, -0.2697), "noisy": confident(0.801, 0.81, -0.004)}
    goals["sure"] = confident(0.801, 0.84, 0.021)
    for name, goal in goals.items():
        result.models[name].metrics["acc"].goal = goal
        result.models[name].goals_met = goal.met
    result.ranking, result.best = ["sure"], "sure"
    out = render(result)
    assert "0.5510 MISS >=0.8010 (95% bound 0.5313, short by 0.2697)" in out
    assert "0.8100 MISS >=0.8010 (95% bound 0.7970, short by 0.0040)" in out
    assert "0.8400 ok >=0.8010 (95% bound 0.8220)" in out
    result.ranking, result.best = [], None
    out = render(result)
    assert "  far: acc 0.5510 vs >=0.8010 (missed by 0.2500; 95% bound 0.5313, short by 0.2697)" in out
    assert "  noisy: acc 0.8100 vs >=0.8010 (95% bound 0.7970, short by 0.0040)" in out


def test_confident_goal_bound_on_a_lower_is_better_metric():
    result = run_of({"base": 9.0, "cand": 9.5}, {"acc": ("max-degradation", 1.0)}, higher_is_better=False)
    result.models["cand"].metrics["acc"].goal = confident(10.0, 9.5, -0.3, higher_is_better=False)
    result.models["cand"].goals_met = False
    result.ranking, result.best = [], None
    out = render(result)
    assert "9.500 MISS <=10.000 (95% bound 10.300, short by 0.3000)" in out
    assert "  cand: acc 9.500 vs <=10.000 (95% bound 10.300, short by 0.3000)" in out


def test_without_goals_the_best_is_only_first_in_priority_order():
    worse = render(run_of({"base": 0.75, "zero": 0.0}, {})).splitlines()
    assert worse[-3:] == [
        NO_GOALS,
        "Ranking (by metric priority, best first): 1. zero",
        "Best candidate: zero (worse than the baseline on acc: 0.0000 vs 0.7500)",
    ]
    better = render(run_of({"base": 0.75, "good": 0.8}, {})).splitlines()
    assert better[-3] == NO_GOALS and better[-1] == "Best candidate: good"
    faster = render(run_of({"base": 10.0, "slow": 12.0}, {}, higher_is_better=False)).splitlines()
    assert faster[-1] == "Best candidate: slow (worse than the baseline on acc: 12.000 vs 10.000)"
    with_goals = render(run_of({"base": 0.75, "zero": 0.0}, {"acc": ("threshold", 0.0)})).splitlines()
    assert NO_GOALS not in with_goals
    assert with_goals[-2:] == ["Ranking (candidates meeting every goal, best first): 1. zero", "Best candidate: zero"]


def test_no_evaluated_candidate_is_not_called_a_goal_miss():
    out = render(run_of({"base": 0.75, "broken": None}, {}))
    assert "No candidate to rank: none was evaluated." in out and "No candidate meets every goal." not in out


def test_goals_met_is_blank_without_goals_and_unknown_is_not_no():
    def row(out: str, label: str) -> list[str]:
        return next(line.split()[len(label.split()) :] for line in out.splitlines() if line.startswith(label))

    no_goals = render(run_of({"base": 0.75, "zero": 0.0}, {}))
    assert row(no_goals, "goals met") == ["-", "-"]
    with_goals = render(run_of({"base": 0.75, "zero": 0.0, "good": 0.8}, {"acc": ("threshold", 0.5)}))
    assert row(with_goals, "goals met") == ["-", "no", "yes"]
    unknown = run_of({"base": 0.75, "good": 0.8}, {})
    unknown.models["base"].pareto, unknown.models["good"].pareto = True, None
    assert row(render(unknown), "pareto front") == ["yes", "-"]

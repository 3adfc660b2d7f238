"""Goals, lexicographic ranking and the Pareto front, on Olive's own test vectors and its known faults."""

from __future__ import annotations

import pytest

from olive_eval.decide.goals import apply_goals, meets, resolve_threshold
from olive_eval.decide.pareto import mark_pareto
from olive_eval.decide.ranking import Objective, rank, ranking_key
from olive_eval.records.results import ModelResult, RunResult, SubMetricResult


def model(**values: float) -> ModelResult:
    directions = {"acc": True, "lat_avg": False, "lat_max": False}
    return ModelResult(
        status="ok",
        metrics={k: SubMetricResult(v, 1, directions[k]) for k, v in values.items()},
    )


@pytest.mark.parametrize(
    ("goal", "value", "baseline", "hib", "expected"),
    [
        ("threshold", 0.9, 0.5, True, 0.9),
        ("max-degradation", 0.01, 0.9, True, 0.89),
        ("max-degradation", 2.0, 10.0, False, 12.0),
        ("min-improvement", 0.01, 0.9, True, 0.91),
        ("min-improvement", 2.0, 10.0, False, 8.0),
        ("percent-max-degradation", 10, 0.9, True, 0.81),
        ("percent-max-degradation", 10, 10.0, False, 11.0),
        ("percent-min-improvement", 20, 10.0, False, 8.0),
        ("percent-min-improvement", 20, 0.5, True, 0.6),
    ],
)
def test_goal_thresholds_follow_olive_formulas(goal, value, baseline, hib, expected):
    assert resolve_threshold(goal, value, baseline, hib) == pytest.approx(expected, rel=1e-12)


def test_relative_goal_without_baseline_is_unresolved_but_threshold_goal_is_kept():
    assert resolve_threshold("max-degradation", 0.01, None, True) is None
    assert resolve_threshold("threshold", 0.75, None, True) == 0.75


def test_boundary_counts_as_met():
    assert meets(0.89, 0.89, True) and meets(12.0, 12.0, False)
    assert not meets(0.8899, 0.89, True) and not meets(12.01, 12.0, False)


def _run(models: dict[str, ModelResult], baseline: str = "base") -> RunResult:
    return RunResult(baseline=baseline, models=models)


def test_threshold_only_goals_are_honoured():
    """Olive drops every goal when no relative goal needs a baseline; we do not."""
    result = _run({"base": model(acc=0.5), "good": model(acc=0.8), "bad": model(acc=0.7)})
    apply_goals(result, {"acc": ("threshold", 0.75)})
    assert [result.models[n].goals_met for n in ("good", "bad")] == [True, False]
    assert result.models["bad"].metrics["acc"].goal.missed_by == pytest.approx(0.05)
    assert rank(result, [Objective("acc", 1, True)], ["good", "bad"]) == ["good"]


def test_olive_search_results_vector():
    """Olive test_search_results: objectives acc (p1, goal .75), lat avg (p2, goal 24), lat max (p3, goal 30).

    Its sort ignores goals for the order [3, 7, 0]; with goals applied only point 0 qualifies.
    """
    objectives = [Objective("acc", 1, True), Objective("lat_avg", 2, False), Objective("lat_max", 3, False)]
    result = _run(
        {
            "base": model(acc=0.7, lat_avg=30.0, lat_max=40.0),
            "m0": model(acc=0.75, lat_avg=4.5, lat_max=5.0),
            "m3": model(acc=0.78, lat_avg=55.9, lat_max=60.0),
            "m7": model(acc=0.76, lat_avg=53.0, lat_max=60.1),
        }
    )
    order = sorted(["m0", "m3", "m7"], key=lambda n: ranking_key(result.models[n], objectives))
    assert order == ["m3", "m7", "m0"]
    apply_goals(result, {"acc": ("threshold", 0.75), "lat_avg": ("threshold", 24), "lat_max": ("threshold", 30)})
    assert rank(result, objectives, ["m0", "m3", "m7"]) == ["m0"]


def test_ties_fall_through_to_next_priority_then_config_order():
    objectives = [Objective("acc", 1, True), Objective("lat_avg", 2, False)]
    result = _run(
        {
            "base": model(acc=0.9, lat_avg=10.0),
            "a": model(acc=0.9, lat_avg=8.0),
            "b": model(acc=0.9, lat_avg=7.0),
            "c": model(acc=0.9, lat_avg=7.0),
            "d": model(acc=0.95, lat_avg=20.0),
        }
    )
    apply_goals(result, {})
    assert rank(result, objectives, ["a", "b", "c", "d"]) == ["d", "b", "c", "a"]


def test_missing_ranked_metric_ranks_last_for_either_direction():
    """Olive's fault: a result missing a lower-is-better objective sorted first."""
    objectives = [Objective("lat_avg", 1, False)]
    result = _run({"base": model(lat_avg=10.0), "fast": model(lat_avg=5.0), "missing": model(acc=0.9)})
    order = sorted(["missing", "fast"], key=lambda n: ranking_key(result.models[n], objectives))
    assert order == ["fast", "missing"]
    apply_goals(result, {"lat_avg": ("max-degradation", 100.0)})
    assert not result.models["missing"].goals_met
    assert rank(result, objectives, ["missing", "fast"]) == ["fast"]


def test_failed_model_never_meets_goals():
    result = _run({"base": model(acc=0.9), "broken": ModelResult(status="failed", error="boom")})
    apply_goals(result, {"acc": ("max-degradation", 0.5)})
    assert not result.models["broken"].goals_met
    assert rank(result, [Objective("acc", 1, True)], ["broken"]) == []


def test_failed_baseline_leaves_relative_goals_unresolved():
    result = _run({"base": ModelResult(status="failed", error="boom"), "c": model(acc=0.9)})
    apply_goals(result, {"acc": ("max-degradation", 0.01)})
    goal = result.models["c"].metrics["acc"].goal
    assert goal.threshold is None and not goal.met and not result.models["c"].goals_met


def test_olive_footprint_pareto_vector():
    """Olive test_footprint: input 0.90/120ms; node1 0.91/111; node2 0.92/112 → node1 and node2 on the front."""
    objectives = [Objective("acc", 1, True), Objective("lat_avg", 2, False)]
    result = _run(
        {
            "base": model(acc=0.90, lat_avg=120),
            "node1": model(acc=0.91, lat_avg=111),
            "node2": model(acc=0.92, lat_avg=112),
        }
    )
    mark_pareto(result, objectives)
    assert {n for n, m in result.models.items() if m.pareto} == {"node1", "node2"}


def test_pareto_equal_points_do_not_dominate_each_other():
    objectives = [Objective("acc", 1, True), Objective("lat_avg", 2, False)]
    result = _run(
        {"base": model(acc=0.9, lat_avg=10), "a": model(acc=0.9, lat_avg=10), "worse": model(acc=0.8, lat_avg=10)}
    )
    mark_pareto(result, objectives)
    assert [result.models[n].pareto for n in ("base", "a", "worse")] == [True, True, False]


def test_models_not_evaluated_yet_have_unknown_goals_and_pareto_but_failed_ones_do_not():
    """Issue 16 item 26: a pending or running model is not known to miss its goals; a failed one did."""
    objectives = [Objective("acc", 1, True)]
    result = _run(
        {
            "base": model(acc=0.5),
            "done": model(acc=0.8),
            "now": ModelResult(status="running"),
            "later": ModelResult(status="pending"),
            "broken": ModelResult(status="failed", error="did not load"),
        }
    )
    apply_goals(result, {"acc": ("threshold", 0.75)})
    mark_pareto(result, objectives)
    assert {n: (m.goals_met, m.pareto) for n, m in result.models.items()} == {
        "base": (None, False),
        "done": (True, True),
        "now": (None, None),
        "later": (None, None),
        "broken": (False, False),
    }
    assert ModelResult(status="pending").goals_met is None and ModelResult(status="pending").pareto is None

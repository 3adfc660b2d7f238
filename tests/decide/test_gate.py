"""``goals_missed``: the CI gate's verdict on results, and the one line saying which goal each candidate missed."""

from __future__ import annotations

import pytest

from olive_eval.decide.gate import goals_missed
from olive_eval.errors import UsageError
from olive_eval.records.results import GoalResult, ModelResult, RunResult, SubMetricResult

KEY = "acc-accuracy_score"


def scored(value: float | None, goal: GoalResult | None, **kw) -> SubMetricResult:
    return SubMetricResult(value=value, priority=1, higher_is_better=True, goal=goal, **kw)


def met(value: float = 0.95) -> ModelResult:
    goal = GoalResult("max-degradation", 0.01, 0.94, True)
    return ModelResult("ok", metrics={KEY: scored(value, goal)}, goals_met=True)


def missed(value: float = 0.9, threshold: float = 0.94) -> ModelResult:
    goal = GoalResult("max-degradation", 0.01, threshold, False, threshold - value)
    return ModelResult("ok", metrics={KEY: scored(value, goal)}, goals_met=False)


def run(**models: ModelResult) -> RunResult:
    base = ModelResult("ok", metrics={KEY: scored(0.95, None)})
    return RunResult(baseline="base", models={"base": base, **models})


def test_true_passes_when_any_candidate_meets_every_goal():
    assert goals_missed(run(a=missed(), b=met())) is None
    assert goals_missed(run(a=missed(), b=missed(0.8))) == (
        "'a' misses acc-accuracy_score >= 0.94 (max-degradation 0.01; measured 0.9); "
        "'b' misses acc-accuracy_score >= 0.94 (max-degradation 0.01; measured 0.8); no candidate meets every goal"
    )


def test_names_pass_only_when_each_named_candidate_meets_every_goal():
    result = run(a=missed(), b=met(), c=met())
    assert goals_missed(result, ["b", "c"]) is None
    assert (
        goals_missed(result, ("b", "a")) == "'a' misses acc-accuracy_score >= 0.94 (max-degradation 0.01; measured 0.9)"
    )
    assert goals_missed(result, False) is None


def test_the_numbers_keep_the_digits_that_tell_them_apart():
    assert goals_missed(run(a=missed(0.93999, 0.94))) == (
        "'a' misses acc-accuracy_score >= 0.94 (max-degradation 0.01; measured 0.93999); no candidate meets every goal"
    )


def test_a_lower_is_better_threshold_goal_reads_as_an_upper_bound():
    goal = GoalResult("threshold", 10.0, 10.0, False, 2.5)
    sub = SubMetricResult(value=12.5, priority=1, higher_is_better=False, goal=goal)
    result = run(a=ModelResult("ok", metrics={"latency-avg": sub}, goals_met=False))
    assert goals_missed(result, ["a"]) == "'a' misses latency-avg <= 10 (measured 12.5)"


def test_a_confident_goal_says_the_bound_it_was_judged_on():
    goal = GoalResult("max-degradation", 0.01, 0.94, False, 0.004, confidence=0.95, margin=0.002, margin_bound=-0.004)
    result = run(a=ModelResult("ok", metrics={KEY: scored(0.942, goal)}, goals_met=False))
    assert goals_missed(result, ["a"]) == (
        "'a' misses acc-accuracy_score >= 0.94 at 95% confidence (max-degradation 0.01; measured 0.942, bound 0.936)"
    )
    goal.margin_bound = None
    assert goals_missed(result, ["a"]).endswith("(max-degradation 0.01; measured 0.942, bound undefined)")


def test_a_goal_without_a_value_says_why():
    goal = GoalResult("max-degradation", 0.01, None, False, reason="no value: only one class in the labels")
    result = run(a=ModelResult("partial", metrics={KEY: scored(None, goal, undefined="one class")}, goals_met=False))
    assert goals_missed(result, ["a"]) == "'a' misses acc-accuracy_score: no value: only one class in the labels"


def test_a_failed_candidate_misses_with_its_error_shortened():
    error = "the model did not load: " + "x" * 200
    result = run(a=ModelResult("failed", error=error, goals_met=False), b=missed())
    line = goals_missed(result, ["a"])
    assert line.startswith("'a' failed to evaluate: the model did not load: xxx") and line.endswith("...")
    assert len(line) == len("'a' failed to evaluate: ") + 120


def test_unknown_goals_are_a_miss_not_a_pass():
    result = run(a=ModelResult("interrupted", goals_met=None), b=missed())
    assert goals_missed(result, ["a"]) == "'a' has no goal result (status interrupted)"
    assert goals_missed(result).startswith("'a' has no goal result (status interrupted); 'b' misses")


def test_an_early_stopped_candidate_counts_what_it_did_not_measure():
    stopped = missed()
    stopped.early_stopped = KEY
    other = {"latency-avg": SubMetricResult(20.0, 2, False, GoalResult("threshold", 30.0, 30.0, True))}
    result = run(a=stopped, b=ModelResult("ok", metrics={**met().metrics, **other}, goals_met=True))
    assert goals_missed(result, ["a"]) == (
        "'a' misses acc-accuracy_score >= 0.94 (max-degradation 0.01; measured 0.9) (+1 not measured) (stopped early)"
    )


def test_further_misses_are_counted():
    two = missed()
    two.metrics["f1"] = scored(0.5, GoalResult("threshold", 0.6, 0.6, False, 0.1))
    assert goals_missed(run(a=two), ["a"]).endswith("; measured 0.9) (+1 more missed)")


def test_a_goal_the_model_lacks_without_a_recorded_miss_is_not_measured():
    lacking = ModelResult("ok", metrics={}, goals_met=False)
    assert goals_missed(run(a=lacking, b=met()), ["a"]) == "'a' misses acc-accuracy_score: not measured"


def test_the_line_describes_three_candidates_and_counts_the_rest():
    line = goals_missed(run(**{name: missed() for name in "abcde"}))
    assert line.count(" misses ") == 3 and line.endswith(
        "; 2 more candidates miss goals; no candidate meets every goal"
    )


def test_a_run_without_candidates_has_none_meeting_the_goals():
    assert goals_missed(run()) == "no candidate was evaluated; no candidate meets every goal"


def test_an_unknown_name_and_the_baseline_are_usage_errors():
    with pytest.raises(UsageError, match=r"^no candidate named 'z' in the results; candidates: a$"):
        goals_missed(run(a=met()), ["a", "z"])
    with pytest.raises(UsageError, match=r"^no candidate named 'base'"):
        goals_missed(run(a=met()), ["base"])


def test_results_without_goals_cannot_be_gated():
    plain = ModelResult("ok", metrics={KEY: scored(0.9, None)}, goals_met=None)
    with pytest.raises(UsageError, match=r"^the results hold no goal to gate on"):
        goals_missed(run(a=plain))

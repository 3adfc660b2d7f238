"""The best candidate is the top of the ranking, not merely one of the ranked (issue 30: a mutant taking the last
of the ranking survived every engine test)."""

from __future__ import annotations

from olive_eval import evaluate


def test_best_is_the_top_of_a_ranking_of_two_eligible_candidates(toy):
    metrics = [
        {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [{"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 1.0}}],
        }
    ]
    result = evaluate(toy.config({"near": 0.05, "far": 3.0}, metrics))
    accuracy = {name: result.models[name].metrics["acc-accuracy_score"].value for name in ("near", "far")}
    assert accuracy["near"] > accuracy["far"]  # the data tells them apart
    assert result.ranking == ["near", "far"]  # both meet the loose goal: both ranked, higher accuracy first
    assert result.best == "near"

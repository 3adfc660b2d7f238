"""A timed goal (latency) on the data config of a stopping pass: it is measured in timing rounds, not by the pass,
so it neither keeps the pass running in full nor appears among the goals that stop it."""

from __future__ import annotations

from olive_eval import evaluate
from tests.engine.sequential_sweep import Sweep


def test_a_latency_goal_on_the_same_data_config_leaves_the_pass_free_to_stop(tmp_path):
    sweep = Sweep(tmp_path / "sweep", n=3000)
    accuracy = {
        "name": "acc",
        "type": "accuracy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.02,
                                                                  "confidence": 0.95}}
        ],
    }  # fmt: skip
    latency = {
        "name": "lat",
        "type": "latency",
        "data_config": "d",
        "sub_types": [
            {"name": "avg", "priority": 2, "goal": {"type": "percent-max-degradation", "value": 1000},
             "metric_config": {"warmup_num": 1, "repeat_test_num": 3}}
        ],
    }  # fmt: skip
    config = sweep.config({"good": 0.95}, sequential={"min_examples": 200}, metrics=[accuracy, latency])
    result = evaluate(config)
    assert result.sequential == {"d": "stops early once acc-accuracy_score decided (confidence sequence)"}
    good = result.models["good"].sequential["d"]
    assert good.full is None and good.stopped == "decided"
    assert good.examples < good.total == 3000
    assert sweep.calls("good") < 3000  # the model ran on fewer examples than the data holds
    assert result.models["good"].metrics["lat-avg"].value is not None and result.best == "good"

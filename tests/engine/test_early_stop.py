"""Early stop: a candidate that misses a ranked goal on a cheap metric is not measured on the expensive ones."""

from __future__ import annotations

import json
from typing import Any

import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.engine.session.session import Evaluation
from olive_eval.report.console import render

ACCURACY = {
    "name": "acc",
    "type": "accuracy",
    "sub_types": [{"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.02}}],
}
SECOND = {
    "name": "acc2",
    "type": "accuracy",
    "sub_types": [
        {
            "name": "f1_score",
            "priority": -1,
            "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"},
        }
    ],
}
LATENCY = {
    "name": "lat",
    "type": "latency",
    "sub_types": [{"name": "avg", "priority": 2, "metric_config": {"warmup_num": 1, "repeat_test_num": 5}}],
}


def progress_of(lines: list[tuple[str, str]]):
    return lambda model, message: lines.append((model, message))


def test_a_candidate_missing_its_accuracy_goal_is_not_timed(toy, capsys):
    config = {**toy.config({"close": 0.0, "far": 3.0}, [ACCURACY, LATENCY]), "early_stop": True}
    lines: list[tuple[str, str]] = []
    result = evaluate(config, progress=progress_of(lines))
    far, close = result.models["far"], result.models["close"]
    base = result.models["base"].metrics["acc-accuracy_score"].value
    assert far.metrics["acc-accuracy_score"].value < base - 0.02  # the goal is missed: an independent check
    assert far.early_stopped == "acc-accuracy_score" and "lat-avg" not in far.metrics
    assert far.goals_met is False and far.status == "ok" and "far" not in result.ranking
    assert not any(m == "far" and text.startswith("timing") for m, text in lines)
    assert close.early_stopped is None and close.metrics["lat-avg"].value is not None and close.goals_met
    on_disk = json.loads((toy.root / "out" / "results.json").read_text())
    assert on_disk["models"]["far"]["early_stopped"] == "acc-accuracy_score"
    assert on_disk["models"]["close"]["early_stopped"] is None
    table = render(result)
    row = next(line for line in table.splitlines() if line.startswith("stopped early by")).split()
    assert row[3:] == ["-", "-", "acc-accuracy_score"]
    assert "STOPPED EARLY far: missed the goal of acc-accuracy_score; not measured: lat-avg" in table


def test_without_early_stop_every_metric_is_measured(toy):
    result = evaluate(toy.config({"far": 3.0}, [ACCURACY, LATENCY]))
    far = result.models["far"]
    assert far.goals_met is False and far.early_stopped is None and far.metrics["lat-avg"].value is not None


def test_order_puts_the_cheap_metric_first_and_the_session_says_what_stopped(toy):
    config = {**toy.config({}, [SECOND, ACCURACY, LATENCY]), "early_stop": True, "order": ["acc", "acc2"]}
    lines: list[tuple[str, str]] = []
    with Evaluation(config, progress=progress_of(lines)) as session:
        far = session.evaluate({"type": "ONNXModel", "name": "far", "model_path": str(toy.model("far", 3.0))})
        close = session.evaluate({"type": "ONNXModel", "name": "close", "model_path": str(toy.model("close", 0.0))})
    assert far.early_stopped == "acc-accuracy_score" and set(far.metrics) == {"acc-accuracy_score"}
    assert far.goals_met is False and far.rank is None
    # acc alone, then acc2 alone: two passes for a candidate that goes on, one for one that stops
    assert sum(1 for m, t in lines if m == "far" and t.startswith("predicting")) == 1
    assert sum(1 for m, t in lines if m == "close" and t.startswith("predicting")) == 2
    assert set(close.metrics) == {"acc-accuracy_score", "acc2-f1_score", "lat-avg"} and close.rank == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"early_stop": True, "metrics": [{**ACCURACY, "sub_types": [{"name": "accuracy_score", "priority": 1}]}]},
            "early_stop: early_stop needs a ranked goal to stop on: give a sub-type with a priority a goal",
        ),
        ({"order": ["acc", "nope"]}, "order[1]: no metric 'nope'; metrics: acc, lat"),
        ({"order": ["acc", "acc"]}, "order[1]: metric 'acc' is listed twice"),
        (
            {"order": ["lat", "acc"]},
            "order[1]: 'acc' cannot come after 'lat': latency and throughput are measured after the other metrics, "
            "in rounds beside the baseline",
        ),
    ],
)
def test_early_stop_config_errors(toy, tmp_path, capsys, change: dict[str, Any], message: str):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({**toy.config({"c": 0.1}, [ACCURACY, LATENCY]), **change}))
    assert main(["--config", str(path), "--quiet"]) == 2
    assert capsys.readouterr().err == f"olive-eval: config error: {path}: {message}\n"

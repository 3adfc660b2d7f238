"""Reading an earlier run back for --resume: its results, the model it died in, and what changed in the config."""

from __future__ import annotations

import json
import math

import pytest

from olive_eval import evaluate
from olive_eval.engine.cache.resume import config_changes, previous_run
from olive_eval.records.results_load import read_results

METRICS = [
    {
        "name": "acc",
        "type": "accuracy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.05}},
            {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "none"}},
        ],
    },
    {"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]},
]


@pytest.fixture
def finished(toy, tmp_path):
    config = toy.config({"a": 0.3, "b": 0.6}, METRICS)
    result = evaluate(config)
    return config, result, tmp_path / "out"


def test_no_results_json_is_no_previous_run(tmp_path):
    assert previous_run(tmp_path) is None


def test_a_finished_run_reads_back_as_written(finished):
    _, result, out = finished
    previous = previous_run(out)
    assert previous is not None and previous.path == out / "results.json"
    assert previous.result.to_dict() == result.to_dict()
    assert previous.running is None and previous.finished == ["base", "a", "b"] and previous.unfinished == []
    assert previous.config_sha256 == result.environment["config_sha256"]


def test_the_model_that_was_running_is_named(finished):
    _, _, out = finished
    data = json.loads((out / "results.json").read_text())
    data["models"]["a"].update(status="running", metrics={}, goals_met=None, pareto=None)
    data["models"]["b"].update(status="pending", metrics={}, goals_met=None, pareto=None)
    (out / "results.json").write_text(json.dumps(data))
    previous = previous_run(out)
    assert previous.running == "a" and previous.finished == ["base"] and previous.unfinished == ["a", "b"]


def test_non_finite_strings_come_back_as_floats(finished):
    _, _, out = finished
    data = json.loads((out / "results.json").read_text())
    sub = data["models"]["a"]["metrics"]["acc-accuracy_score"]
    sub["goal"]["missed_by"] = "inf"
    sub["ci_low"] = "-inf"
    sub["details"] = {"curve": ["nan", 0.5], "label": "x"}
    data["models"]["a"]["stage_seconds"]["load"] = "nan"
    (out / "results.json").write_text(json.dumps(data))
    back = read_results(out).models["a"]
    got = back.metrics["acc-accuracy_score"]
    assert got.goal.missed_by == math.inf and got.ci_low == -math.inf
    assert math.isnan(got.details["curve"][0]) and got.details["curve"][1:] == [0.5] and got.details["label"] == "x"
    assert math.isnan(back.stage_seconds["load"])


def test_the_recorded_config_is_kept(finished):
    config, _, out = finished
    data = json.loads((out / "results.json").read_text())
    data["environment"]["config"] = config
    (out / "results.json").write_text(json.dumps(data))
    assert previous_run(out).config == config


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda text: text[:200], "results.json: not valid JSON ("),
        (lambda text: "[]", "results.json: expected an object, got list"),
        (
            lambda text: text.replace('"status": ', '"colour": "red", "status": ', 1),
            "results.json.models.base: unknown key 'colour'",
        ),
        (
            lambda text: text.replace('"value": 201.0', '"value": "big"', 1),
            "results.json.models.base.metrics.size-bytes.value: expected a number, got 'big'",
        ),
        (lambda text: text.replace('"baseline": "base",', "", 1), "results.json: missing key 'baseline'"),
    ],
)
def test_a_results_json_that_cannot_be_read_back(finished, edit, message):
    _, _, out = finished
    path = out / "results.json"
    path.write_text(edit(path.read_text()))
    with pytest.raises(ValueError) as caught:
        previous_run(out)
    assert str(caught.value).startswith(str(path)) and message in str(caught.value)


def test_a_recorded_config_that_is_not_an_object(finished):
    _, _, out = finished
    data = json.loads((out / "results.json").read_text())
    data["environment"]["config"] = "run.json"
    (out / "results.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"results.json: environment.config: expected an object"):
        previous_run(out)


def test_config_changes_name_the_json_paths():
    old = {
        "input_model": {"type": "ONNXModel", "model_path": "m.onnx"},
        "candidates": [{"name": "a"}],
        "metrics": [{"name": "acc", "sub_types": [{"name": "x"}, {"name": "y", "goal": {"value": 0.01}}]}],
        "device": "cpu",
    }
    new = {
        "input_model": {"type": "ONNXModel", "model_path": "m.onnx"},
        "candidates": [{"name": "a"}, {"name": "b"}],
        "metrics": [{"name": "acc", "sub_types": [{"name": "x"}, {"name": "y", "goal": {"value": 0.02}}]}],
        "timing": {"rounds": 3},
    }
    assert config_changes(old, new) == ["candidates[1]", "metrics[0].sub_types[1].goal.value", "timing", "device"]
    assert config_changes(old, old) == []
    assert config_changes({"a": [1, 2]}, {"a": [1]}) == ["a[1]"]
    assert config_changes({"a": 1}, {"a": 1.0}) == ["a"]  # 1 and 1.0 validate differently (strict types)
    assert config_changes({"a": {"b": 1}}, {"a": [1]}) == ["a"]
    assert config_changes([1], {"a": 1}) == ["$"]

"""results.json names each model's headline ``score`` and ``score_name`` (Unitxt's): the sub-type ranked first,
or the one the run's ``score`` names; old files without them still read back."""

from __future__ import annotations

import json

import onnx
import pytest
from onnx import numpy_helper
from sklearn.metrics import accuracy_score, f1_score

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.decide.headline import mark_headline
from olive_eval.errors import ConfigError
from olive_eval.records.results import ModelResult, RunResult, SubMetricResult
from olive_eval.records.results_load import read_results

METRICS = [
    {
        "name": "acc",
        "type": "accuracy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1},
            {
                "name": "f1_score",
                "priority": 2,
                "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"},
            },
        ],
    },
    {"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]},
]


def _run(toy, score: str | None = None) -> dict:
    config = toy.config({"a": 0.5}, METRICS)
    if score is not None:
        config["score"] = score
    evaluate(config)
    return json.loads((toy.root / "out" / "results.json").read_text())


def test_the_sub_type_ranked_first_is_the_headline(toy):
    data = _run(toy)
    for model in data["models"].values():
        assert model["score_name"] == "acc-accuracy_score"
        assert model["score"] == model["metrics"]["acc-accuracy_score"]["value"]


def test_the_runs_score_setting_takes_effect(toy):
    data = _run(toy, score="acc-f1_score")
    for model in data["models"].values():
        assert model["score_name"] == "acc-f1_score"
        assert model["score"] == model["metrics"]["acc-f1_score"]["value"]
    candidate = data["models"]["a"]
    assert candidate["score"] != candidate["metrics"]["acc-accuracy_score"]["value"]  # it changed what is named


def test_an_unranked_sub_type_may_be_the_headline(toy):
    data = _run(toy, score="size-bytes")
    assert {m["score"] for m in data["models"].values()} == {
        m["metrics"]["size-bytes"]["value"] for m in data["models"].values()
    }


def test_the_headline_agrees_with_scikit_learn(toy):
    """The candidate's headline is its accuracy (and, when named, its macro F1) as scikit-learn computes them
    from the candidate's own weights."""
    data = _run(toy, score="acc-f1_score")
    weights = numpy_helper.to_array(onnx.load(str(toy.root / "a.onnx")).graph.initializer[0])
    predicted = (toy.x @ weights).argmax(axis=1)
    assert data["models"]["a"]["score"] == pytest.approx(f1_score(toy.labels, predicted, average="macro"), rel=1e-6)
    accuracy = data["models"]["a"]["metrics"]["acc-accuracy_score"]["value"]
    assert accuracy == pytest.approx(accuracy_score(toy.labels, predicted)) and accuracy < 1.0


@pytest.mark.parametrize(
    "score, message",
    [
        (
            "acc-nope",
            "score: no sub-type 'acc-nope' in this run; sub-types: acc-accuracy_score, acc-f1_score, size-bytes",
        ),
        ("accuracy_score", "score: no sub-type 'accuracy_score' in this run"),
    ],
)
def test_a_score_naming_no_sub_type_is_refused(toy, score, message):
    config = toy.config({"a": 0.5}, METRICS) | {"score": score}
    with pytest.raises(ConfigError) as info:
        load_run_config(config)
    text = str(info.value)
    assert message in text and "\n" not in text.strip()


def test_a_structured_sub_type_cannot_be_the_headline(toy):
    metrics = [
        {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]},
        {
            "name": "cm",
            "type": "accuracy",
            "sub_types": [{"name": "confusion_matrix"}],
        },
    ]
    with pytest.raises(ConfigError, match="score: sub-type 'cm-confusion_matrix' is a structured value"):
        load_run_config(toy.config({}, metrics) | {"score": "cm-confusion_matrix"})


def test_an_unmeasured_headline_has_no_score():
    failed = SubMetricResult(None, 1, True, error="boom")
    result = RunResult("base", {"base": ModelResult("partial", metrics={"m-s": failed}), "x": ModelResult("failed")})
    mark_headline(result, "m-s")
    assert [(m.score_name, m.score) for m in result.models.values()] == [("m-s", None), ("m-s", None)]
    mark_headline(result, None)
    assert [(m.score_name, m.score) for m in result.models.values()] == [(None, None), (None, None)]


def test_a_results_json_from_before_the_headline_reads_back(toy):
    _run(toy)
    path = toy.root / "out" / "results.json"
    data = json.loads(path.read_text())
    for model in data["models"].values():
        del model["score"], model["score_name"]
    path.write_text(json.dumps(data))
    result = read_results(path)
    assert all(m.score is None and m.score_name is None for m in result.models.values())
    assert result.models["base"].metrics["acc-accuracy_score"].value is not None

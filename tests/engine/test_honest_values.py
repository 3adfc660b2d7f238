"""Values that must never be silently wrong (issue 6, items 17, 18, 20, 21, 22)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import accuracy_score, roc_auc_score

from olive_eval import compute_metric, evaluate
from tests.helpers import write_jsonl

REPO = Path(__file__).resolve().parents[2]
SEED_MULTIPLE_METRICS = [  # Olive's "Configure multiple metrics" example, verbatim (shared seed 003)
    {
        "name": "accuracy",
        "type": "accuracy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.01}},
            {"name": "f1_score"},
            {"name": "auroc"},
        ],
    },
    {
        "name": "latency",
        "type": "latency",
        "sub_types": [
            {"name": "avg", "priority": 2, "goal": {"type": "percent-min-improvement", "value": 20}},
            {"name": "max"},
            {"name": "min"},
        ],
    },
]


# ------------------------------------------------------------------------------ item 17: non-finite outputs
def test_a_nan_input_fails_the_model_with_the_count_and_first_example(toy):
    x = toy.x.copy()
    x[7, 3] = np.nan
    data = write_jsonl(
        toy.root / "nan.jsonl",
        [
            {"x": [None if np.isnan(v) else float(v) for v in row], "label": int(y)}
            for row, y in zip(x, toy.labels, strict=True)
        ],
    )
    config = toy.config(
        {"cand": 0.1},
        [
            {
                "name": "acc",
                "type": "accuracy",
                "sub_types": [
                    {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.05}}
                ],
            }
        ],
    )
    config["data_configs"][0]["load_dataset_config"]["data_files"] = str(data)
    result = evaluate(config)
    for name in ("base", "cand"):
        model = result.models[name]
        assert model.status == "failed"
        assert model.metrics["acc-accuracy_score"].value is None
        assert model.metrics["acc-accuracy_score"].error == (
            "the model's output on 'toy' has non-finite values (NaN or infinity) in 1 of 120 examples "
            "(first: example 7); check the model and its inputs"
        )
    assert result.ranking == [] and result.best is None  # no candidate "meets its goal" against a NaN baseline


def test_compute_metric_refuses_non_finite_predictions():
    with pytest.raises(ValueError, match=r"predictions hold NaN or infinity in 1 of 2 examples \(first: example 0\)"):
        compute_metric("accuracy_score", [np.nan, 0.7], [0, 1])
    with pytest.raises(ValueError, match=r"in 1 of 3 examples \(first: example 2\)"):
        compute_metric("auroc", [[0.1, 0.9], [0.8, 0.2], [np.inf, 0.0]], [1, 0, 0])
    assert compute_metric("accuracy_score", [0.2, 0.7], [0, 1]) == accuracy_score([0, 1], [0, 1])


# ------------------------------------------------------------------------------ item 18: undefined AUROC
def test_auroc_with_one_class_is_undefined_and_its_goal_is_not_met(toy):
    data = write_jsonl(toy.root / "one_class.jsonl", [{"x": row.tolist(), "label": 1} for row in toy.x])
    metric = {
        "name": "acc",
        "type": "accuracy",
        "sub_types": [
            {
                "name": "auroc",
                "priority": 1,
                "goal": {"type": "threshold", "value": 0.5},
                "metric_config": {"task": "binary"},
            },
        ],
    }
    config = toy.config({"cand": 0.1}, [metric])
    config["data_configs"][0]["load_dataset_config"]["data_files"] = str(data)
    config["data_configs"][0]["post_process_data_config"] = {"type": "identity", "output_name": 0}
    for model in (config["input_model"], config["candidates"][0]):
        model["model_path"] = str(_binary_model(toy, model["name"]))
    result = evaluate(config)
    reason = "AUROC needs both classes in the targets; only 1 is present"
    with pytest.warns(Warning):
        assert np.isnan(roc_auc_score(np.ones(len(toy.x)), toy.x[:, 0]))  # scikit-learn agrees: undefined
    for name in ("base", "cand"):
        sub = result.models[name].metrics["acc-auroc"]
        assert sub.value is None and sub.undefined == reason
    goal = result.models["cand"].metrics["acc-auroc"].goal
    assert not goal.met and goal.reason == f"no value: {reason}"
    written = json.loads((toy.root / "out" / "results.json").read_text())
    assert written["models"]["base"]["metrics"]["acc-auroc"]["value"] is None
    assert written["models"]["base"]["goals_met"] is None
    with pytest.raises(ValueError, match=f"auroc is undefined here: {reason}"):
        compute_metric("auroc", toy.x[:, 0], np.ones(len(toy.x)))


def _binary_model(toy, name):
    from tests.helpers import linear_onnx

    return linear_onnx(toy.root / f"{name}_binary.onnx", toy.weights[:, :1])


# ------------------------------------------------------------------------------ item 20: one failing metric
def test_the_seed_multiple_metrics_example_runs_on_the_quickstart_models(tmp_path):
    models = REPO / "examples" / "quickstart" / "models"
    config = {
        "input_model": {"type": "ONNXModel", "name": "fp32", "model_path": str(models / "digits_fp32.onnx")},
        "candidates": [{"type": "ONNXModel", "name": "int8", "model_path": str(models / "digits_int8.onnx")}],
        "data_configs": [
            {
                "name": "digits",
                "load_dataset_config": {
                    "data_name": "json",
                    "data_files": str(REPO / "examples/quickstart/data/digits_test.jsonl"),
                },
                "pre_process_data_config": {"input_cols": ["pixels"], "label_col": "label", "max_samples": 100},
                "dataloader_config": {"batch_size": 50},
            }
        ],
        "metrics": SEED_MULTIPLE_METRICS,
        "output_dir": str(tmp_path / "out"),
    }
    result = evaluate(config)
    for name in ("fp32", "int8"):
        model = result.models[name]
        assert model.status == "ok", model.error
        assert model.metrics["latency-avg"].value > 0 and model.metrics["accuracy-auroc"].value > 0.9
    assert result.ranking == ["int8"] or not result.models["int8"].goals_met


def test_a_failing_metric_keeps_the_others(toy):
    metrics = [
        {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]},
        {
            "name": "lat",
            "type": "latency",
            "data_config": "dummy",
            "sub_types": [{"name": "avg", "priority": 2, "metric_config": {"repeat_test_num": 3}}],
        },
    ]
    config = toy.config({"cand": 0.1}, metrics)
    config["data_configs"].append(
        {
            "name": "dummy",
            "type": "DummyDataContainer",
            "load_dataset_config": {"input_names": ["x"], "input_shapes": [[2, 5]], "input_types": ["float32"]},
        }
    )
    result = evaluate(config)
    written = json.loads((toy.root / "out" / "results.json").read_text())
    for name in ("base", "cand"):
        model = written["models"][name]
        assert model["status"] == "partial"
        assert (
            model["metrics"]["acc-accuracy_score"]["value"] == result.models[name].metrics["acc-accuracy_score"].value
        )
        assert model["metrics"]["acc-accuracy_score"]["error"] is None
        assert model["metrics"]["lat-avg"]["value"] is None
        assert model["metrics"]["lat-avg"]["error"] == (
            f"input 'x' of {name}.onnx has shape [2, 5]; the model expects ['N', 8]"
        )
        assert model["error"].startswith("metric(s) lat failed: ")


# ------------------------------------------------------------------------------ item 21: what ran, per variant
def test_runtime_description_is_recorded_per_settings_variant(toy):
    metrics = [
        {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]},
        {
            "name": "acc_bound",
            "type": "accuracy",
            "data_config": "toy",
            "sub_types": [{"name": "accuracy_score"}],
            "user_config": {"io_bind": True},
        },
    ]
    result = evaluate(toy.config({}, metrics))
    runtimes = result.models["base"].runtimes
    assert [(r["io_bind"], r["metrics"]) for r in runtimes] == [(False, ["acc"]), (True, ["acc_bound"])]


# ------------------------------------------------------------------------------ item 22: .pt2 single input
class Named(torch.nn.Module):
    def __init__(self, weights: np.ndarray) -> None:
        super().__init__()
        self.weights = torch.nn.Parameter(torch.from_numpy(weights))

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return input @ self.weights


def test_a_single_input_export_archive_takes_the_one_data_column(toy):
    exported = toy.root / "named.pt2"
    module = Named(toy.weights).eval()
    batch = torch.export.Dim("batch")
    program = torch.export.export(module, (torch.from_numpy(toy.x[:2]),), dynamic_shapes=({0: batch},))
    torch.export.save(program, str(exported))
    config = toy.config({}, [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}])
    config["candidates"] = [{"type": "PyTorchModel", "name": "exported", "model_path": str(exported)}]
    result = evaluate(config)
    assert result.models["exported"].status == "ok", result.models["exported"].error
    expected = accuracy_score(toy.labels, (toy.x @ toy.weights).argmax(1))
    assert result.models["exported"].metrics["acc-accuracy_score"].value == pytest.approx(expected)

"""olive-eval as the evaluator of a real ``olive run`` (Olive 0.13): what Olive records equals olive-eval's own
run on the same model files, and the session spans Olive's calls."""

from __future__ import annotations

import json
import logging
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from olive.workflows import run as olive_run

import olive_eval
from olive_eval.olive import USER_SCRIPT

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"
EXAMPLE = ROOT / "examples" / "olive_workflow"
ACCURACY_KEYS = ("accuracy-accuracy_score", "accuracy-f1_score", "accuracy-precision", "size_on_disk-bytes")


def olive_eval_config(data_files: Path) -> dict[str, Any]:
    return {
        "data_configs": [
            {
                "name": "digits_test",
                "load_dataset_config": {"data_name": "json", "data_files": str(data_files), "split": "train"},
                "pre_process_data_config": {"input_cols": ["pixels"], "label_col": "label"},
                "dataloader_config": {"batch_size": 64},
            }
        ],
        "metrics": [
            {
                "name": "accuracy",
                "type": "accuracy",
                "data_config": "digits_test",
                "sub_types": [
                    {
                        "name": "accuracy_score",
                        "priority": 1,
                        "goal": {"type": "max-degradation", "value": 0.01},
                        "metric_config": {"task": "multiclass", "num_classes": 10},
                    },
                    {
                        "name": "f1_score",
                        "metric_config": {"task": "multiclass", "num_classes": 10, "average": "macro"},
                    },
                    {
                        "name": "precision",
                        "metric_config": {"task": "multiclass", "num_classes": 10, "average": "macro"},
                    },
                ],
            },
            {
                "name": "latency",
                "type": "latency",
                "data_config": "digits_test",
                "sub_types": [
                    {"name": "p50", "priority": 2, "metric_config": {"warmup_num": 5, "repeat_test_num": 30}}
                ],
            },
            {"name": "size_on_disk", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]},
        ],
        "timing": {"interleave": True, "rounds": 2},
    }


def workflow(tmp: Path, evaluator: dict[str, Any]) -> dict[str, Any]:
    return {
        "input_model": {"type": "ONNXModel", "model_path": str(tmp / "digits_fp32.onnx")},
        "systems": {
            "local": {
                "type": "LocalSystem",
                "accelerators": [{"device": "cpu", "execution_providers": ["CPUExecutionProvider"]}],
            }
        },
        "data_configs": [
            {
                "name": "calibration",
                "type": "DataContainer",
                "user_script": str(tmp / "digits_data.py"),
                "load_dataset_config": {"type": "digits_dataset", "data_files": str(tmp / "digits_test.jsonl")},
                "dataloader_config": {"batch_size": 64},
            }
        ],
        "evaluators": {"e": evaluator},
        "passes": {
            "quantize": {
                "type": "OnnxQuantization",
                "data_config": "calibration",
                "quant_mode": "SEARCHABLE_VALUES",
                "per_channel": False,
                "precision": "int8",
                "activation_type": "uint8",
                "weight_type": "int8",
                "quant_format": "QDQ",
                "calibrate_method": "MinMax",
                "reduce_range": False,
                "quant_preprocess": True,
            },
            "peephole": {"type": "OnnxPeepholeOptimizer"},
        },
        "search_strategy": {"execution_order": "joint", "sampler": "sequential"},
        "evaluator": "e",
        "host": "local",
        "target": "local",
        "cache_dir": str(tmp / "olive-cache"),
        "output_dir": str(tmp / "olive-output"),
        "log_severity_level": 3,
    }


def mirrors() -> list[dict[str, Any]]:
    return [
        {
            "name": "accuracy",
            "type": "accuracy",
            "sub_types": [
                {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.01}}
            ],
        },
        {"name": "latency", "type": "latency", "sub_types": [{"name": "p50", "priority": 2}]},
    ]


@pytest.fixture(scope="module")
def olive_workflow_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One ``olive run`` with olive-eval as its evaluator: the input model and two quantized outputs."""
    tmp = tmp_path_factory.mktemp("olive_run")
    shutil.copy(QUICKSTART / "models" / "digits_fp32.onnx", tmp)
    shutil.copy(QUICKSTART / "data" / "digits_test.jsonl", tmp)
    shutil.copy(EXAMPLE / "digits_data.py", tmp)
    (tmp / "olive_eval.json").write_text(json.dumps(olive_eval_config(tmp / "digits_test.jsonl")))
    evaluator = {
        "type": "OliveEval",
        "user_script": str(USER_SCRIPT),
        "olive_eval_config": str(tmp / "olive_eval.json"),
        "output_dir": str(tmp / "olive-eval-output"),
        "metrics": mirrors(),
    }
    olive_run(workflow(tmp, evaluator))
    footprint = json.loads((tmp / "olive-output" / "footprint.json").read_text())
    return {"tmp": tmp, "footprint": footprint}


def evaluated_nodes(footprint: dict[str, Any], input_path: Path) -> dict[str, dict[str, Any]]:
    """Olive's model id → (model path, the metric values Olive recorded) of each model it evaluated; the input
    model's node has no model config."""
    nodes = {}
    for model_id, node in footprint.items():
        metrics = (node.get("metrics") or {}).get("value")
        if metrics:
            config = node.get("model_config_data")
            path = config["config"]["model_path"] if config else str(input_path)
            nodes[model_id] = {"path": path, "values": {key: entry["value"] for key, entry in metrics.items()}}
    return nodes


def test_what_olive_records_equals_olive_eval_run_on_the_same_model_files(olive_workflow_run):
    tmp = olive_workflow_run["tmp"]
    nodes = evaluated_nodes(olive_workflow_run["footprint"], tmp / "digits_fp32.onnx")
    assert len(nodes) == 3  # the input model and the two search points (dynamic, static)
    base_id = next(i for i in nodes if nodes[i]["path"] == str(tmp / "digits_fp32.onnx"))
    config = olive_eval_config(tmp / "digits_test.jsonl")
    config["input_model"] = {"type": "ONNXModel", "name": "base", "model_path": nodes[base_id]["path"]}
    config["candidates"] = [
        {"type": "ONNXModel", "name": model_id, "model_path": node["path"]}
        for model_id, node in nodes.items()
        if model_id != base_id
    ]
    own = olive_eval.evaluate(config, output_dir=tmp / "own-run")
    for model_id, node in nodes.items():
        name = "base" if model_id == base_id else model_id
        for key in ACCURACY_KEYS:
            assert node["values"][key] == own.models[name].metrics[key].value, (model_id, key)
            assert isinstance(node["values"][key], float)
        assert math.isfinite(node["values"]["latency-p50"]) and node["values"]["latency-p50"] > 0


def test_the_session_spans_olive_calls_with_the_input_model_as_baseline(olive_workflow_run):
    tmp = olive_workflow_run["tmp"]
    nodes = evaluated_nodes(olive_workflow_run["footprint"], tmp / "digits_fp32.onnx")
    results = json.loads((tmp / "olive-eval-output" / "results.json").read_text())
    assert results["baseline"] == "digits_fp32"
    candidates = {name for name in results["models"] if name != "digits_fp32"}
    assert candidates == {model_id for model_id, node in nodes.items() if "runs" in Path(node["path"]).parts}
    for name in candidates:
        model = results["models"][name]
        assert model["status"] == "ok"
        assert model["goals_met"] is not None  # checked against the session's baseline
        timing = model["metrics"]["latency-p50"]["timing"]
        assert timing["ratio_to_baseline"] > 0  # timed in rounds beside the baseline
    assert set(results["ranking"]) <= candidates
    assert (tmp / "olive-eval-output" / "instances").is_dir()


def test_olive_reads_olive_eval_priorities_and_directions(olive_workflow_run):
    tmp = olive_workflow_run["tmp"]
    recorded = json.loads((tmp / "olive-output" / "input_model_metrics.json").read_text())
    assert recorded["accuracy-accuracy_score"]["priority"] == 1
    assert recorded["accuracy-accuracy_score"]["higher_is_better"] is True
    assert recorded["latency-p50"]["priority"] == 2
    assert recorded["latency-p50"]["higher_is_better"] is False
    assert recorded["accuracy-f1_score"]["priority"] == -1


def test_a_refused_config_fails_in_one_line_naming_file_and_path(tmp_path):
    shutil.copy(QUICKSTART / "models" / "digits_fp32.onnx", tmp_path)
    shutil.copy(QUICKSTART / "data" / "digits_test.jsonl", tmp_path)
    shutil.copy(EXAMPLE / "digits_data.py", tmp_path)
    config = olive_eval_config(tmp_path / "digits_test.jsonl")
    config["metrics"][0]["data_config"] = "no_such_data"
    (tmp_path / "olive_eval.json").write_text(json.dumps(config))
    evaluator = {
        "type": "OliveEval",
        "user_script": str(USER_SCRIPT),
        "olive_eval_config": str(tmp_path / "olive_eval.json"),
        "output_dir": str(tmp_path / "olive-eval-output"),
        "metrics": mirrors(),
    }
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # Olive's logger does not propagate to the root logger
    logging.getLogger("olive").addHandler(handler)
    try:
        flow = {**workflow(tmp_path, evaluator), "log_severity_level": 2}  # Olive logs the failure as a warning
        output = olive_run(flow)  # the input model is evaluated first, and refused
    finally:
        logging.getLogger("olive").removeHandler(handler)
    assert not output.has_output_model()
    failures = [r.exc_info[1] for r in records if r.exc_info and isinstance(r.exc_info[1], olive_eval.ConfigError)]
    assert len(failures) == 1
    message = str(failures[0])
    assert "\n" not in message
    assert message == (
        f"{tmp_path / 'olive_eval.json'}: metrics[0].data_config: data config 'no_such_data' is not defined; "
        "defined: digits_test"
    )
    assert not (tmp_path / "olive-eval-output" / "results.json").exists()  # as the CLI: a bad config writes nothing


def olive_metrics(data_config: str) -> list[dict[str, Any]]:
    multiclass = {"task": "multiclass", "num_classes": 10}
    return [
        {
            "name": "accuracy",
            "type": "accuracy",
            "data_config": data_config,
            "sub_types": [
                {"name": "accuracy_score", "priority": 1, "metric_config": multiclass},
                {"name": "f1_score", "metric_config": {**multiclass, "average": "macro"}},
                {"name": "precision", "metric_config": {**multiclass, "average": "macro"}},
            ],
        },
        {
            "name": "latency",
            "type": "latency",
            "data_config": data_config,
            "sub_types": [{"name": "avg", "priority": 2, "metric_config": {"warmup_num": 5, "repeat_test_num": 30}}],
        },
    ]


def test_a_workflow_s_own_olive_metrics_and_data_config_measure_as_olive_eval_s_own_run(tmp_path):
    """The one-line switch: Olive's metrics and an Olive data config from a user_script, unchanged; what Olive
    records equals olive-eval's own run of the same data config on the same model files."""
    shutil.copy(QUICKSTART / "models" / "digits_fp32.onnx", tmp_path)
    shutil.copy(QUICKSTART / "data" / "digits_test.jsonl", tmp_path)
    shutil.copy(EXAMPLE / "digits_data.py", tmp_path)
    evaluator = {
        "type": "OliveEval",
        "user_script": str(USER_SCRIPT),
        "output_dir": str(tmp_path / "olive-eval-output"),
        "metrics": olive_metrics("calibration"),
    }
    flow = workflow(tmp_path, evaluator)
    flow["data_configs"][0]["post_process_data_config"] = {"type": "digits_argmax"}
    olive_run(flow)
    footprint = json.loads((tmp_path / "olive-output" / "footprint.json").read_text())
    nodes = evaluated_nodes(footprint, tmp_path / "digits_fp32.onnx")
    assert len(nodes) == 3
    own_config = {
        "input_model": {"type": "ONNXModel", "name": "input", "model_path": str(tmp_path / "digits_fp32.onnx")},
        "candidates": [
            {"type": "ONNXModel", "name": model_id, "model_path": node["path"]}
            for model_id, node in nodes.items()
            if "runs" in Path(node["path"]).parts
        ],
        "data_configs": flow["data_configs"],
        "metrics": olive_metrics("calibration"),
    }
    own = olive_eval.evaluate(own_config, output_dir=tmp_path / "own-run")
    assert len(own.models) == 3
    for model_id, node in nodes.items():
        name = model_id if "runs" in Path(node["path"]).parts else "input"
        for key in ("accuracy-accuracy_score", "accuracy-f1_score", "accuracy-precision"):
            assert node["values"][key] == own.models[name].metrics[key].value, (model_id, key)
        assert node["values"]["accuracy-accuracy_score"] == pytest.approx(0.975, abs=0.01)

"""The OliveEval evaluator called as Olive's engine calls it: registration, handlers, Olive metrics in,
``MetricResult`` out, and the one-line refusals."""

from __future__ import annotations

import json
import logging
import math
import subprocess
import sys
from pathlib import Path

import pytest
from olive.common.import_lib import import_user_module
from olive.evaluator.metric import Metric
from olive.evaluator.registry import Registry
from olive.model import CompositeModelHandler, ONNXModelHandler
from olive.model.handler.tensorflow import TensorFlowModelHandler
from sklearn.metrics import accuracy_score, f1_score

import olive_eval
from olive_eval.cli import main as cli_main
from olive_eval.olive import EVALUATOR_TYPE, USER_SCRIPT, OliveEvalEvaluator
from olive_eval.olive.handlers import model_name
from olive_eval.olive.metrics import config_from_olive

ROOT = Path(__file__).resolve().parents[2]
FP32 = ROOT / "examples" / "quickstart" / "models" / "digits_fp32.onnx"
INT8 = ROOT / "examples" / "quickstart" / "models" / "digits_int8.onnx"
DATA = ROOT / "examples" / "quickstart" / "data" / "digits_test.jsonl"


def digits_config() -> dict:
    return {
        "data_configs": [
            {
                "name": "digits",
                "load_dataset_config": {"data_name": "json", "data_files": str(DATA), "split": "train"},
                "pre_process_data_config": {"input_cols": ["pixels"], "label_col": "label"},
                "dataloader_config": {"batch_size": 64},
            }
        ],
        "metrics": [
            {
                "name": "acc",
                "type": "accuracy",
                "data_config": "digits",
                "sub_types": [
                    {
                        "name": "accuracy_score",
                        "priority": 1,
                        "metric_config": {"task": "multiclass", "num_classes": 10},
                    },
                    {
                        "name": "f1_score",
                        "metric_config": {"task": "multiclass", "num_classes": 10, "average": "macro"},
                    },
                ],
            }
        ],
    }


def labels_and_predictions(model: Path) -> tuple[list[int], list[int]]:
    import numpy as np
    import onnxruntime as ort

    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    pixels = np.asarray([r["pixels"] for r in rows], dtype=np.float32)
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    logits = session.run(None, {session.get_inputs()[0].name: pixels})[0]
    return [r["label"] for r in rows], logits.argmax(-1).tolist()


def test_registration_is_idempotent_across_olive_s_repeated_user_script_imports(caplog):
    with caplog.at_level(logging.CRITICAL):
        for _ in range(3):
            import_user_module(str(USER_SCRIPT))
    assert Registry.get(EVALUATOR_TYPE) is OliveEvalEvaluator
    assert not [r for r in caplog.records if "Duplicate" in r.getMessage()]


def test_another_evaluator_under_the_name_is_refused():
    from olive_eval.olive.evaluator import register

    class Impostor:
        pass

    Registry._REGISTRY[EVALUATOR_TYPE] = Impostor
    try:
        with pytest.raises(olive_eval.ConfigError, match=r"registered already by .*Impostor"):
            register()
    finally:
        Registry._REGISTRY[EVALUATOR_TYPE] = OliveEvalEvaluator


def test_without_olive_the_plugin_says_which_extra_to_install():
    code = "import sys; sys.modules['olive'] = None\nimport olive_eval.olive"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert 'pip install "olive-eval[olive]"' in done.stderr.strip().splitlines()[-1]


def test_olive_script_prints_the_user_script_path(capsys):
    assert cli_main(["olive-script"]) == 0
    assert capsys.readouterr().out.strip() == str(USER_SCRIPT)
    assert USER_SCRIPT.is_file()


def test_the_session_spans_evaluator_objects_and_returns_olive_s_joint_keys(tmp_path):
    def evaluate(model: Path) -> object:  # Olive makes a new evaluator object for every model
        evaluator = OliveEvalEvaluator(olive_eval_config=digits_config(), output_dir=str(tmp_path / "out"))
        return evaluator.evaluate(ONNXModelHandler(model_path=str(model)), [], "cpu", ["CPUExecutionProvider"])

    base, cand = evaluate(FP32), evaluate(INT8)
    for model, result in ((FP32, base), (INT8, cand)):
        labels, predictions = labels_and_predictions(model)
        assert result.get_value("acc", "accuracy_score") == accuracy_score(labels, predictions)
        assert math.isclose(result.get_value("acc", "f1_score"), f1_score(labels, predictions, average="macro"))
        assert result.root["acc-accuracy_score"].priority == 1
        assert result.root["acc-f1_score"].priority == -1
        assert result.root["acc-accuracy_score"].higher_is_better is True
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["baseline"] == "digits_fp32"
    assert set(results["models"]) == {"digits_fp32", "digits_int8"}


def test_unknown_and_composite_handlers_fail_in_one_line_and_are_kept_in_results_json(tmp_path):
    evaluator = OliveEvalEvaluator(olive_eval_config=digits_config(), output_dir=str(tmp_path / "out"))
    evaluator.evaluate(ONNXModelHandler(model_path=str(FP32)), [], "cpu", ["CPUExecutionProvider"])
    tensorflow = TensorFlowModelHandler(model_path=str(tmp_path / "model.pb"))
    with pytest.raises(olive_eval.ConfigError) as info:
        evaluator.evaluate(tensorflow, [], "cpu", ["CPUExecutionProvider"])
    assert str(info.value) == (
        "<olive model>: type: olive-eval cannot evaluate an Olive TensorFlowModelHandler (model 'model'); it takes "
        "ONNXModelHandler, PyTorchModelHandler and HfModelHandler"
    )
    composite = CompositeModelHandler(
        model_components=[ONNXModelHandler(model_path=str(FP32)), ONNXModelHandler(model_path=str(INT8))],
        model_component_names=["encoder", "decoder"],
    )
    with pytest.raises(olive_eval.ConfigError, match="is a composite model") as info:
        evaluator.evaluate(composite, [], "cpu", ["CPUExecutionProvider"])
    assert "\n" not in str(info.value)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["models"]["model"]["status"] == "failed"
    assert "TensorFlowModelHandler" in results["models"]["model"]["error"]
    failed = [m for m in results["models"].values() if m["status"] == "failed"]
    assert len(failed) == 2


def test_an_unknown_evaluator_key_is_refused():
    with pytest.raises(olive_eval.ConfigError, match=r"unknown key\(s\) confg; an OliveEval evaluator takes"):
        OliveEvalEvaluator(confg="run.json")


def test_an_olive_objective_olive_eval_does_not_measure_is_refused(tmp_path):
    mirror = Metric(name="acc", type="accuracy", sub_types=[{"name": "recall", "priority": 1}])
    evaluator = OliveEvalEvaluator(olive_eval_config=digits_config(), output_dir=str(tmp_path / "out"))
    with pytest.raises(olive_eval.ConfigError, match="Olive metric 'acc-recall' is not in the olive-eval config"):
        evaluator.evaluate(ONNXModelHandler(model_path=str(FP32)), [mirror], "cpu", ["CPUExecutionProvider"])


def test_olive_metrics_are_measured_as_their_user_wrote_them(tmp_path):
    """Without an olive-eval config the workflow's Olive metrics are measured: Olive's filled-in defaults are
    dropped, what the user set is kept, and the values equal scikit-learn's."""
    metric = Metric(
        name="acc",
        type="accuracy",
        sub_types=[
            {"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass", "num_classes": 10}},
            {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 10, "average": "macro"}},
        ],
    )
    converted = config_from_olive([metric])
    assert converted["metrics"][0]["sub_types"][1] == {
        "name": "f1_score",
        "priority": -1,
        "higher_is_better": True,
        "metric_config": {"task": "multiclass", "num_classes": 10, "average": "macro"},
    }
    run = {**converted, "data_configs": digits_config()["data_configs"]}
    run["metrics"][0]["data_config"] = "digits"
    evaluator = OliveEvalEvaluator(olive_eval_config=run, output_dir=str(tmp_path / "out"))
    result = evaluator.evaluate(ONNXModelHandler(model_path=str(FP32)), [metric], "cpu", ["CPUExecutionProvider"])
    labels, predictions = labels_and_predictions(FP32)
    assert result.get_value("acc", "accuracy_score") == accuracy_score(labels, predictions)


def test_torchmetrics_options_olive_passes_through_are_no_ops(tmp_path):
    """``validate_args`` and torchmetrics' ``Metric`` options, inline or in ``kwargs`` as Olive passes them to
    torchmetrics, change nothing in one process: the value is scikit-learn's."""
    no_ops = {"validate_args": False, "kwargs": {"compute_on_cpu": True, "sync_on_compute": False}}
    metric = Metric(
        name="acc",
        type="accuracy",
        sub_types=[
            {
                "name": "accuracy_score",
                "priority": 1,
                "metric_config": {"task": "multiclass", "num_classes": 10, **no_ops},
            }
        ],
    )
    run = {**config_from_olive([metric]), "data_configs": digits_config()["data_configs"]}
    run["metrics"][0]["data_config"] = "digits"
    evaluator = OliveEvalEvaluator(olive_eval_config=run, output_dir=str(tmp_path / "out"))
    result = evaluator.evaluate(ONNXModelHandler(model_path=str(FP32)), [metric], "cpu", ["CPUExecutionProvider"])
    labels, predictions = labels_and_predictions(FP32)
    assert result.get_value("acc", "accuracy_score") == accuracy_score(labels, predictions)


def test_a_model_is_named_by_olive_s_model_id_inside_olive_s_cache():
    assert model_name("/c/default_workflow/runs/906a62f0/models/model.onnx", "x") == "906a62f0"
    assert model_name("/work/models/digits_fp32.onnx", "x") == "digits_fp32"
    assert model_name("/work/models/bert_folder", "x") == "bert_folder"
    assert model_name(None, "input_model") == "input_model"


def test_a_model_handed_over_again_gets_the_session_s_result_without_work(tmp_path):
    """A second workflow run in one process (Olive's evaluation cache cleared) hands the same files again."""

    def evaluate(model: Path) -> object:
        evaluator = OliveEvalEvaluator(olive_eval_config=digits_config(), output_dir=str(tmp_path / "out"))
        return evaluator.evaluate(ONNXModelHandler(model_path=str(model)), [], "cpu", ["CPUExecutionProvider"])

    first = [evaluate(FP32).root, evaluate(INT8).root]
    again = [evaluate(FP32).root, evaluate(INT8).root]
    assert again == first
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert set(results["models"]) == {"digits_fp32", "digits_int8"}

"""Each Olive model handler olive-eval takes is evaluated as the model it holds, with Olive's accelerator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from olive.model import HfModelHandler, ONNXModelHandler, PyTorchModelHandler
from sklearn.metrics import accuracy_score
from transformers import AutoModelForSequenceClassification, AutoTokenizer

import olive_eval
from olive_eval.olive import OliveEvalEvaluator
from olive_eval.olive.handlers import model_config
from tests.helpers import linear_onnx, write_jsonl
from tests.runtimes import hf_models

CPU = ["CPUExecutionProvider"]


def vector_data(tmp_path: Path, n: int = 40) -> tuple[Path, np.ndarray, list[int]]:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    labels = rng.integers(0, 3, size=n).tolist()
    rows = [{"x": row.tolist(), "label": label} for row, label in zip(x, labels, strict=True)]
    return write_jsonl(tmp_path / "vectors.jsonl", rows), x, labels


def accuracy_config(data_file: Path, pre: dict[str, Any]) -> dict[str, Any]:
    return {
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(data_file), "split": "train"},
                "pre_process_data_config": pre,
                "post_process_data_config": {"type": "argmax"},
                "dataloader_config": {"batch_size": 8},
            }
        ],
        "metrics": [
            {
                "name": "acc",
                "type": "accuracy",
                "data_config": "d",
                "sub_types": [
                    {"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass", "num_classes": 3}}
                ],
            }
        ],
    }


def test_an_hf_handler_is_evaluated_as_the_transformers_model_in_its_folder(tmp_path):
    bert = hf_models.build_bert(tmp_path / "bert")
    texts = hf_models.sentences(24, seed=5)
    labels = [i % 3 for i in range(len(texts))]
    data_file = write_jsonl(
        tmp_path / "texts.jsonl", [{"text": t, "label": y} for t, y in zip(texts, labels, strict=True)]
    )
    config = accuracy_config(data_file, {"input_cols": ["text"], "label_col": "label", "task": "text-classification"})
    handler = HfModelHandler(model_path=str(bert), task="text-classification")
    evaluator = OliveEvalEvaluator(olive_eval_config=config, output_dir=str(tmp_path / "out"))
    result = evaluator.evaluate(handler, [], "cpu", CPU)

    tokenizer = AutoTokenizer.from_pretrained(bert)
    model = AutoModelForSequenceClassification.from_pretrained(bert).eval()
    with torch.inference_mode():
        expected = [int(model(**tokenizer(t, return_tensors="pt")).logits[0].argmax()) for t in texts]
    assert len(set(expected)) > 1
    assert result.get_value("acc", "accuracy_score") == accuracy_score(labels, expected)
    described = json.loads((tmp_path / "out" / "results.json").read_text())["models"]["bert"]["runtimes"][0]
    assert described["class"] == "BertForSequenceClassification"


def test_a_pytorch_handler_is_evaluated_as_the_module_its_model_loader_returns(tmp_path):
    data_file, x, labels = vector_data(tmp_path)
    torch.manual_seed(0)
    module = torch.nn.Linear(4, 3).eval()
    path = tmp_path / "linear.pt"
    torch.jit.trace(module, torch.zeros(1, 4)).save(str(path))
    script = tmp_path / "loader.py"
    script.write_text("import torch\n\n\ndef load(model_path):\n    return torch.jit.load(model_path)\n")
    handler = PyTorchModelHandler(
        model_path=str(path), model_file_format="PyTorch.TorchScript", model_loader="load", model_script=str(script)
    )
    config = accuracy_config(data_file, {"input_cols": ["x"], "label_col": "label"})
    evaluator = OliveEvalEvaluator(olive_eval_config=config, output_dir=str(tmp_path / "out"))
    result = evaluator.evaluate(handler, [], "cpu", CPU)
    with torch.inference_mode():
        expected = module(torch.from_numpy(x)).argmax(-1).tolist()
    assert len(set(expected)) > 1
    assert result.get_value("acc", "accuracy_score") == accuracy_score(labels, expected)


def test_a_pytorch_handler_loaded_by_a_python_object_is_refused_in_one_line(tmp_path):
    def load(model_path):
        return torch.nn.Linear(4, 3)

    handler = PyTorchModelHandler(model_path=str(tmp_path / "m.pt"), model_loader=load)
    with pytest.raises(olive_eval.ConfigError) as info:
        model_config(handler, "m")
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("<olive model>: model_loader: PyTorch model 'm' is loaded by a Python object")


def test_onnx_inference_settings_and_olive_s_providers_reach_onnx_runtime(tmp_path):
    data_file, x, labels = vector_data(tmp_path)
    weights = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    onnx_file = linear_onnx(tmp_path / "linear.onnx", weights)
    settings = {"session_options": {"intra_op_num_threads": 1}}
    handler = ONNXModelHandler(model_path=str(onnx_file), inference_settings=settings)
    assert model_config(handler, "m")["inference_settings"] == settings
    config = accuracy_config(data_file, {"input_cols": ["x"], "label_col": "label"})
    evaluator = OliveEvalEvaluator(olive_eval_config=config, output_dir=str(tmp_path / "out"))
    result = evaluator.evaluate(handler, [], "cpu", CPU)
    assert result.get_value("acc", "accuracy_score") == accuracy_score(labels, (x @ weights).argmax(-1))
    described = json.loads((tmp_path / "out" / "results.json").read_text())["models"]["linear"]["runtimes"][0]
    assert described["providers"] == CPU
    assert described["intra_op_threads"] == 1


def test_a_provider_onnx_runtime_lacks_fails_the_model_naming_what_is_there(tmp_path):
    data_file, _, _ = vector_data(tmp_path)
    onnx_file = linear_onnx(tmp_path / "linear.onnx", np.eye(4, 3, dtype=np.float32))
    config = accuracy_config(data_file, {"input_cols": ["x"], "label_col": "label"})
    evaluator = OliveEvalEvaluator(olive_eval_config=config, output_dir=str(tmp_path / "out"))
    handler = ONNXModelHandler(model_path=str(onnx_file))
    with pytest.raises(olive_eval.EvaluationError) as info:
        evaluator.evaluate(handler, [], "cpu", ["CoreMLExecutionProvider"])  # Apple's: in no Linux build
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(
        "olive-eval could not evaluate model 'linear': execution provider 'CoreMLExecutionProvider'"
    )
    assert "available: " in message and "CPUExecutionProvider" in message
    model = json.loads((tmp_path / "out" / "results.json").read_text())["models"]["linear"]
    assert model["status"] == "failed" and "CoreMLExecutionProvider" in model["error"]

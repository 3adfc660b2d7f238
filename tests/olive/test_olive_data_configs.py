"""Every data-config form of Olive's documentation, measured inside a real ``olive run`` with the workflow's own
Olive metrics: what Olive filled in (its ``DataConfig``'s default components and parameters, and its run
config's copy of the input model into a ``HuggingfaceContainer``) is recognised as Olive's, what the user set
is honoured or refused. Each run evaluates the input model only (about a second): accuracies are checked
against onnxruntime's predictions scored by scikit-learn."""

from __future__ import annotations

import json
import logging
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from olive.data.config import DataConfig
from olive.model import ONNXModelHandler
from olive.workflows import run as olive_run
from sklearn.metrics import accuracy_score

import olive_eval
from olive_eval.olive import USER_SCRIPT
from olive_eval.olive.data_configs import FillIn, data_config, input_fill_in
from tests.helpers import write_jsonl
from tests.runtimes import hf_models

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"
EXAMPLE = ROOT / "examples" / "olive_workflow"
#: Examples in the RawDataContainer's folder (one file each).
RAW_FILES = 40


@pytest.fixture
def digits(tmp_path: Path) -> Path:
    """A folder with the digits model, its test set as JSON lines (read by ``datasets.load_dataset("json")``,
    offline), the example's Olive user script and the first examples as Olive raw files with annotations."""
    shutil.copy(QUICKSTART / "models" / "digits_fp32.onnx", tmp_path)
    shutil.copy(QUICKSTART / "data" / "digits_test.jsonl", tmp_path)
    shutil.copy(EXAMPLE / "digits_data.py", tmp_path)
    pixels, labels = rows(tmp_path)
    (tmp_path / "raw" / "pixels").mkdir(parents=True)
    for i in range(RAW_FILES):
        pixels[i : i + 1].tofile(tmp_path / "raw" / "pixels" / f"{i:03d}.bin")
    np.save(tmp_path / "raw" / "labels.npy", labels[:RAW_FILES])
    return tmp_path


def rows(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    data = [json.loads(line) for line in (folder / "digits_test.jsonl").read_text().splitlines() if line]
    return np.asarray([r["pixels"] for r in data], np.float32), np.asarray([r["label"] for r in data], np.int64)


def expected_accuracy(folder: Path, n: int | None = None) -> float:
    """onnxruntime's predictions on the first ``n`` examples (all by default), scored by scikit-learn."""
    pixels, labels = rows(folder)
    session = ort.InferenceSession(str(folder / "digits_fp32.onnx"), providers=["CPUExecutionProvider"])
    predictions = session.run(None, {"pixels": pixels[:n]})[0].argmax(-1)
    return float(accuracy_score(labels[:n], predictions))


def hf_load(folder: Path) -> dict[str, Any]:
    return {"data_name": "json", "data_files": str(folder / "digits_test.jsonl"), "split": "train"}


def data_config_form(form: str, folder: Path) -> dict[str, Any]:
    """Olive's documented data-config forms, each named ``data``."""
    pre = {"input_cols": ["pixels"], "label_col": "label"}
    forms: dict[str, dict[str, Any]] = {
        "hf_load_only": {"type": "HuggingfaceContainer", "load_dataset_config": hf_load(folder)},
        "hf_pre_process_params": {
            "type": "HuggingfaceContainer",
            "load_dataset_config": hf_load(folder),
            "pre_process_data_config": pre,
            "dataloader_config": {"batch_size": 64},
        },
        "hf_pre_and_post_process": {
            "type": "HuggingfaceContainer",
            "load_dataset_config": {"params": hf_load(folder)},
            "pre_process_data_config": {"type": "huggingface_pre_process", "params": {**pre, "max_samples": 100}},
            "post_process_data_config": {"type": "text_classification_post_process"},
            "dataloader_config": {"params": {"batch_size": 16}},
        },
        "user_script": {
            "type": "DataContainer",
            "user_script": str(folder / "digits_data.py"),
            "load_dataset_config": {"type": "digits_dataset", "data_files": str(folder / "digits_test.jsonl")},
            "post_process_data_config": {"type": "digits_argmax"},
            "dataloader_config": {"batch_size": 64},
        },
        "raw": {
            "type": "RawDataContainer",
            "load_dataset_config": {
                "data_dir": str(folder / "raw"),
                "input_names": ["pixels"],
                "input_shapes": [[1, 64]],
                "annotations_file": "labels.npy",
            },
        },
        "dummy": {
            "type": "DummyDataContainer",
            "load_dataset_config": {"input_names": ["pixels"], "input_shapes": [[1, 64]], "max_samples": 4},
        },
    }
    return {"name": "data", **forms[form]}


def accuracy_metric() -> dict[str, Any]:
    return {
        "name": "accuracy",
        "type": "accuracy",
        "data_config": "data",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass", "num_classes": 10}}
        ],
    }


def latency_metric() -> dict[str, Any]:
    return {
        "name": "latency",
        "type": "latency",
        "data_config": "data",
        "sub_types": [{"name": "avg", "priority": 1, "metric_config": {"warmup_num": 2, "repeat_test_num": 5}}],
    }


def run_workflow(
    folder: Path,
    dc: dict[str, Any],
    metric: dict[str, Any],
    log_level: int = 3,
    input_model: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One ``olive run`` of the input model alone (default the digits ONNX model) with olive-eval measuring
    Olive's metric on ``dc``: the values Olive records, by joint key ({} when the evaluation failed; Olive logs
    why at ``log_level`` 2)."""
    flow = {
        "input_model": input_model or {"type": "ONNXModel", "model_path": str(folder / "digits_fp32.onnx")},
        "systems": {
            "local": {
                "type": "LocalSystem",
                "accelerators": [{"device": "cpu", "execution_providers": ["CPUExecutionProvider"]}],
            }
        },
        "data_configs": [dc],
        "evaluators": {
            "e": {
                "type": "OliveEval",
                "user_script": str(USER_SCRIPT),
                "output_dir": str(folder / "olive-eval-output"),
                "metrics": [metric],
            }
        },
        "evaluator": "e",
        "host": "local",
        "target": "local",
        "cache_dir": str(folder / "olive-cache"),
        "output_dir": str(folder / "olive-output"),
        "log_severity_level": log_level,
    }
    olive_run(flow)
    recorded = folder / "olive-output" / "input_model_metrics.json"
    return {k: v["value"] for k, v in json.loads(recorded.read_text()).items()} if recorded.exists() else {}


@pytest.mark.parametrize(
    ("form", "examples"),
    [
        ("hf_load_only", None),
        ("hf_pre_process_params", None),
        ("hf_pre_and_post_process", 100),  # max_samples, the user's, is honoured
        ("user_script", None),
        ("raw", RAW_FILES),
    ],
)
def test_each_olive_data_config_form_measures_inside_olive_run(digits, form, examples):
    values = run_workflow(digits, data_config_form(form, digits), accuracy_metric())
    assert values == {"accuracy-accuracy_score": expected_accuracy(digits, examples)}
    results = json.loads((digits / "olive-eval-output" / "results.json").read_text())
    assert results["models"]["digits_fp32"]["status"] == "ok"


def test_a_dummy_data_container_times_the_model_inside_olive_run(digits):
    values = run_workflow(digits, data_config_form("dummy", digits), latency_metric())
    assert set(values) == {"latency-avg"}
    assert math.isfinite(values["latency-avg"]) and values["latency-avg"] > 0


def test_a_post_process_parameter_the_user_set_and_olive_eval_cannot_honour_is_refused(digits):
    """Olive's own fill-in (the input model's path and task) is dropped; a ``model_name`` the user wrote into a
    post-process is not Olive's, and olive-eval's post-processes take none: one line naming the JSON path."""
    dc = data_config_form("hf_pre_process_params", digits)
    dc["post_process_data_config"] = {"type": "text_classification_post_process", "model_name": "bert-base-uncased"}
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # Olive's logger does not propagate to the root logger
    logging.getLogger("olive").addHandler(handler)
    try:
        assert run_workflow(digits, dc, accuracy_metric(), log_level=2) == {}
    finally:
        logging.getLogger("olive").removeHandler(handler)
    failures = [r.exc_info[1] for r in records if r.exc_info and isinstance(r.exc_info[1], olive_eval.ConfigError)]
    assert [str(f) for f in failures] == [
        "<olive evaluator>: data_configs[0].post_process_data_config.model_name: unknown key; valid: axis, output_name, "
        "type"
    ]


def test_olive_s_default_components_and_params_are_dropped():
    """What Olive's ``DataConfig`` adds by itself: each container's default component types (Olive's generic
    ``default_*`` ones included) and each signature's defaults (``model_name: null``, ``max_samples``, ...)."""
    hf = DataConfig(
        name="hf",
        type="HuggingfaceContainer",
        load_dataset_config={"data_name": "json", "data_files": "d.jsonl", "split": "train"},
        pre_process_data_config={"input_cols": ["pixels"], "label_col": "label"},
    )
    assert hf.post_process_data_config.type == "default_post_process_data"  # Olive's, filled in
    assert hf.pre_process_data_config.params["model_name"] is None
    assert data_config(hf) == {
        "name": "hf",
        "type": "HuggingfaceContainer",
        "load_dataset_config": {
            "type": "huggingface_dataset",
            "data_name": "json",
            "data_files": "d.jsonl",
            "split": "train",
        },
        "pre_process_data_config": {"type": "huggingface_pre_process", "input_cols": ["pixels"]},
    }
    raw = DataConfig(
        name="raw",
        type="RawDataContainer",
        load_dataset_config={"data_dir": "d", "input_names": ["x"], "input_shapes": [[1, 4]]},
    )
    assert data_config(raw) == {
        "name": "raw",
        "type": "RawDataContainer",
        "load_dataset_config": {"type": "raw_dataset", "data_dir": "d", "input_names": ["x"], "input_shapes": [[1, 4]]},
    }
    dummy = DataConfig(name="dummy", type="DummyDataContainer", load_dataset_config={"input_shapes": [[1, 4]]})
    assert data_config(dummy) == {
        "name": "dummy",
        "type": "DummyDataContainer",
        "load_dataset_config": {"type": "dummy_dataset", "input_shapes": [[1, 4]]},
    }


def test_the_fill_in_of_an_onnx_file_without_model_attributes_is_unusable_and_a_user_s_task_is_kept(tmp_path):
    model = tmp_path / "m.onnx"
    shutil.copy(QUICKSTART / "models" / "digits_fp32.onnx", model)
    fill_in = input_fill_in(ONNXModelHandler(model_path=str(model)))
    assert fill_in == FillIn(str(model), "text-generation-with-past", usable=False)
    named = input_fill_in(ONNXModelHandler(model_path=str(model), model_attributes={"_name_or_path": "gpt2"}))
    assert named == FillIn("gpt2", "text-generation-with-past", usable=True)
    # a task the user wrote is not Olive's fill-in, and keeps the components it chooses
    written = DataConfig(
        name="d",
        type="HuggingfaceContainer",
        load_dataset_config={"data_name": "json", "data_files": "d.jsonl", "split": "train"},
        pre_process_data_config={"input_cols": ["text"], "task": "text-classification", "model_name": str(model)},
    )
    converted = data_config(written, fill_in)
    assert converted["pre_process_data_config"]["task"] == "text-classification"
    assert converted["post_process_data_config"]["type"] == "text_classification_post_process"


def test_an_hf_input_model_s_name_and_task_measure_inside_olive_run(tmp_path):
    """With a transformers input model Olive's run config copies its path and task into the pre- and
    post-process: the pre-process keeps them (olive-eval tokenizes with that model's tokenizer and picks the
    task's components, as Olive does), Olive's post-processes ignore them and so are they here."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    bert = hf_models.build_bert(tmp_path / "bert")
    texts = hf_models.sentences(24, seed=1)
    labels = np.random.default_rng(2).integers(0, 3, size=len(texts)).tolist()
    write_jsonl(tmp_path / "sentences.jsonl", [{"text": t, "label": y} for t, y in zip(texts, labels, strict=True)])
    tokenizer, model = AutoTokenizer.from_pretrained(bert), AutoModelForSequenceClassification.from_pretrained(bert)
    with torch.no_grad():
        logits = model(**tokenizer(texts, padding=True, return_tensors="pt")).logits
    expected = float(accuracy_score(labels, logits.argmax(-1).numpy()))
    dc = {
        "name": "data",
        "type": "HuggingfaceContainer",
        "load_dataset_config": {"data_name": "json", "data_files": str(tmp_path / "sentences.jsonl"), "split": "train"},
        "pre_process_data_config": {"input_cols": ["text"], "label_col": "label"},
        "dataloader_config": {"batch_size": 8},
    }
    input_model = {"type": "HfModel", "model_path": str(bert), "task": "text-classification"}
    metric = {
        **accuracy_metric(),
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass", "num_classes": 3}}
        ],
    }
    values = run_workflow(tmp_path, dc, metric, input_model=input_model)
    assert values == {"accuracy-accuracy_score": expected}


def test_an_onnx_folder_s_fill_in_is_its_folder_and_usable(tmp_path):
    """Olive's run config copies the configured path (the folder), not the .onnx file inside it; a folder may
    hold the tokenizer that the fill-in's model_name loads, so it is kept in the pre-process."""
    shutil.copy(QUICKSTART / "models" / "digits_fp32.onnx", tmp_path / "model.onnx")
    fill_in = input_fill_in(ONNXModelHandler(model_path=str(tmp_path)))
    assert fill_in == FillIn(str(tmp_path), "text-generation-with-past", usable=True)

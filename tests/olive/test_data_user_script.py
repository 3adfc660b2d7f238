"""A data config whose components a user script registers with Olive's data Registry runs in olive-eval unchanged:
the values equal Olive's own ``OnnxEvaluator`` on the same data config (in float32, Olive's precision) and
scikit-learn's on the same rows (in float64)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from olive.data.config import DataConfig as OliveDataConfig
from olive.evaluator.olive_evaluator import OliveEvaluatorConfig
from olive.model import ONNXModelHandler
from sklearn.metrics import accuracy_score, f1_score, precision_score

from olive_eval import evaluate
from tests.helpers import data_components_forgotten

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"
MODEL = QUICKSTART / "models" / "digits_fp32.onnx"
DATA = QUICKSTART / "data" / "digits_test.jsonl"

#: Olive components, registered the way an Olive workflow's user script registers them (names unique in the
#: process: Olive's registry and olive-eval's are process-wide).
SCRIPT = textwrap.dedent(
    '''
    import json

    import numpy as np
    import torch
    from olive.data.registry import Registry
    from torch.utils.data import DataLoader


    class Digits:
        def __init__(self, pixels, labels):
            self.pixels, self.labels = pixels, labels

        def __len__(self):
            return len(self.labels)

        def __getitem__(self, i):
            return {"pixels": self.pixels[i]}, self.labels[i]


    @Registry.register_dataset()
    def usr_digits_dataset(data_files, **kwargs):
        rows = [json.loads(line) for line in open(data_files)]
        return Digits(
            np.asarray([r["pixels"] for r in rows], dtype=np.float32), np.asarray([r["label"] for r in rows])
        )


    @Registry.register_pre_process()
    def usr_digits_pairs(dataset, **kwargs):
        """Olive's huggingface_dataset gives a Hugging Face dataset: pairs from its columns."""
        columns = dataset.with_format("numpy")[:]
        return Digits(columns["pixels"].astype(np.float32), columns["label"])


    @Registry.register_dataloader()
    def usr_digits_loader(dataset, batch_size=1, **kwargs):
        return DataLoader(dataset, batch_size=batch_size)


    @Registry.register_post_process()
    def usr_digits_argmax(output, **kwargs):
        return output.argmax(dim=-1)  # a torch tensor's method: the output comes as Olive passes it


    @Registry.register_post_process()
    def usr_digits_by_name(output, **kwargs):
        return output["logits"].argmax(dim=-1)  # several outputs: a dict of tensors by name


    @Registry.register_post_process()
    def usr_digits_first(output, **kwargs):
        return output.argmax(dim=-1)[:1]
    '''
)


@pytest.fixture(autouse=True)
def _forget_components():
    with data_components_forgotten():
        yield


def sub_types() -> list[dict[str, Any]]:
    """Fresh each time: Olive's config classes replace the metric_config dicts in place."""
    return [
        {"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass", "num_classes": 10}},
        {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 10, "average": "macro"}},
        {"name": "precision", "metric_config": {"task": "multiclass", "num_classes": 10, "average": "macro"}},
    ]


@pytest.fixture(scope="module")
def script(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("olive_script") / "digits_components.py"
    path.write_text(SCRIPT)
    return path


def dataset_config(script: Path, **parts: Any) -> dict[str, Any]:
    return {
        "name": "digits",
        "type": "DataContainer",
        "user_script": str(script),
        "load_dataset_config": {"type": "usr_digits_dataset", "data_files": str(DATA)},
        "post_process_data_config": {"type": "usr_digits_argmax"},
        "dataloader_config": {"batch_size": 64},
        **parts,
    }


def olive_eval_values(dc: dict[str, Any], root: Path, model: Path = MODEL) -> dict[str, Any]:
    config = {
        "input_model": {"type": "ONNXModel", "name": "fp32", "model_path": str(model)},
        "data_configs": [dc],
        "metrics": [{"name": "accuracy", "type": "accuracy", "data_config": dc["name"], "sub_types": sub_types()}],
        "output_dir": str(root / "out"),
    }
    result = evaluate(config)
    model = result.models[result.baseline]
    assert model.status == "ok", model.error
    return {key: sub.value for key, sub in model.metrics.items()}


def olive_values(dc: dict[str, Any], model_path: Path = MODEL) -> dict[str, float]:
    """Olive's own evaluator, in this process, on the same data config."""
    metric = {"name": "accuracy", "type": "accuracy", "data_config": OliveDataConfig(**dc), "sub_types": sub_types()}
    evaluator_config = OliveEvaluatorConfig(metrics=[metric])
    model = ONNXModelHandler(model_path=str(model_path))
    result = evaluator_config.create_evaluator(model).evaluate(model, evaluator_config.metrics)
    return {key: value.value for key, value in result.items()}


def sklearn_values() -> dict[str, float]:
    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    pixels = np.asarray([r["pixels"] for r in rows], dtype=np.float32)
    labels = np.asarray([r["label"] for r in rows])
    predicted = ort.InferenceSession(str(MODEL)).run(None, {"pixels": pixels})[0].argmax(axis=1)
    return {
        "accuracy-accuracy_score": accuracy_score(labels, predicted),
        "accuracy-f1_score": f1_score(labels, predicted, average="macro"),
        "accuracy-precision": precision_score(labels, predicted, average="macro"),
    }


def check_values(ours: dict[str, Any], dc: dict[str, Any], model: Path = MODEL) -> None:
    reference, olive = sklearn_values(), olive_values(dc, model)
    assert ours["accuracy-accuracy_score"] == reference["accuracy-accuracy_score"] == 0.975
    assert float(np.float32(ours["accuracy-accuracy_score"])) == olive["accuracy-accuracy_score"]
    for key in ("accuracy-f1_score", "accuracy-precision"):
        assert ours[key] == pytest.approx(reference[key], rel=1e-12)
        assert ours[key] == pytest.approx(olive[key], rel=1e-6)  # Olive computes in float32


def test_olive_registered_dataset_and_post_process_give_olives_values(script, tmp_path):
    dc = dataset_config(script)
    check_values(olive_eval_values(dc, tmp_path), dc)


def test_olive_pre_process_gets_the_huggingface_dataset_olive_would_give(script, tmp_path):
    dc = dataset_config(
        script,
        load_dataset_config={
            "type": "huggingface_dataset",
            "data_name": "json",
            "data_files": str(DATA),
            "split": "train",
        },
        pre_process_data_config={"type": "usr_digits_pairs"},
    )
    check_values(olive_eval_values(dc, tmp_path), dc)


def test_olive_dataloader_batches_the_dataset_object(script, tmp_path):
    dc = dataset_config(script, dataloader_config={"type": "usr_digits_loader", "batch_size": 50})
    ours = olive_eval_values(dc, tmp_path)
    check_values(ours, dc)


def test_a_model_with_several_outputs_gives_the_post_process_a_dict(script, tmp_path):
    graph = onnx.load(str(MODEL))
    graph.graph.node.append(onnx.helper.make_node("Softmax", ["logits"], ["probabilities"], axis=-1))
    graph.graph.output.append(onnx.helper.make_tensor_value_info("probabilities", onnx.TensorProto.FLOAT, None))
    model = tmp_path / "two_outputs.onnx"
    onnx.save(graph, str(model))
    dc = dataset_config(script, post_process_data_config={"type": "usr_digits_by_name"})
    check_values(olive_eval_values(dc, tmp_path, model), dc, model)


def test_olive_names_are_case_insensitive(script, tmp_path):
    dc = dataset_config(script, post_process_data_config={"type": "USR_Digits_Argmax"})
    assert olive_eval_values(dc, tmp_path)["accuracy-accuracy_score"] == 0.975


def test_a_component_a_helper_module_registers_is_found_by_name(tmp_path):
    """Olive's registry is process-wide: a script may import the module that registers a component."""
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    (helpers / "usr_helper_components.py").write_text(
        "from olive.data.registry import Registry\n\n\n"
        "@Registry.register_post_process()\n"
        "def usr_helper_argmax(output, **kwargs):\n"
        "    return output.argmax(dim=-1)\n"
    )
    script = tmp_path / "uses_helper.py"
    script.write_text(SCRIPT.replace("usr_digits", "usr_helped") + "\nimport usr_helper_components  # noqa: F401\n")
    dc = dataset_config(
        script,
        script_dir=str(helpers),
        load_dataset_config={"type": "usr_helped_dataset", "data_files": str(DATA)},
        post_process_data_config={"type": "usr_helper_argmax"},
    )
    assert olive_eval_values(dc, tmp_path)["accuracy-accuracy_score"] == 0.975


def test_a_post_process_returning_too_few_predictions_fails_the_model(script, tmp_path):
    dc = dataset_config(script, post_process_data_config={"type": "usr_digits_first"})
    config = {
        "input_model": {"type": "ONNXModel", "name": "fp32", "model_path": str(MODEL)},
        "data_configs": [dc],
        "metrics": [{"name": "accuracy", "type": "accuracy", "data_config": "digits", "sub_types": sub_types()[:1]}],
        "output_dir": str(tmp_path / "out"),
    }
    model = evaluate(config).models["fp32"]
    assert model.status == "failed"
    assert "post-process 'usr_digits_first' returned 1 predictions for 64 examples" in model.error

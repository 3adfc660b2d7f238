"""Olive 0.13's dataloaders by their own parameters: ``dataloader_with_ignored_batch_fields`` batches every
model input but those in ``fields_no_batch`` (each becomes the batch's first value, a scalar), and
``no_auto_batch_dataloader`` passes each dataset item through as the batch, with no batch axis added.
torch's DataLoader (default_collate, and ``batch_size=None``) is the reference for what gets batched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from sklearn.metrics import accuracy_score
from torch.utils.data import DataLoader, default_collate

from olive_eval import evaluate
from olive_eval.config.data import DataConfig
from olive_eval.errors import EvaluationError
from tests.data.test_olive_components_dummy import LLAMA
from tests.data.test_olive_components_dummy import model_folder as dummy_model_folder
from tests.data.test_olive_components_dummy import prepare as dummy_prepare
from tests.helpers import write_jsonl


def prepare(data_config: dict[str, Any], folder: Path | None = None) -> tuple[Any, list[Any]]:
    prepared, batches, _ = dummy_prepare(data_config, folder)
    return prepared, batches


def model_folder(tmp_path: Path) -> Path:
    return dummy_model_folder(tmp_path, LLAMA, "llama")


def token_container(folder: Path, **dataloader: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "type": "TransformersTokenDummyDataContainer",
        "load_dataset_config": {"params": {"model_name": str(folder), "use_step": True, "max_samples": 5}},
    }
    if dataloader:
        data["dataloader_config"] = {"type": "dataloader_with_ignored_batch_fields", "params": dataloader}
    return data


# ------------------------------------------------------------------------ dataloader_with_ignored_batch_fields
@pytest.mark.parametrize("dataloader", [{}, {"batch_size": 1, "fields_no_batch": "step"}], ids=["default", "olive"])
def test_token_container_step_is_a_scalar(tmp_path, dataloader):
    """Olive's token container (its docstring's dataloader_config pastes in): ``step`` is not batched."""
    prepared, batches = prepare(token_container(model_folder(tmp_path), **dataloader))
    assert "step" in prepared.inputs and len(batches) == 5
    for batch in batches:
        assert np.shape(batch.columns["step"]) == () and int(batch.columns["step"]) == 0
        assert batch.columns["input_ids"].shape == (1, 1) and batch.size == 1
        assert batch.model_inputs()["step"].ndim == 0


def test_fields_no_batch_matches_default_collate_elsewhere(tmp_path):
    """Every other column is batched as torch's default_collate batches the same examples; the fields named
    (a string or a list) carry the first example's value; a name that is no model input is left alone."""
    folder = model_folder(tmp_path)
    data = token_container(folder, batch_size=2, fields_no_batch=["step", "position_ids", "label"])
    prepared, batches = prepare(data)
    _, examples = prepare(token_container(folder, batch_size=1, fields_no_batch=[]))
    assert [b.size for b in batches] == [2, 2, 1]
    for i, batch in enumerate(batches):
        items = [{k: torch.as_tensor(v[0]) for k, v in b.columns.items()} for b in examples[2 * i : 2 * i + 2]]
        reference = default_collate(items)
        for name in prepared.inputs:
            if name in ("step", "position_ids"):  # Olive: value[0].item()
                assert batch.columns[name].ndim == 0 and batch.columns[name] == reference[name][0].item()
            else:
                np.testing.assert_array_equal(batch.columns[name], reference[name].numpy())
        picked = batch.select([0])  # selecting examples keeps the unbatched fields as they are
        assert picked.size == 1 and picked.columns["step"].ndim == 0


def test_bad_input(tmp_path):
    folder = model_folder(tmp_path)
    with pytest.raises(ValueError, match=r"unknown key; valid: .*fields_no_batch"):  # not Olive's parameter
        DataConfig.model_validate({"name": "d", **token_container(folder, ignore_batch_fields=["step"])})
    with pytest.raises(EvaluationError, match=r"fields_no_batch 'attention_mask' holds 9 values per example"):
        prepare(token_container(folder, fields_no_batch=["attention_mask"]))


def step_onnx_model(path: Path) -> Path:
    """An ONNX stub whose ``step`` input is a scalar (rank 0), as a decoder's token-generation graph has it:
    out[b] = sum(input_ids[b]) + step."""
    import onnx
    from onnx import TensorProto, helper

    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"]),
        helper.make_tensor_value_info("step", TensorProto.INT64, []),
    ]
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    nodes = [
        helper.make_node("ReduceSum", ["input_ids", "axes"], ["ids_sum"], keepdims=0),
        helper.make_node("Add", ["ids_sum", "step"], ["total"]),
        helper.make_node("Cast", ["total"], ["out"], to=TensorProto.FLOAT),
    ]
    out = [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["b"])]
    graph = helper.make_graph(nodes, "step_stub", inputs, out, initializer=[axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def test_evaluate_an_onnx_graph_with_a_scalar_step_input(tmp_path):
    folder = model_folder(tmp_path)
    model = step_onnx_model(tmp_path / "step.onnx")
    data = token_container(folder, batch_size=2, fields_no_batch="step")
    data["load_dataset_config"]["params"]["generative"] = True  # input_ids, attention_mask and step
    result = evaluate(
        {
            "input_model": {"type": "ONNXModel", "name": "onnx", "model_path": str(model)},
            "data_configs": [{"name": "dummy", **data}],
            "metrics": [
                {
                    "name": "tp",
                    "type": "throughput",
                    "data_config": "dummy",
                    "sub_types": [{"name": "avg", "metric_config": {"warmup_num": 1, "repeat_test_num": 2}}],
                }
            ],
            "output_dir": str(tmp_path / "out"),
        }
    )
    onnx_model = result.models["onnx"]
    assert onnx_model.status == "ok", onnx_model.error
    assert onnx_model.metrics["tp-avg"].value > 0


# --------------------------------------------------------------------------------- no_auto_batch_dataloader
def batched_rows(seed: int = 0) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray]:
    """Four items, each already a batch: 3 examples of 2 features, and their 3 labels."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 3, 2)).round(3)
    y = rng.integers(0, 2, (4, 3))
    return [{"x": xi.tolist(), "label": yi.tolist()} for xi, yi in zip(x, y, strict=True)], x, y


def no_auto_batch(path: Path, **params: Any) -> dict[str, Any]:
    return {
        "load_dataset_config": {"data_name": "json", "data_files": str(path)},
        "pre_process_data_config": {"type": "skip_pre_process", "input_cols": ["x"], "label_col": "label"},
        "dataloader_config": {"type": "no_auto_batch_dataloader", "params": params},
    }


def test_no_auto_batch_passes_each_item_as_the_batch(tmp_path):
    rows, x, y = batched_rows()
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    _, batches = prepare(no_auto_batch(path, batch_size=8))  # Olive's batch_size is accepted and ignored
    reference = list(DataLoader([{"x": np.asarray(r["x"]), "label": np.asarray(r["label"])} for r in rows], None))
    assert len(batches) == len(reference) == 4
    for batch, ref in zip(batches, reference, strict=True):
        np.testing.assert_allclose(batch.columns["x"], ref["x"].numpy())
        np.testing.assert_array_equal(batch.columns["label"], ref["label"].numpy())
        assert batch.size == 3 and batch.inputs == ["x"]
    assert [b.start for b in batches] == [0, 3, 6, 9]
    np.testing.assert_allclose(np.concatenate([b.columns["x"] for b in batches]), x.reshape(12, 2))
    np.testing.assert_array_equal(np.concatenate([b.columns["label"] for b in batches]), y.reshape(12))


def test_no_auto_batch_scalar_reference_is_the_one_example_of_its_batch(tmp_path):
    rng = np.random.default_rng(1)
    rows = [{"x": rng.standard_normal((1, 3)).tolist(), "label": int(rng.integers(0, 3))} for _ in range(3)]
    _, batches = prepare(no_auto_batch(write_jsonl(tmp_path / "d.jsonl", rows)))
    for batch, row in zip(batches, rows, strict=True):
        assert batch.columns["x"].shape == (1, 3) and batch.columns["label"].tolist() == [row["label"]]


def test_no_auto_batch_refuses_an_item_that_is_not_a_batch(tmp_path):
    rows = [{"x": [0.1, 0.2, 0.3], "label": 1}, {"x": [0.4, 0.5, 0.6], "label": 0}]
    with pytest.raises(EvaluationError, match=r"item 0 is not a batch.*x: \(3,\), label: a scalar.*default_dataloader"):
        prepare(no_auto_batch(write_jsonl(tmp_path / "d.jsonl", rows)))


def test_evaluate_accuracy_over_items_that_are_batches(tmp_path):
    rows, x, y = batched_rows(2)
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    script = tmp_path / "model.py"
    script.write_text(
        "import numpy as np\n\n\ndef load(model_path):\n"
        "    def model(batch):\n"
        "        assert np.asarray(batch['x']).shape == (3, 2), np.asarray(batch['x']).shape\n"
        "        return np.asarray(batch['x']).argmax(axis=1)\n"
        "    return model\n"
    )
    result = evaluate(
        {
            "input_model": {"type": "PythonModel", "name": "py", "user_script": str(script), "model_loader": "load"},
            "data_configs": [{"name": "d", **no_auto_batch(path)}],
            "metrics": [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}],
            "output_dir": str(tmp_path / "out"),
        }
    )
    model = result.models["py"]
    assert model.status == "ok", model.error
    expected = accuracy_score(y.reshape(-1), x.reshape(12, 2).argmax(axis=1))
    assert model.metrics["acc-accuracy_score"].value == pytest.approx(expected)

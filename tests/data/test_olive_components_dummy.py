"""Olive's transformers dummy containers: the inputs Olive 0.13's TransformersDummyDataset makes, by name,
shape, dtype and value, sized from the model's config; evaluated end to end on ONNX and Python models."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.config.data import DataConfig
from olive_eval.errors import EvaluationError
from tests.helpers import batches_of

#: Olive 0.13's defaults per container (olive/data/component/load_dataset.py): seq_len, past_seq_len, max_seq_len.
OLIVE_DEFAULTS = {
    "TransformersDummyDataContainer": (128, 128, 1024),
    "TransformersPromptDummyDataContainer": (8, 0, 2048),
    "TransformersTokenDummyDataContainer": (1, 8, 2048),
}
GPT2 = {"model_type": "gpt2", "n_layer": 3, "n_head": 4, "n_embd": 16, "vocab_size": 50}
LLAMA = {
    "model_type": "llama",
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "hidden_size": 32,
    "vocab_size": 40,
}


def model_folder(tmp_path: Path, config: dict[str, Any], name: str = "model") -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def prepare(data_config: dict[str, Any], folder: Path | None = None) -> tuple[Any, list[Any], DataConfig]:
    config = DataConfig.model_validate({"name": "d", **data_config})
    return *batches_of(config, folder), config


def expected_sizes(config: dict[str, Any]) -> tuple[int, int, int]:
    """Layers, key/value heads, head size, as Olive's docstring defines them (head size from all heads)."""
    layers = config.get("num_hidden_layers", config.get("n_layer"))
    heads = config.get("num_attention_heads", config.get("n_head"))
    hidden = config.get("hidden_size", config.get("n_embd"))
    return layers, config.get("num_key_value_heads", heads), hidden // heads


@pytest.mark.parametrize("container", list(OLIVE_DEFAULTS))
@pytest.mark.parametrize("model_config", [GPT2, LLAMA], ids=["gpt2", "llama-gqa"])
def test_each_container_gives_olive_inputs_with_its_defaults(tmp_path, container, model_config):
    folder = model_folder(tmp_path, model_config)
    seq, past, _ = OLIVE_DEFAULTS[container]
    prepared, batches, config = prepare({"type": container, "load_dataset_config": {"max_samples": 5}}, folder)
    layers, kv_heads, head_size = expected_sizes(model_config)
    kv_names = [f"past_key_values.{i}.{kind}" for i in range(layers) for kind in ("key", "value")]
    assert prepared.inputs == ["input_ids", "attention_mask", "position_ids", *kv_names]
    assert prepared.references is None  # no made-up labels
    assert len(batches) == 5  # Olive's default_dataloader: batch_size 1
    dataloader = "dataloader_with_ignored_batch_fields" if "Token" in container else "default_dataloader"
    assert config.dataloader_config.type == dataloader
    for batch in batches:
        cols = batch.columns
        assert cols["input_ids"].shape == (1, seq) and cols["input_ids"].dtype == np.int64
        assert cols["input_ids"].min() >= 0 and cols["input_ids"].max() < model_config["vocab_size"]
        np.testing.assert_array_equal(cols["attention_mask"], np.ones((1, past + seq), np.int64))
        np.testing.assert_array_equal(cols["position_ids"], [list(range(past, past + seq))])
        for name in kv_names:
            assert cols[name].shape == (1, kv_heads, past, head_size) and cols[name].dtype == np.float32
            assert ((cols[name] >= 0) & (cols[name] < 1)).all()


def test_parameters_step_fp16_shared_buffer_ignored_fields_and_seed(tmp_path):
    folder = model_folder(tmp_path, LLAMA)
    params = {
        "seq_len": 3,
        "past_seq_len": 5,
        "max_seq_len": 12,
        "use_fp16": True,
        "shared_kv": True,
        "use_step": True,
        "ignore_input_fields": ["position_ids"],
        "ort_past_key_name": "past.<id>.k",
        "ort_past_value_name": "past.<id>.v",
        "max_samples": 2,
        "model_name": str(folder),
    }
    data = {"type": "TransformersDummyDataContainer", "load_dataset_config": params}
    prepared, batches, _ = prepare(data)
    assert prepared.inputs == ["input_ids", "attention_mask", "step", "past.0.k", "past.0.v", "past.1.k", "past.1.v"]
    cols = batches[0].columns
    np.testing.assert_array_equal(cols["step"], [0])
    cache = cols["past.1.v"]
    assert cache.shape == (1, 2, 12, 8) and cache.dtype == np.float16  # the buffer holds max_seq_len positions
    assert (cache[:, :, 5:] == 0).all() and (cache[:, :, :5] > 0).any()
    again = prepare(data)[1][0].columns  # reproducible: the same seed gives the same inputs
    for key in cols:
        np.testing.assert_array_equal(cols[key], again[key])
    other = prepare({**data, "load_dataset_config": {**params, "seed": 1}})[1][0].columns
    assert not np.array_equal(cols["input_ids"], other["input_ids"]) or not np.array_equal(cache, other["past.1.v"])


def test_generative_pytorch_model_gets_ids_and_mask_only(tmp_path):
    folder = model_folder(tmp_path, GPT2)
    data = {
        "type": "TransformersPromptDummyDataContainer",
        "load_dataset_config": {"model_framework": "PyTorch", "generative": True, "max_samples": 3},
    }
    prepared, batches, _ = prepare(data, folder)
    assert prepared.inputs == ["input_ids", "attention_mask"]
    assert batches[0].columns["input_ids"].shape == (1, 8)


def test_explicit_skip_pre_process_works_when_model_name_is_given(tmp_path):
    folder = model_folder(tmp_path, GPT2)
    base = {"type": "TransformersTokenDummyDataContainer", "pre_process_data_config": {"type": "skip_pre_process"}}
    _, batches, _ = prepare({**base, "load_dataset_config": {"model_name": str(folder), "max_samples": 2}})
    assert batches[0].columns["past_key_values.2.value"].shape == (1, 4, 8, 4)
    with pytest.raises(EvaluationError, match="needs the model's config: give load_dataset_config model_name"):
        prepare({**base, "load_dataset_config": {"max_samples": 2}}, folder)


def test_bad_input(tmp_path):
    with pytest.raises(EvaluationError, match="needs the model's config"):
        prepare({"type": "TransformersDummyDataContainer"})
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EvaluationError, match=r"no config.json in .*empty"):
        prepare({"type": "TransformersDummyDataContainer"}, empty)
    with pytest.raises(EvaluationError, match="the model config has no num_attention_heads"):
        prepare({"type": "TransformersDummyDataContainer"}, model_folder(tmp_path, {"n_layer": 2, "n_embd": 8}, "x"))
    with pytest.raises(ValueError, match="shared_kv is only supported for an ONNX model with use_fp16"):
        prepare({"type": "TransformersDummyDataContainer", "load_dataset_config": {"shared_kv": True}})
    with pytest.raises(ValueError, match="nested past_key_values tuples"):
        prepare({"type": "TransformersDummyDataContainer", "load_dataset_config": {"model_framework": "PyTorch"}})
    with pytest.raises(ValueError, match="seq_len"):
        prepare({"type": "TransformersDummyDataContainer", "load_dataset_config": {"seq_len": 0}})
    with pytest.raises(ValueError, match="unknown_key"):
        prepare({"type": "TransformersDummyDataContainer", "load_dataset_config": {"unknown_key": 1}})


# ---------------------------------------------------------------------------------------------- end to end
def kv_onnx_model(path: Path, layers: int, kv_heads: int, head_size: int) -> Path:
    """An ONNX decoder stub with Olive's input names: logits = sum of the cache + the ids, per example."""
    import onnx
    from onnx import TensorProto, helper

    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "t"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["b", "s"]),
    ]
    nodes, sums = [], []
    for i in range(layers):
        for kind in ("key", "value"):
            name = f"past_key_values.{i}.{kind}"
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["b", kv_heads, "p", head_size]))
            nodes.append(helper.make_node("ReduceSum", [name, "axes"], [f"sum_{name}"], keepdims=0))
            sums.append(f"sum_{name}")
    axes = helper.make_tensor("axes", TensorProto.INT64, [3], [1, 2, 3])
    nodes.append(helper.make_node("Sum", sums, ["cache_sum"]))
    graph = helper.make_graph(
        nodes,
        "kv_stub",
        inputs,
        [helper.make_tensor_value_info("cache_sum", TensorProto.FLOAT, ["b"])],
        initializer=[axes],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


RECORDER = textwrap.dedent(
    """
    import json

    import numpy as np


    def recorder(model_path):
        def model(batch):
            with open(model_path, "a") as f:
                f.write(json.dumps({k: [list(np.shape(v)), str(np.asarray(v).dtype)] for k, v in batch.items()}) + "\\n")
            return [0.0] * len(next(iter(batch.values())))
        return model
    """
)


def test_evaluate_an_onnx_decoder_and_python_models_of_two_shapes_on_the_dummy_container(tmp_path):
    gpt2 = model_folder(tmp_path, GPT2, "gpt2")
    llama = model_folder(tmp_path, LLAMA, "llama")
    onnx_file = kv_onnx_model(tmp_path / "stub.onnx", 3, 4, 4)
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    logs = {"py_gpt2": tmp_path / "gpt2.jsonl", "py_llama": tmp_path / "llama.jsonl"}
    python_models = [
        {
            "type": "PythonModel",
            "name": name,
            "user_script": str(script),
            "model_loader": "recorder",
            "model_path": str(log),
            "processor_path": str(folder),
        }
        for (name, log), folder in zip(logs.items(), (gpt2, llama), strict=True)
    ]
    timing = {"warmup_num": 1, "repeat_test_num": 3}
    config = {
        "input_model": {"type": "ONNXModel", "name": "onnx", "model_path": str(onnx_file), "processor_path": str(gpt2)},
        "candidates": python_models,
        "data_configs": [
            {
                "name": "dummy",
                "type": "TransformersTokenDummyDataContainer",
                "load_dataset_config": {"params": {"max_samples": 4, "past_seq_len": 6}},
            }
        ],
        "metrics": [
            {
                "name": "lat",
                "type": "latency",
                "data_config": "dummy",
                "sub_types": [{"name": "avg", "metric_config": timing}],
            }
        ],
        "output_dir": str(tmp_path / "out"),
    }
    result = evaluate(config)
    for name, model in result.models.items():
        assert model.status == "ok", (name, model.error)
        value = model.metrics["lat-avg"].value
        assert value is not None and math.isfinite(value) and value > 0
    # each Python model got inputs sized from its own config (the data is prepared per model config)
    for name, config_dict in (("py_gpt2", GPT2), ("py_llama", LLAMA)):
        calls = [json.loads(line) for line in logs[name].read_text().splitlines()]
        layers, kv_heads, head_size = expected_sizes(config_dict)
        assert len(calls) >= 1 + 3 and all(call == calls[0] for call in calls)  # warm-up and timed runs
        assert calls[0]["input_ids"] == [[1, 1], "int64"]
        assert calls[0]["attention_mask"] == [[1, 7], "int64"]
        assert calls[0]["position_ids"] == [[1, 1], "int64"]
        assert calls[0][f"past_key_values.{layers - 1}.value"] == [[1, kv_heads, 6, head_size], "float32"]
        assert f"past_key_values.{layers}.key" not in calls[0]

"""The contract between a runtime's outputs and the post-process that starts from them: a runtime declares what it
gives (``Runtime.emits``), a post-process what it requires (``requires``) and uses when given (``uses``); a
post-process starting from an output the model's runtime can never give is a config error when the run is planned,
before any model loads. The tiny transformers models are built from configs here, with random weights."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForCTC, AutoTokenizer

from olive_eval import Evaluation, evaluate
from olive_eval.cli import main
from olive_eval.data.batch import Batch
from olive_eval.data.components import registries
from olive_eval.errors import ConfigError
from olive_eval.runtimes.base import Emits, create_runtime, runtime_registry
from olive_eval.runtimes.hf import HfRuntime
from olive_eval.runtimes.hf_config import HfModelConfig
from olive_eval.tasks.base import task_registry
from olive_eval.tasks.call_mode import CallMode
from tests.helpers import write_jsonl
from tests.runtimes import hf_models


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hf_models.build_gpt2(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="module")
def wav2vec2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hf_models.build_wav2vec2(tmp_path_factory.mktemp("wav2vec2"))


PROMPTS = hf_models.sentences(6, seed=3, max_words=5)
GENERATION = {"max_new_tokens": 4, "do_sample": False}


def generation_config(
    tmp_path: Path, folder: Path, output_name: str | None, answers: list[str] | None = None
) -> dict[str, Any]:
    """GPT-2 generating (``decode``) over a few prompts, decode starting from ``output_name`` (its default: None)."""
    rows = [{"text": t, "answer": a} for t, a in zip(PROMPTS, answers or PROMPTS, strict=True)]
    post: dict[str, Any] = {"type": "decode", **({"output_name": output_name} if output_name else {})}
    model = {"type": "HfModel", "name": "gpt2", "model_path": str(folder), "task": "text-generation"}
    return {
        "input_model": {**model, "generation_kwargs": GENERATION},
        "data_configs": [
            {
                "name": "gen",
                "load_dataset_config": {
                    "data_name": "json",
                    "data_files": str(write_jsonl(tmp_path / "p.jsonl", rows)),
                },
                "pre_process_data_config": {
                    "type": "text_generation_huggingface_pre_process",
                    "input_cols": ["text"],
                    "label_col": "answer",
                },
                "post_process_data_config": post,
                "dataloader_config": {"batch_size": 2},
            }
        ],
        "metrics": [{"name": "gen", "type": "accuracy", "data_config": "gen", "sub_types": [{"name": "exact_match"}]}],
        "output_dir": str(tmp_path / "out"),
    }


def never_loaded(tmp_path: Path) -> Path:
    """A model folder that passes the file checks but fails to load: the config error must come first."""
    folder = tmp_path / "never_loaded"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    return folder


def python_baseline(config: dict[str, Any], tmp_path: Path, processor: Path) -> dict[str, Any]:
    """A baseline whose runtime gives the model's own outputs (any name may be there): it passes the check."""
    script = tmp_path / "m.py"
    script.write_text("def load(model_path):\n    return None\n")
    config["input_model"] = {
        "type": "PythonModel",
        "name": "base",
        "model_loader": "load",
        "user_script": str(script),
        "processor_path": str(processor),
    }
    return config


EXPECTED = (
    "post-process 'decode' of data config 'gen' starts from output 'logits', which model 'gpt2' (input_model, "
    "HfModel) does not give generating: it gives sequences, prompt_length"
)


def test_a_post_process_starting_from_an_output_the_runtime_cannot_give_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError) as err:
        evaluate(generation_config(tmp_path, never_loaded(tmp_path), "logits"))
    assert err.value.path == "data_configs[0].post_process_data_config.output_name"
    assert err.value.message == EXPECTED


def test_the_cli_exits_2_with_one_line_naming_the_path(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(generation_config(tmp_path, never_loaded(tmp_path), "logits")))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "data_configs[0].post_process_data_config.output_name" in err[0] and EXPECTED in err[0]


def test_a_candidate_is_checked_too_and_named_by_its_path(tmp_path, gpt2):
    config = generation_config(tmp_path, gpt2, "logits")
    python_baseline(config, tmp_path, gpt2)
    config["candidates"] = [{"type": "HfModel", "name": "gen2", "model_path": str(gpt2), "task": "text-generation"}]
    with pytest.raises(ConfigError) as err:
        evaluate(config)
    assert "model 'gen2' (candidates[0], HfModel)" in err.value.message


def test_a_session_s_candidate_is_checked_before_it_loads(tmp_path, gpt2):
    config = python_baseline(generation_config(tmp_path, gpt2, "logits"), tmp_path, gpt2)
    with Evaluation(config) as session, pytest.raises(ConfigError) as err:
        session.evaluate({"type": "HfModel", "name": "gen3", "model_path": str(never_loaded(tmp_path))})
    assert err.value.path == "data_configs[0].post_process_data_config.output_name"
    assert "model 'gen3' (candidate, HfModel) does not give generating" in err.value.message


@pytest.mark.parametrize("output_name", [None, "sequences"])
def test_the_valid_case_runs_and_decodes_what_generate_gives(tmp_path, gpt2, output_name):
    tokenizer = AutoTokenizer.from_pretrained(gpt2)
    lm = AutoModelForCausalLM.from_pretrained(gpt2).eval()
    direct = []
    for text in PROMPTS:
        ids = torch.tensor([tokenizer(text)["input_ids"]])
        with torch.inference_mode():
            generated = lm.generate(ids, attention_mask=torch.ones_like(ids), **GENERATION)
        direct.append(tokenizer.decode(generated[0, ids.shape[1] :], skip_special_tokens=True).strip())
    assert all(direct)
    answers = [d if i % 3 else "no such answer" for i, d in enumerate(direct)]  # two thirds match
    model = evaluate(generation_config(tmp_path, gpt2, output_name, answers)).models["gpt2"]
    assert model.status == "ok", model.error
    assert model.metrics["gen-exact_match"].value == pytest.approx(4 / 6)


def test_a_forward_pass_gives_the_model_outputs_so_any_named_output_may_be_there():
    """Only the loaded model knows its forward outputs' names (and an ONNX graph or a module names its own)."""
    config = HfModelConfig(type="HfModel", model_path="x", task="text-classification")
    assert not HfRuntime.emits(config, generates=False).lacks("pooled")
    for name in ("ONNXModel", "PyTorchModel", "PythonModel"):
        assert runtime_registry.get(name).emits(None, generates=True) == Emits()


def test_wav2vec2_ctc_adds_exactly_the_declared_outputs_to_the_model_s_own(wav2vec2):
    rng = np.random.default_rng(0)
    lengths = [4000, 2500, 3200]
    values = np.zeros((3, max(lengths)), dtype=np.float32)
    mask = np.zeros((3, max(lengths)), dtype=np.int64)
    for i, n in enumerate(lengths):
        values[i, :n] = rng.normal(0, 0.1, n)
        mask[i, :n] = 1
    config = HfModelConfig(type="HfModel", model_path=str(wav2vec2), task="automatic-speech-recognition")
    runtime = create_runtime(config, "cpu", [])
    columns = {"input_values": values, "attention_mask": mask}
    outputs = runtime.predict(Batch(columns, list(columns), 0, CallMode.FORWARD))
    direct = AutoModelForCTC.from_pretrained(wav2vec2).eval()
    with torch.inference_mode():
        own = direct(input_values=torch.from_numpy(values), attention_mask=torch.from_numpy(mask))
    declared = HfRuntime.emits(config, generates=False)
    assert declared.model_outputs and set(outputs) - set(own.keys()) == set(declared.names) == {"output_lengths"}


def test_gpt2_generating_gives_exactly_the_declared_outputs(gpt2):
    tokenizer = AutoTokenizer.from_pretrained(gpt2)
    encoded = tokenizer(hf_models.sentences(2, seed=1, max_words=4), padding=True, return_tensors="np")
    config = HfModelConfig(type="HfModel", model_path=str(gpt2), task="text-generation", generation_kwargs=GENERATION)
    runtime = create_runtime(config, "cpu", [])
    columns = {k: encoded[k] for k in ("input_ids", "attention_mask")}
    outputs = runtime.predict(Batch(columns, list(columns), 0, CallMode.GENERATE))
    declared = HfRuntime.emits(config, generates=True)
    assert not declared.model_outputs and set(outputs) == set(declared.names)


def test_every_output_a_post_process_uses_is_one_a_runtime_declares():
    """``uses`` and ``emits`` name the same keys: a rename on one side alone fails here."""
    registry = registries["post-process"]
    used = {name for key in registry.names() for name in getattr(registry.get(key), "uses", ())}
    assert used == {"output_lengths", "prompt_length"}
    declared = {
        name
        for task in task_registry.names()
        for generates in (False, True)
        for name in HfRuntime.emits(HfModelConfig(type="HfModel", model_path="x", task=task), generates).names
    }
    assert used <= declared

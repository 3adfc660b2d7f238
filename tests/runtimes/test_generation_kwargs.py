"""generation_kwargs are validated alike on an HfModel and a GenAIModel: a value out of generate()'s bounds is a
config error naming the config file and the JSON path, exit 2, before any model loads; good values still run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from olive_eval.cli import main
from olive_eval.config.loader import load_run_config
from olive_eval.data.batch import Batch
from olive_eval.runtimes.base import create_runtime, runtime_registry
from olive_eval.runtimes.generation_kwargs import generation_kwargs_problem
from olive_eval.runtimes.hf_config import HfModelConfig
from olive_eval.tasks.call_mode import CallMode
from tests.runtimes import hf_models, llm_models

#: (key, bad value, the message at ``...generation_kwargs.<key>``), the same table for both model types.
BAD = [
    ("max_new_tokens", -3, "Input should be greater than or equal to 1"),
    ("max_new_tokens", 0, "Input should be greater than or equal to 1"),
    ("max_new_tokens", "5", 'expected an integer, got "5"'),
    ("max_length", 0, "Input should be greater than or equal to 1"),
    ("min_new_tokens", -1, "Input should be greater than or equal to 0"),
    ("temperature", -1, "Input should be greater than 0"),
    ("temperature", 0, "Input should be greater than 0"),
    ("top_k", -1, "Input should be greater than or equal to 0"),
    ("top_p", 0, "Input should be greater than 0"),
    ("top_p", 1.5, "Input should be less than or equal to 1"),
    ("num_beams", 0, "Input should be greater than or equal to 1"),
    ("repetition_penalty", 0, "Input should be greater than 0"),
    ("do_sample", "yes", 'expected true or false, got "yes"'),
]
#: Values in bounds: both model types take them.
GOOD = {
    "max_new_tokens": 3,
    "max_length": 40,
    "min_new_tokens": 0,
    "do_sample": False,
    "temperature": 0.7,
    "top_k": 0,
    "top_p": 1,
    "num_beams": 1,
    "repetition_penalty": 1.2,
}


def model_entry(kind: str, folder: Path, kwargs: dict[str, Any]) -> dict[str, Any]:
    entry = {"type": kind, "name": "m", "model_path": str(folder), "generation_kwargs": kwargs}
    return {**entry, "task": "text-generation"} if kind == "HfModel" else entry


def run_config(tmp_path: Path, model: dict[str, Any]) -> dict[str, Any]:
    data = llm_models.prompts_data_config(tmp_path / "prompts.jsonl", ["the cat", "a dog runs"], ["x", "y"], 2)
    return {
        "input_model": model,
        "data_configs": [data],
        "metrics": [{"name": "gen", "type": "accuracy", "data_config": "gen", "sub_types": [{"name": "exact_match"}]}],
        "output_dir": str(tmp_path / "out"),
    }


@pytest.fixture
def no_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The model types whose runtime was asked to load a model (none may be, for a config error)."""
    loaded: list[str] = []
    for kind in ("HfModel", "GenAIModel"):
        runtime = runtime_registry.get(kind)

        def load(cls: Any, *args: Any, kind: str = kind, **kwargs: Any) -> Any:
            loaded.append(kind)
            raise AssertionError(f"{kind} loaded a model")

        monkeypatch.setattr(runtime, "load", classmethod(load))
    return loaded


@pytest.mark.parametrize("kind", ["HfModel", "GenAIModel"])
@pytest.mark.parametrize(("key", "value", "message"), BAD)
def test_a_bad_generation_kwarg_is_a_config_error_before_any_model_loads(
    tmp_path, capsys, no_loads, kind, key, value, message
):
    folder = tmp_path / "model"
    folder.mkdir()
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run_config(tmp_path, model_entry(kind, folder, {**GOOD, key: value}))))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"olive-eval: config error: {path}: input_model.generation_kwargs.{key}: {message}"
    assert no_loads == []


@pytest.mark.parametrize(("key", "value", "message"), BAD)
def test_the_public_check_gives_the_same_key_and_message(key, value, message):
    found = generation_kwargs_problem({**GOOD, key: value, "forced_eos_token_id": 2})
    assert found is not None and found[0] == key
    if not message.startswith("expected"):  # the config's one-line error words a wrong type its own way
        assert found[1] == message


def test_good_values_pass_the_public_check():
    assert generation_kwargs_problem({**GOOD, "forced_eos_token_id": 2, "no_repeat_ngram_size": 2}) is None


@pytest.mark.parametrize("kind", ["HfModel", "GenAIModel"])
def test_good_values_are_taken_by_both_model_types(tmp_path, kind):
    folder = tmp_path / "model"
    folder.mkdir()
    if kind == "GenAIModel":
        (folder / "genai_config.json").write_text('{"model": {"type": "llama"}}')
    else:
        (folder / "config.json").write_text("{}")
    run = load_run_config(run_config(tmp_path, model_entry(kind, folder, GOOD)))
    given = run.input_model.generation_kwargs.model_dump(exclude_unset=True)
    assert given == GOOD


def test_an_hf_model_passes_its_generation_kwargs_to_generate_as_given(tmp_path):
    """Good values, and a key of transformers' own that olive-eval does not bound, reach generate() unchanged:
    the predictions are those of generate() called directly with them."""
    folder = hf_models.build_gpt2(tmp_path / "gpt2")
    kwargs = {**GOOD, "max_length": None, "num_beams": 2, "no_repeat_ngram_size": 2}
    config = HfModelConfig(type="HfModel", model_path=str(folder), generation_kwargs=kwargs)
    assert config.generation_kwargs.passed() == kwargs
    tokenizer = AutoTokenizer.from_pretrained(folder)
    ids = torch.tensor([tokenizer("the cat sits on the")["input_ids"]])
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    with torch.inference_mode():
        direct = model.generate(ids, attention_mask=torch.ones_like(ids), **kwargs)
    runtime = create_runtime(config, "cpu", [])
    columns = {"input_ids": ids.numpy(), "attention_mask": torch.ones_like(ids).numpy()}
    batch = Batch(columns, list(columns), call_mode=CallMode.GENERATE)
    assert runtime.predict(batch)["sequences"].tolist() == direct.tolist()

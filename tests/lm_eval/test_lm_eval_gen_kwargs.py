"""An lm_eval metric's ``gen_kwargs`` are checked when the config is read (exit 2, one line naming the file and
the JSON path), the same for every model type: before, each model loaded and then failed inside lm-eval (a
transformers model on an unknown key, which a GenAI model silently ignored)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from olive_eval.cli import main
from olive_eval.lm_eval.options import LmEvalOptions
from tests.lm_eval import lm_tasks
from tests.lm_eval.conftest import hf_model, lm_config


def genai_model(folder: Path) -> dict[str, Any]:
    return {"type": "GenAIModel", "name": "g", "model_path": str(folder)}


@pytest.fixture
def genai_folder(tmp_path: Path) -> Path:
    """A folder a GenAIModel config accepts (only checked to exist before the run; nothing loads it here)."""
    folder = tmp_path / "genai"
    folder.mkdir()
    (folder / "genai_config.json").write_text("{}")
    return folder


@pytest.mark.parametrize(
    ("gen_kwargs", "path", "words"),
    [
        ({"max_gen_toks": 0}, "gen_kwargs.max_gen_toks", "greater than 0"),
        ({"max_new_tokens": -3}, "gen_kwargs.max_new_tokens", "greater than 0"),
        ({"temperature": -0.5}, "gen_kwargs.temperature", "greater than or equal to 0"),
        ({"top_p": 0}, "gen_kwargs.top_p", "greater than 0"),
        ({"top_p": 1.5}, "gen_kwargs.top_p", "less than or equal to 1"),
        ({"top_k": -1}, "gen_kwargs.top_k", "greater than or equal to 0"),
        ({"do_sample": "yes"}, "gen_kwargs.do_sample", "expected"),
        ({"until": ["\n", 2]}, "gen_kwargs.until[1]", "expected a string"),
        ({"max_gen_toks": 8, "max_new_tokens": 8}, "gen_kwargs.max_new_tokens", "give one"),
        ({"num_beamz": 2}, "gen_kwargs.num_beamz", "unknown key"),
        ({"do_sample": True}, "gen_kwargs.temperature", "needs a temperature above 0"),
        ({"do_sample": True, "temperature": 0}, "gen_kwargs.temperature", "needs a temperature above 0"),
    ],
)
@pytest.mark.parametrize("model_type", ["HfModel", "GenAIModel"])
def test_bad_gen_kwargs_are_one_line_naming_the_file_and_path(
    llama, genai_folder, tmp_path, capsys, gen_kwargs, path, words, model_type
):
    tasks = lm_tasks.write_tasks(tmp_path / "tasks", ["x"] * 4, 4)
    model = hf_model(llama) if model_type == "HfModel" else genai_model(genai_folder)
    config = lm_config(model, tasks, tmp_path / "out", metric_config={"gen_kwargs": gen_kwargs})
    file = tmp_path / "run.json"
    file.write_text(json.dumps(config))
    code = main(["--config", str(file), "--quiet", "--no-cache"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.count("\n") == 0
    assert f"{file}: metrics[0].metric_config.{path}:" in err
    assert words in err
    assert not (tmp_path / "out" / "results.json").exists()  # nothing ran


def test_max_new_tokens_reaches_lm_eval_as_max_gen_toks():
    """lm-eval's GenAI backend reads only ``max_gen_toks``; transformers' name is handed on under it."""
    options = LmEvalOptions.model_validate({"tasks": ["t"], "gen_kwargs": {"max_new_tokens": 5, "until": "\n"}})
    assert options.gen_kwargs is not None
    assert options.gen_kwargs.for_lm_eval() == {"max_gen_toks": 5, "until": ["\n"]}
    sampled = LmEvalOptions.model_validate(
        {"tasks": ["t"], "gen_kwargs": {"do_sample": True, "temperature": 0.7, "top_p": 0.9, "top_k": 0}}
    )
    assert sampled.gen_kwargs is not None
    assert sampled.gen_kwargs.for_lm_eval() == {"do_sample": True, "temperature": 0.7, "top_p": 0.9, "top_k": 0}

"""Olive's ``LMEvaluator`` block pasted as the run's evaluator: the lm_eval metric it means, every value its tasks
report as its own sub-type (Olive keeps one per task-metric, all higher-is-better), and Olive's ``size_on_disk``
pseudo-task as a size metric; keys that belong on the model or the run are refused with where to put them."""

from __future__ import annotations

import pytest

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from tests.lm_eval.conftest import hf_model, reference


def test_an_olive_lm_evaluator_block_runs_unchanged(llama, tasks_folder, tmp_path):
    block = {"type": "LMEvaluator", "tasks": ["words_gen", "size_on_disk"], "limit": 10, "batch_size": 2,
             "model_class": "hf"}  # fmt: skip
    config = {"input_model": hf_model(llama), "evaluator": block, "output_dir": str(tmp_path)}
    run = load_run_config(config)
    run.all_metrics[0].metric_config["include_path"] = str(tasks_folder)  # Olive finds tasks by name only
    metrics = evaluate(run).models["base"].metrics
    theirs = reference(llama, tasks_folder, ["words_gen"], limit=10, batch_size=2)
    for filt in ("strict-match", "flexible-extract"):  # Olive would keep one "words_gen-exact_match"
        assert (
            metrics[f"lm_eval-words_gen/exact_match,{filt}"].value
            == theirs["results"]["words_gen"][f"exact_match,{filt}"]
        )
    assert metrics["size_on_disk-bytes"].value > 0


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("device", "gpu", "set the run's device"),
        ("execution_provider", "CUDAExecutionProvider", "execution_providers"),
        ("model_class", "ort", "the model's type"),
        ("max_lenght", 10, "not a key of Olive's LMEvaluator"),
    ],
)
def test_keys_that_belong_elsewhere_are_refused_with_where_they_go(key, value, says):
    config = {"input_model": {"type": "PythonModel", "user_script": "s.py", "model_loader": "f"},
              "evaluator": {"type": "LMEvaluator", "tasks": ["t"], key: value}}  # fmt: skip
    with pytest.raises(ConfigError, match=rf"evaluator\.{key}: .*{says}"):
        load_run_config(config)

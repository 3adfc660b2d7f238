"""Paths inside a sub-type's metric_config (a judge's script, an embedding model's folder) are read beside the
config file, as every other path of a config is, wherever the run starts."""

from __future__ import annotations

import json

import pytest

from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError


def test_relative_paths_in_a_sub_types_metric_config_resolve_beside_the_config(tmp_path, monkeypatch):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "judge.py").write_text("def judge(prompt):\n    return '{}'\n")
    judge = {"user_script": "judge.py", "function": "judge"}
    config = {
        "input_model": {"type": "PythonModel", "user_script": "judge.py", "model_loader": "judge"},
        "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "json", "data_files": "x.jsonl"}}],
        "evaluator": {"metrics": [{"name": "m", "type": "accuracy", "sub_types": [
            {"name": "answer_relevance", "priority": 1, "metric_config": {"judge": judge}},
        ]}]},
    }  # fmt: skip
    (folder / "run.json").write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)  # not the config's folder
    run = load_run_config(folder / "run.json", check_files=False)
    assert run.all_metrics[0].sub_types[0].metric_config["judge"]["user_script"] == str(folder / "judge.py")
    # a script that is not beside the config stays as written, and its error says so
    judge["user_script"] = "not_there.py"
    (folder / "run.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match=r"sub_types\[0\]\.metric_config\.judge.*not_there\.py"):
        load_run_config(folder / "run.json", check_files=False)

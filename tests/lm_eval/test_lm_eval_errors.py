"""Bad input to an lm_eval metric: one line naming the JSON path, before any model loads (exit 2), or the one
model that cannot serve a request type failing with a line that says why."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.errors import ConfigError
from tests.lm_eval.conftest import hf_model, lm_config


def run_cli(config: dict, tmp_path: Path, capsys) -> tuple[int, str]:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    code = main(["--config", str(path), "--quiet", "--no-cache"])
    return code, capsys.readouterr().err.strip()


def test_lm_eval_not_installed_names_the_extra(llama, tasks_folder, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "lm_eval", None)
    code, err = run_cli(lm_config(hf_model(llama), tasks_folder, tmp_path / "out"), tmp_path, capsys)
    assert code == 2, err
    assert err.count("\n") == 0
    assert "metrics[0].type" in err and "pip install 'olive-eval[lm_eval]'" in err


def test_unknown_task_lists_the_local_ones_and_says_built_ins_need_a_download(llama, tasks_folder, tmp_path, capsys):
    config = lm_config(hf_model(llama), tasks_folder, tmp_path / "out", metric_config={"tasks": ["words_mcq"]})
    code, err = run_cli(config, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 0
    assert "metrics[0].metric_config.tasks[0]" in err
    assert "unknown lm-eval task 'words_mcq'" in err and "did you mean 'words_mc'?" in err
    assert "local tasks: " in err and "words_gen" in err and "words_ppl" in err
    assert "--allow-download" in err


def test_a_task_whose_data_is_not_local_fails_at_once(llama, tasks_folder, tmp_path, capsys):
    folder = tmp_path / "hub_tasks"
    folder.mkdir()
    yaml = (tasks_folder / "words_mc.yaml").read_text().replace("task: words_mc", "task: hub_mc")
    yaml = yaml.replace("dataset_path: json", "dataset_path: someone/not_cached_anywhere")
    (folder / "hub_mc.yaml").write_text(yaml)
    config = lm_config(hf_model(llama), folder, tmp_path / "out", metric_config={"tasks": ["hub_mc"]})
    code, err = run_cli(config, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 0
    assert "task 'hub_mc' reads dataset 'someone/not_cached_anywhere'" in err
    assert "not in the local Hugging Face cache" in err and "--allow-download" in err
    # the unknown-task listing marks it as one that needs a download
    config["metrics"][0]["metric_config"]["tasks"] = ["hub_mcx"]
    code, err = run_cli(config, tmp_path, capsys)
    assert "hub_mc (needs a download: someone/not_cached_anywhere)" in err


@pytest.mark.parametrize("limit", [0, -1, -0.5, 2.5])
def test_a_limit_that_is_no_count_or_fraction_is_refused(llama, tasks_folder, tmp_path, capsys, limit):
    config = lm_config(hf_model(llama), tasks_folder, tmp_path / "out", metric_config={"limit": limit})
    code, err = run_cli(config, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 0
    assert "metrics[0].metric_config.limit" in err
    assert ("positive" in err) if limit <= 0 else ("whole" in err)


def test_a_sub_type_the_tasks_do_not_produce_lists_those_they_do(llama, tasks_folder, tmp_path, capsys):
    subs = [{"name": "words_mc/acc", "priority": 1}, {"name": "words_gen/exact_match,lenient"}]
    code, err = run_cli(lm_config(hf_model(llama), tasks_folder, tmp_path / "out", sub_types=subs), tmp_path, capsys)
    assert code == 2 and err.count("\n") == 0
    assert "metrics[0].sub_types[1].name" in err
    assert "do not produce sub-type 'words_gen/exact_match,lenient'" in err
    for produced in (
        "words_gen/exact_match,strict-match",
        "words_gen/exact_match,flexible-extract",
        "words_ppl/bits_per_byte,none",
        "words_mc/acc_norm,none",
    ):
        assert produced in err


def test_olive_task_metric_names_work_unless_two_filters_give_them(llama, tasks_folder, tmp_path, capsys):
    subs = [{"name": "words_mc-acc", "priority": 1}, {"name": "words_ppl-word_perplexity"}]
    options = {"tasks": ["words_mc", "words_ppl"]}  # the tasks those names are of (words_gen: the refusal below)
    result = evaluate(lm_config(hf_model(llama), tasks_folder, tmp_path / "ok", sub_types=subs, metric_config=options))
    metrics = result.models["base"].metrics
    assert metrics["lm-words_ppl-word_perplexity"].higher_is_better is False
    assert metrics["lm-words_mc-acc"].value is not None
    subs = [{"name": "words_gen-exact_match"}]
    code, err = run_cli(lm_config(hf_model(llama), tasks_folder, tmp_path / "out", sub_types=subs), tmp_path, capsys)
    assert code == 2 and "metrics[0].sub_types[0].name" in err
    assert "fits 2 filters; name one: words_gen/exact_match,strict-match, words_gen/exact_match,flexible-extract" in err


def test_a_model_type_that_serves_no_lm_eval_requests_is_a_config_error(llama, tasks_folder, tmp_path):
    import numpy as np

    from tests.helpers import linear_onnx

    onnx = linear_onnx(tmp_path / "m.onnx", np.ones((2, 2), dtype=np.float32))
    config = lm_config(hf_model(llama), tasks_folder, tmp_path / "out")
    config["candidates"] = [{"type": "ONNXModel", "name": "onnx", "model_path": str(onnx)}]
    with pytest.raises(ConfigError) as caught:
        evaluate(config)
    message = str(caught.value)
    assert "metrics[0].metric_config.tasks" in message
    assert "model 'onnx' cannot serve lm-eval's" in message and "ONNXModel, at candidates[0]" in message
    assert "HfModel (task text-generation), GenAIModel and PythonModel" in message


def test_sub_types_take_no_metric_config_and_other_types_take_no_metric_level_one(tmp_path):
    from olive_eval.config import load_run_config

    base = {"input_model": {"type": "PythonModel", "user_script": "s.py", "model_loader": "f"}}
    bad = {
        **base,
        "metrics": [
            {
                "name": "lm",
                "type": "lm_eval",
                "metric_config": {"tasks": ["t"]},
                "sub_types": [{"name": "t/acc", "metric_config": {"x": 1}}],
            }
        ],
    }
    with pytest.raises(ConfigError, match=r"sub_types\[0\]\.metric_config.*metric's own metric_config"):
        load_run_config(bad)
    bad = {
        **base,
        "metrics": [
            {
                "name": "acc",
                "type": "accuracy",
                "metric_config": {"tasks": ["t"]},
                "sub_types": [{"name": "accuracy_score"}],
            }
        ],
    }
    with pytest.raises(ConfigError, match=r"metrics\[0\]\.metric_config.*take no metric-level metric_config"):
        load_run_config(bad)
    with pytest.raises(ConfigError, match=r"metrics\[0\]\.sub_types.*at least one sub-type"):
        load_run_config({**base, "metrics": [{"name": "acc", "type": "accuracy"}]})
    with pytest.raises(ConfigError, match=r"metrics\[0\]\.metric_config\.tasks"):
        load_run_config({**base, "metrics": [{"name": "lm", "type": "lm_eval", "metric_config": {"tasks": []}}]})


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"filters": [{"type": "lowercase"}]}, "filters"),
        ({"data_config": "somewhere"}, "data_config"),
        ({"repeats": 2, "reduction": "mean"}, "repeats"),
        ({"sample_log_num": 3}, "sample_log_num"),
    ],
)
def test_data_options_of_other_metrics_are_refused_not_ignored(extra, key):
    from olive_eval.config import load_run_config

    config = {
        "input_model": {"type": "PythonModel", "user_script": "s.py", "model_loader": "f"},
        "metrics": [{"name": "lm", "type": "lm_eval", "metric_config": {"tasks": ["t"]}, **extra}],
    }
    with pytest.raises(ConfigError, match=rf"metrics\[0\]\.{key}: lm_eval metrics take no {key}: .*task's YAML"):
        load_run_config(config)

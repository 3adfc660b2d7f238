"""A key given twice in one JSON object is refused: JSON readers keep the last value and drop the first."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from olive_eval.cli import main
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError

TWICE = "is given twice in the same object (JSON readers keep the last one and silently drop the first); give it once"


@pytest.fixture
def config(toy) -> dict:
    return toy.config(
        {"cand": 0.1},
        [
            {
                "name": "acc",
                "type": "accuracy",
                "data_config": "toy",
                "sub_types": [{"name": "accuracy_score", "priority": 1}, {"name": "f1_score", "priority": 2}],
            }
        ],
    )


def written(toy, text: str):
    path = toy.root / "run.json"
    path.write_text(text)
    return path


def error_of(path) -> str:
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    return str(info.value)


def test_a_second_metrics_list_does_not_silently_replace_the_first(toy, config):
    latency = [{"name": "lat", "type": "latency", "data_config": "toy", "sub_types": [{"name": "avg"}]}]
    path = written(toy, json.dumps(config)[:-1] + f', "metrics": {json.dumps(latency)}}}')
    assert error_of(path) == f"{path}: metrics: 'metrics' {TWICE}"


@pytest.mark.parametrize(
    ("original", "doubled", "where"),
    [
        ('"name": "f1_score"', '"name": "f1_score", "name": "precision"', "metrics[0].sub_types[1].name"),
        ('"split": "train"', '"split": "train", "split": "train"', "data_configs[0].load_dataset_config.split"),
        ('"name": "cand"', '"name": "cand", "name": "cand2"', "candidates[0].name"),
    ],
    ids=["sub-type-name", "same-value-twice", "candidate-name"],
)
def test_a_key_repeated_at_any_depth_is_named_with_its_path(toy, config, original, doubled, where):
    text = json.dumps(config)
    assert text.count(original) == 1
    path = written(toy, text.replace(original, doubled))
    assert error_of(path) == f"{path}: {where}: '{where.rsplit('.', 1)[-1]}' {TWICE}"


def test_the_cli_exits_2_with_one_line_and_a_traceback_only_with_debug(toy, config, capsys):
    path = written(toy, json.dumps(config).replace('"name": "f1_score"', '"name": "f1_score", "name": "recall"'))
    assert main(["--config", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"olive-eval: config error: {path}: metrics[0].sub_types[1].name: 'name' {TWICE}"
    quiet = subprocess.run([sys.executable, "-m", "olive_eval", "--config", str(path)], capture_output=True, text=True)
    assert quiet.returncode == 2 and quiet.stderr.strip() == err
    debug = subprocess.run(
        [sys.executable, "-m", "olive_eval", "--config", str(path), "--debug"], capture_output=True, text=True
    )
    assert debug.returncode != 0 and "Traceback" in debug.stderr

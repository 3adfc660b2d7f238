"""The command line: exit codes, one-line errors without tracebacks, the schema command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from olive_eval.cli import main, schema_json

REPO = Path(__file__).resolve().parents[1]


def write(path: Path, config: dict) -> Path:
    path.write_text(json.dumps(config))
    return path


def accuracy(goal_value: float = 0.5) -> dict:
    return {
        "name": "acc",
        "type": "accuracy",
        "data_config": "toy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": goal_value}}
        ],
    }


def test_success_exits_0_and_prints_the_table(toy, capsys):
    path = write(toy.root / "run.json", toy.config({"cand": 0.05}, [accuracy()]))
    assert main(["--config", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "acc-accuracy_score" in out and "base (baseline)" in out and "Best candidate: cand" in out


def test_failed_candidate_exits_1(toy, capsys):
    config = toy.config({"cand": 0.05}, [accuracy()])
    config["candidates"][0]["inference_settings"] = {"execution_provider": "FooExecutionProvider"}
    assert main(["--config", str(write(toy.root / "run.json", config)), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "FAILED cand:" in out and "FooExecutionProvider" in out


def test_no_candidate_meeting_goals_says_which_goal_was_missed(toy, capsys):
    path = write(toy.root / "run.json", toy.config({"cand": 3.0}, [accuracy(0.0)]))
    assert main(["--config", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "No candidate meets every goal." in out
    assert "cand: acc-accuracy_score" in out and "missed by" in out


def test_bad_config_exits_2_with_one_line(toy, capsys):
    config = toy.config({}, [accuracy()])
    config["metrics"][0]["subtypes"] = config["metrics"][0].pop("sub_types")
    path = write(toy.root / "run.json", config)
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"olive-eval: config error: {path}: metrics[0].subtypes: unknown key; did you mean 'sub_types'?"


def test_bad_config_in_a_subprocess_has_no_traceback_unless_debug(tmp_path):
    path = tmp_path / "run.json"
    path.write_text('{"input_model": {"type": "ONNXModel", "model_path": "m.onnx"},,}')
    quiet = subprocess.run([sys.executable, "-m", "olive_eval", "--config", str(path)], capture_output=True, text=True)
    assert quiet.returncode == 2
    assert quiet.stderr.strip().count("\n") == 0 and "Traceback" not in quiet.stderr
    assert "malformed JSON at line 1, column" in quiet.stderr
    debug = subprocess.run(
        [sys.executable, "-m", "olive_eval", "--config", str(path), "--debug"], capture_output=True, text=True
    )
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_missing_config_flag_and_missing_file(tmp_path, capsys):
    assert main([]) == 2
    assert main(["--config", str(tmp_path / "nope.json")]) == 2
    assert "config file not found" in capsys.readouterr().err


def test_schema_command_matches_the_shipped_schema_file(capsys):
    assert main(["schema"]) == 0
    printed = capsys.readouterr().out
    assert printed == schema_json()
    shipped = (REPO / "configs" / "run.schema.json").read_text()
    assert json.loads(shipped) == json.loads(printed), "regenerate: olive-eval schema > configs/run.schema.json"


@pytest.mark.parametrize(
    "config", sorted(p.name for p in (REPO / "configs").glob("*.json") if p.name != "run.schema.json")
)
def test_shipped_configs_validate(config):
    from olive_eval.config import load_run_config

    load_run_config(REPO / "configs" / config)

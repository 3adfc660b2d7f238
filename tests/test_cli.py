"""The command line: exit codes, one-line errors without tracebacks, the schema command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from olive_eval.cli import main
from olive_eval.config import RunConfig

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
    command = [sys.executable, "-m", "olive_eval", "--config", str(path)]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    both = [subprocess.Popen(c, **pipes) for c in (command, [*command, "--debug"])]  # the two run at once
    (quiet, quiet_code), (debug, debug_code) = [(p.communicate(timeout=300)[1], p.returncode) for p in both]
    assert quiet_code == 2
    assert quiet.strip().count("\n") == 0 and "Traceback" not in quiet
    assert "malformed JSON at line 1, column" in quiet
    assert debug_code != 0 and "Traceback" in debug


def test_missing_config_flag_and_missing_file(tmp_path, capsys):
    assert main([]) == 2
    assert main(["--config", str(tmp_path / "nope.json")]) == 2
    assert "config file not found" in capsys.readouterr().err


def test_schema_command_matches_the_shipped_schema_file(capsys):
    assert main(["schema"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed) == RunConfig.model_json_schema(by_alias=True)  # the schema the validator uses
    assert json.loads(printed)["properties"]["input_model"]["description"].startswith("The baseline")
    # the shipped file holds the built-in components only; this process has test-registered ones too
    fresh = subprocess.run([sys.executable, "-m", "olive_eval", "schema"], capture_output=True, text=True, check=True)
    shipped = (REPO / "configs" / "run.schema.json").read_text()
    assert json.loads(shipped) == json.loads(fresh.stdout), "regenerate: olive-eval schema > configs/run.schema.json"
    models = json.loads(fresh.stdout)["properties"]["input_model"]["oneOf"]
    assert {m["properties"]["type"]["const"] for m in models} == {
        "ONNXModel",
        "PyTorchModel",
        "HfModel",
        "PythonModel",
        "GenAIModel",
    }


# Configs whose model files a script builds (not committed); .ci/run builds them and runs the config.
BUILT_BY_SCRIPT = {
    "minilm.json": "examples/minilm/make_models.py",
    "fidelity_minilm.json": "examples/minilm/make_models.py",
    "quantization_sweep.json": "examples/minilm/make_models.py",
    "quantization_sweep_sequential.json": "examples/minilm/make_models.py",
    "speech.json": "examples/speech/make_clips.py",
    "detection.json": "examples/detection/make_data.py",
    "llm.json": "examples/llm/build.py",
    "lm_eval.json": "examples/llm/build.py",
}


@pytest.mark.parametrize(
    "config", sorted(p.name for p in (REPO / "configs").glob("*.json") if p.name != "run.schema.json")
)
def test_shipped_configs_validate(config):
    from olive_eval.config import load_run_config

    # the schema always; the files it names too, unless a script builds them (checked by .ci/run then)
    load_run_config(REPO / "configs" / config, check_files=config not in BUILT_BY_SCRIPT)


def test_configs_with_built_models_name_a_script_that_exists():
    assert all((REPO / script).is_file() for script in BUILT_BY_SCRIPT.values())
    assert all((REPO / "configs" / name).is_file() for name in BUILT_BY_SCRIPT)


# ---------------------------------------------------------------------------- issue 6, item 25: confusing output
def test_baseline_only_run_says_there_is_nothing_to_rank(toy, capsys):
    path = write(toy.root / "run.json", toy.config({}, [accuracy()]))
    assert main(["--config", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "No candidates to rank: only the baseline was evaluated." in out
    assert "No candidate meets every goal." not in out


def test_the_baseline_is_not_checked_against_itself(toy):
    path = write(toy.root / "run.json", toy.config({"cand": 0.05}, [accuracy(0.0)]))
    assert main(["--config", str(path), "--quiet"]) == 0
    written = json.loads((toy.root / "out" / "results.json").read_text())
    base = written["models"]["base"]
    assert base["goals_met"] is None and base["metrics"]["acc-accuracy_score"]["goal"] is None
    assert written["models"]["cand"]["metrics"]["acc-accuracy_score"]["goal"]["threshold"] is not None


def test_progress_names_scoring_apart_from_inference(toy, tmp_path, capsys):
    script = tmp_path / "slow.py"
    script.write_text("def score(model_output, targets):\n    return 1.0\n")
    custom = {
        "name": "custom",
        "type": "custom",
        "data_config": "toy",
        "sub_types": [{"name": "s"}],
        "user_config": {"user_script": str(script), "metric_func": "score"},
    }
    path = write(toy.root / "run.json", toy.config({}, [custom]))
    assert main(["--config", str(path)]) == 0
    lines = capsys.readouterr().err.splitlines()
    inference = next(i for i, line in enumerate(lines) if "base: predicting on 'toy'" in line)
    assert "base: finishing the scores of 1 metric(s) on 'toy'" in lines[inference + 1]


def test_wide_characters_keep_the_table_aligned(toy, capsys):
    from olive_eval.report.console import display_width

    config = toy.config({"cand": 0.05}, [accuracy()])
    config["input_model"]["name"] = "基线模型一"  # a wide name in a middle column shifts the columns after it
    path = write(toy.root / "run.json", config)
    assert main(["--config", str(path), "--quiet"]) == 0
    table = capsys.readouterr().out.split("\n\n")[0].splitlines()
    rule = table[1]
    starts = [i for i in range(len(rule)) if rule[i] == "-" and (i == 0 or rule[i - 1] == " ")]
    for row in (table[0], table[2]):  # the header (wide name) and a row below it (ASCII)
        cells = [c for c in row.split("  ") if c.strip()]
        columns = [display_width(row[: row.index(c)]) for c in cells]
        assert columns == starts, row


def test_a_config_given_without_the_flag_gets_told_how(toy, capsys):
    path = write(toy.root / "run.json", toy.config({}, [accuracy()]))
    assert main([str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"olive-eval: error: give the config with --config: olive-eval --config {path}"
    )
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'; commands: run, report, schema, olive-script" in capsys.readouterr().err


def test_version_flag():
    from importlib.metadata import version

    done = subprocess.run([sys.executable, "-m", "olive_eval", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == f"olive-eval {version('olive-eval')}"


# ---------------------------------------------------------------------------- issue 16, item 3: a process that dies
CRASHING_MODEL = """
import os


def load(model_path):
    def predict(batch):
        if os.environ.get("CRASH"):
            os._exit(3)  # what a segfault in a custom op looks like from here: no exception, no cleanup
        return [0] * len(next(iter(batch.values())))

    return predict
"""


def test_a_model_that_kills_the_process_is_named_in_results_json_and_by_the_next_run(toy):
    script = toy.root / "crash.py"
    script.write_text(CRASHING_MODEL)
    config = toy.config({"after": 0.1}, [accuracy()])
    crashing = {"type": "PythonModel", "name": "digits_int8", "user_script": str(script), "model_loader": "load"}
    config["candidates"].insert(0, crashing)
    path = write(toy.root / "run.json", config)
    out = toy.root / "out"

    def run(crash: bool) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "CRASH"} | ({"CRASH": "1"} if crash else {})
        command = [sys.executable, "-m", "olive_eval", "--config", str(path)]
        return subprocess.run(command, capture_output=True, text=True, env=env)

    died = run(crash=True)
    assert died.returncode == 3
    models = json.loads((out / "results.json").read_text())["models"]
    assert {name: m["status"] for name, m in models.items()} == {
        "base": "ok",
        "digits_int8": "running",
        "after": "pending",
    }
    assert [(models[n]["goals_met"], models[n]["pareto"]) for n in ("digits_int8", "after")] == [(None, None)] * 2

    note = f"the previous run into {out} ended while evaluating 'digits_int8' (the process died: os._exit, a crash or a kill)"
    again = run(crash=False)
    assert again.returncode == 0, again.stderr
    assert [line.split("] ", 1)[1] for line in again.stderr.splitlines() if note in line] == [f"warning: {note}"]
    written = json.loads((out / "results.json").read_text())
    assert written["environment"]["previous_run"] == note
    assert {m["status"] for m in written["models"].values()} == {"ok"}

    clean = run(crash=False)  # the run before this one closed properly: nothing to say
    assert clean.returncode == 0 and "previous run" not in clean.stderr
    assert "previous_run" not in json.loads((out / "results.json").read_text())["environment"]

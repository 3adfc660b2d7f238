"""User code cannot break the run or the tool (issue 6, items 1-4)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import onnxruntime as ort
import pytest

from olive_eval import evaluate
from olive_eval.api import RunInterrupted
from olive_eval.cli import main


def custom_metric(script, func: str = "evaluate_func", name: str = "f", **user_config) -> dict:
    return {
        "name": "c",
        "type": "custom",
        "sub_types": [{"name": "s", "priority": 1, "higher_is_better": True}],
        "user_config": {"user_script": str(script), func: name, **user_config},
    }


# ------------------------------------------------------------------------------ item 1: kwarg names
@pytest.mark.parametrize("func", ["evaluate_func", "metric_func"])
def test_user_kwargs_reach_the_function_whatever_their_names(toy, tmp_path, func):
    script = tmp_path / "s.py"
    script.write_text(
        textwrap.dedent(
            """
            def f(*args, metric, model_name, which, args_=None, kwargs=None, **rest):
                return float(len(metric) + len(model_name) + len(which) + sum(rest.values()))
            """
        )
    )
    kwargs = {"metric": "ab", "model_name": "cde", "which": "f", "kwargs": 1, "extra": 10}
    config = toy.config({}, [custom_metric(script, func, **{f"{func}_kwargs": kwargs})])
    result = evaluate(config)
    assert result.models["base"].status == "ok", result.models["base"].error
    assert result.models["base"].metrics["c-s"].value == 2 + 3 + 1 + 10


# ------------------------------------------------------------------------------ item 2: sys.exit
def test_sys_exit_in_evaluate_func_fails_only_that_model(toy, tmp_path):
    script = tmp_path / "exits.py"
    script.write_text(
        "import sys\n"
        "def f(model, device, execution_providers):\n"
        "    if 'cand' in str(model.model_path):\n"
        "        sys.exit(3)\n"
        "    return 1.0\n"
    )
    result = evaluate(toy.config({"cand": 0.1}, [custom_metric(script)]))
    assert result.models["base"].status == "ok"
    assert result.models["cand"].status == "failed"
    assert result.models["cand"].metrics["c-s"].error == (
        f"custom metric 'c' on model 'cand': evaluate_func 'f' called sys.exit(3) (at {script}:4)"
    )


def test_sys_exit_at_import_time_is_a_config_error_naming_the_script(toy, tmp_path, capsys):
    script = tmp_path / "exits_on_import.py"
    script.write_text("import sys\nsys.exit('no GPU here')\ndef f(model, device, execution_providers):\n    return 1\n")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(toy.config({}, [custom_metric(script)])))
    assert main(["--config", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"olive-eval: config error: {path}: metrics[0].user_config.user_script: user_script {script} failed to "
        f"import: it called sys.exit('no GPU here') (at {script}:2)"
    )


def test_sys_exit_on_the_baseline_keeps_a_results_file(toy, tmp_path):
    script = tmp_path / "exits.py"
    script.write_text("import sys\ndef f(model, device, execution_providers):\n    sys.exit(0)\n")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(toy.config({}, [custom_metric(script)])))
    done = subprocess.run(
        [sys.executable, "-m", "olive_eval", "--config", str(path), "--quiet"], capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr
    written = json.loads((toy.root / "out" / "results.json").read_text())
    assert written["models"]["base"]["status"] == "failed"
    assert "called sys.exit(0)" in written["models"]["base"]["error"]


def test_ctrl_c_still_stops_the_run_and_keeps_what_finished(toy, tmp_path, capsys):
    script = tmp_path / "interrupts.py"
    script.write_text(
        "def f(model, device, execution_providers):\n"
        "    if 'cand' in str(model.model_path):\n"
        "        raise KeyboardInterrupt\n"
        "    return 1.0\n"
    )
    config = toy.config({"cand": 0.1, "later": 0.2}, [custom_metric(script)])
    with pytest.raises(RunInterrupted) as info:
        evaluate(config)
    assert info.value.model == "cand"
    written = json.loads((toy.root / "out" / "results.json").read_text())
    assert {n: m["status"] for n, m in written["models"].items()} == {
        "base": "ok",
        "cand": "interrupted",
        "later": "pending",
    }
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    assert main(["--config", str(path), "--quiet"]) == 130
    results = toy.root / "out" / "results.json"
    assert capsys.readouterr().err.strip() == (
        f"olive-eval: interrupted while evaluating 'cand'; {results} holds the 1 model(s) finished so far: base"
    )


# ------------------------------------------------------------------------------ item 16: interrupt message
def test_interrupt_during_the_baseline_says_nothing_finished(toy, tmp_path, capsys):
    script = tmp_path / "interrupts.py"
    script.write_text("def f(model, device, execution_providers):\n    raise KeyboardInterrupt\n")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(toy.config({"cand": 0.1}, [custom_metric(script)])))
    assert main(["--config", str(path), "--quiet"]) == 130
    results = toy.root / "out" / "results.json"
    assert capsys.readouterr().err.strip() == (
        f"olive-eval: interrupted while evaluating 'base'; no model finished; {results} records the run as interrupted"
    )
    assert json.loads(results.read_text())["models"]["base"]["status"] == "interrupted"


# ------------------------------------------------------------------------------ item 3: our own bugs
def test_an_internal_error_says_what_and_where_and_debug_prints_the_traceback(toy, tmp_path, monkeypatch, capsys):
    from olive_eval.engine.work.prediction_pass import PredictionPass

    def broken(self, ctx):
        return {}["missing"]

    monkeypatch.setattr(PredictionPass, "run", broken)
    metric = {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}
    result = evaluate(toy.config({}, [metric]))
    error = result.models["base"].metrics["acc-accuracy_score"].error
    assert error == f"unexpected KeyError: 'missing' (at {__file__}:{broken.__code__.co_firstlineno + 1})"
    path = tmp_path / "run.json"
    path.write_text(json.dumps(toy.config({}, [metric])))
    assert main(["--config", str(path), "--quiet", "--debug"]) == 1
    err = capsys.readouterr().err
    assert "--- base: traceback of a failure" in err and "Traceback (most recent call last)" in err
    assert 'return {}["missing"]' in err


# ------------------------------------------------------------------------------ item 4: Olive's model handler
OLIVE_STYLE_SCRIPT = '''
import numpy as np
import onnxruntime as ort


def eval_accuracy(model, device, execution_providers, data_file):
    """Written the way Olive's docs write an evaluate_func: the handler makes and runs the session."""
    import json
    rows = [json.loads(line) for line in open(data_file)]
    x = np.asarray([r["x"] for r in rows], dtype=np.float32)
    y = np.asarray([r["label"] for r in rows])
    session = model.prepare_session(inference_settings=None, device=device, execution_providers=execution_providers)
    assert isinstance(session, ort.InferenceSession)
    logits = model.run_session(session, {"x": x})[0]
    return float(np.mean(np.argmax(logits, axis=1) == y))


def eval_settings(model, device, execution_providers):
    session = model.prepare_session(
        inference_settings={"session_options": {"intra_op_num_threads": 1}},
        device=device,
        execution_providers=execution_providers,
        rank=None,
    )
    assert session is not model.session  # other settings: a session of its own
    same = model.prepare_session(device=device, execution_providers=execution_providers)
    assert same is model.session  # nothing differs: the loaded session is reused
    names = model.run_session(session, {"x": np.zeros((2, 8), np.float32)}, output_names=["logits"])
    return {"outputs": float(len(names)), "providers": float(len(model.inference_settings["execution_provider"]))}
'''


def test_an_olive_user_script_runs_unchanged(toy, tmp_path):
    script = tmp_path / "olive_user_script.py"
    script.write_text(OLIVE_STYLE_SCRIPT)
    metrics = [
        {
            "name": "accuracy",
            "type": "custom",
            "sub_types": [{"name": "accuracy_custom", "priority": 1, "higher_is_better": True}],
            "user_config": {
                "user_script": str(script),
                "evaluate_func": "eval_accuracy",
                "evaluate_func_kwargs": {"data_file": str(toy.data_file)},
            },
        },
        {
            "name": "settings",
            "type": "custom",
            "sub_types": [{"name": "outputs"}, {"name": "providers"}],
            "user_config": {"user_script": str(script), "evaluate_func": "eval_settings"},
        },
    ]
    result = evaluate(toy.config({"cand": 0.5}, metrics))
    for name in ("base", "cand"):
        model = result.models[name]
        assert model.status == "ok", model.error
        session = ort.InferenceSession(str(toy.root / f"{name}.onnx"), providers=["CPUExecutionProvider"])
        logits = session.run(None, {"x": toy.x})[0]
        assert model.metrics["accuracy-accuracy_custom"].value == float(np.mean(logits.argmax(1) == toy.labels))
        assert model.metrics["settings-outputs"].value == 1.0 and model.metrics["settings-providers"].value == 1.0


def test_torch_models_offer_the_handler_too(toy, tmp_path):
    import torch

    from tests.engine.test_mixed_runtimes import Linear

    scripted = toy.root / "linear.pt"
    torch.jit.script(Linear(toy.weights).eval()).save(str(scripted))
    script = tmp_path / "torch_script.py"
    script.write_text(
        "import torch\n"
        "def f(model, device, execution_providers):\n"
        "    module = model.prepare_session(device=device, execution_providers=execution_providers)\n"
        "    out = model.run_session(module, torch.ones(2, 8))\n"
        "    return float(out.shape[1])\n"
    )
    config = toy.config({}, [custom_metric(script)])
    config["input_model"] = {"type": "PyTorchModel", "name": "torch", "model_path": str(scripted)}
    result = evaluate(config)
    assert result.models["torch"].status == "ok", result.models["torch"].error
    assert result.models["torch"].metrics["c-s"].value == 3.0

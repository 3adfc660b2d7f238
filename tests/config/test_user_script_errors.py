"""A user_script that cannot be imported: the error names the user's file and line, never importlib's frames."""

from __future__ import annotations

import json

import pytest

from olive_eval.cli import main


def custom_metric(script) -> dict:
    return {
        "name": "c",
        "type": "custom",
        "sub_types": [{"name": "s", "priority": 1, "higher_is_better": True}],
        "user_config": {"user_script": str(script), "evaluate_func": "f"},
    }


def config_error(toy, capsys, config: dict) -> str:
    """The CLI's stderr for ``config``, after checking it exits 2 with one line and no traceback."""
    path = toy.root / "run.json"
    path.write_text(json.dumps(config))
    assert main(["--config", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and "<frozen" not in err
    prefix = f"olive-eval: config error: {path}: "
    assert err.startswith(prefix)
    return err.removeprefix(prefix)


def null_byte_error() -> str:
    try:
        compile("x = 1\x00\n", "script", "exec")
    except (SyntaxError, ValueError) as exc:
        return type(exc).__name__
    raise AssertionError("a null byte compiled")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x = 1\ndef f(:\n    return 1\n", "SyntaxError: invalid syntax in 'def f(:' (at {script}:2)"),
        (
            "def f(model, device, execution_providers):\nreturn 1\n",
            "IndentationError: expected an indented block after function definition on line 1 in 'return 1' "
            "(at {script}:2)",
        ),
        ("x = 1\x00\n", "SyntaxError: source code string cannot contain null bytes (at {script})"),
        ("import os\n\nfoo = undefined_name + 1\n", "NameError: name 'undefined_name' is not defined (at {script}:3)"),
    ],
    ids=["syntax", "indentation", "null-byte", "name-error-at-import"],
)
def test_an_import_failure_names_the_script_and_line(toy, tmp_path, capsys, source, expected):
    script = tmp_path / "metric_script.py"
    script.write_text(source)
    err = config_error(toy, capsys, toy.config({}, [custom_metric(script)]))
    if "\x00" in source:  # a SyntaxError on newer Pythons, a ValueError on 3.11.2: as this one
        expected = expected.replace("SyntaxError", null_byte_error())
    assert err == (
        f"metrics[0].user_config.user_script: user_script {script} failed to import: it raised "
        + expected.format(script=script)
    )


def test_a_syntax_error_in_a_module_the_script_imports_names_that_module(toy, tmp_path, capsys):
    (tmp_path / "broken_neighbour.py").write_text("scale = 2\nz = (\n")
    script = tmp_path / "metric_script.py"
    script.write_text("import broken_neighbour\n")
    metric = custom_metric(script)
    metric["user_config"]["script_dir"] = str(tmp_path)
    err = config_error(toy, capsys, toy.config({}, [metric]))
    assert err.endswith(
        f"it raised SyntaxError: '(' was never closed in 'z = (' (at {tmp_path / 'broken_neighbour.py'}:2)"
    )


def test_a_syntax_error_in_a_python_models_loader_script(toy, tmp_path, capsys):
    script = tmp_path / "loader.py"
    script.write_text("def load(model_path)\n    return None\n")
    config = toy.config({}, [{"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]}])
    config["input_model"] = {"type": "PythonModel", "name": "py", "user_script": str(script), "model_loader": "load"}
    err = config_error(toy, capsys, config)
    assert err == (
        f"input_model.model_loader: user_script {script} failed to import: it raised SyntaxError: expected ':' in "
        f"'def load(model_path)' (at {script}:1)"
    )

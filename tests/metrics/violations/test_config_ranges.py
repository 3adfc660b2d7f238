"""Violation settings out of range are config errors: thresholds outside [0, 1], a ``zero_division`` other than 0,
1 or null. In a run config: exit 2, one line naming the file and the JSON path, before any model loads; from
Python: a ValueError from ``get_metric`` and ``compute_metric``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from olive_eval import compute_metric
from olive_eval.cli import main
from olive_eval.metrics import get_metric

BAD = [
    ("overlap_threshold", -1, "must be between 0 and 1, got -1"),
    ("rule_threshold", -1, "must be between 0 and 1, got -1"),
    ("match_threshold", 1.5, "must be between 0 and 1, got 1.5"),
    ("rule_threshold", 1.01, "must be between 0 and 1, got 1.01"),
    ("zero_division", 7, "must be 0, 1 or null, got 7"),
    ("zero_division", 0.5, "must be 0, 1 or null, got 0.5"),
    ("zero_division", -1, "must be 0, 1 or null, got -1"),
]

LOADER = """
from pathlib import Path

def load(path):
    Path(__file__).with_name("loaded").write_text("the model was loaded")
    return lambda batch: [[] for _ in batch["text"]]
"""


def run_config(folder: Path, metric_config: dict) -> Path:
    (folder / "docs.jsonl").write_text(json.dumps({"text": "short text", "violations": []}) + "\n")
    (folder / "checker.py").write_text(LOADER)
    config = {
        "input_model": {"type": "PythonModel", "name": "m", "user_script": "checker.py", "model_loader": "load"},
        "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "json", "data_files": "docs.jsonl"},
                          "pre_process_data_config": {"type": "skip_pre_process", "input_cols": ["text"],
                                                      "label_col": "violations"}}],
        "metrics": [{"name": "v", "type": "accuracy", "data_config": "d", "sub_types": [
            {"name": "std_f1", "priority": 1}, {"name": "std_precision", "metric_config": metric_config}]}],
        "output_dir": str(folder / "out"),
    }  # fmt: skip
    path = folder / "run.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize(("key", "bad", "message"), BAD)
def test_a_setting_out_of_range_is_a_config_error_before_any_model_loads(tmp_path, capsys, key, bad, message):
    path = run_config(tmp_path, {key: bad})
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"olive-eval: config error: {path}: metrics[0].sub_types[1].metric_config.{key}: {message}"
    assert not (tmp_path / "loaded").exists()


def test_settings_at_the_ends_of_their_ranges_run(tmp_path, capsys):
    edges = {"overlap_threshold": 0, "rule_threshold": 1, "match_threshold": 0.0, "zero_division": 1}
    assert main(["--config", str(run_config(tmp_path, edges)), "--quiet"]) == 0
    assert (tmp_path / "loaded").exists()


@pytest.mark.parametrize(("key", "bad", "message"), BAD)
def test_a_setting_out_of_range_is_a_value_error_from_python(key, bad, message):
    with pytest.raises(ValueError, match=rf"{key}\n  Value error, {message}"):
        get_metric("ha_f1", {key: bad})
    with pytest.raises(ValueError, match=rf"{key}\n  Value error, {message}"):
        compute_metric("std_precision", [[]], [[]], **{key: bad})


def test_the_issue_s_cases_no_longer_compute() -> None:
    # thresholds of -1 let a prediction with another span and another rule match; zero_division 7 was a precision
    text = "abcdefghijklmnopqrstuvwxyz"
    preds, refs = [[{"span": [0, 3], "rule": "a"}]], [[{"span": [10, 13], "rule": "b"}]]
    assert get_metric("std_f1").compute(preds, refs, [text]).value == 0.0
    minus_one = {"overlap_threshold": -1, "rule_threshold": -1, "match_threshold": -1}
    with pytest.raises(ValueError, match="overlap_threshold"):
        get_metric("std_f1", minus_one)
    assert get_metric("std_precision", {"zero_division": 1}).compute([[]], [[]], [text]).value == 1.0
    with pytest.raises(ValueError, match="zero_division"):
        get_metric("std_precision", {"zero_division": 7})

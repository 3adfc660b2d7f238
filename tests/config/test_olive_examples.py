"""Every metric JSON example in Olive's metric-configuration page (shared seed 003) validates unchanged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from olive_eval.config import load_run_config
from olive_eval.config.loader import strip_trailing_commas
from olive_eval.config.metric import MetricConfig


def _seed_file() -> Path:
    root = Path(os.environ.get("OLIVE_EVAL_SHARED", Path(__file__).resolve().parents[3] / "shared"))
    path = root / "seeds" / "003_d33b0bbaf1fcf8d6.txt"
    if not path.is_file():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"shared seeds not found at {path}: CI must check Olive's examples (set OLIVE_EVAL_SHARED)")
        pytest.skip(f"shared seeds not found at {path} (set OLIVE_EVAL_SHARED)")
    return path


def json_blocks(text: str) -> list[dict]:
    """Top-level JSON objects in a text: a '{' at the start of a line up to its matching '}'."""
    blocks, depth, start, in_string, escaped = [], 0, None, False, False
    for i, ch in enumerate(text):
        if start is None:
            if ch == "{" and (i == 0 or text[i - 1] == "\n"):
                start, depth = i, 1
            continue
        if in_string:
            escaped = not escaped and ch == "\\"
            if ch == '"' and not escaped:
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                blocks.append(json.loads(strip_trailing_commas(text[start : i + 1])))
                start = None
    return blocks


def _sub_type_names(metrics: list[dict]) -> set[str]:
    return {sub["name"] for m in metrics for sub in m.get("sub_types", [])}


def test_every_olive_metric_example_validates(tmp_path):
    blocks = json_blocks(_seed_file().read_text())
    assert len(blocks) == 9, "the seed page has nine JSON examples"
    model = tmp_path / "model.onnx"
    model.write_bytes(b"")
    script = tmp_path / "user_script.py"
    script.write_text("def eval_accuracy(model, device, execution_providers, **kwargs):\n    return 0.0\n")
    checked = 0
    for block in blocks:
        metrics = block.get("metrics", [block])
        for metric in metrics:
            MetricConfig.model_validate(metric)  # alone, exactly as written
        names = {m["data_config"] for m in metrics if "data_config" in m} or {"data"}
        run = {
            "input_model": {"type": "ONNXModel", "model_path": str(model)},
            "data_configs": [
                {"name": n, "load_dataset_config": {"data_name": "json", "data_files": str(script)}} for n in names
            ],
            "metrics": metrics,
        }
        if any(m.get("user_config", {}).get("user_script") for m in metrics):
            run["metrics"] = json.loads(json.dumps(metrics).replace('"user_script.py"', json.dumps(str(script))))
        load_run_config(run)  # in a run: priorities, references and the user script all check out
        checked += 1
    assert checked == 9

"""A model served from the result cache gets the per-example files its evaluation wrote: ``instances/`` and
``samples/`` read the same as those of a run that evaluated it, in a rerun into another folder and for a model
that repeats another of the same run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from olive_eval.records.parquet import read_records
from tests.engine.test_cache_run import cli, evaluated, write

METRICS = [
    {
        "name": "acc",
        "type": "accuracy",
        "sample_log_num": 7,
        "sub_types": [
            {"name": "accuracy_score", "priority": 1},
            {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"}},
        ],
    },
]


def record_files(out: Path, folder: str) -> dict[str, Any]:
    """A model's per-example files by path under ``out``, as their content: Parquet records as JSON values,
    JSON lines as text."""
    files: dict[str, Any] = {}
    for kind in ("instances", "samples"):
        for path in sorted((out / kind / folder).rglob("*")):
            name = str(path.relative_to(out / kind / folder))
            files[f"{kind}/{name}"] = list(read_records(path)) if path.suffix == ".parquet" else path.read_text()
    return files


@pytest.mark.parametrize("executor", ["local", "process"])
def test_a_rerun_into_another_folder_gets_the_record_files_of_its_cached_models(toy, tmp_path, capsys, executor):
    """With the process executor a child process writes the files the cache stores."""
    config = toy.config({"a": 0.3}, METRICS)
    path = write(tmp_path / "run.json", config)
    code, lines, _ = cli(path, capsys, "--executor", executor)
    assert code == 0 and evaluated(lines) == ["base", "a"]
    config["output_dir"] = str(tmp_path / "out2")
    code, lines, _ = cli(write(path, config), capsys, "--executor", executor)
    assert code == 0 and evaluated(lines) == []
    assert "base: results from the cache" in lines and "a: results from the cache" in lines
    for model in ("base", "a"):
        fresh, cached = record_files(toy.root / "out", model), record_files(tmp_path / "out2", model)
        assert set(fresh) == {"instances/acc.parquet", "samples/acc_samples.jsonl"}
        assert len(fresh["instances/acc.parquet"]) == 120 and fresh["samples/acc_samples.jsonl"].count("\n") == 7
        assert cached == fresh, model


def test_a_model_that_repeats_another_of_the_run_gets_its_record_files(toy, tmp_path, capsys):
    config = toy.config({"a": 0.3}, METRICS)
    config["candidates"].append({**config["candidates"][0], "name": "a again"})
    path = write(tmp_path / "run.json", config)
    code, lines, cached = cli(path, capsys)
    assert code == 0 and evaluated(lines) == ["base", "a"] and "a again: results from the cache" in lines
    out = toy.root / "out"
    folder = cached["models"]["a again"]["folder"]
    assert folder == "a_again" and record_files(out, folder) == record_files(out, "a")
    # and they are the files a run without the cache writes for that model
    config["output_dir"] = str(tmp_path / "uncached")
    code, lines, _ = cli(write(path, config), capsys, "--no-cache")
    assert code == 0 and evaluated(lines) == ["base", "a", "a again"]
    uncached = record_files(tmp_path / "uncached", folder)
    assert set(uncached) == {"instances/acc.parquet", "samples/acc_samples.jsonl"}
    assert record_files(out, folder) == uncached
    assert json.loads(uncached["samples/acc_samples.jsonl"].splitlines()[0])["index"] == 0

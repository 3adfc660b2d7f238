"""The result cache and --resume in a run: a rerun evaluates only what is new, timings are measured again
unless cached on request, a bad cache folder or entry is warned about and passed by, and --resume keeps what
an earlier run finished unless the config changed what it depends on."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from olive_eval.cli import main
from olive_eval.engine.session.session import Evaluation

METRICS = [
    {
        "name": "acc",
        "type": "accuracy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.5}},
            {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"}},
        ],
    },
]
LATENCY = {
    "name": "lat",
    "type": "latency",
    "sub_types": [{"name": "avg", "priority": 2, "metric_config": {"warmup_num": 1, "repeat_test_num": 5}}],
}


def cli(path: Path, capsys: Any, *extra: str) -> tuple[int, list[str], dict[str, Any]]:
    """Run the CLI; its exit code, the progress lines as 'model: message', and results.json."""
    code = main(["--config", str(path), *extra])
    err = capsys.readouterr().err
    lines = [line.split("] ", 1)[1] for line in err.splitlines() if "] " in line]
    out = json.loads(path.read_text()).get("output_dir")
    return code, lines, json.loads((Path(out) / "results.json").read_text())


def write(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(json.dumps(config))
    return path


def evaluated(lines: list[str]) -> list[str]:
    return [line.split(":", 1)[0] for line in lines if line.endswith("loading model")]


def values(results: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: m["metrics"][key]["value"] for name, m in results["models"].items()}


def test_a_rerun_with_one_new_candidate_evaluates_only_that_one(toy, tmp_path, capsys):
    config = toy.config({"a": 0.3}, METRICS)
    path = write(tmp_path / "run.json", config)
    code, lines, first = cli(path, capsys)
    assert code == 0 and evaluated(lines) == ["base", "a"]
    config["candidates"].append({"type": "ONNXModel", "name": "b", "model_path": str(toy.model("b", 0.6))})
    code, lines, second = cli(write(path, config), capsys)
    assert code == 0 and evaluated(lines) == ["b"]
    assert "base: results from the cache" in lines and "a: results from the cache" in lines
    for key in ("acc-accuracy_score", "acc-f1_score"):
        assert {n: v for n, v in values(second, key).items() if n != "b"} == values(first, key)
    assert second["models"]["a"]["goals_met"] == first["models"]["a"]["goals_met"]
    assert second["ranking"] == [n for n in ("a", "b") if second["models"][n]["goals_met"]]
    # --no-cache evaluates every model again, with the same values
    code, lines, third = cli(path, capsys, "--no-cache")
    assert evaluated(lines) == ["base", "a", "b"] and not any("from the cache" in line for line in lines)
    assert values(third, "acc-f1_score") == values(second, "acc-f1_score")


def test_timings_are_measured_again_unless_cache_timings(toy, tmp_path, capsys):
    config = toy.config({"a": 0.3}, [*METRICS, LATENCY])
    path = write(tmp_path / "run.json", config)
    cli(path, capsys)
    _, lines, again = cli(path, capsys)
    assert evaluated(lines) == []
    assert {line.split(":")[0] for line in lines if line.split(": ", 1)[1].startswith("timing round")} == {"base", "a"}
    assert all(m["metrics"]["lat-avg"]["value"] is not None for m in again["models"].values())

    path = write(tmp_path / "run.json", {**config, "cache_timings": True})
    _, lines, first = cli(path, capsys)
    assert evaluated(lines) == ["base", "a"]  # timings count in the key now: new entries
    _, lines, second = cli(path, capsys)
    assert evaluated(lines) == [] and not any("timing" in line for line in lines)
    assert values(second, "lat-avg") == values(first, "lat-avg")


def test_a_cache_folder_that_is_not_writable(toy, tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("OLIVE_EVAL_CACHE_DIR", str(blocker / "cache"))
    path = write(tmp_path / "run.json", toy.config({"a": 0.3}, METRICS))
    assert main(["--config", str(path), "--quiet"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"olive-eval: warning: cache folder {blocker / 'cache'} is not writable ("
    )
    assert err[0].endswith("); running without a cache")


def test_a_cache_entry_from_another_version_is_ignored(toy, tmp_path, capsys):
    path = write(tmp_path / "run.json", toy.config({}, METRICS))
    cli(path, capsys)
    [entry] = Path(os.environ["OLIVE_EVAL_CACHE_DIR"]).rglob("*.json")
    data = json.loads(entry.read_text())
    entry.write_text(json.dumps({**data, "olive_eval": "0.0.1"}))
    code, lines, _ = cli(path, capsys)
    assert code == 0 and evaluated(lines) == ["base"]
    [warning] = [line for line in lines if line.startswith("warning: cache entry")]
    assert warning.startswith(f"warning: cache entry {entry} ignored: written by olive-eval 0.0.1")


def test_the_session_reads_and_writes_the_cache_when_asked(toy, tmp_path):
    config = toy.config({}, METRICS)
    cand = {"type": "ONNXModel", "name": "a", "model_path": str(toy.model("a", 0.3))}
    lines: list[tuple[str, str]] = []
    with Evaluation(config, cache=tmp_path / "c") as session:
        first = session.evaluate(cand).metrics["acc-f1_score"].value
    with Evaluation(config, cache=tmp_path / "c", progress=lambda m, t: lines.append((m, t))) as session:
        assert session.evaluate(cand).metrics["acc-f1_score"].value == first
    assert ("a", "results from the cache") in lines and ("base", "results from the cache") in lines
    with Evaluation(config, progress=lambda m, t: lines.append((m, t))) as session:  # off by default
        session.evaluate(cand)
    assert lines[-1][1] != "results from the cache" and ("a", "loading model") in lines


def died_in(out: Path, model: str) -> None:
    """Make results.json look as a process that died while evaluating ``model`` left it."""
    data = json.loads((out / "results.json").read_text())
    names = list(data["models"])
    for name in names[names.index(model) :]:
        data["models"][name].update(status="pending", metrics={}, goals_met=None, pareto=None)
    data["models"][model]["status"] = "running"
    (out / "results.json").write_text(json.dumps(data))


def test_resume_keeps_what_finished_and_names_the_model_that_was_running(toy, tmp_path, capsys):
    path = write(tmp_path / "run.json", toy.config({"a": 0.3, "b": 0.6}, METRICS))
    _, _, first = cli(path, capsys, "--no-cache")
    died_in(toy.root / "out", "a")
    code, lines, resumed = cli(path, capsys, "--no-cache", "--resume")
    assert code == 0 and evaluated(lines) == ["a", "b"]
    assert "warning: resuming: the previous run died while evaluating 'a'" in lines
    assert "warning: resuming: keeping base; evaluating a, b (timings are measured again)" in lines
    assert values(resumed, "acc-f1_score") == values(first, "acc-f1_score")
    assert resumed["models"]["a"]["goals_met"] == first["models"]["a"]["goals_met"]


def test_resume_with_a_changed_config_says_what_changed_and_evaluates_what_it_touches(toy, tmp_path, capsys):
    config = toy.config({"a": 0.3, "b": 0.6}, METRICS)
    path = write(tmp_path / "run.json", config)
    cli(path, capsys, "--no-cache")
    died_in(toy.root / "out", "b")
    config["candidates"][0]["model_path"] = str(toy.model("a2", 0.1))
    code, lines, _ = cli(write(path, config), capsys, "--no-cache", "--resume")
    assert code == 0
    assert "warning: resuming: the config changed since: candidates[0].model_path" in lines
    assert evaluated(lines) == ["a", "b"]  # a: its model changed; b: it had not finished
    assert "warning: resuming: keeping base; evaluating a, b (timings are measured again)" in lines
    # a goal is no part of a model's values: changing it keeps every model, and the goals are checked again
    config["metrics"][0]["sub_types"][0]["goal"]["value"] = 0.0
    died_in(toy.root / "out", "b")
    _, lines, again = cli(write(path, config), capsys, "--no-cache", "--resume")
    assert "warning: resuming: the config changed since: metrics[0].sub_types[0].goal.value" in lines
    assert evaluated(lines) == ["b"]
    assert again["models"]["a"]["metrics"]["acc-accuracy_score"]["goal"]["value"] == 0.0


@pytest.mark.parametrize("make", ["none", "unreadable"])
def test_resume_with_nothing_to_resume(toy, tmp_path, capsys, make):
    path = write(tmp_path / "run.json", toy.config({}, METRICS))
    out = toy.root / "out"
    if make == "unreadable":
        out.mkdir()
        (out / "results.json").write_text("{")
    assert main(["--config", str(path), "--resume", "--quiet"]) == 2
    err = capsys.readouterr().err
    if make == "none":
        assert err == f"olive-eval: error: --resume: {out} holds no results.json to resume from\n"
    else:
        assert err.startswith(f"olive-eval: error: --resume: {out / 'results.json'}") and err.count("\n") == 1


def test_resume_evaluates_a_candidate_that_stopped_early_again(toy, tmp_path, capsys):
    metrics = [
        {
            **METRICS[0],
            "sub_types": [{**METRICS[0]["sub_types"][0], "goal": {"type": "max-degradation", "value": 0.01}}],
        }
    ]
    config = {**toy.config({"far": 3.0, "b": 0.0}, [*metrics, LATENCY]), "early_stop": True}
    path = write(tmp_path / "run.json", config)
    _, _, first = cli(path, capsys, "--no-cache")
    assert first["models"]["far"]["early_stopped"] == "acc-accuracy_score"
    died_in(toy.root / "out", "b")
    _, lines, resumed = cli(path, capsys, "--no-cache", "--resume")
    assert evaluated(lines) == ["far", "b"]
    assert resumed["models"]["far"]["early_stopped"] == "acc-accuracy_score"

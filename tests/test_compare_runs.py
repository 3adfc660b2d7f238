"""bench/compare_runs.py compare: hand-made results.json pairs, one change each (no run is made)."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import compare_runs  # noqa: E402
import results_diff  # noqa: E402


def sub(value: float | None, **fields: Any) -> dict[str, Any]:
    base = {"value": value, "priority": -1, "higher_is_better": True, "goal": None, "unit": None}
    base.update(ci_low=None, ci_high=None, confidence_interval=None, error=None, undefined=None, timing=None)
    return {**base, **fields}


def goal(threshold: float, met: bool, value: float = 0.01, kind: str = "max-degradation") -> dict[str, Any]:
    return {"type": kind, "value": value, "threshold": threshold, "met": met, "missed_by": None, "margin": None}


def latency(value: float, goal_: dict[str, Any] | None = None) -> dict[str, Any]:
    timing = {"runs": 100, "rounds": 5, "warmup_num": 5, "loop": "back_to_back", "interleaved": True}
    timing.update(adaptive=False, ratio_to_baseline=None if goal_ is None else value)
    return sub(value, priority=2, higher_is_better=False, unit="ms", goal=goal_, timing=timing)


def model(metrics: dict[str, Any], goals_met: bool | None, pareto: bool) -> dict[str, Any]:
    passes = {"test": {"examples": 100, "batches": 2, "seconds": 0.1}}
    runtimes = [{"runtime": "onnxruntime", "peak_memory": {"basis": "resident memory", "load_bytes": 4096}}]
    return {
        "status": "ok",
        "error": None,
        "metrics": metrics,
        "goals_met": goals_met,
        "pareto": pareto,
        "passes": passes,
        "runtimes": runtimes,
    }


def run() -> dict[str, Any]:
    """A baseline and two candidates: both meet the accuracy goal; b is more accurate, so b ranks first."""

    def fast() -> dict[str, Any]:
        return goal(0.9, True, 10.0, "percent-min-improvement")

    return {
        "baseline": "base",
        "models": {
            "base": model(
                {"acc-a": sub(0.90, priority=1, ci_low=0.85, ci_high=0.95), "lat-p50": latency(1.0)}, None, False
            ),
            "a": model(
                {"acc-a": sub(0.89, priority=1, goal=goal(0.89, True)), "lat-p50": latency(0.5, fast())}, True, True
            ),
            "b": model(
                {"acc-a": sub(0.91, priority=1, goal=goal(0.89, True)), "lat-p50": latency(0.8, fast())}, True, True
            ),
        },
        "ranking": ["b", "a"],
        "best": "b",
        "objectives": ["acc-a", "lat-p50"],
        "stage_seconds": {"models": 1.0},
    }


def test_same_run_is_same() -> None:
    assert results_diff.decide(run()) == results_diff.decisions(run())
    diff = results_diff.compare_results(run(), run())
    assert diff.differences == [] and diff.notes == []


def test_changed_value_and_interval_are_differences() -> None:
    after = run()
    after["models"]["a"]["metrics"]["acc-a"]["value"] = 0.8900000000000001
    after["models"]["base"]["metrics"]["acc-a"]["ci_high"] = 0.96
    diff = results_diff.compare_results(run(), after)
    assert diff.differences == ["base.acc-a.ci_high: 0.95 -> 0.96", "a.acc-a.value: 0.89 -> 0.8900000000000001"]
    loose = results_diff.compare_results(run(), after, rel_tol=1e-12)
    assert loose.differences == ["base.acc-a.ci_high: 0.95 -> 0.96"]
    assert loose.notes == ["a.acc-a.value: 0.89 -> 0.8900000000000001 (within 1e-12)"]


def test_changed_ranking_is_a_difference() -> None:
    after = run()
    after["ranking"], after["best"] = ["a", "b"], "a"
    diff = results_diff.compare_results(run(), after)
    assert "decisions.ranking[0]: 'b' -> 'a'" in diff.differences
    assert "decisions.best: 'b' -> 'a'" in diff.differences


def test_missed_goal_on_a_computed_value_is_a_difference() -> None:
    after = run()
    a = after["models"]["a"]
    a["metrics"]["acc-a"]["goal"]["met"], a["goals_met"], after["ranking"] = False, False, ["b"]
    diff = results_diff.compare_results(run(), after)
    assert "a.acc-a.goal.met: True -> False" in diff.differences
    assert "decisions.goals_met.a: True -> False" in diff.differences


def test_timing_values_are_ignored() -> None:
    after = run()
    for name, value in (("base", 3.0), ("a", 0.1), ("b", 0.2)):
        lat = after["models"][name]["metrics"]["lat-p50"]
        lat["value"], lat["timing"]["runs"] = value, 120
        if lat["goal"]:
            lat["goal"]["threshold"], lat["timing"]["ratio_to_baseline"] = 2.7, value / 3.0
    after["models"]["a"]["passes"]["test"]["seconds"] = 9.0
    after["models"]["a"]["runtimes"][0]["peak_memory"]["load_bytes"] = 8192
    after["stage_seconds"] = {"models": 7.0}
    diff = results_diff.compare_results(run(), after)
    assert diff.differences == [] and diff.notes == []


def test_ranking_moved_by_timing_alone_is_a_note() -> None:
    """a's latency goal now missed (a timing measurement): a leaves the ranking and the front, explained."""
    after = run()
    a = after["models"]["a"]
    a["metrics"]["lat-p50"]["value"], a["metrics"]["lat-p50"]["goal"]["met"] = 0.95, False
    a["goals_met"], a["pareto"], after["ranking"] = False, False, ["b"]
    assert results_diff.decide(after) == results_diff.decisions(after)
    diff = results_diff.compare_results(run(), after)
    assert diff.differences == []
    assert diff.notes == ["ranking, goals_met, pareto differ only through timing values"]


def test_ranking_change_not_explained_by_timing_is_a_difference() -> None:
    after = run()
    a = after["models"]["a"]
    a["metrics"]["lat-p50"]["goal"]["met"], a["goals_met"], after["ranking"] = False, False, ["b"]
    a["metrics"]["acc-a"]["value"] = 0.92  # and a computed value moved: a now ranks first once timings are put back
    diff = results_diff.compare_results(run(), after)
    assert "a.acc-a.value: 0.89 -> 0.92" in diff.differences
    assert any(d.startswith("decisions.") for d in diff.differences)


def test_timing_unit_and_presence_are_compared() -> None:
    after = run()
    after["models"]["b"]["metrics"]["lat-p50"]["unit"] = "s"
    after["models"]["a"]["metrics"]["lat-p50"]["value"] = None
    diff = results_diff.compare_results(run(), after)
    assert "b.lat-p50.unit: 'ms' -> 's'" in diff.differences
    assert "a.lat-p50.value: present -> absent" in diff.differences


def write_record(folder: Path, results: dict[str, Any], inputs: dict[str, str] | None = None) -> Path:
    (folder / "quickstart").mkdir(parents=True)
    (folder / "quickstart" / "results.json").write_text(json.dumps(results))
    entry = {"inputs": inputs or {}, "status": "ran", "exit_code": 0, "seconds": 1.0}
    (folder / "record.json").write_text(json.dumps({"configs": {"quickstart": entry}}))
    return folder


def test_compare_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = write_record(tmp_path / "before", run())
    same = write_record(tmp_path / "same", copy.deepcopy(run()))
    changed = run()
    changed["models"]["b"]["metrics"]["acc-a"]["value"] = 0.915
    other = write_record(tmp_path / "other", changed)
    rebuilt = write_record(tmp_path / "rebuilt", run(), {"examples/llm/models": "abc"})
    assert compare_runs.main(["compare", str(before), str(same)]) == 0
    assert capsys.readouterr().out.splitlines() == ["quickstart: same", "1 of 1 configs the same"]
    assert compare_runs.main(["compare", str(before), str(other)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == "quickstart: b.acc-a.value: 0.91 -> 0.915"
    assert compare_runs.main(["compare", str(before), str(rebuilt)]) == 1
    assert "generated inputs differ" in capsys.readouterr().out


def test_paths_compare_relative_to_each_checkout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folders = []
    for name, digest in (("one", "0123abcd"), ("two", "4567ef01")):
        results = run()
        results["models"]["b"]["error"] = f"/work/{name}/configs/x.json: no olive_eval_user_my_script_{digest}.Model"
        folder = write_record(tmp_path / name, results)
        record = json.loads((folder / "record.json").read_text())
        (folder / "record.json").write_text(json.dumps({**record, "repo": f"/work/{name}"}))
        folders.append(str(folder))
    assert compare_runs.main(["compare", *folders]) == 0
    assert capsys.readouterr().out.startswith("quickstart: same")


def test_inputs_from_another_checkout_are_copied_and_digested(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    (there / "examples" / "gen").mkdir(parents=True)
    (there / "examples" / "gen" / "model.bin").write_bytes(b"weights")
    (here / "examples" / "gen").mkdir(parents=True)
    (here / "examples" / "gen" / ".gitignore").write_text("*\n")
    step = compare_runs.Step(("never_run.py",), "examples/gen", ("model.bin",))
    monkeypatch.setattr(compare_runs, "REPO", here)
    monkeypatch.setattr(compare_runs, "STEPS", {"demo": (step,)})
    error, digests = compare_runs.prepare("demo", there, {})
    assert error is None and (here / "examples" / "gen" / "model.bin").read_bytes() == b"weights"
    assert digests == {"examples/gen": compare_runs.digest(there / "examples" / "gen")}

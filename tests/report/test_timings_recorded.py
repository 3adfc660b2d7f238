"""results.json keeps every timed run (per model and timing metric, in ms by round) and reads it back."""

from __future__ import annotations

import json
from pathlib import Path

from olive_eval.records.results import ModelResult, RunResult, SubMetricResult, TimedRuns
from olive_eval.records.results_load import read_results
from olive_eval.records.results_text import results_text


def test_a_run_records_every_timed_run_by_round(quickstart_run: Path) -> None:
    data = json.loads((quickstart_run / "results.json").read_text())
    for name in ("digits_fp32", "digits_int8"):
        timed = data["models"][name]["timings"]["latency"]  # once per metric, not per sub-type
        assert set(data["models"][name]["timings"]) == {"latency"}
        assert timed["unit"] == "ms" and timed["batch_size"] == 64 and timed["data_config"] == "digits_test"
        assert [len(r) for r in timed["rounds"]] == [200] * 5  # 1000 runs in the config's 5 rounds
        assert all(isinstance(v, float) and v > 0 for r in timed["rounds"] for v in r)
        assert len(timed["loads"]) == len(timed["first_calls"]) == 1
    run = read_results(quickstart_run)
    assert len(run.models["digits_int8"].timings["latency"].rounds) == 5


def test_timed_runs_round_trip_through_results_json(tmp_path: Path) -> None:
    timed = TimedRuns.from_seconds(
        8,
        [[0.0012345678, 0.002], [0.0031]],
        data_config="d",
        quantities={"ttft": [[0.01], [0.02]], "tokens_per_second": [[0.5], [0.25]]},
        counts={"tokens_per_second": 31},
    )
    assert timed.rounds == [[1.235, 2.0], [3.1]]  # ms, 4 significant digits
    model = ModelResult("ok", metrics={"latency-avg": SubMetricResult(1.0, 1, False)}, timings={"latency": timed})
    RunResult("a", {"a": model}).write(tmp_path)
    back = read_results(tmp_path).models["a"].timings["latency"]
    assert back == timed
    assert "[1.235, 2.0]" in (tmp_path / "results.json").read_text()  # a round on one line


def test_an_older_results_json_without_timings_still_loads(tmp_path: Path) -> None:
    RunResult("a", {"a": ModelResult("ok")}).write(tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    del data["models"]["a"]["timings"]
    (tmp_path / "results.json").write_text(json.dumps(data))
    assert read_results(tmp_path).models["a"].timings == {}


def test_only_lists_of_numbers_are_put_on_one_line() -> None:
    data = {"a": [1, 2.5, -3e-05], "b": ["x", "y"], "c": "[\n 1,\n 2\n]", "d": []}
    text = json.dumps(data, indent=2)
    out = results_text(data)
    assert '"a": [1, 2.5, -3e-05]' in out
    assert json.loads(out) == json.loads(text)
    assert '"b": [\n' in out

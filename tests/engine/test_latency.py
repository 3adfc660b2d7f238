"""Latency a user can trust (issue 7): interleaved rounds, paired comparisons, adaptive repeats, load and
first-call times, spread, the measurement loop and provenance. Time is a fake clock that scripted models
advance, so every figure here is exact and no test depends on the machine's speed."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from itertools import groupby
from pathlib import Path

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.engine.timing import timing, timing_phase
from olive_eval.errors import ConfigError
from tests.engine import fake_clock
from tests.engine.fake_clock import CLOCK, LOADER
from tests.helpers import write_jsonl

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def clock(monkeypatch):
    CLOCK.reset()
    monkeypatch.setattr(timing, "time", CLOCK)
    monkeypatch.setattr(timing_phase, "time", CLOCK)
    return CLOCK


@pytest.fixture
def lab(tmp_path):
    """Scripted models and a config around them."""
    (tmp_path / "loader.py").write_text(LOADER)
    data = write_jsonl(tmp_path / "d.jsonl", [{"x": [float(i), 1.0], "label": i % 2} for i in range(8)])

    def model(name: str, cost: float, **spec) -> dict:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"name": name, "cost": cost, **spec}))
        return {
            "type": "PyTorchModel",
            "name": name,
            "model_path": str(path),
            "model_loader": "load",
            "model_script": str(tmp_path / "loader.py"),
        }

    def config(baseline: dict, candidates: list[dict], sub_types: list[dict], **run) -> dict:
        return {
            "input_model": baseline,
            "candidates": candidates,
            "data_configs": [
                {
                    "name": "d",
                    "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                    "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
                    "dataloader_config": {"batch_size": 4},
                }
            ],
            "metrics": [{"name": "lat", "type": "latency", "data_config": "d", "sub_types": sub_types}],
            "output_dir": str(tmp_path / "out"),
            **run,
        }

    return model, config


def avg(priority: int = 1, goal: dict | None = None, **metric_config) -> dict:
    sub = {
        "name": "avg",
        "priority": priority,
        "metric_config": {"warmup_num": 2, "repeat_test_num": 20, **metric_config},
    }
    return {**sub, "goal": goal} if goal else sub


def stat(name: str) -> dict:
    """A sub-type with avg()'s timing settings, so they share one timing run."""
    return {"name": name, "metric_config": {"warmup_num": 2, "repeat_test_num": 20}}


def blocks(log: list[tuple[str, float]]) -> list[str]:
    """Who called the model, with consecutive calls of one model merged."""
    return [name for name, _ in groupby(name for name, _ in log)]


def turns(names: str, rounds: int) -> list[str]:
    """The opening of each model, then rounds in alternating order (A B C, C B A, ...), merged like blocks()."""
    order = [*names]
    for r in range(rounds):
        order += [*names] if r % 2 == 0 else [*reversed(names)]
    return [name for name, _ in groupby(order)]


# ------------------------------------------------------------------------------ interleaving
def test_models_take_turns_in_rounds(clock, lab):
    model, config = lab
    result = evaluate(config(model("a", 1e-3), [model("b", 1e-3), model("c", 1e-3)], [avg()]))
    # the opening (load, first call, warm-up) of each model, then 5 rounds: A B C, C B A, A B C, ...
    assert (
        blocks(clock.log) == turns("abc", 5) == ["a", "b", "c", "a", "b", "c", "b", "a", "b", "c", "b", "a", "b", "c"]
    )
    for name in "abc":
        info = result.models[name].metrics["lat-avg"].timing
        assert (info.runs, info.rounds, info.interleaved, info.loop) == (20, 5, True, "back_to_back")
    # each round: one untimed re-warm call (after the first round) + 4 timed calls
    a_calls = [seconds for name, seconds in clock.log if name == "a"]
    assert len(a_calls) == 1 + 2 + 4 + 4 * 5  # first call, warm-up, round 1, rounds 2-5 with a re-warm each


def test_settling_waits_only_when_another_model_ran_last(clock, lab, monkeypatch):
    """A round waits for the previous model's worker threads to park; a model following itself (the turn of
    A B, B A) has none of another model's threads to wait for."""
    settled: list[float] = []
    monkeypatch.setattr(timing_phase, "settle", lambda: settled.append(0.0) or 0.0)
    model, config = lab
    evaluate(config(model("a", 1e-3), [model("b", 1e-3)], [avg()], timing={"interleave": True, "rounds": 4}))
    # rounds A B, B A, A B, B A: 8 rounds, 4 changes of model after the first; waited before 5 rounds, not 8
    assert len(settled) == 5


def test_sequential_timing_when_asked(clock, lab):
    model, config = lab
    result = evaluate(config(model("a", 1e-3), [model("b", 1e-3)], [avg()], timing={"interleave": False}))
    assert blocks(clock.log) == ["a", "b"]
    assert result.models["b"].metrics["lat-avg"].timing.rounds == 1


def test_interleaving_cancels_the_drift_of_a_busy_machine(clock, lab):
    """Two identical models on a machine that gets slower: timed one after the other, the second looks
    slower; timed in turns, they are equal, and the paired interval of the ratio contains 1."""
    model, config = lab
    ratios = {}
    for interleave in (False, True):
        CLOCK.reset(drift=20.0)
        result = evaluate(
            config(
                model("a", 1e-3),
                [model("b", 1e-3)],
                [avg(repeat_test_num=40)],
                timing={"interleave": interleave, "rounds": 8},
            )
        )
        ratios[interleave] = result.models["b"].metrics["lat-avg"].timing
    assert ratios[False].ratio_to_baseline > 1.5  # the later model pays for the drift
    assert abs(ratios[True].ratio_to_baseline - 1) < 0.05
    assert ratios[True].ratio_ci_low < 1 < ratios[True].ratio_ci_high


def test_a_latency_goal_with_confidence_is_a_paired_test_over_rounds(clock, lab):
    model, config = lab
    goal = {"type": "percent-min-improvement", "value": 20, "confidence": 0.95}
    outcome = {}
    for interleave in (False, True):
        CLOCK.reset(drift=20.0)
        result = evaluate(
            config(
                model("base", 1e-3, wobble=0.05),
                [model("fast", 0.7e-3, wobble=0.05)],
                [avg(goal=goal, repeat_test_num=40)],
                timing={"interleave": interleave, "rounds": 8},
            )
        )
        outcome[interleave] = result.models["fast"].metrics["lat-avg"].goal
    # 30% faster in truth: interleaved rounds show it with confidence; timed later on a busier machine, it misses
    assert outcome[True].met and outcome[True].probability > 0.95
    assert not outcome[False].met


def test_a_confident_latency_goal_is_met_only_by_a_model_that_is_faster(clock, lab):
    model, config = lab
    goal = {"type": "percent-min-improvement", "value": 20, "confidence": 0.95}
    result = evaluate(
        config(
            model("base", 1e-3, wobble=0.05),
            [model("faster", 0.5e-3, wobble=0.05), model("same", 1e-3, wobble=0.05)],
            [avg(goal=goal, repeat_test_num=30)],
        )
    )
    faster, same = (result.models[name].metrics["lat-avg"].goal for name in ("faster", "same"))
    assert faster.met and faster.probability > 0.95
    assert not same.met and same.probability < 0.05


# ------------------------------------------------------------------------------ keep_loaded, load, first_call
def test_reloading_per_round_times_load_and_first_call_apart(clock, lab):
    model, config = lab
    sub_types = [avg(), stat("load"), stat("first_call"), stat("max")]
    run = config(
        model("a", 1e-3, load=0.05, cold=0.02),
        [model("b", 2e-3, load=0.01)],
        sub_types,
        timing={"keep_loaded": False, "rounds": 4},
    )
    result = evaluate(run)
    a, b = result.models["a"].metrics, result.models["b"].metrics
    assert a["lat-avg"].timing.loads == 4  # loaded for each of its rounds
    assert a["lat-load"].value == pytest.approx(50.0) and b["lat-load"].value == pytest.approx(10.0)
    assert a["lat-first_call"].value == pytest.approx(21.0)  # cost + cold start, 1 ms + 20 ms
    assert a["lat-avg"].value == pytest.approx(1.0) and a["lat-max"].value == pytest.approx(1.0)  # neither in a run
    assert b["lat-first_call"].value == pytest.approx(2.0)


def test_load_statistics_refuse_intervals(lab):
    model, config = lab
    run = config(model("a", 1e-3), [], [{"name": "load", "confidence_interval": {}}])
    with pytest.raises(ConfigError, match="latency sub-type 'load' does not have"):
        load_run_config(run)


# ------------------------------------------------------------------------------ spread and the loop
def test_std_and_cv_are_the_runs_spread(clock, lab):
    model, config = lab
    run = config(
        model("a", 1e-3, wobble=0.3),
        [],
        [avg(), stat("std"), stat("cv"), stat("p90")],
        timing={"interleave": False},
    )
    result = evaluate(run)
    durations = np.array([s for _, s in clock.log])[1 + 2 : 1 + 2 + 20]  # after the first call and warm-up
    m = result.models["a"].metrics
    assert m["lat-std"].value == pytest.approx(1000 * np.std(durations, ddof=1), rel=1e-12)
    assert m["lat-cv"].value == pytest.approx(100 * np.std(durations, ddof=1) / np.mean(durations), rel=1e-12)
    assert m["lat-cv"].unit == "%" and m["lat-std"].unit == "ms"
    assert m["lat-p90"].value == pytest.approx(1000 * np.percentile(durations, 90), rel=1e-12)


def test_a_busy_machine_is_named_in_the_results(clock, lab):
    model, config = lab
    result = evaluate(config(model("a", 1e-3, spike=5.0), [model("b", 1e-3)], [avg()]))
    assert any("the machine was busy: timing CV" in w for w in result.models["a"].warnings)
    assert result.models["b"].warnings == []
    written = json.loads(Path(result.output_dir, "results.json").read_text())
    assert written["models"]["a"]["warnings"] == result.models["a"].warnings


def test_yield_between_runs_reproduces_olives_loop(clock, lab):
    model, config = lab
    evaluate(config(model("a", 1e-3), [], [avg(yield_between_runs=True)]))
    settling = timing.SETTLE_WINDOW  # the wait for idle threads before the block, never inside it
    assert clock.sleeps == [settling] + [0] * 20  # sleep(0) after every timed run, as Olive does
    CLOCK.reset()
    evaluate(config(model("a", 1e-3), [], [avg()]))
    assert clock.sleeps == [settling]  # back to back


# ------------------------------------------------------------------------------ adaptive repeats
def test_adaptive_repeats_stop_at_the_target(clock, lab):
    model, config = lab
    auto = {"name": "p50", "priority": 1, "metric_config": {"repeat_test_num": "auto", "warmup_num": 1}}
    result = evaluate(config(model("a", 1e-3, wobble=0.02), [model("b", 1e-3, wobble=0.02)], [auto]))
    for name in "ab":
        info = result.models[name].metrics["lat-p50"].timing
        assert info.adaptive and info.target_rel_ci == 0.02 and info.target_reached is True
        assert info.runs >= timing.MIN_ADAPTIVE_RUNS and info.rounds >= 5


def test_adaptive_repeats_stop_when_time_runs_out(clock, lab):
    model, config = lab
    auto = {
        "name": "avg",
        "metric_config": {"repeat_test_num": "auto", "target_rel_ci": 0.001, "max_seconds": 0.5, "warmup_num": 0},
    }
    result = evaluate(config(model("a", 1e-3, wobble=0.5), [], [auto]))
    info = result.models["a"].metrics["lat-avg"].timing
    assert info.target_reached is False and info.runs >= 400  # ~0.5 s of 1 ms calls were timed


@pytest.mark.parametrize(
    ("metric_config", "message"),
    [
        ({"repeat_test_num": "auto", "target_rel_ci": 0}, "greater than 0"),
        ({"repeat_test_num": "auto", "target_rel_ci": 1.0}, "less than 1"),
        ({"repeat_test_num": "auto", "max_seconds": 0}, "greater than 0"),
        ({"repeat_test_num": "auto", "max_seconds": -3}, "greater than 0"),
        ({"repeat_test_num": 20, "target_rel_ci": 0.05}, "target_rel_ci applies to repeat_test_num 'auto'"),
        ({"repeat_test_num": "many"}, "expected an integer or 'auto', got \"many\""),
    ],
)
def test_bad_adaptive_settings(lab, metric_config, message):
    model, config = lab
    with pytest.raises(ConfigError, match=message) as info:
        load_run_config(config(model("a", 1e-3), [], [{"name": "avg", "metric_config": metric_config}]))
    assert "metrics[0].sub_types[0].metric_config" in str(info.value)


def test_auto_without_a_target_uses_the_default(lab):
    model, config = lab
    run = load_run_config(config(model("a", 1e-3), [], [{"name": "avg", "metric_config": {"repeat_test_num": "auto"}}]))
    timing_config = run.all_metrics[0].parsed_config(run.all_metrics[0].sub_types[0])
    assert (timing_config.target_rel_ci, timing_config.max_seconds) == (0.02, 30.0)


def test_a_model_that_fails_to_load_does_not_stop_the_others(clock, lab):
    model, config = lab
    result = evaluate(config(model("a", 1e-3), [model("broken", 1e-3, fail=True), model("c", 2e-3)], [avg()]))
    assert result.models["a"].metrics["lat-avg"].value == pytest.approx(1.0)
    assert result.models["c"].metrics["lat-avg"].value == pytest.approx(2.0)
    assert result.models["c"].metrics["lat-avg"].timing.ratio_to_baseline == pytest.approx(2.0)
    broken = result.models["broken"]
    assert broken.status == "failed" and "this model does not load" in broken.metrics["lat-avg"].error
    assert blocks(clock.log) == turns("ac", 5)


# ------------------------------------------------------------------------------ provenance and startup
def test_results_record_what_the_numbers_rest_on(clock, lab, tmp_path):
    model, config = lab
    run = config(model("a", 1e-3), [model("b", 1e-3)], [avg(), {**stat("p90"), "confidence_interval": {"seed": 7}}])
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    result = evaluate(path)
    env = result.environment
    assert env["config_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert env["python"] == sys.version.split()[0] and env["logical_cores"] >= 1 and env["cpu"]
    assert {"numpy", "torch", "onnxruntime"} <= set(env["packages"]) and env["started_at"].endswith("+00:00")
    assert env["seeds"] == {"lat-p90.confidence_interval": 7}
    torch_runtime = result.models["a"].runtimes[0]
    assert torch_runtime["runtime"] == "torch" and torch_runtime["threads"] >= 1 and torch_runtime["metrics"] == ["lat"]
    assert set(result.stage_seconds) == {"setup", "models", "timing"}


def test_onnx_runtime_settings_are_recorded(toy):
    config = toy.config({}, [{"name": "lat", "type": "latency", "sub_types": [avg(repeat_test_num=3)]}])
    config["input_model"]["inference_settings"] = {"session_options": {"intra_op_num_threads": 1}}
    runtime = evaluate(config).models["base"].runtimes[0]
    assert runtime["intra_op_threads"] == 1 and runtime["inter_op_threads"] == 1
    assert runtime["allow_spinning"] is True and runtime["execution_mode"] == "sequential"


def test_an_onnx_only_run_imports_neither_torch_nor_transformers(toy):
    config = toy.config(
        {"cand": 0.1},
        [
            {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]},
            {"name": "lat", "type": "latency", "sub_types": [avg(2, repeat_test_num=3)]},
        ],
    )
    code = (
        "import json, sys\n"
        "from olive_eval import evaluate\n"
        f"result = evaluate(json.loads({json.dumps(json.dumps(config))}))\n"
        "assert all(m.status == 'ok' for m in result.models.values())\n"
        "print(json.dumps(sorted(m for m in ('torch', 'transformers', 'datasets', 'pandas') if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_fake_clock_models_are_what_the_tests_say(clock):
    model = fake_clock.ScriptedModel({"name": "m", "cost": 1e-3, "cold": 1e-3})
    model(None)
    model(None)
    assert [s for _, s in clock.log] == pytest.approx([2e-3, 1e-3])

"""Sequential runs: each candidate stops once its confident goals are decided, with the full run's decisions."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.engine.session.session import Evaluation
from olive_eval.records.results_load import read_results
from olive_eval.report.console import render
from tests.engine.sequential_sweep import Sweep

CLEAR = {"good": 0.93, "bad": 0.7, "worse": 0.5}


@pytest.fixture
def sweep(tmp_path):
    return Sweep(tmp_path / "sweep", n=3000)


def test_clear_candidates_are_decided_as_a_full_run_decides_them_on_fewer_examples(sweep):
    full = evaluate(sweep.config(CLEAR))
    full_calls = {name: sweep.calls(name) for name in CLEAR}
    sequential = evaluate(sweep.config(CLEAR, sequential={"min_examples": 200}))
    for name in CLEAR:
        model = sequential.models[name]
        record = model.sequential["d"]
        assert model.goals_met == full.models[name].goals_met  # the full run's verdict, on a fraction
        assert record.goals["acc-accuracy_score"].state == ("met" if full.models[name].goals_met else "missed")
        assert record.examples < 3000 and record.total == 3000 and record.stopped == "decided"
        assert sweep.calls(name) - full_calls[name] == record.examples  # the model ran on those examples only
        assert model.passes["d"]["examples"] == record.examples
    assert sequential.ranking == full.ranking == ["good"]
    assert sweep.calls("base") == 2 * 3000  # the baseline runs on all the data, both times
    assert sequential.models["base"].sequential == {}


def test_the_bound_recorded_decides_the_goal_and_its_margin(sweep):
    result = evaluate(sweep.config({"good": 0.95, "bad": 0.6}, sequential={"min_examples": 100}))
    met = result.models["good"].sequential["d"].goals["acc-accuracy_score"]
    missed = result.models["bad"].sequential["d"].goals["acc-accuracy_score"]
    assert met.lower is not None and met.lower >= 0 and missed.upper is not None and missed.upper < 0
    assert met.looks[-1][0] == met.examples and [look[0] for look in met.looks] == sorted(look[0] for look in met.looks)
    good_goal = result.models["good"].metrics["acc-accuracy_score"].goal
    bad_goal = result.models["bad"].metrics["acc-accuracy_score"].goal
    assert good_goal is not None and good_goal.met and good_goal.margin_bound == met.lower
    assert bad_goal is not None and not bad_goal.met and bad_goal.margin_bound == missed.upper
    # the value is the candidate's accuracy on the examples it used, the baseline's threshold on the same ones
    order = np.random.default_rng(0).permutation(3000)[: met.examples]
    draws = np.random.default_rng(_seed("good")).random(3000)
    assert result.models["good"].metrics["acc-accuracy_score"].value == pytest.approx(np.mean(draws[order] < 0.95))


def _seed(name: str) -> int:
    import zlib

    return zlib.crc32(name.encode())


def test_a_candidate_at_the_threshold_runs_to_the_end_and_gets_the_full_runs_check(sweep):
    config = sweep.config({"edge": 0.88}, sequential={"min_examples": 200})
    result = evaluate(config)
    record = result.models["edge"].sequential["d"]
    assert record.examples == 3000 and record.stopped is None and record.goals["acc-accuracy_score"].state == "open"
    assert sweep.calls("edge") == 3000
    full = evaluate({k: v for k, v in config.items() if k != "sequential"})
    assert result.models["edge"].goals_met == full.models["edge"].goals_met
    assert "undecided after all 3,000 examples" in render(result)


def test_the_table_and_results_json_say_what_was_used(sweep):
    result = evaluate(sweep.config({"good": 0.95}, sequential={"min_examples": 250}))
    used = result.models["good"].sequential["d"].examples
    table = render(result)
    assert f"decided after {used:,} of 3,000 (acc-accuracy_score met)" in table
    assert next(line for line in table.splitlines() if line.startswith("examples used")).split()[-3:] == [
        f"{used:,}",
        "of",
        "3,000",
    ]
    on_disk = json.loads((sweep.root / "out" / "results.json").read_text())
    assert on_disk["models"]["good"]["sequential"]["d"]["examples"] == used
    assert on_disk["sequential"] == {"d": "stops early once acc-accuracy_score decided (confidence sequence)"}
    loaded = read_results(sweep.root / "out" / "results.json")
    assert loaded.models["good"].sequential == result.models["good"].sequential
    assert loaded.sequential == result.sequential


def test_an_old_results_json_without_sequential_fields_loads(sweep):
    evaluate(sweep.config({"good": 0.95}))
    path = sweep.root / "out" / "results.json"
    data = json.loads(path.read_text())
    del data["sequential"]
    for model in data["models"].values():
        del model["sequential"]
    path.write_text(json.dumps(data))
    loaded = read_results(path)
    assert loaded.sequential == {} and loaded.models["good"].sequential == {}


AUROC = {
    "name": "roc",
    "type": "accuracy",
    "sub_types": [
        {"name": "auroc", "priority": 2, "metric_config": {"task": "multiclass", "num_classes": 3}},
    ],
}


def test_a_global_metric_on_the_pass_makes_it_run_in_full_and_the_plan_says_so(sweep):
    metrics = [
        {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [
                {
                    "name": "accuracy_score",
                    "priority": 1,
                    "goal": {"type": "max-degradation", "value": 0.02, "confidence": 0.95},
                }
            ],
        },
        AUROC,
    ]
    lines: list[tuple[str, str]] = []
    result = evaluate(
        sweep.config(CLEAR, sequential={"min_examples": 200}, metrics=metrics),
        progress=lambda model, text: lines.append((model, text)),
    )
    why = "runs in full: roc-auroc is a global metric"
    assert ("plan", f"sequential: 'd' {why}") in lines
    assert result.sequential == {"d": why}
    for name in CLEAR:
        record = result.models[name].sequential["d"]
        assert record.examples == 3000 and record.full == "roc-auroc is a global metric" and record.goals == {}
        assert sweep.calls(name) == 3000
    assert "ran on all 3,000 examples: roc-auroc is a global metric" in render(result)


def test_a_macro_average_is_not_a_mean_of_examples_and_runs_in_full(sweep):
    goal = {"type": "max-degradation", "value": 0.02, "confidence": 0.95}
    metric = {
        "name": "f1",
        "type": "accuracy",
        "sub_types": [{"name": "f1_score", "priority": 1, "goal": goal, "metric_config": {"average": "macro"}}],
    }
    result = evaluate(sweep.config({"bad": 0.5}, sequential={"min_examples": 200}, metrics=[metric]))
    assert result.sequential == {"d": "runs in full: f1-f1_score is not a mean in a known per-example range"}
    assert result.models["bad"].sequential["d"].examples == 3000


def test_a_goal_without_confidence_runs_the_pass_in_full(sweep):
    metrics = [
        {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [
                {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.02}},
                {
                    "name": "f1_score",
                    "priority": 2,
                    "goal": {"type": "max-degradation", "value": 0.5, "confidence": 0.9},
                    "metric_config": {"average": "micro"},
                },
            ],
        }
    ]
    result = evaluate(sweep.config({"bad": 0.5}, sequential={"min_examples": 200}, metrics=metrics))
    reason = "the goal of acc-accuracy_score has no confidence (it is checked on all the data)"
    assert result.sequential == {"d": f"runs in full: {reason}"}


def test_finish_best_evaluates_the_best_candidate_on_all_the_data(sweep):
    full = evaluate(sweep.config({"good": 0.95}))
    before = sweep.calls("good")
    result = evaluate(sweep.config({"good": 0.95, "bad": 0.6}, sequential={"min_examples": 200, "finish": "best"}))
    record = result.models["good"].sequential["d"]
    assert record.finished and record.examples < 3000 and record.goals["acc-accuracy_score"].state == "met"
    assert sweep.calls("good") - before == record.examples + 3000
    assert (
        result.models["good"].metrics["acc-accuracy_score"].value
        == full.models["good"].metrics["acc-accuracy_score"].value
    )
    assert result.models["good"].passes["d"]["examples"] == 3000 and result.best == "good"
    assert result.models["good"].goals_met  # the decision stands; the value is the full data's
    bad = result.models["bad"].sequential["d"]
    assert not bad.finished and bad.examples < 3000
    assert "evaluated again on all 3,000 examples (finish: best)" in render(result)


def test_without_finish_the_best_keeps_its_values_on_the_examples_it_used(sweep):
    result = evaluate(sweep.config({"good": 0.95}, sequential={"min_examples": 200}))
    assert not result.models["good"].sequential["d"].finished
    assert result.models["good"].passes["d"]["examples"] < 3000


def test_race_stops_a_candidate_a_better_one_before_it_dominates(sweep):
    goal = {"type": "max-degradation", "value": 0.3, "confidence": 0.95}  # both meet it: only racing stops
    candidates = {"strong": 0.97, "weak": 0.75}
    raced = evaluate(sweep.config(candidates, goal=goal, sequential={"min_examples": 100, "race": True}))
    weak = raced.models["weak"].sequential["d"]
    assert weak.stopped == "dominated by strong" and weak.examples < 3000
    assert raced.ranking[0] == "strong"
    plain = evaluate(sweep.config(candidates, goal=goal, sequential={"min_examples": 100}))
    assert plain.models["weak"].sequential["d"].stopped == "decided"  # met: decided, not dominated
    assert "dominated by strong" in render(raced)


def test_chunk_and_seed_take_effect(sweep):
    doubling = evaluate(sweep.config({"edge": 0.88}, sequential={"min_examples": 200}))
    looks = [look[0] for look in doubling.models["edge"].sequential["d"].goals["acc-accuracy_score"].looks]
    assert looks == [200, 400, 800, 1600, 3000]
    fixed = evaluate(sweep.config({"edge": 0.88}, sequential={"min_examples": 200, "chunk": 700}))
    looks = [look[0] for look in fixed.models["edge"].sequential["d"].goals["acc-accuracy_score"].looks]
    assert looks == [200, 900, 1600, 2300, 3000]
    one = evaluate(sweep.config({"good": 0.95}, sequential={"min_examples": 200, "seed": 1}))
    two = evaluate(sweep.config({"good": 0.95}, sequential={"min_examples": 200, "seed": 2}))
    first = one.models["good"].sequential["d"].goals["acc-accuracy_score"].looks[0]
    second = two.models["good"].sequential["d"].goals["acc-accuracy_score"].looks[0]
    assert first != second  # another order: other examples first


def test_the_method_takes_effect(sweep):
    betting = evaluate(sweep.config({"good": 0.95}, sequential={"min_examples": 200}))
    bernstein = evaluate(
        sweep.config({"good": 0.95}, sequential={"min_examples": 200, "method": "empirical_bernstein"})
    )
    a = betting.models["good"].sequential["d"].goals["acc-accuracy_score"].looks[0]
    b = bernstein.models["good"].sequential["d"].goals["acc-accuracy_score"].looks[0]
    assert a[0] == b[0] and a[1:] != b[1:]


def test_a_session_decides_each_candidate_and_finishes_the_best(sweep):
    config = sweep.config({}, sequential={"min_examples": 200, "finish": "best"})
    with Evaluation(config) as session:
        good = session.evaluate(sweep.model("good", 0.95))
        bad = session.evaluate(sweep.model("bad", 0.6))
        assert good.model.sequential["d"].examples < 3000 and bad.model.sequential["d"].examples < 3000
        best = session.finish_best()
    assert best is not None and best.name == "good" and best.model.sequential["d"].finished
    assert best.model.passes["d"]["examples"] == 3000


@pytest.mark.parametrize(
    ("sequential", "message"),
    [
        ({"min_examples": 0}, "sequential.min_examples: give at least 1 example, not 0"),
        ({"min_examples": -5}, "sequential.min_examples: give at least 1 example, not -5"),
        ({"min_examples": 3001}, "sequential.min_examples: min_examples 3001 is more than the 3000 examples of data "
         "config 'd'"),
        ({"min_examples": 10, "chunk": 0}, "sequential.chunk: give at least 1 example, not 0"),
        ({"min_examples": 10, "every": 3}, None),
        ({}, "sequential.min_examples: missing required key"),
    ],
)  # fmt: skip
def test_bad_settings_are_one_line_errors_naming_the_file_and_path(sweep, capsys, sequential, message):
    path = sweep.root / "run.json"
    path.write_text(json.dumps(sweep.config({"good": 0.9}, sequential=sequential)))
    assert main(["--config", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"olive-eval: config error: {path}: sequential")
    if message is not None:
        assert err == f"olive-eval: config error: {path}: {message}\n"
    else:
        assert "every" in err


@pytest.mark.parametrize("race", [False, True])
def test_sequential_without_a_ranked_confident_goal_is_refused(sweep, capsys, race: bool):
    config = sweep.config({"good": 0.9}, goal={"type": "max-degradation", "value": 0.02})
    config["sequential"] = {"min_examples": 100, "race": race}
    path = sweep.root / "run.json"
    path.write_text(json.dumps(config))
    assert main(["--config", str(path), "--quiet"]) == 2
    what = "race" if race else "min_examples"
    assert capsys.readouterr().err == (
        f"olive-eval: config error: {path}: sequential.{what}: sequential needs a ranked goal with a confidence to "
        "decide: give a sub-type with a priority a goal with 'confidence'\n"
    )


def test_sequential_refuses_sharded_passes(sweep, capsys):
    config: dict[str, Any] = sweep.config({"good": 0.9}, sequential={"min_examples": 100})
    config["executor"] = {"type": "local", "shards": 2}
    path = sweep.root / "run.json"
    path.write_text(json.dumps(config))
    assert main(["--config", str(path), "--quiet"]) == 2
    assert "sequential: a sequential run scores each pass in one go: give executor.shards 1" in capsys.readouterr().err


def test_a_sequential_run_on_the_process_executor_decides_as_the_local_one(sweep):
    local = evaluate(sweep.config({"good": 0.95, "bad": 0.6}, sequential={"min_examples": 200}))
    config = sweep.config({"good": 0.95, "bad": 0.6}, sequential={"min_examples": 200})
    config["executor"] = {"type": "process"}
    config["output_dir"] = str(sweep.root / "out_process")
    child = evaluate(config)
    for name in ("good", "bad"):
        assert child.models[name].status == "ok"
        assert child.models[name].sequential == local.models[name].sequential  # the same order, the same looks
        assert (
            child.models[name].metrics["acc-accuracy_score"].value
            == local.models[name].metrics["acc-accuracy_score"].value
        )


def test_a_confident_goal_on_a_global_metric_runs_every_candidate_in_full(sweep):
    goal = {
        "type": "max-degradation",
        "value": 0.05,
        "confidence": 0.95,
        "n_resamples": 100,
    }  # AUROC costs per resample
    metric = {
        "name": "roc",
        "type": "accuracy",
        "sub_types": [
            {"name": "auroc", "priority": 1, "goal": goal, "metric_config": {"task": "multiclass", "num_classes": 3}}
        ],
    }
    two = {"good": 0.93, "bad": 0.5}
    sequential = evaluate(sweep.config(two, sequential={"min_examples": 200}, metrics=[metric]))
    assert sequential.sequential == {"d": "runs in full: roc-auroc is a global metric"}
    full = evaluate({**sweep.config(two, metrics=[metric]), "output_dir": str(sweep.root / "full")})
    for name in two:
        assert sequential.models[name].sequential["d"].examples == 3000
        assert sequential.models[name].goals_met == full.models[name].goals_met
        assert sequential.models[name].metrics["roc-auroc"].value == pytest.approx(
            full.models[name].metrics["roc-auroc"].value
        )  # the same examples in another order


def test_with_early_stop_a_candidate_missing_sequentially_is_not_timed(sweep):
    metrics = [
        {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [
                {
                    "name": "accuracy_score",
                    "priority": 1,
                    "goal": {"type": "max-degradation", "value": 0.02, "confidence": 0.95},
                }
            ],
        },
        {
            "name": "lat",
            "type": "latency",
            "data_config": "d",
            "sub_types": [{"name": "avg", "priority": 2, "metric_config": {"warmup_num": 1, "repeat_test_num": 3}}],
        },
    ]
    config = {**sweep.config({"good": 0.95, "bad": 0.6}, sequential={"min_examples": 200}, metrics=metrics)}
    config["early_stop"] = True
    result = evaluate(config)
    bad, good = result.models["bad"], result.models["good"]
    assert bad.sequential["d"].goals["acc-accuracy_score"].state == "missed"
    assert bad.early_stopped == "acc-accuracy_score" and "lat-avg" not in bad.metrics
    assert good.early_stopped is None and good.metrics["lat-avg"].value is not None


def test_finish_best_in_a_session_keeps_the_timing_rounds_the_best_ran_in(sweep):
    metrics = [
        {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [
                {
                    "name": "accuracy_score",
                    "priority": 1,
                    "goal": {"type": "max-degradation", "value": 0.02, "confidence": 0.95},
                }
            ],
        },
        {
            "name": "lat",
            "type": "latency",
            "data_config": "d",
            "sub_types": [{"name": "avg", "priority": 2, "metric_config": {"warmup_num": 1, "repeat_test_num": 3}}],
        },
    ]
    config = sweep.config({}, sequential={"min_examples": 200, "finish": "best"}, metrics=metrics)
    with Evaluation(config) as session:
        timed = session.evaluate(sweep.model("good", 0.95)).model.metrics["lat-avg"]
        best = session.finish_best()
    assert best is not None and best.model.passes["d"]["examples"] == 3000
    assert list(best.model.metrics) == ["acc-accuracy_score", "lat-avg"]
    assert best.model.metrics["lat-avg"] == timed and best.model.timings["lat"].rounds
    assert best.goals_met and best.model.sequential["d"].finished


def test_a_goal_left_open_is_checked_at_the_end_at_half_the_error_and_reports_its_own_confidence(sweep, monkeypatch):
    """The sequence spends alpha / 2 on a wrong keep; the end-of-data check spends the other half (docs/sequential.md)."""
    import olive_eval.engine.run.goals as goals

    asked: list[float] = []
    checked = goals.confident_goal

    def recording(goal, *args):
        asked.append(goal.confidence)
        return checked(goal, *args)

    monkeypatch.setattr(goals, "confident_goal", recording)
    result = evaluate(sweep.config({"edge": 0.88, "good": 0.95}, sequential={"min_examples": 200}))
    edge, good = (result.models[name].metrics["acc-accuracy_score"].goal for name in ("edge", "good"))
    assert result.models["edge"].sequential["d"].goals["acc-accuracy_score"].state == "open"
    assert result.models["good"].sequential["d"].goals["acc-accuracy_score"].state == "met"
    stated = edge.confidence
    assert stated is not None and good.confidence == stated
    assert set(asked) == {stated, 1 - (1 - stated) / 2}  # good: the stated level; edge (open): alpha / 2

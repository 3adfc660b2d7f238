"""``--fail-on-miss`` (and the config's ``fail_on_miss``): real runs of the toy problem gate a CI job with exit 3 and
one line on stderr naming the goal missed, after results.json is written in full."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import olive_eval.decide.gate
from olive_eval import Evaluation
from olive_eval.cli import main
from olive_eval.decide.gate import goals_missed
from olive_eval.errors import ConfigError

#: The toy's noise-free candidate keeps every answer; the noisy one, drawn first, gets 48 of 120 right (seed 0).
GOOD, BAD = 0.0, 3.0
BAD_LINE = "'bad' misses acc-accuracy_score >= 0.99 (max-degradation 0.01; measured 0.4)"


def accuracy(goal: bool = True, name: str = "acc", sub: str = "accuracy_score", priority: int = 1) -> dict[str, Any]:
    sub_type: dict[str, Any] = {"name": sub, "priority": priority}
    if goal:
        sub_type["goal"] = {"type": "max-degradation", "value": 0.01}
    return {"name": name, "type": "accuracy", "data_config": "toy", "sub_types": [sub_type]}


def write(toy: Any, candidates: dict[str, float], metrics: list[dict] | None = None, **keys: Any) -> Path:
    path = toy.root / "run.json"
    path.write_text(json.dumps(toy.config(candidates, metrics or [accuracy()]) | keys))
    return path


def rewritten(path: Path, **keys: Any) -> Path:
    """The same config and models (each write draws new noise) with ``keys`` set."""
    path.write_text(json.dumps(json.loads(path.read_text()) | keys))
    return path


def run(path: Path, *flags: str) -> int:
    return main(["--config", str(path), "--quiet", *flags])


def results(toy: Any) -> dict[str, Any]:
    return json.loads((toy.root / "out" / "results.json").read_text())


def test_without_the_flag_a_missed_goal_still_exits_0(toy, capsys):
    assert run(write(toy, {"bad": BAD})) == 0
    assert "goals missed" not in capsys.readouterr().err


def test_the_flag_passes_when_some_candidate_meets_every_goal(toy, capsys):
    assert run(write(toy, {"bad": BAD, "good": GOOD}), "--fail-on-miss") == 0
    assert capsys.readouterr().err == ""


def test_no_candidate_meeting_every_goal_exits_3_with_one_line(toy, capsys):
    assert run(write(toy, {"bad": BAD}), "--fail-on-miss") == 3
    captured = capsys.readouterr()
    assert captured.err == f"olive-eval: goals missed: {BAD_LINE}; no candidate meets every goal\n"
    assert "No candidate meets every goal." in captured.out  # the table is printed as before


def test_results_json_is_complete_and_on_disk_before_the_verdict(toy, capsys, monkeypatch):
    seen: list[dict[str, Any]] = []

    def judged_after_the_write(result: Any, candidates: Any = True) -> str | None:
        seen.append(results(toy))
        return goals_missed(result, candidates)

    monkeypatch.setattr(olive_eval.decide.gate, "goals_missed", judged_after_the_write)
    assert run(write(toy, {"bad": BAD, "worse": 5.0}), "--fail-on-miss") == 3
    written = seen[0]
    assert written == results(toy)  # nothing rewritten after the verdict
    assert {name: m["status"] for name, m in written["models"].items()} == {"base": "ok", "bad": "ok", "worse": "ok"}
    assert [written["models"][n]["goals_met"] for n in ("base", "bad", "worse")] == [None, False, False]
    bad = written["models"]["bad"]["metrics"]["acc-accuracy_score"]
    assert (bad["value"], bad["goal"]["threshold"], bad["goal"]["met"]) == (0.4, 0.99, False)  # as BAD_LINE says
    assert written["environment"]["config"]["fail_on_miss"] is True  # the gate that applied is recorded with the config
    assert sorted(p.name for p in (toy.root / "out").iterdir() if p.name.startswith(".results.json")) == []


def test_named_candidates_must_each_meet_every_goal(toy, capsys):
    path = write(toy, {"bad": BAD, "good": GOOD})
    assert run(path, "--fail-on-miss", "good") == 0
    assert run(path, "--fail-on-miss", "good,bad") == 3
    assert capsys.readouterr().err == f"olive-eval: goals missed: {BAD_LINE}\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["--fail-on-miss", "--config", "{path}", "--quiet"],
        ["run", "--fail-on-miss", "--quiet", "--config", "{path}"],
        ["--config", "{path}", "--fail-on-miss", "--quiet"],
    ],
)
def test_the_bare_flag_reads_the_same_wherever_it_stands(toy, capsys, argv):
    path = write(toy, {"bad": BAD})
    assert main([a.format(path=path) for a in argv]) == 3


def test_the_configs_setting_gates_without_the_flag(toy, capsys):
    path = write(toy, {"bad": BAD, "good": GOOD}, fail_on_miss=["bad"])
    assert run(path) == 3
    assert capsys.readouterr().err == f"olive-eval: goals missed: {BAD_LINE}\n"
    assert run(rewritten(path, fail_on_miss=True)) == 0


def test_the_flag_wins_over_the_config(toy, capsys):
    path = write(toy, {"bad": BAD, "good": GOOD}, fail_on_miss=["bad"])
    assert run(path, "--fail-on-miss", "good") == 0
    assert results(toy)["environment"]["config"]["fail_on_miss"] == ["good"]
    assert run(rewritten(path, fail_on_miss=["good"]), "--fail-on-miss", "bad") == 3
    assert capsys.readouterr().err.endswith(f"olive-eval: goals missed: {BAD_LINE}\n")


def test_an_unknown_name_is_exit_2_before_any_model_runs(toy, capsys):
    assert run(write(toy, {"bad": BAD, "good": GOOD}), "--fail-on-miss", "good,gdo") == 2
    assert capsys.readouterr().err == "olive-eval: error: --fail-on-miss: no candidate named 'gdo'; valid: bad, good\n"
    assert not (toy.root / "out").exists()


def test_naming_the_baseline_is_exit_2(toy, capsys):
    assert run(write(toy, {"bad": BAD}), "--fail-on-miss", "base") == 2
    assert capsys.readouterr().err == (
        "olive-eval: error: --fail-on-miss: 'base' is the baseline (input_model): goals are relative to it, it has "
        "none to miss\n"
    )


def test_an_empty_name_is_exit_2(toy, capsys):
    assert run(write(toy, {"bad": BAD}), "--fail-on-miss=bad,") == 2
    assert capsys.readouterr().err == (
        "olive-eval: error: --fail-on-miss: give candidate names separated by commas, not 'bad,'\n"
    )


def test_the_flag_without_goals_is_exit_2_before_any_model_runs(toy, capsys):
    path = write(toy, {"bad": BAD}, [accuracy(goal=False)])
    assert run(path, "--fail-on-miss") == 2
    assert capsys.readouterr().err == (
        "olive-eval: error: --fail-on-miss: the config sets no goal, so no candidate can miss one; give a sub-type "
        "a 'goal'\n"
    )
    assert not (toy.root / "out").exists()


def test_the_configs_bad_setting_is_a_config_error_naming_the_file(toy, capsys):
    path = write(toy, {"bad": BAD}, fail_on_miss=["nope"])
    assert run(path) == 2
    assert capsys.readouterr().err == (
        f"olive-eval: config error: {path}: fail_on_miss[0]: no candidate named 'nope'; valid: bad\n"
    )


def failing(path: Path, name: str) -> None:
    config = json.loads(path.read_text())
    model = next(m for m in [config["input_model"], *config["candidates"]] if m["name"] == name)
    model["inference_settings"] = {"execution_provider": "FooExecutionProvider"}
    path.write_text(json.dumps(config))


def test_a_candidate_that_failed_to_evaluate_misses_its_goals(toy, capsys):
    path = write(toy, {"bad": BAD, "broken": GOOD})
    failing(path, "broken")
    assert run(path, "--fail-on-miss") == 3  # the gate's verdict, not exit 1: the failure is a miss
    err = capsys.readouterr().err
    assert err.startswith(f"olive-eval: goals missed: {BAD_LINE}; 'broken' failed to evaluate: ")
    assert "FooExecutionProvider" in err and err.endswith("; no candidate meets every goal\n") and err.count("\n") == 1
    assert results(toy)["models"]["broken"]["status"] == "failed"


def test_a_failure_the_gate_forgives_still_exits_1(toy, capsys):
    path = write(toy, {"broken": GOOD, "good": GOOD})
    failing(path, "broken")
    assert run(path, "--fail-on-miss") == 1
    assert run(path, "--fail-on-miss", "good") == 1
    assert "goals missed" not in capsys.readouterr().err


def test_a_failed_baseline_leaves_relative_goals_unmet(toy, capsys):
    path = write(toy, {"good": GOOD})
    failing(path, "base")
    assert run(path, "--fail-on-miss") == 3
    assert capsys.readouterr().err == (
        "olive-eval: goals missed: 'good' misses acc-accuracy_score: the baseline has no value for this metric; "
        "no candidate meets every goal\n"
    )


def test_an_early_stopped_candidate_misses_and_says_so(toy, capsys):
    metrics = [accuracy(), accuracy(name="f1", sub="f1_score", priority=2)]
    path = write(toy, {"bad": BAD, "good": GOOD}, metrics, early_stop=True, order=["acc", "f1"])
    assert run(path, "--fail-on-miss", "bad") == 3
    assert capsys.readouterr().err == f"olive-eval: goals missed: {BAD_LINE} (+1 not measured) (stopped early)\n"
    assert results(toy)["models"]["bad"]["early_stopped"] == "acc-accuracy_score"


def test_a_results_json_that_cannot_be_written_is_exit_1_even_when_goals_are_missed(toy, capsys, monkeypatch):
    import olive_eval.records.results as records

    real = records.atomic_write_text

    def full_disk(target: Path, text: str, durable: bool = True) -> Path:
        if target.name == "results.json":
            raise OSError(28, "No space left on device")
        return real(target, text, durable)

    monkeypatch.setattr(records, "atomic_write_text", full_disk)
    assert run(write(toy, {"bad": BAD}), "--fail-on-miss") == 1
    err = capsys.readouterr().err
    assert "cannot write" in err and f"olive-eval: goals missed: {BAD_LINE}; no candidate meets every goal\n" in err


def test_the_report_is_written_before_exit_3_and_report_is_unaffected(toy, capsys):
    path = write(toy, {"bad": BAD}, fail_on_miss=True)
    assert run(path, "--report") == 3
    page = toy.root / "out" / "report.html"
    assert page.is_file()
    page.unlink()
    assert main(["report", str(toy.root / "out")]) == 0  # the config's gate is the run's, not the report's
    assert page.is_file()


@pytest.mark.parametrize("command", [["report", "{out}"], ["schema"], ["olive-script"]])
def test_other_commands_refuse_the_flag(toy, capsys, command):
    argv = [a.format(out=toy.root / "out") for a in command]
    assert main([*argv, "--fail-on-miss"]) == 2
    assert capsys.readouterr().err == (
        f"olive-eval: error: --fail-on-miss gates a run; '{command[0]}' does not take it\n"
    )


def test_the_verdict_is_public():
    import olive_eval
    import olive_eval.api

    assert olive_eval.goals_missed is olive_eval.api.goals_missed is goals_missed


def test_python_gets_the_same_verdict_from_the_result(toy):
    path = write(toy, {"bad": BAD, "good": GOOD})
    with Evaluation(path) as session:
        result = session.run()
    assert goals_missed(result) is None
    assert goals_missed(result, ["bad"]) == BAD_LINE
    assert goals_missed(result, session.config.fail_on_miss) is None  # the config's default: no gate


def test_a_session_given_a_bad_gate_names_where_it_came_from(toy):
    with pytest.raises(ConfigError) as info:
        Evaluation(write(toy, {"bad": BAD}), fail_on_miss=["good"])
    assert str(info.value) == "<fail_on_miss>: no candidate named 'good'; valid: bad"
    assert not (toy.root / "out").exists()

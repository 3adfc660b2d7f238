"""The session: the config and data loaded once, the baseline evaluated once, candidates added one by one and
paired with the baseline in timing rounds; evaluate(), the CLI and the session give the same values."""

from __future__ import annotations

import json
from typing import Any

import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.engine.session.session import Evaluation
from olive_eval.errors import ConfigError, UsageError
from olive_eval.runtimes.onnx_config import ONNXModelConfig

ACCURACY = {
    "name": "acc",
    "type": "accuracy",
    "sub_types": [
        {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.05}},
        {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "macro"}},
    ],
}
LATENCY = {
    "name": "lat",
    "type": "latency",
    "sub_types": [{"name": "avg", "priority": 2, "metric_config": {"warmup_num": 1, "repeat_test_num": 10}}],
}


class Log:
    """The progress lines, as (model, message)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def __call__(self, model: str, message: str) -> None:
        self.lines.append((model, message))

    def count(self, model: str, start: str) -> int:
        return sum(1 for m, text in self.lines if m == model and text.startswith(start))


def candidate(toy: Any, name: str, noise: float) -> dict[str, Any]:
    return {"type": "ONNXModel", "name": name, "model_path": str(toy.model(name, noise))}


def structure(value: Any) -> Any:
    """The shape of a result: keys and types, numbers replaced by their type (timings differ run to run)."""
    if isinstance(value, dict):
        return {k: structure(v) for k, v in value.items() if k not in ("environment", "output_dir")}
    if isinstance(value, list):
        return [structure(v) for v in value]
    return type(value).__name__ if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def test_evaluate_the_cli_and_the_session_agree(toy, tmp_path):
    config = toy.config({"close": 0.05, "far": 0.8}, [ACCURACY, LATENCY])
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    by_evaluate = evaluate(config, output_dir=tmp_path / "a").to_dict()
    assert main(["--config", str(path), "--quiet", "--output-dir", str(tmp_path / "b")]) in (0, 1)
    by_cli = json.loads((tmp_path / "b" / "results.json").read_text())
    with Evaluation({**config, "candidates": []}, output_dir=tmp_path / "c") as session:
        session.baseline()
        for cand in config["candidates"]:
            session.evaluate(cand)
        by_session = json.loads((tmp_path / "c" / "results.json").read_text())
    for other in (by_cli, by_session):
        assert list(other["models"]) == list(by_evaluate["models"])
        for name, model in by_evaluate["models"].items():
            for key in ("acc-accuracy_score", "acc-f1_score"):
                assert other["models"][name]["metrics"][key] == model["metrics"][key], (name, key)
            assert other["models"][name]["goals_met"] == model["goals_met"]
        assert structure(other["models"]["close"]["metrics"]["lat-avg"]) == structure(
            by_evaluate["models"]["close"]["metrics"]["lat-avg"]
        )
        assert other["objectives"] == by_evaluate["objectives"]


def test_the_baseline_is_evaluated_once_and_each_candidate_is_timed_beside_it(toy, tmp_path):
    log = Log()
    with Evaluation(toy.config({}, [ACCURACY, LATENCY]), progress=log) as session:
        first = session.baseline()
        assert session.baseline() == first
        assert log.count("base", "loading model") == 1
        assert first.status == "ok" and first.metrics["lat-avg"].value is not None  # timed on its own once
        timed_alone = log.count("base", "timing round")
        a = session.evaluate(candidate(toy, "a", 0.05))
        base_beside_a = session.result.models["base"].metrics["lat-avg"].value
        b = session.evaluate(candidate(toy, "b", 0.05))
        base_beside_b = session.result.models["base"].metrics["lat-avg"].value
    assert log.count("base", "loading model") == 1  # never evaluated again
    assert log.count("base", "timing round") == timed_alone + 2 * 5  # five interleaved rounds beside each
    assert log.count("a", "timing round") == 5 and log.count("b", "timing round") == 5
    assert timed_alone == 1
    # rounds alternate A B, B A: each round of the pair starts with the model that ended the last one
    rounds = [m for m, text in log.lines if text.startswith("timing round") and m in ("base", "b")][-10:]
    assert rounds == ["base", "b", "b", "base", "base", "b", "b", "base", "base", "b"]
    # each ratio is to the baseline timed in the same rounds, never to an earlier measurement
    assert base_beside_a != base_beside_b
    assert a.metrics["lat-avg"].timing.ratio_to_baseline == pytest.approx(a.metrics["lat-avg"].value / base_beside_a)
    assert b.metrics["lat-avg"].timing.ratio_to_baseline == pytest.approx(b.metrics["lat-avg"].value / base_beside_b)
    for r in (a, b):
        sub = r.metrics["lat-avg"]
        assert sub.timing is not None and sub.timing.interleaved and sub.timing.ratio_to_baseline is not None
        assert sub.timing.ratio_ci_low is not None


def test_a_candidate_s_goals_and_rank(toy, tmp_path):
    with Evaluation(toy.config({}, [ACCURACY])) as session:
        close = session.evaluate(candidate(toy, "close", 0.01))  # the baseline comes first, unasked
        far = session.evaluate(ONNXModelConfig(type="ONNXModel", name="far", model_path=toy.model("far", 3.0)))
        base = session.result.models["base"].metrics["acc-accuracy_score"].value
        assert close.goals_met is True and close.rank == 1 and close.status == "ok" and close.error is None
        assert far.goals_met is (far.metrics["acc-accuracy_score"].value >= base - 0.05)
        assert session.ranking == ["close"] + (["far"] if far.goals_met else [])
        assert session.best == "close"
        assert "close" in session.pareto and set(session.pareto) <= {"base", "close", "far"}
        on_disk = json.loads((toy.root / "out" / "results.json").read_text())
        assert list(on_disk["models"]) == ["base", "close", "far"] and on_disk["best"] == "close"
        assert on_disk["models"]["far"]["status"] == "ok"
        assert close.early_stopped is None


def test_a_candidate_whose_name_is_taken(toy):
    with Evaluation(toy.config({"cand": 0.1}, [ACCURACY])) as session, pytest.raises(ConfigError) as info:
        session.evaluate(candidate(toy, "cand", 0.1))
    assert str(info.value) == (
        "<candidate>: candidate.name: model name 'cand' is already used by another model of this session; "
        "give each model a unique name"
    )


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"type": "ONNXModel", "name": "x", "modelpath": "m.onnx"}, "<candidate>: candidate.modelpath: unknown key"),
        ({"type": "NoSuchModel", "name": "x"}, "<candidate>: candidate.type: "),
        ([1, 2], "<candidate>: candidate: a candidate is a model config dict or a ModelConfig, not list"),
        ({"type": "ONNXModel", "name": "x", "model_path": "missing.onnx"}, "<candidate>: candidate.model_path: "),
    ],
)
def test_a_candidate_of_the_wrong_shape(toy, given, message):
    with Evaluation(toy.config({}, [ACCURACY])) as session:
        with pytest.raises(ConfigError) as info:
            session.evaluate(given)
        assert str(info.value).startswith(message)
        assert "\n" not in str(info.value)
        assert list(session.result.models) == ["base"]  # nothing was evaluated or added


def test_evaluate_on_a_closed_session(toy):
    session = Evaluation(toy.config({}, [ACCURACY]))
    session.close()
    with pytest.raises(UsageError, match=r"^the evaluation session is closed; open a new Evaluation"):
        session.evaluate(candidate(toy, "late", 0.1))
    with pytest.raises(UsageError, match="is closed"):
        session.baseline()
    # the output directory was released: another run may use it
    assert evaluate(toy.config({}, [ACCURACY])).models["base"].status == "ok"


def test_ctrl_c_in_a_session_candidate_keeps_the_rest(toy, tmp_path):
    from olive_eval.engine.run.run import RunInterrupted

    script = tmp_path / "interrupts.py"
    script.write_text(
        "def f(model, device, execution_providers):\n"
        "    if 'stop' in str(model.model_path):\n"
        "        raise KeyboardInterrupt\n"
        "    return 1.0\n"
    )
    metric = {
        "name": "c",
        "type": "custom",
        "sub_types": [{"name": "s", "priority": 1, "higher_is_better": True}],
        "user_config": {"user_script": str(script), "evaluate_func": "f"},
    }
    with Evaluation(toy.config({}, [metric])) as session:
        session.evaluate(candidate(toy, "fine", 0.1))
        with pytest.raises(RunInterrupted) as info:
            session.evaluate(candidate(toy, "stop", 0.1))
        assert info.value.model == "stop"
    written = json.loads((toy.root / "out" / "results.json").read_text())
    assert {n: m["status"] for n, m in written["models"].items()} == {"base": "ok", "fine": "ok", "stop": "interrupted"}
    assert written["models"]["stop"]["error"] == "stopped by Ctrl-C" and written["best"] == "fine"


def test_a_session_that_evaluates_nothing_still_leaves_results_json(toy):
    """results.json is first written as the first model starts; a session closed before any leaves it at close."""
    out = toy.root / "out"
    with Evaluation(toy.config({"cand": 0.1}, [ACCURACY])):
        assert not (out / "results.json").exists()
    written = json.loads((out / "results.json").read_text())
    assert {n: m["status"] for n, m in written["models"].items()} == {"base": "pending", "cand": "pending"}


def test_a_session_s_report_before_any_model_writes_results_json_first(toy):
    out = toy.root / "out"
    with Evaluation(toy.config({}, [ACCURACY])) as session:
        page = session.report()
        assert (
            page.is_file() and json.loads((out / "results.json").read_text())["models"]["base"]["status"] == "pending"
        )

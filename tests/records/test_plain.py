"""results.json's converter gives what ``dataclasses.asdict`` and the old NaN pass gave, key for key, on every result
shape: a result with every field filled with awkward values, the report tests' runs and real runs."""

from __future__ import annotations

import json
import math
from collections import OrderedDict, namedtuple
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.records.plain import plain
from olive_eval.records.results import (
    ConfidenceInterval,
    GoalResult,
    ModelResult,
    RunResult,
    SubMetricResult,
    TimedRuns,
    TimingInfo,
)
from olive_eval.records.sequential import GoalDecision, SequentialPass
from tests.report import helpers

Pair = namedtuple("Pair", "low high")


def _finite(value: Any) -> Any:
    """The NaN pass results.json went through before: dicts and lists only, tuples left alone."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def reference(result: RunResult) -> dict[str, Any]:
    """results.json's dict as it was built before :mod:`olive_eval.records.plain`."""
    data = asdict(result)
    del data["write_errors"]
    for model in data["models"].values():
        del model["tracebacks"]
    return _finite(data)


def assert_same(result: RunResult) -> None:
    ours, theirs = result.to_dict(), reference(result)
    assert json.dumps(ours, indent=2) == json.dumps(theirs, indent=2)  # the same keys, in the same order
    assert repr(ours) == repr(theirs)  # and the same types (a tuple stays a tuple, a float subclass stays)


def awkward() -> RunResult:
    nan, inf = float("nan"), float("inf")
    goal = GoalResult("max-degradation", nan, None, False, inf, 0.95, -0.1, -0.2, 0.0, 0.4, -inf, -0.3, "why")
    timing = TimingInfo(40, 4, 5, "yield", True, False, 0.05, True, 2, 1.1, 1.0, 1.2, 0.95)
    subs = {
        "acc-accuracy": SubMetricResult(
            0.9, 1, True, goal, "%", [0.5, None, nan], 0.8, 0.95, ConfidenceInterval("bca", 1000, 0.95, 0)
        ),
        "acc-curve": SubMetricResult(
            None,
            -1,
            None,
            error="boom",
            undefined="no positives",
            timing=timing,
            details={
                "tuple": (1.0, nan, [nan, inf], {"x": nan}),
                "pair": Pair(nan, 2.0),
                "ordered": OrderedDict([("b", -inf), ("a", [1, 2.5])]),
                "numpy": [np.float64("nan"), np.float64(0.25), np.float64("-inf")],
                "nested": [[{"k": (nan,)}], [], {}],
                "decision": GoalDecision("met", 10, 0.1, nan, [[1, nan, inf]]),
                1: "an int key",
            },
            stderr=nan,
        ),
    }
    timed = TimedRuns.from_seconds(
        2, [[0.001, 0.002], [0.003]], data_config="d", loads=[0.5], first_calls=[0.01],
        quantities={"ttft": [[0.1, 0.2]]}, counts={"tokens": 7},
    )  # fmt: skip
    sequential = {"d": SequentialPass(80, 100, {"g": GoalDecision("open", 80, None, None)}, "decided", None, True)}
    models = {
        "base": ModelResult(
            "ok",
            metrics=subs,
            score=0.9,
            score_name="acc-accuracy",
            runtimes=[{"runtime": "onnx", "threads": 2}],
            seconds=nan,
            stage_seconds={"load": 0.1},
            passes={"d": {"examples": 10, "notes": {"empty": 1}}},
            folder="base",
            warnings=["busy"],
            sequential=sequential,
            lm_eval={"tasks": {"t": {"n": 3}}},
            timings={"latency": timed},
            tracebacks=["Traceback ..."],
        ),
        "failed": ModelResult("failed", error="did not load", goals_met=False, pareto=None, early_stopped="acc"),
        "pending": ModelResult("pending"),
    }
    return RunResult(
        "base", models, ["base"], "base", ["acc-accuracy"], "/out", {"setup": inf}, {"d": "decided"},
        {"versions": {"numpy": np.__version__}, "seeds": (0, 1)}, {"results.json": "disk full"},
    )  # fmt: skip


def test_a_result_with_every_field_filled_converts_as_asdict_did() -> None:
    result = awkward()
    assert_same(result)
    data = result.to_dict()
    assert "write_errors" not in data and "tracebacks" not in data["models"]["base"]
    assert data["models"]["base"]["seconds"] == "nan"  # JSON has no NaN: a string
    pair = data["models"]["base"]["metrics"]["acc-curve"]["details"]["pair"]
    assert type(pair) is Pair and math.isnan(pair.low)  # inside a tuple, as before: kept a float


def test_the_converter_copies_what_it_is_given() -> None:
    """As ``asdict``'s: changing the dict does not change the result it came from."""
    result = awkward()
    data = result.to_dict()
    data["models"]["base"]["runtimes"][0]["threads"] = 99
    data["environment"]["versions"]["numpy"] = "x"
    assert result.models["base"].runtimes[0]["threads"] == 2
    assert result.environment["versions"]["numpy"] == np.__version__
    assert plain([awkward().models["pending"]]) == [asdict(ModelResult("pending"))]


#: A real run's metrics: a goal, a per-class list and a timing sub-type (the shapes results.json writes).
REAL_RUN_METRICS: list[dict[str, Any]] = [
    {
        "name": "acc",
        "type": "accuracy",
        "data_config": "toy",
        "sub_types": [
            {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.05}},
            {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "none"}},
        ],
    },
    {"name": "latency", "type": "latency", "sub_types": [{"name": "avg", "priority": 2}]},
]


@pytest.mark.parametrize("build", ["failed_and_untimed_run", "curves_run", "trade_off_run"])
def test_the_report_tests_runs_convert_as_asdict_did(build: str, tmp_path: Path) -> None:
    assert_same(getattr(helpers, build)(tmp_path))


def test_a_real_run_converts_as_asdict_did(toy) -> None:
    result = evaluate(toy.config({"noisy": 0.5, "exact": 0.0}, REAL_RUN_METRICS))
    assert_same(result)
    written = json.loads((Path(result.output_dir) / "results.json").read_text())
    assert written == json.loads(json.dumps(reference(result)))

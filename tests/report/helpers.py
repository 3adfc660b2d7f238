"""Small runs written from our own result objects, for report tests that need a shape no example gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from olive_eval.records.parquet import ParquetSink
from olive_eval.records.results import GoalResult, ModelResult, RunResult, SubMetricResult, TimedRuns


def sub(value: float | None, priority: int = -1, higher: bool = True, **kwargs: object) -> SubMetricResult:
    return SubMetricResult(value, priority, higher, **kwargs)  # type: ignore[arg-type]


def model(name: str, acc: float, latency: float, timed: bool = True) -> ModelResult:
    goal = GoalResult("max-degradation", 0.01, 0.89, acc >= 0.89, None if acc >= 0.89 else 0.89 - acc)
    metrics = {
        "acc-accuracy": sub(acc, 1, goal=goal),
        "latency-avg": sub(latency, 2, higher=False, unit="ms"),
    }
    timings = {"latency": TimedRuns.from_seconds(1, [[latency / 1000] * 4, [latency / 900] * 4])} if timed else {}
    return ModelResult("ok", metrics=metrics, folder=name, timings=timings)


def instances(folder: Path, model_folder: str, metric: str, scores: list[float], predictions: list[str]) -> None:
    sink = ParquetSink(folder / "instances" / model_folder / f"{metric}.parquet", lambda p, e: None)
    n = len(scores)
    sink.write(
        {
            "index": np.arange(n),
            "prediction": predictions,
            "references": [f"ref {i}" for i in range(n)],
            "accuracy": np.asarray(scores, dtype=np.float64),
        },
        n,
    )
    sink.close()


def small_run(folder: Path, models: dict[str, ModelResult], baseline: str = "base") -> RunResult:
    result = RunResult(baseline, models, objectives=["acc-accuracy", "latency-avg"])
    result.write(folder)
    return result


def failed_and_untimed_run(folder: Path) -> RunResult:
    """A baseline, a candidate that failed to load and one with no timed runs."""
    models = {
        "base": model("base", 0.95, 2.0),
        "broken": ModelResult("failed", error="the model did not load: boom", folder="broken"),
        "untimed": model("untimed", 0.93, 1.0, timed=False),
    }
    return small_run(folder, models)


def reliability(accuracy: float) -> dict:
    """A calibration sub-type's details: three uniform bins, the middle one empty."""
    rows = [
        {"lower": 0.0, "upper": 1 / 3, "count": 4, "confidence": 0.3, "accuracy": 0.25},
        {"lower": 1 / 3, "upper": 2 / 3, "count": 0, "confidence": None, "accuracy": None},
        {"lower": 2 / 3, "upper": 1.0, "count": 6, "confidence": 0.9, "accuracy": accuracy},
    ]
    return {"binning": "uniform", "n_bins": 3, "reliability": rows}


def curves_run(folder: Path) -> RunResult:
    """Per-class values, a PR curve (tp/fp/fn/tn per threshold and class), a confusion matrix and a reliability
    diagram (of ece and mce alike), two models."""
    curve = {
        c: {"0.5": {"tp": 3, "fp": 1, "fn": 1, "tn": 5}, "0.9": {"tp": 2, "fp": 0, "fn": 2, "tn": 6}} for c in "ab"
    }
    matrix = {"confusion_matrix": {"a": {"a": 4, "b": 1}, "b": {"a": 0, "b": 5}}}
    models = {}
    for name, accuracy in (("base", 5 / 6), ("cand", 0.5)):
        diagram = reliability(accuracy)
        metrics = {
            "acc-accuracy": sub(0.9, 1),
            "acc-ece": sub(0.1, higher=False, details=diagram),
            "acc-mce": sub(0.4, higher=False, details=diagram),
            "acc-map": sub(0.5, per_class=[0.4, 0.6], details={"per_class": {"rect": 0.4, "disk": 0.6}}),
            "acc-pr_curve": sub(None, details=curve, undefined="structured"),
            "acc-confusion_matrix": sub(None, details=matrix, undefined="structured"),
        }
        models[name] = ModelResult("ok", metrics=metrics, folder=name)
    return small_run(folder, models)


def lm_eval_instances(folder: Path, model_folder: str, metric: str, answers: dict[str, list[str]]) -> None:
    """lm-eval's per-sample log as the engine writes it: a generation task scored by two filters and a multiple
    choice task, answers per task (the same for both filters; the right answer is "ok")."""
    from olive_eval.lm_eval_run.evaluate import LmEvalOutcome

    def sample(doc: int, filter_: str, answer: str, name: str) -> dict:
        scored = 1.0 if answer == "ok" else 0.0
        return {
            "doc_id": doc,
            "filter": filter_,
            "arguments": [[f"question {doc}"]],
            "target": "ok",
            "resps": [[answer]],
            "filtered_resps": [answer],
            name: scored,
            "metrics": [name],
        }

    samples = {
        "gen": [sample(d, f, a, "exact_match") for f in ("strict", "loose") for d, a in enumerate(answers["gen"])],
        "mc": [sample(d, "none", a, "acc") for d, a in enumerate(answers["mc"])],
    }
    columns, rows = LmEvalOutcome(samples=samples).records({"gen", "mc"})
    sink = ParquetSink(folder / "instances" / model_folder / f"{metric}.parquet", lambda p, e: None)
    sink.write(columns, rows)
    sink.close()


#: Accuracy (higher better), latency and size (lower better) with fronts worked out by hand: on accuracy and
#: latency, b, a and base (c has b's accuracy and is slower; d is worse than b on both); on accuracy and size,
#: c, a and base (b is bigger and less accurate than a; d is worse than a on both).
TRADE_OFFS = {
    "base": (0.95, 2.0, 100.0),
    "a": (0.94, 1.0, 50.0),
    "b": (0.90, 0.5, 80.0),
    "c": (0.90, 1.5, 30.0),
    "d": (0.80, 0.6, 200.0),
}


def trade_off_run(folder: Path) -> RunResult:
    models = {}
    for name, (acc, latency, size) in TRADE_OFFS.items():
        models[name] = model(name, acc, latency)
        models[name].metrics["size-bytes"] = sub(size, higher=False, unit="bytes")
    return small_run(folder, models)

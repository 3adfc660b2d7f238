"""Small runs written from our own result objects, for report tests that need a shape no example gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from olive_eval.instance_table import ParquetSink
from olive_eval.results import GoalResult, ModelResult, RunResult, SubMetricResult, TimedRuns


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

"""The HTML report of a large run: 20 models x 10 metrics, 10k examples each (issue 23's budget: <= 3 s, < 5 MB).

A synthetic output folder: results.json from our own result objects (each model with 1000 timed runs in 5
rounds, per-class values and a confusion matrix on one metric) and instance files written by our own
Parquet writer (a string prediction and reference, three per-example scores). Prints the seconds of
``write_report`` (best of 3, plotly's bundle compressed in the first), the page's size and ``ours / 3 s``.

    python bench/bench_report.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from olive_eval.records.parquet import ParquetSink
from olive_eval.records.results import ModelResult, RunResult, SubMetricResult, TimedRuns
from olive_eval.report.html import write_report

MODELS, METRICS, EXAMPLES, BUDGET_S = 20, 10, 10_000, 3.0


def make_run(folder: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    names = [f"model_{i:02d}" for i in range(MODELS)]
    models = {}
    for m, name in enumerate(names):
        metrics: dict[str, SubMetricResult] = {}
        for k in range(METRICS):
            for sub in ("score", "wer", "exact"):
                value = float(rng.uniform(0.5, 1.0))
                metrics[f"metric{k}-{sub}"] = SubMetricResult(
                    value,
                    priority=1 if (k, sub) == (0, "score") else -1,
                    higher_is_better=sub != "wer",
                    ci_low=value - 0.01,
                    ci_high=value + 0.01,
                )
        classes = [f"class_{c}" for c in range(10)]
        metrics["metric0-precision"] = SubMetricResult(
            0.9,
            -1,
            True,
            per_class=list(rng.uniform(0.8, 1.0, 10)),
            details={"per_class": dict(zip(classes, rng.uniform(0.8, 1.0, 10).tolist(), strict=True))},
        )
        matrix = {r: {p: int(rng.integers(0, 50)) for p in classes} for r in classes}
        metrics["metric0-confusion_matrix"] = SubMetricResult(
            None, -1, True, undefined="a structured value", details={"confusion_matrix": matrix}
        )
        metrics["latency-p50"] = SubMetricResult(float(1 + m / 10), 2, False, unit="ms")
        rounds = [rng.gamma(20, (1 + m / 10) / 20_000, 200) for _ in range(5)]
        models[name] = ModelResult(
            "ok", metrics=metrics, folder=name, timings={"latency": TimedRuns.from_seconds(1, rounds)}
        )
        for k in range(METRICS):
            sink = ParquetSink(folder / "instances" / name / f"metric{k}.parquet", lambda p, e: None)
            for start in range(0, EXAMPLES, 2_000):
                n = min(2_000, EXAMPLES - start)
                sink.write(
                    {
                        "index": np.arange(start, start + n),
                        "prediction": [f"predicted text {i} of {name}" for i in range(start, start + n)],
                        "references": [f"reference text {i}" for i in range(start, start + n)],
                        "score": rng.uniform(0, 1, n),
                        "wer": rng.uniform(0, 1, n),
                        "exact": (rng.uniform(0, 1, n) > 0.2).astype(np.float64),
                    },
                    n,
                )
            sink.close()
    RunResult(names[0], models, ranking=names[1:], best=names[1], objectives=["metric0-score", "latency-p50"]).write(
        folder
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_run(folder)
        times = []
        for _ in range(3):
            start = time.perf_counter()
            page = write_report(folder)
            times.append(time.perf_counter() - start)
        size = page.stat().st_size
    best = min(times)
    print(f"report: {MODELS} models x {METRICS} metrics x {EXAMPLES:,} examples")
    print(f"seconds: {best:.2f} (first, with plotly's bundle compressed: {times[0]:.2f})")
    print(f"page: {size / 1e6:.2f} MB")
    print(f"ours / {BUDGET_S:g} s: {times[0] / BUDGET_S:.2f}")


if __name__ == "__main__":
    main()

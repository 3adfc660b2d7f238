"""Executors: what running each model elsewhere costs against the local executor, in one process.

``process`` part: the quickstart (configs/quickstart.json: two ONNX digit classifiers, accuracy, latency and
size on disk), the whole ``evaluate()`` with the process executor and with the local one, in interleaved
repeats (local, process, local, ...) so a busy machine hits both alike. Printed: the median wall time of each
and their ratio, process / local: target <= 1.10. The process executor starts one child ahead, so a model does
not wait for an interpreter's start-up; the data opened by the run is pickled once and sent to each child.

Run: ``python bench/bench_executors.py`` (about half a minute on 2 cores).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from olive_eval import evaluate

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "configs" / "quickstart.json"
REPEATS = 5


def quickstart_models() -> None:
    """Build the quickstart's models and data if this checkout lacks them."""
    models = ROOT / "examples" / "quickstart" / "models"
    if not (models / "digits_fp32.onnx").is_file() or not (models / "digits_int8.onnx").is_file():
        subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart" / "make_quickstart.py")], check=True)


def wall(executor: str, out: Path) -> tuple[float, float]:
    """The run's wall time and its per-model stage's (the timing rounds after it run in this process alike)."""
    start = time.perf_counter()
    result = evaluate(QUICKSTART, output_dir=out, executor=executor)
    seconds = time.perf_counter() - start
    bad = {name: m.error for name, m in result.models.items() if m.status != "ok"}
    assert not bad, bad
    return seconds, result.stage_seconds["models"]


def process_part() -> None:
    quickstart_models()
    times: dict[str, list[tuple[float, float]]] = {"local": [], "process": []}
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        wall("process", Path(tmp) / "first")  # starts the fork server: once per interpreter
        first = time.perf_counter() - start
        wall("local", Path(tmp) / "warm")  # imports and the OS's file cache, for neither side to pay
        for i in range(REPEATS):
            for executor in ("local", "process") if i % 2 == 0 else ("process", "local"):
                times[executor].append(wall(executor, Path(tmp) / f"{executor}{i}"))
    print(
        f"quickstart, {REPEATS} interleaved repeats (median; the first process run, fork server start: {first:.2f} s):"
    )
    medians = {}
    for executor, runs in times.items():
        medians[executor] = statistics.median(t for t, _ in runs), statistics.median(m for _, m in runs)
        shown = " ".join(f"{t:.2f}" for t, _ in runs)
        print(
            f"  {executor:7} wall {medians[executor][0]:6.3f} s, models stage {medians[executor][1]:6.3f} s  ({shown})"
        )
    (local, local_models), (process, process_models) = medians["local"], medians["process"]
    print(f"  ratio process / local, wall: {process / local:.3f} (target <= 1.10)")
    print(
        f"  models stage: process / local {process_models / local_models:.2f}, "
        f"+{(process_models - local_models) / 2 * 1000:.0f} ms a model (2 models)"
    )


def main() -> None:
    process_part()


if __name__ == "__main__":
    main()

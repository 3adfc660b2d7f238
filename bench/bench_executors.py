"""Executors: what running each model elsewhere costs against the local executor, in one process.

``process`` part: the quickstart (configs/quickstart.json: two ONNX digit classifiers, accuracy, latency and
size on disk), the whole ``evaluate()`` with the process executor and with the local one, in interleaved
repeats (local, process, local, ...) so a busy machine hits both alike. Printed: the median wall time of each
and their ratio, process / local: target <= 1.10. The process executor starts one child ahead, so a model does
not wait for an interpreter's start-up; the data opened by the run is pickled once and sent to each child.

``--cli`` part: the same quickstart from the command line, ``olive-eval --config configs/quickstart.json
--executor process`` against ``--executor local``, each a fresh interpreter (so the process executor starts its
fork server in every run, which the in-process part pays once), interleaved, median of ``--repeats`` (5) each.
The load average (``os.getloadavg``, as ``uptime`` shows it) is printed before and after: on a shared machine the
ratio moves with it. So it also prints the CPU seconds of each command and every process it started (the fork
server and the models' children: this script is their subreaper on Linux), which the load moves less.

Run: ``python bench/bench_executors.py`` (the in-process part, about half a minute on 2 cores),
``python bench/bench_executors.py --cli`` (the command line part), ``--all`` for both.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def become_subreaper() -> None:
    """Orphaned descendants (the fork server, once the command exits) are reparented here and reaped by
    :func:`reap`, so their CPU time counts in ``RUSAGE_CHILDREN``."""
    import ctypes

    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def reap() -> None:
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_wall(executor: str, out: Path) -> tuple[float, float]:
    """One ``olive-eval`` command's wall time, from its start to its exit, and the CPU seconds of it and every
    process it started (the fork server and its children included)."""
    command = [sys.executable, "-m", "olive_eval.cli", "--config", str(QUICKSTART), "--executor", executor]
    command += ["--output-dir", str(out), "--no-cache", "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    cpu = children_cpu()
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    reap()
    return seconds, children_cpu() - cpu


def untimed_values(out: Path) -> dict[str, dict[str, float]]:
    """Each model's values in the run's results.json, but the latency ones (which the machine's load moves)."""
    models = json.loads((out / "results.json").read_text())["models"]
    return {
        name: {key: metric["value"] for key, metric in model["metrics"].items() if not key.startswith("latency")}
        for name, model in models.items()
    }


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def cli_part(repeats: int) -> None:
    quickstart_models()
    if sys.platform == "linux":
        become_subreaper()
    times: dict[str, list[tuple[float, float]]] = {"local": [], "process": []}
    before = load()
    with tempfile.TemporaryDirectory() as tmp:
        cli_wall("local", Path(tmp) / "warm")  # the OS's file cache, for neither side to pay
        for i in range(repeats):
            for executor in ("local", "process") if i % 2 == 0 else ("process", "local"):
                times[executor].append(cli_wall(executor, Path(tmp) / f"{executor}{i}"))
        values = {executor: untimed_values(Path(tmp) / f"{executor}0") for executor in ("local", "process")}
    assert values["process"] == values["local"], values
    print(f"quickstart from the command line, {repeats} interleaved runs each (median; load average {before}, then")
    print(f"  {load()}):")
    cpu = {}
    for executor, runs in times.items():
        shown = " ".join(f"{t:.2f}" for t, _ in runs)
        cpu[executor] = statistics.median(c for _, c in runs)
        wall = statistics.median(t for t, _ in runs)
        print(f"  {executor:7} wall {wall:6.3f} s  ({shown}), CPU {cpu[executor]:6.3f} s (every process)")
    ratio = statistics.median(t for t, _ in times["process"]) / statistics.median(t for t, _ in times["local"])
    print(f"  ratio process / local, wall: {ratio:.3f}; CPU seconds: {cpu['process'] / cpu['local']:.3f}")
    print("  values (accuracy, F1, size on disk) equal to the local executor's: yes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cli", action="store_true", help="only the command line part")
    parser.add_argument("--all", action="store_true", help="the in-process part, then the command line part")
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"command line runs of each executor ({REPEATS})")
    args = parser.parse_args()
    if not args.cli:
        process_part()
    if args.cli or args.all:
        cli_part(args.repeats)


if __name__ == "__main__":
    main()

"""Latency benchmarks (issue 7): what interleaving buys, the whole-process overhead, and the two loops.

* spread        the quickstart's int8/fp32 p50 ratio over 5 separate runs (each its own process), timed
                interleaved (the default) and one model after the other; runs alternate between the two
                modes so both see the same machine. Reported: max/min of the ratio per mode (1.0 = no spread).
* overhead      ``olive-eval --config`` on the quickstart (its data as parquet) / a bare script doing the
                same work: import onnxruntime, numpy and pyarrow, load both models, read the parquet, run the
                same batches and timing loops, write a JSON (target <= 1.2). Wall time of whole processes.
* loops         p50 of the fp32 model timed back to back (the default) and yielding between runs
                (``yield_between_runs``, Olive's loop), with default threads and with one intra-op thread.

Run: ``python bench/bench_latency.py`` (about 2 minutes); ``--busy`` adds a background load on every core
whose level drifts up and down over about a second, as on a shared machine; ``--runs N`` changes the 5 runs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "examples" / "quickstart" / "models"
DATA = REPO / "examples" / "quickstart" / "data" / "digits_test.jsonl"
WARMUP, BATCH = 20, 64
QUICKSTART_TIMING = json.loads((REPO / "configs" / "quickstart.json").read_text())["timing"]
REPEAT, ROUNDS = 1000, QUICKSTART_TIMING["rounds"]  # the quickstart's latency settings


def parquet_data(folder: Path) -> Path:
    import pyarrow.json as pjson
    import pyarrow.parquet as pq

    path = folder / "digits_test.parquet"
    pq.write_table(pjson.read_json(DATA), path)
    return path


def quickstart_config(data: Path, out: Path, **timing) -> dict:
    quickstart = json.loads((REPO / "configs" / "quickstart.json").read_text())
    quickstart.pop("$schema")
    for model in (quickstart["input_model"], *quickstart["candidates"]):
        model["model_path"] = str(MODELS / Path(model["model_path"]).name)
    quickstart["data_configs"][0]["load_dataset_config"] = {"data_name": "parquet", "data_files": str(data)}
    quickstart["output_dir"] = str(out)
    if timing:
        quickstart["timing"] = timing
    return quickstart


def run_cli(config: dict, folder: Path) -> tuple[float, dict]:
    path = folder / "run.json"
    path.write_text(json.dumps(config))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "olive_eval", "--config", str(path), "--quiet", "--no-cache"],  # the same work each run
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"olive-eval failed:\n{done.stderr}")
    return wall, json.loads((Path(config["output_dir"]) / "results.json").read_text())


BARE = """
import json, os, sys, time
import numpy as np, onnxruntime as ort, pyarrow.parquet as pq

mode, rounds, data, out, models = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
table = pq.ParquetFile(data).read()
pixels = np.asarray(table.column("pixels").combine_chunks().flatten(), dtype=np.float32).reshape(table.num_rows, -1)
labels = np.asarray(table.column("label"))
results, sessions, feed = {}, {}, {"pixels": pixels[:64]}
for model in models:
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    preds = np.concatenate([session.run(None, {"pixels": pixels[i:i + 64]})[0] for i in range(0, len(pixels), 64)]).argmax(1)
    f1 = np.mean([2 * np.sum((preds == c) & (labels == c)) / max(1, np.sum(preds == c) + np.sum(labels == c)) for c in range(10)])
    results[model] = {"accuracy": float(np.mean(preds == labels)), "f1": float(f1), "bytes": os.path.getsize(model)}
    sessions[model] = session


def settle():  # the same wait for idle worker threads as olive-eval's, before each block of timed runs
    start = time.perf_counter()
    while time.perf_counter() - start < 0.25:
        cpu, wall = time.process_time(), time.perf_counter()
        time.sleep(0.005)
        if (time.process_time() - cpu) / (time.perf_counter() - wall) < 0.05:
            break


def timed(session, n):
    seconds = []
    for _ in range(n):
        start = time.perf_counter()
        session.run(None, feed)
        seconds.append(time.perf_counter() - start)
    return seconds


seconds = {model: [] for model in models}
for model, session in sessions.items():
    for _ in range(21):  # the first call, then 20 warm-up calls
        session.run(None, feed)
    if mode == "sequential":
        settle()
        seconds[model] = timed(session, 1000)
if mode == "interleaved":
    for r in range(rounds):
        for model in models if r % 2 == 0 else models[::-1]:
            settle()
            if r:
                sessions[model].run(None, feed)
            seconds[model] += timed(sessions[model], 1000 // rounds)
for model in models:
    results[model].update(avg=float(np.mean(seconds[model])), p90=float(np.percentile(seconds[model], 90)))
with open(out, "w") as handle:
    json.dump(results, handle)
"""


def run_bare(data: Path, folder: Path, mode: str) -> float:
    script = folder / "bare.py"
    script.write_text(BARE)
    models = [str(MODELS / "digits_fp32.onnx"), str(MODELS / "digits_int8.onnx")]
    args = [mode, str(ROUNDS), str(data), str(folder / "bare.json"), *models]
    started = time.perf_counter()
    subprocess.run([sys.executable, str(script), *args], check=True)
    return time.perf_counter() - started


def _busy(stop: multiprocessing.Event, seed: int) -> None:  # pragma: no cover - a load generator
    """A shared machine's load: busy a share of each 2 ms slice, the share drifting up and down over
    0.3-1.2 s, as other jobs come and go."""
    import math
    import random

    rng = random.Random(seed)
    start, period = time.perf_counter(), rng.uniform(0.3, 1.2)
    while not stop.is_set():
        now = time.perf_counter() - start
        if now > period:
            start, period = time.perf_counter(), rng.uniform(0.3, 1.2)
            continue
        share = 0.5 - 0.5 * math.cos(2 * math.pi * now / period)
        end = time.perf_counter() + 0.002
        if rng.random() < share:
            while time.perf_counter() < end:
                pass
        else:
            time.sleep(0.002)


def spread(data: Path, runs: int, repeat: int = REPEAT, rounds: int = ROUNDS) -> None:
    ratios: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i in range(runs):
            for interleave in (False, True) if i % 2 == 0 else (True, False):
                config = quickstart_config(data, folder / "out", interleave=interleave, rounds=rounds)
                for metric in config["evaluator"]["metrics"]:
                    if metric["type"] == "latency":
                        metric["sub_types"] = [
                            {
                                "name": "p50",
                                "priority": 2,
                                "metric_config": {"warmup_num": WARMUP, "repeat_test_num": repeat},
                            }
                        ]
                _, result = run_cli(config, folder)
                p50 = {n: m["metrics"]["latency-p50"]["value"] for n, m in result["models"].items()}
                ratios[interleave].append(p50["digits_int8"] / p50["digits_fp32"])
    print(f"\nint8/fp32 p50 ratio over {runs} separate runs (each its own process; {repeat} runs, {rounds} rounds):")
    for interleave, values in ratios.items():
        label = "interleaved (default)" if interleave else "sequential"
        shown = ", ".join(f"{v:.3f}" for v in values)
        print(f"  {label:22s} {shown}   spread max/min {max(values) / min(values):.3f}")
    seq, inter = (max(v) / min(v) for v in (ratios[False], ratios[True]))
    print(f"  spread ratio interleaved/sequential: {(inter - 1) / (seq - 1):.2f} (of the excess over 1.0)")


def overhead(data: Path, reps: int = 5) -> None:
    """Both schedules: the default (interleaved rounds, waiting for idle threads before each) and one model
    after the other; the bare script follows the same schedule, so the ratio is olive-eval's own cost."""
    print(f"\nprocess overhead, median of {reps} (quickstart, whole processes):")
    for interleave in (True, False):
        ours, bare = [], []
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            config = quickstart_config(data, folder / "out", interleave=interleave, rounds=ROUNDS)
            for _ in range(reps):
                ours.append(run_cli(config, folder)[0])
                bare.append(run_bare(data, folder, "interleaved" if interleave else "sequential"))
        o, b = statistics.median(ours), statistics.median(bare)
        label = "interleaved (default)" if interleave else "sequential"
        print(f"  {label:22s} olive-eval {o:6.3f} s   bare {b:6.3f} s   ratio {o / b:6.3f}   (target <= 1.2)")


def loops(data: Path) -> None:
    print("\nfp32 p50 (ms) at batch 64, back to back vs yielding between runs (Olive's loop):")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for threads in (None, 1):
            row = []
            for yielding in (False, True):
                config = quickstart_config(data, folder / "out", interleave=False)
                config["candidates"] = []
                if threads:
                    config["input_model"]["inference_settings"] = {"session_options": {"intra_op_num_threads": threads}}
                config["evaluator"]["metrics"] = [
                    {
                        "name": "latency",
                        "type": "latency",
                        "data_config": "digits_test",
                        "sub_types": [
                            {
                                "name": "p50",
                                "metric_config": {
                                    "warmup_num": WARMUP,
                                    "repeat_test_num": 1000,
                                    "yield_between_runs": yielding,
                                },
                            }
                        ],
                    }
                ]
                _, result = run_cli(config, folder)
                row.append(result["models"]["digits_fp32"]["metrics"]["latency-p50"]["value"])
            label = "default threads" if threads is None else f"intra_op_num_threads={threads}"
            print(f"  {label:24s} back to back {row[0]:.4f}   yielding {row[1]:.4f}   ratio {row[1] / row[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=REPEAT, help="timed runs per model (the quickstart's)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds when interleaving (the quickstart's)")
    parser.add_argument("--busy", action="store_true", help="a drifting background load on every core")
    parser.add_argument("--only", choices=["spread", "overhead", "loops"])
    args = parser.parse_args()
    stop = multiprocessing.Event()
    cores = os.cpu_count() or 1
    helpers = [
        multiprocessing.Process(target=_busy, args=(stop, i), daemon=True) for i in range(cores if args.busy else 0)
    ]
    for helper in helpers:
        helper.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            data = parquet_data(Path(tmp))
            if args.only in (None, "spread"):
                spread(data, args.runs, args.repeat, args.rounds)
            if args.only in (None, "overhead"):
                overhead(data)
            if args.only in (None, "loops"):
                loops(data)
    finally:
        stop.set()
        for helper in helpers:
            helper.join(timeout=5)


if __name__ == "__main__":
    main()

"""The warm path: a second ``evaluate()`` in the same process, three accuracy sub-types over 10k examples.

Ratios against references timed in the same run (median of ``--rounds``, 9 by default, after one warm-up call of
each side, the sides alternating):

* small model   the quickstart's digits MLP over 10k examples (its 360 test rows repeated) / a bare loop in the
                same process: read the parquet file, ``InferenceSession.run`` per batch of 64, argmax, accuracy and
                macro F1 and precision in numpy (target <= 1.5: what the framework itself costs);
* big model     the same over the 10M-parameter MLP of ``bench_engine.py`` (target <= 1.05: inference-heavy), and
                the prediction pass alone (``stage_seconds``), and its model calls alone (``passes.d.model_seconds``:
                ONNX Runtime inside our pass) / the bare loop's ``session.run`` calls;
* records       ``evaluate()`` writing the instance records / the same with the record writer off (target <= 1.05);
* Olive         with ``--olive-python PATH`` (an interpreter with olive-ai 0.13, onnxruntime and torch): Olive's
                ``OnnxEvaluator`` on the same model and data, a second ``evaluate`` in its own process, the way
                Olive's engine calls it (``OliveEvaluatorConfig(metrics).create_evaluator(model).evaluate``); printed
                as ours / Olive's (target <= 0.5).

The data files are dated a minute back, as a loop's data set is: a file changed in the last 2 s is read by every
run (``olive_eval.data.kept_chunks``); ``--fresh-data`` leaves them as written, so each run reads them again.

Run: ``python bench/bench_warm.py [--olive-python /tmp/venv-olive/bin/python]`` (about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _models import classification_parquet, mlp_onnx

import olive_eval.records.parquet
from olive_eval import evaluate

REPO = Path(__file__).resolve().parents[1]
DIGITS = REPO / "examples" / "quickstart"
N, BATCH, CLASSES = 10_000, 64, 10
BIG_SIZES = [1024, 2048, 2048, 2048, 10]


def digits_parquet(path: Path) -> Path:
    rows = [json.loads(line) for line in (DIGITS / "data" / "digits_test.jsonl").read_text().splitlines()]
    index = np.resize(np.arange(len(rows)), N)
    x = np.array([r["pixels"] for r in rows], dtype=np.float32)[index]
    y = np.array([r["label"] for r in rows], dtype=np.int64)[index]
    column = pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), x.shape[1])
    pq.write_table(pa.table({"x": column, "label": y}), str(path))
    return path


def config(model: Path, data: Path, out: Path) -> dict:
    macro = {"task": "multiclass", "num_classes": CLASSES, "average": "macro"}
    return {
        "input_model": {"type": "ONNXModel", "model_path": str(model)},
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "parquet", "data_files": str(data)},
                "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
                "dataloader_config": {"batch_size": BATCH},
            }
        ],
        "metrics": [
            {
                "name": "acc",
                "type": "accuracy",
                "data_config": "d",
                "sub_types": [
                    {"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass"}},
                    {"name": "f1_score", "metric_config": macro},
                    {"name": "precision", "metric_config": macro},
                ],
            }
        ],
        "output_dir": str(out),
    }


#: The bare loop's session settings, for the fairness line (ours are in results.json's ``runtimes``).
BARE_SETTINGS: dict[str, object] = {}


def bare(model: Path, data: Path) -> tuple[float, float, dict[str, float]]:
    """(total seconds, seconds in session.run, values): the same work without the framework, on a session with
    ONNX Runtime's default options (as ours, when the config sets none), batches of 64 contiguous float32 rows."""
    start = time.perf_counter()
    table = pq.read_table(str(data))
    x = np.asarray(table.column("x").combine_chunks().flatten(), dtype=np.float32).reshape(table.num_rows, -1)
    y = table.column("label").to_numpy()
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    options = session.get_session_options()
    BARE_SETTINGS.update(
        intra_op=options.intra_op_num_threads, inter_op=options.inter_op_num_threads, batch=BATCH,
        mode=str(options.execution_mode), providers=session.get_providers(),
    )  # fmt: skip
    name = session.get_inputs()[0].name
    logits, run = [], 0.0
    for i in range(0, len(x), BATCH):
        called = time.perf_counter()
        logits.append(session.run(None, {name: x[i : i + BATCH]})[0])
        run += time.perf_counter() - called
    pred = np.concatenate(logits).argmax(axis=1)
    confusion = np.bincount(y * CLASSES + pred, minlength=CLASSES * CLASSES).reshape(CLASSES, CLASSES)
    tp = np.diag(confusion).astype(np.float64)
    fp, fn = confusion.sum(axis=0) - tp, confusion.sum(axis=1) - tp
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.nan_to_num(2 * tp / (2 * tp + fp + fn)).mean()
        precision = np.nan_to_num(tp / (tp + fp)).mean()
    values = {"accuracy_score": float((pred == y).mean()), "f1_score": float(f1), "precision": float(precision)}
    return time.perf_counter() - start, run, values


#: Our session's settings as results.json records them (``runtimes``), for the fairness line.
OURS_SETTINGS: dict[str, object] = {}


def ours(run: dict) -> tuple[float, float, float, dict[str, float]]:
    """(evaluate() seconds, its prediction pass's seconds, the pass's model calls' seconds, values)."""
    start = time.perf_counter()
    result = evaluate(run)
    seconds = time.perf_counter() - start
    model = next(iter(result.models.values()))
    values = {key.split("-", 1)[1]: m.value for key, m in model.metrics.items()}
    OURS_SETTINGS.update(model.runtimes[0] if model.runtimes else {})
    return seconds, model.stage_seconds["pass:d"], model.passes["d"]["model_seconds"], values


def without_records(run: dict) -> float:
    """evaluate() seconds with the instance-record writer doing nothing (what the records cost is the rest)."""
    sink = olive_eval.records.parquet.ParquetSink
    write = sink.write
    sink.write = lambda *args: None  # type: ignore[method-assign]
    try:
        return ours(run)[0]
    finally:
        sink.write = write  # type: ignore[method-assign]


def median_rounds(rounds: int, *sides: Callable[[], float]) -> list[float]:
    """Each side once to warm up (not counted), then once per round, in turn (so drifting load reaches all sides
    alike); the median per side."""
    for side in sides:
        side()
    times: list[list[float]] = [[] for _ in sides]
    for _ in range(rounds):
        for side, out in zip(sides, times, strict=True):
            out.append(side())
    return [statistics.median(t) for t in times]


OLIVE = r"""
import json, sys, time
import numpy as np, torch
from olive.data.config import DataConfig
from olive.data.registry import Registry
from olive.evaluator.metric import Metric
from olive.evaluator.olive_evaluator import OliveEvaluatorConfig
from olive.hardware import Device
from olive.model import ONNXModelHandler

model_path, data_path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])


@Registry.register_dataset()
def bench_arrays(data_file):
    arrays = np.load(data_file)
    return torch.utils.data.TensorDataset(torch.from_numpy(arrays["x"]), torch.from_numpy(arrays["y"]))


macro = {"task": "multiclass", "num_classes": 10, "average": "macro"}
data = DataConfig(
    name="d",
    load_dataset_config={"type": "bench_arrays", "params": {"data_file": data_path}},
    post_process_data_config={"type": "text_classification_post_process"},  # argmax: Olive's metrics read labels
    dataloader_config={"params": {"batch_size": 64}},
)
metric = Metric(
    name="acc",
    type="accuracy",
    data_config=data,
    sub_types=[
        {"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass", "num_classes": 10}},
        {"name": "f1_score", "metric_config": macro},
        {"name": "precision", "metric_config": macro},
    ],
)
model = ONNXModelHandler(model_path=model_path)
evaluator = OliveEvaluatorConfig(metrics=[metric]).create_evaluator(model)
times, values = [], {}
for _ in range(rounds + 1):  # the first is the cold call
    start = time.perf_counter()
    result = evaluator.evaluate(model, [metric], Device.CPU, ["CPUExecutionProvider"])
    times.append(time.perf_counter() - start)
    values = {key.split("-", 1)[1]: float(value.value) for key, value in result.items()}
print(json.dumps({"seconds": times[1:], "values": values}))
"""


def olive_seconds(python: str, model: Path, data: Path, folder: Path, rounds: int) -> tuple[float, dict[str, float]]:
    table = pq.read_table(str(data))
    x = np.asarray(table.column("x").combine_chunks().flatten(), dtype=np.float32).reshape(table.num_rows, -1)
    arrays = folder / "arrays.npz"
    np.savez(arrays, x=x, y=table.column("label").to_numpy())
    script = folder / "olive_side.py"
    script.write_text(OLIVE)
    done = subprocess.run(
        [python, str(script), str(model), str(arrays), str(rounds)], capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"Olive's side failed:\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return statistics.median(out["seconds"]), out["values"]


def settle(path: Path) -> Path:
    """The file dated a minute back, as an optimization loop's data set is (not written just before each run)."""
    past = time.time_ns() - 60 * 1_000_000_000
    os.utime(path, ns=(past, past))
    return path


def case(name: str, model: Path, data: Path, out: Path, rounds: int, olive_python: str | None, folder: Path) -> None:
    run = config(model, data, out)
    ours(run)  # the cold call: imports, registries, first session
    passes: list[float] = []
    calls: list[float] = []
    runs: list[float] = []
    values: dict[str, dict[str, float]] = {}

    def ours_side() -> float:
        total, passed, called, values["ours"] = ours(run)
        passes.append(passed)
        calls.append(called)
        return total

    def bare_side() -> float:
        total, run_seconds, values["bare"] = bare(model, data)
        runs.append(run_seconds)
        return total

    o, b, quiet = median_rounds(rounds, ours_side, bare_side, lambda: without_records(run))
    passes, calls, runs = passes[1:], calls[1:], runs[1:]  # not the warm-up's
    expected = values["bare"]
    assert all(abs(values["ours"][k] - v) < 1e-9 for k, v in expected.items()), values
    print(f"{name}: evaluate() {o:.3f} s, bare loop {b:.3f} s")
    print(f"  evaluate() / bare loop = {o / b:.3f}")
    run_median = statistics.median(runs)
    print(f"  prediction pass / bare session.run calls = {statistics.median(passes) / run_median:.3f}")
    print(f"  the pass's model calls / bare session.run calls = {statistics.median(calls) / run_median:.3f}")
    rest = statistics.median(p - c for p, c in zip(passes, calls, strict=True))
    print(
        f"  the pass besides its model calls: {rest * 1e3:.1f} ms; outside the pass: {(o - statistics.median(passes)) * 1e3:.1f} ms"
    )
    print(f"  sessions: bare {BARE_SETTINGS}; ours {OURS_SETTINGS}")
    print(f"  instance records: with / without = {o / quiet:.3f}")
    if olive_python:
        theirs, olive_values = olive_seconds(olive_python, model, data, folder, rounds)
        agree = all(abs(olive_values[k] - v) < 1e-6 for k, v in expected.items())
        print(f"  Olive 0.13 evaluate() {theirs:.3f} s; ours / Olive = {o / theirs:.3f} (values agree: {agree})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--olive-python", help="a Python with olive-ai 0.13 (e.g. /tmp/venv-olive/bin/python)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--only", choices=["small", "big"])
    parser.add_argument("--fresh-data", action="store_true", help="data files as just written: read by every run")
    args = parser.parse_args()
    dated = (lambda path: path) if args.fresh_data else settle
    print(f"onnxruntime {ort.__version__}, CPU; {N} examples, batch {BATCH}, median of {args.rounds} rounds")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.only in (None, "small"):
            data = dated(digits_parquet(root / "digits.parquet"))
            model = DIGITS / "models" / "digits_fp32.onnx"
            case("quickstart digits MLP", model, data, root / "out", args.rounds, args.olive_python, root)
        if args.only in (None, "big"):
            big = mlp_onnx(root / "mlp10m.onnx", BIG_SIZES)
            data = dated(classification_parquet(root / "big.parquet", N, BIG_SIZES[0], CLASSES))
            case("10M MLP", big, data, root / "out", max(3, args.rounds // 2), args.olive_python, root)


if __name__ == "__main__":
    main()

"""Build the quickstart's files: a digits test set, an fp32 ONNX MLP and its int8 candidate.

Everything comes from scikit-learn's bundled ``load_digits`` (shipped inside the wheel, nothing is
downloaded). Fixed seeds: on one machine, reruns write byte-identical files. ::

    python examples/quickstart/make_quickstart.py           # writes data/ and models/ here (~15 s on 2 cores)
    python examples/quickstart/make_quickstart.py --sweep   # the depth x width x method table (~4 min)

Outputs (committed, so the quickstart itself needs no generation step):

* ``data/digits_test.jsonl``: the 20% stratified test split, one ``{"pixels": [64 floats in 0..1],
  "label": int}`` object per line.
* ``models/digits_fp32.onnx``: the baseline, input ``pixels`` float32 [batch, 64], output ``logits``
  float32 [batch, 10], dynamic batch dimension.
* ``models/digits_int8.onnx``: the candidate, made from the fp32 model with onnxruntime.quantization.

The architecture and quantization method below were chosen with ``--sweep`` on a 2-core x86 CPU: the
smallest MLP for which the int8 model is clearly faster than fp32 at batch 64 and at batch 1 (2x256 is
faster only at batch 64), and the method that was fastest there without losing accuracy: dynamic
quantization with signed int8 weights, per tensor. See README.md next to this file for the numbers.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnxruntime.quantization import (
    CalibrationDataReader,
    CalibrationMethod,
    QuantFormat,
    QuantType,
    quantize_dynamic,
    quantize_static,
)
from onnxruntime.quantization.shape_inference import quant_pre_process
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / "data"
MODEL_DIR = HERE / "models"
TEST_JSONL = DATA_DIR / "digits_test.jsonl"
FP32_ONNX = MODEL_DIR / "digits_fp32.onnx"
INT8_ONNX = MODEL_DIR / "digits_int8.onnx"

SEED = 0
TEST_FRACTION = 0.2
NUM_FEATURES = 64
NUM_CLASSES = 10

# Chosen by --sweep (see the module docstring and README.md).
HIDDEN = 512
LAYERS = 2
METHOD = "dynamic-qint8"

EPOCHS = 30
TRAIN_BATCH = 64
LEARNING_RATE = 1e-3
OPSET = 18  # the torch.onnx (dynamo) exporter's lowest native opset; 17 would need a version conversion

CALIBRATION_SAMPLES = 512  # static quantization calibrates on this many training samples
LATENCY_BATCH = 64  # the quickstart config's latency batch
WARMUP_RUNS = 10
TIMED_RUNS = 200
LATENCY_ROUNDS = 5
MIN_SPEEDUP = 1.3
MAX_ACCURACY_DROP = 0.01

SWEEP_WIDTHS = (256, 512, 1024, 2048)
SWEEP_LAYERS = (2, 3)
METHODS = (
    "dynamic-qint8",
    "dynamic-quint8",
    "dynamic-qint8-per-channel",
    "static-qdq-u8s8",
    "static-qdq-s8s8",
    "static-qoperator-u8s8",
)


# ----------------------------------------------------------------------------------------------- data


def load_splits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Stratified 80/20 split of the bundled digits; pixels scaled from 0..16 to 0..1 (exact at 4 decimals)."""
    x, y = load_digits(return_X_y=True)
    x = np.round(x / 16.0, 4).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y.astype(np.int64), test_size=TEST_FRACTION, stratify=y, random_state=SEED
    )
    return x_train, y_train, x_test, y_test


def write_jsonl(path: Path, x: np.ndarray, y: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for pixels, label in zip(x, y, strict=True):
            row = {"pixels": [round(float(v), 4) for v in pixels], "label": int(label)}
            f.write(json.dumps(row, separators=(",", ":")) + "\n")


def read_jsonl(path: Path) -> tuple[np.ndarray, np.ndarray]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    x = np.asarray([r["pixels"] for r in rows], dtype=np.float32)
    y = np.asarray([r["label"] for r in rows], dtype=np.int64)
    return x, y


# ---------------------------------------------------------------------------------------------- model


def build_mlp(hidden: int, layers: int) -> torch.nn.Sequential:
    modules: list[torch.nn.Module] = []
    width = NUM_FEATURES
    for _ in range(layers):
        modules += [torch.nn.Linear(width, hidden), torch.nn.ReLU()]
        width = hidden
    modules.append(torch.nn.Linear(width, NUM_CLASSES))
    return torch.nn.Sequential(*modules)


def train(hidden: int, layers: int, x: np.ndarray, y: np.ndarray) -> torch.nn.Module:
    torch.manual_seed(SEED)
    model = build_mlp(hidden, layers)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    inputs, targets = torch.from_numpy(x), torch.from_numpy(y)
    order = torch.Generator().manual_seed(SEED)
    model.train()
    for _ in range(EPOCHS):
        permutation = torch.randperm(len(inputs), generator=order)
        for start in range(0, len(inputs), TRAIN_BATCH):
            idx = permutation[start : start + TRAIN_BATCH]
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(inputs[idx]), targets[idx])
            loss.backward()
            optimizer.step()
    return model.eval()


def export_onnx(model: torch.nn.Module, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model,
        (torch.zeros(2, NUM_FEATURES),),
        str(path),
        input_names=["pixels"],
        output_names=["logits"],
        opset_version=OPSET,
        dynamo=True,
        external_data=False,
        dynamic_shapes=({0: torch.export.Dim("batch")},),
        verbose=False,
    )
    onnx.checker.check_model(str(path))


# --------------------------------------------------------------------------------------- quantization


class DigitsCalibrationReader(CalibrationDataReader):
    """Feeds training samples, in batches of LATENCY_BATCH, to static quantization's calibration."""

    def __init__(self, x: np.ndarray) -> None:
        batches = [x[i : i + LATENCY_BATCH] for i in range(0, len(x), LATENCY_BATCH)]
        self._feeds = iter([{"pixels": np.ascontiguousarray(b)} for b in batches])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._feeds, None)


def quantize(fp32_path: Path, int8_path: Path, method: str, calibration: np.ndarray) -> None:
    """Quantize with onnxruntime.quantization after its recommended pre-processing (shape inference)."""
    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        quant_pre_process(str(fp32_path), str(prepared), skip_symbolic_shape=False)
        if method.startswith("dynamic-"):
            weight_type = QuantType.QUInt8 if method == "dynamic-quint8" else QuantType.QInt8
            quantize_dynamic(
                str(prepared),
                str(int8_path),
                weight_type=weight_type,
                per_channel=method.endswith("per-channel"),
            )
        elif method.startswith("static-"):
            _, fmt, types = method.split("-")
            quantize_static(
                str(prepared),
                str(int8_path),
                DigitsCalibrationReader(calibration),
                quant_format=QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator,
                activation_type=QuantType.QUInt8 if types.startswith("u8") else QuantType.QInt8,
                weight_type=QuantType.QInt8,
                per_channel=True,
                calibrate_method=CalibrationMethod.MinMax,
            )
        else:
            raise ValueError(f"unknown quantization method {method!r}; choose from {', '.join(METHODS)}")
    # Pre-processing runs onnxruntime's optimizer, which declares every opset domain it knows; keep the used ones.
    model = onnx.load(str(int8_path))
    used = {node.domain for node in model.graph.node} | {""}
    kept = [opset for opset in model.opset_import if opset.domain in used]
    del model.opset_import[:]
    model.opset_import.extend(kept)
    onnx.checker.check_model(model)
    onnx.save(model, str(int8_path))


# -------------------------------------------------------------------------------------------- measure


def session(path: Path) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def accuracy(path: Path, x: np.ndarray, y: np.ndarray) -> float:
    (logits,) = session(path).run(["logits"], {"pixels": x})
    return float((logits.argmax(axis=1) == y).mean())


def median_latencies_ms(paths: dict[str, Path], x: np.ndarray, batch: int) -> dict[str, float]:
    """Median milliseconds of a bare ``InferenceSession.run`` on one fixed batch, per model.

    Each model gets WARMUP_RUNS untimed runs, then TIMED_RUNS timed ones; the timed runs are interleaved
    across the models in LATENCY_ROUNDS rounds so that a change in machine load hits them all alike.
    """
    feed = {"pixels": np.ascontiguousarray(x[:batch])}
    sessions = {name: session(path) for name, path in paths.items()}
    for sess in sessions.values():
        for _ in range(WARMUP_RUNS):
            sess.run(None, feed)
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(LATENCY_ROUNDS):
        for name, sess in sessions.items():
            for _ in range(TIMED_RUNS // LATENCY_ROUNDS):
                start = time.perf_counter()
                sess.run(None, feed)
                times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t) * 1e3) for name, t in times.items()}


def size_mb(path: Path) -> float:
    return path.stat().st_size / 1e6


def calibration_slice(x_train: np.ndarray) -> np.ndarray:
    pick = np.random.default_rng(SEED).permutation(len(x_train))[:CALIBRATION_SAMPLES]
    return x_train[np.sort(pick)]


def quiet() -> None:
    """Silence the exporter's and quantizer's progress chatter; results are printed by this script."""
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    ort.set_default_logger_severity(3)


# ---------------------------------------------------------------------------------------------- modes


def sweep() -> None:
    """Train every depth x width, quantize with every method, print accuracy, latency and size."""
    x_train, y_train, x_test, y_test = load_splits()
    calibration = calibration_slice(x_train)
    print(
        f"median ms of {TIMED_RUNS} runs after {WARMUP_RUNS} warm-up, at batch {LATENCY_BATCH} and 1; "
        f"speedup = fp32 / int8; model = hidden layers x width"
    )
    print(f"{'model':<7} {'variant':<26} {'acc':>6} {'MB':>6} {'b64 ms':>8} {'b1 ms':>7} {'x b64':>6} {'x b1':>5}")
    with tempfile.TemporaryDirectory() as tmp:
        for layers in SWEEP_LAYERS:
            for hidden in SWEEP_WIDTHS:
                name = f"{layers}x{hidden}"
                paths = {"fp32": Path(tmp) / f"{name}_fp32.onnx"}
                export_onnx(train(hidden, layers, x_train, y_train), paths["fp32"])
                for method in METHODS:
                    paths[method] = Path(tmp) / f"{name}_{method}.onnx"
                    quantize(paths["fp32"], paths[method], method, calibration)
                b64 = median_latencies_ms(paths, x_test, LATENCY_BATCH)
                b1 = median_latencies_ms(paths, x_test, 1)
                for variant, path in paths.items():
                    acc = accuracy(path, x_test, y_test)
                    line = (
                        f"{name:<7} {variant:<26} {acc:6.4f} {size_mb(path):6.2f} {b64[variant]:8.4f} "
                        f"{b1[variant]:7.4f}"
                    )
                    if variant != "fp32":
                        line += f" {b64['fp32'] / b64[variant]:6.2f} {b1['fp32'] / b1[variant]:5.2f}"
                    print(line, flush=True)


def build() -> None:
    x_train, y_train, x_test, y_test = load_splits()
    write_jsonl(TEST_JSONL, x_test, y_test)
    # Evaluate on what the quickstart will read, not on the in-memory arrays.
    x_eval, y_eval = read_jsonl(TEST_JSONL)

    start = time.perf_counter()
    model = train(HIDDEN, LAYERS, x_train, y_train)
    print(f"trained {LAYERS}x{HIDDEN} MLP for {EPOCHS} epochs in {time.perf_counter() - start:.1f} s")
    export_onnx(model, FP32_ONNX)
    quantize(FP32_ONNX, INT8_ONNX, METHOD, calibration_slice(x_train))
    print(f"test set: {len(y_eval)} samples -> {TEST_JSONL.relative_to(HERE)}")

    paths = {"fp32": FP32_ONNX, "int8": INT8_ONNX}
    b64 = median_latencies_ms(paths, x_eval, LATENCY_BATCH)
    b1 = median_latencies_ms(paths, x_eval, 1)
    acc = {name: accuracy(path, x_eval, y_eval) for name, path in paths.items()}
    for name, path in paths.items():
        print(
            f"{name} ({path.relative_to(HERE)}): accuracy {acc[name]:.4f}, median latency "
            f"{b64[name]:.4f} ms @ batch {LATENCY_BATCH}, {b1[name]:.4f} ms @ batch 1, size {size_mb(path):.3f} MB"
        )
    speedup = b64["fp32"] / b64["int8"]
    print(
        f"int8 ({METHOD}) vs fp32: {speedup:.2f}x faster @ batch {LATENCY_BATCH}, "
        f"{b1['fp32'] / b1['int8']:.2f}x @ batch 1, {size_mb(FP32_ONNX) / size_mb(INT8_ONNX):.2f}x smaller, "
        f"accuracy {100 * (acc['int8'] - acc['fp32']):+.2f} points"
    )
    if speedup < MIN_SPEEDUP:
        print(f"WARNING: int8 is less than {MIN_SPEEDUP}x faster than fp32 on this machine")
    if acc["fp32"] - acc["int8"] > MAX_ACCURACY_DROP:
        print(f"WARNING: int8 loses more than {100 * MAX_ACCURACY_DROP:.0f} point(s) of accuracy")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="measure fp32 vs int8 for several widths and quantization methods; writes nothing",
    )
    args = parser.parse_args(argv)
    quiet()
    if args.sweep:
        sweep()
    else:
        build()


if __name__ == "__main__":
    main()

"""Engine benchmarks: latency fidelity, inference overhead, and the single shared inference pass.

Every figure is a ratio against a bare ONNX Runtime loop measured in the same process and run:

* latency fidelity   olive-eval's reported p50 / p50 of a bare ``session.run`` loop on the same input
                      (target 0.97-1.03), on the quickstart model and on a ~10M-parameter MLP;
* inference overhead  wall time of an accuracy evaluation over 10k samples / a bare loop of
                      ``session.run`` over the same batches (target <= 1.10);
* single pass         wall time with three accuracy metrics / with one, on one data config (~1.0).

Run: ``python bench/bench_engine.py`` (about two minutes on 2 cores).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _models import classification_parquet, mlp_onnx, parameter_count

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.engine.model.runner import ModelEvaluator
from olive_eval.engine.run.data_store import DataStore
from olive_eval.engine.run.plan import make_plan

REPO = Path(__file__).resolve().parents[1]
QUICKSTART_MODEL = REPO / "examples" / "quickstart" / "models" / "digits_fp32.onnx"
BIG_SIZES = [1024, 2048, 2048, 2048, 10]


def bare_p50(model: Path, feed: dict[str, np.ndarray], warmup: int, repeat: int) -> float:
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    for _ in range(warmup):
        session.run(None, feed)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - start)
    return float(np.percentile(times, 50)) * 1000


def ours_p50(model: Path, data: dict, input_col: str, warmup: int, repeat: int, out: Path) -> float:
    config = {
        "input_model": {"type": "ONNXModel", "model_path": str(model)},
        "data_configs": [data],
        "metrics": [
            {
                "name": "latency",
                "type": "latency",
                "data_config": data["name"],
                "sub_types": [{"name": "p50", "metric_config": {"warmup_num": warmup, "repeat_test_num": repeat}}],
            }
        ],
        "output_dir": str(out),
    }
    result = evaluate(config)
    return next(iter(result.models.values())).metrics["latency-p50"].value


def latency_fidelity(name: str, model: Path, data: dict, input_col: str, repeat: int, rounds: int, out: Path) -> float:
    run = load_run_config(
        {
            "input_model": {"type": "ONNXModel", "model_path": str(model)},
            "data_configs": [data],
            "metrics": [{"name": "l", "type": "latency", "data_config": data["name"], "sub_types": [{"name": "avg"}]}],
        },
    )
    first = DataStore(run).view(data["name"], run.input_model).first_batch()
    feed = {"x" if input_col == "x" else input_col: np.asarray(first.columns[input_col], dtype=np.float32)}
    ratios = []
    for _ in range(rounds):  # interleave to cancel drift (frequency scaling, other load)
        ours = ours_p50(model, data, input_col, 20, repeat, out)
        bare = bare_p50(model, feed, 20, repeat)
        ratios.append(ours / bare)
    ratio = statistics.median(ratios)
    print(f"latency fidelity [{name}]: p50 ours/bare = {ratio:.3f} (rounds: {', '.join(f'{r:.3f}' for r in ratios)})")
    return ratio


def inference_overhead(model: Path, data: dict, rounds: int, out: Path) -> tuple[float, float]:
    """Wall-time ratios to a bare loop: full evaluate(), model evaluation with data loaded, inference pass."""
    metric = {
        "name": "acc",
        "type": "accuracy",
        "data_config": data["name"],
        "sub_types": [{"name": "accuracy_score", "metric_config": {"task": "multiclass", "num_classes": 10}}],
    }
    config = {
        "input_model": {"type": "ONNXModel", "model_path": str(model)},
        "data_configs": [data],
        "metrics": [metric],
        "output_dir": str(out),
    }
    run = load_run_config(config)
    store = DataStore(run)
    batches = [
        {name: np.asarray(b.columns[name], dtype=np.float32) for name in b.inputs}
        for b in store.view(data["name"], run.input_model).batches()
    ]
    samples = sum(len(next(iter(b.values()))) for b in batches)
    full, passes, inference, bare = [], [], [], []
    for _ in range(rounds):
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        start = time.perf_counter()
        for batch in batches:
            session.run(None, batch)
        bare.append(time.perf_counter() - start)

        start = time.perf_counter()
        evaluated = evaluate(config)
        full.append(time.perf_counter() - start)
        inference.append(next(iter(evaluated.models.values())).stage_seconds[f"pass:{data['name']}"])

        evaluator = ModelEvaluator(run, make_plan(run), store)
        start = time.perf_counter()
        result = evaluator.evaluate(run.input_model)
        passes.append(time.perf_counter() - start)
        assert result.status == "ok", result.error
    b = statistics.median(bare)
    f, p, i = (statistics.median(t) / b for t in (full, passes, inference))
    print(f"inference overhead: {samples} samples in {len(batches)} batches, bare loop {b:.2f}s")
    print(f"  evaluate() end to end (dataset load + session start + pass + metrics) / bare = {f:.3f}")
    print(f"  model evaluation with data loaded (session start + pass + metrics) / bare = {p:.3f}")
    print(f"  prediction pass (batches through the runtime interface, scored as they stream) / bare = {i:.3f}")
    return f, p


def single_pass(model: Path, data: dict, rounds: int, out: Path) -> float:
    one = [
        {
            "name": "a",
            "type": "accuracy",
            "data_config": data["name"],
            "sub_types": [{"name": "accuracy_score", "priority": 1}],
        }
    ]
    three = [
        {
            "name": "a",
            "type": "accuracy",
            "data_config": data["name"],
            "sub_types": [
                {"name": "accuracy_score", "priority": 1},
                {"name": "f1_score", "metric_config": {"average": "macro"}},
            ],
        },
        {
            "name": "b",
            "type": "accuracy",
            "data_config": data["name"],
            "sub_types": [{"name": "precision", "metric_config": {"average": "macro"}}],
        },
    ]
    times: dict[int, list[float]] = {1: [], 3: []}
    inference: dict[int, list[float]] = {1: [], 3: []}
    for _ in range(rounds):
        for n, metrics in ((1, one), (3, three)):
            config = {
                "input_model": {"type": "ONNXModel", "model_path": str(model)},
                "data_configs": [data],
                "metrics": metrics,
                "output_dir": str(out),
            }
            start = time.perf_counter()
            result = evaluate(config)
            times[n].append(time.perf_counter() - start)
            stages = next(iter(result.models.values())).stage_seconds
            assert [k for k in stages if k.startswith("pass:")] == [f"pass:{data['name']}"]
            inference[n].append(stages[f"pass:{data['name']}"])
    ratio = statistics.median(times[3]) / statistics.median(times[1])
    pass_ratio = statistics.median(inference[3]) / statistics.median(inference[1])
    print(f"single pass: three accuracy metrics (two Olive metrics) / one metric, wall time = {ratio:.3f}")
    print(
        f"  one inference stage in both runs; its time ratio = {pass_ratio:.3f} (the rest: scoring and one more"
        " instances file)"
    )
    return ratio


def main() -> None:
    print(f"onnxruntime {ort.__version__}, CPU only")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        big = mlp_onnx(root / "mlp10m.onnx", BIG_SIZES)
        print(f"big model: MLP {BIG_SIZES}, {parameter_count(BIG_SIZES) / 1e6:.1f}M parameters")
        parquet = classification_parquet(root / "data.parquet", 10_000, BIG_SIZES[0], 10)
        big_data = {
            "name": "big",
            "load_dataset_config": {"data_name": "parquet", "data_files": str(parquet)},
            "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
            "dataloader_config": {"batch_size": 64},
        }
        digits = {
            "name": "digits",
            "load_dataset_config": {
                "data_name": "json",
                "data_files": str(REPO / "examples" / "quickstart" / "data" / "digits_test.jsonl"),
            },
            "pre_process_data_config": {"input_cols": ["pixels"], "label_col": "label"},
            "dataloader_config": {"batch_size": 64},
        }
        out = root / "out"
        latency_fidelity("quickstart fp32, batch 64", QUICKSTART_MODEL, digits, "pixels", 2000, 5, out)
        latency_fidelity("10M MLP, batch 64", big, big_data, "x", 200, 5, out)
        inference_overhead(big, big_data, 5, out)
        single_pass(big, big_data, 3, out)


if __name__ == "__main__":
    main()

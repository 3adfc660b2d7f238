"""Sharded data: one model's pass over 1M examples in 2 shards (the process executor, ``"shards": 2``) against
the same pass in one process (the local executor).

The model is a ReLU MLP on 32 features with one intra-op thread per session, so one process uses one core and two
shards two: the bench measures what splitting the data buys, not ONNX Runtime's own threading. Metrics: accuracy
(with a percentile interval), macro F1 (map/reduce) and AUROC (a global metric; its interval over 1M examples
would be the driver's work alike on both sides and dwarf the pass). Printed: each
side's median wall time of ``evaluate()`` over interleaved repeats, the ratio sharded / one process (target
<= 0.65), and whether every value and interval is bit-identical (it must be). Both sides write the per-example
files (1M rows; a sharded pass's shards hand their records to the driver, which writes them). The same two
shards run one after another in one process (the local executor with ``"shards": 2``) are timed too, the work
of the process side without its parallelism.

Measured (2 cores, CPU, both sides writing the files): one process 28.35 s, the 2 shards one after another
28.41 s, 2 shards 16.15 s: ratio 0.57 (0.57 against the serial shards), every value and interval bit-identical
(before sharded passes wrote per-example files: 29.30, 28.62 and 15.63 s, ratio 0.53). Only the pass is split: the driver's finishing (the accuracy interval's resamples, AUROC over 1M
rows, about 3.8 s) stays serial, and writing the shards' records takes about 0.2 s; so with a model 14 times
lighter (MLP [32, 256, 256, 10]: the model calls about 1.6 s of a 2.9 s pass) the ratio was 0.93.

With ``--ray``: the 2 shards as Ray tasks (the ray executor, ``"shards": 2``, on a local Ray of 2 CPUs started
beforehand, as a notebook's or a cluster's would be) against one process, without the serial side. Measured (2
cores, load average about 1.5 from other work): one process 28.95 s, 2 shards on Ray 17.48 s: ratio 0.60
(target <= 0.65), every value and interval bit-identical. Under heavier load from other processes it was 0.65 and
0.79: Ray runs its workers at nice 15, so other processes on the machine take their CPU first. Of a sharded run,
about 1 s goes to starting the shards (the tasks, the model's session in each), 3.8 s to the serial finishing.

Run: ``python bench/bench_shards.py`` (about three minutes on 2 cores), ``python bench/bench_shards.py --ray``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _models import classification_parquet, mlp_onnx

from olive_eval import evaluate

EXAMPLES = 1_000_000
SIZES = [32, 1024, 1024, 10]
REPEATS = 2
CI = {"method": "percentile", "n_resamples": 200, "seed": 0}


def config(root: Path) -> dict[str, Any]:
    model = mlp_onnx(root / "mlp.onnx", SIZES)
    data = classification_parquet(root / "data.parquet", EXAMPLES, SIZES[0], SIZES[-1])
    settings = {"session_options": {"intra_op_num_threads": 1, "inter_op_num_threads": 1}}
    return {
        "input_model": {"type": "ONNXModel", "name": "mlp", "model_path": str(model), "inference_settings": settings},
        "data_configs": [
            {
                "name": "big",
                "load_dataset_config": {"data_name": "parquet", "data_files": str(data)},
                "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
                "dataloader_config": {"batch_size": 1024},
            }
        ],
        "metrics": [
            {
                "name": "acc",
                "type": "accuracy",
                "data_config": "big",
                "sub_types": [
                    {"name": "accuracy_score", "priority": 1, "confidence_interval": CI},
                    {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 10}},
                    {"name": "auroc", "metric_config": {"task": "multiclass", "num_classes": 10}},
                ],
            }
        ],
    }


def values(result: Any) -> dict[str, tuple[Any, ...]]:
    return {key: (s.value, s.ci_low, s.ci_high) for key, s in result.models["mlp"].metrics.items()}


def main(on_ray: bool = False) -> None:
    if on_ray:
        import ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)  # once, outside the timed runs
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = config(root)
        sides: dict[str, dict[str, Any]] = {"one process": {"type": "local"}}
        if on_ray:
            sides["2 shards"] = {"type": "ray", "address": "local", "num_workers": 2, "shards": 2}
        else:
            sides["2 shards in one process"] = {"type": "local", "shards": 2}
            sides["2 shards"] = {"type": "process", "shards": 2}
        times: dict[str, list[float]] = {name: [] for name in sides}
        got: dict[str, dict[str, tuple[Any, ...]]] = {}
        evaluate({**base, "executor": sides["2 shards"]}, output_dir=root / "warm")  # workers, file cache
        for i in range(REPEATS):
            for name in sides if i % 2 == 0 else list(sides)[::-1]:
                start = time.perf_counter()
                result = evaluate({**base, "executor": sides[name]}, output_dir=root / f"{i}{name}")
                times[name].append(time.perf_counter() - start)
                print(f"  {name}: {times[name][-1]:.2f} s", flush=True)
                assert result.models["mlp"].status == "ok", result.models["mlp"].error
                got[name] = values(result)
        where = "Ray tasks" if on_ray else "child processes"
        print(f"{EXAMPLES} examples, MLP {SIZES}, batch 1024, one intra-op thread; {REPEATS} interleaved repeats")
        print(f"  the 2 shards as {where}")
        for name, runs in times.items():
            print(f"  {name}: median {statistics.median(runs):.2f} s ({', '.join(f'{t:.2f}' for t in runs)})")
        ratio = statistics.median(times["2 shards"]) / statistics.median(times["one process"])
        print(f"  ratio 2 shards / one process: {ratio:.2f} (target <= 0.65)")
        if "2 shards in one process" in times:
            serial = statistics.median(times["2 shards"]) / statistics.median(times["2 shards in one process"])
            print(f"  ratio 2 shards / the same 2 shards one after another in one process: {serial:.2f}")
        same = all(values == got["one process"] for values in got.values())
        print(f"  values and intervals bit-identical: {same}")
        for key, value in got["one process"].items():
            print(f"    {key}: {value}")


if __name__ == "__main__":
    main("--ray" in sys.argv[1:])

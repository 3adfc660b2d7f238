"""The ray executor against the local one: 8 independent candidates whose accuracy pass costs about 2 s each.

Each model is a PythonModel that computes (a busy loop, not a sleep: it holds a CPU) for a quarter of the cost
per batch over 4 batches; the baseline costs the same and is evaluated first (goals and early stop need it),
then the 8 candidates go to Ray together. Ray runs on this machine with 2 workers (``ray.init(num_cpus=2)``,
started once before the timed runs, as a long-lived cluster would be; its start-up is printed apart).
Printed: both wall times, the ratio ray / local (target <= 0.6), the per-model cost and Ray's per-task overhead
derived from them, and the wall and speed-up that cost and overhead project for N workers.

Run: ``python bench/bench_ray_executor.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from olive_eval import evaluate  # noqa: E402

CANDIDATES = 8
COST_S = 2.0
BATCHES = 4
WORKERS = 2

MODEL = textwrap.dedent(
    f"""
    import time


    class Busy:
        def __call__(self, batch):
            end = time.perf_counter() + {COST_S / BATCHES}
            spins = 0
            while time.perf_counter() < end:  # a CPU held, as a model's forward passes hold it
                spins += 1
            return [int(v) % 2 for v in batch["v"]]


    def load(model_path):
        return Busy()
    """
)


def config(folder: Path) -> dict:
    (folder / "busy.py").write_text(MODEL)
    rows = [{"v": i, "label": i % 2} for i in range(4 * BATCHES)]
    (folder / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def model(name: str) -> dict:
        return {"type": "PythonModel", "name": name, "user_script": str(folder / "busy.py"), "model_loader": "load"}

    return {
        "input_model": model("base"),
        "candidates": [model(f"cand{i}") for i in range(CANDIDATES)],
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(folder / "d.jsonl")},
                "pre_process_data_config": {"input_cols": ["v"], "label_col": "label"},
                "dataloader_config": {"batch_size": 4},
            }
        ],
        "metrics": [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]}],
    }


def timed(run: dict, out: Path, executor: dict) -> tuple[float, dict]:
    start = time.perf_counter()
    result = evaluate(run, output_dir=out, executor=executor)
    seconds = time.perf_counter() - start
    bad = {name: m.error for name, m in result.models.items() if m.status != "ok"}
    assert not bad, bad
    return seconds, {name: m.metrics["acc-accuracy_score"].value for name, m in result.models.items()}


def main() -> None:
    import ray

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run = config(folder)
        clock = time.perf_counter()
        ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        startup = time.perf_counter() - clock
        executor = {"type": "ray", "address": "local", "num_workers": WORKERS}
        timed({**run, "candidates": run["candidates"][:2]}, folder / "warm", executor)  # workers' imports
        local, local_values = timed(run, folder / "local", {"type": "local"})
        remote, ray_values = timed(run, folder / "ray", executor)
        ray.shutdown()
    assert local_values == ray_values
    models = CANDIDATES + 1
    cost = local / models  # one model's evaluation here, engine included
    rounds = 1 + math.ceil(CANDIDATES / WORKERS)  # the baseline, then the candidates two at a time
    overhead = max(0.0, remote / rounds - cost)  # Ray's per-task cost: submission, scheduling, results back
    print(f"{CANDIDATES} candidates + the baseline, each ~{COST_S:g} s of computing, {WORKERS} Ray workers:")
    print(f"  local executor: {local:6.2f} s   ({cost:.2f} s a model)")
    print(f"  ray executor:   {remote:6.2f} s   (Ray started beforehand in {startup:.1f} s, not counted)")
    print(f"  ratio ray / local: {remote / local:.3f} (target <= 0.6); same values: {local_values == ray_values}")
    print(f"  Ray's overhead per model: {overhead:.3f} s ({overhead / cost:.1%} of a model's cost)")
    print("  projected (baseline first, then the candidates N at a time; wall = (1 + ceil(8/N)) * (cost + overhead)):")
    for n in (1, 2, 4, 8):
        wall = (1 + math.ceil(CANDIDATES / n)) * (cost + overhead)
        print(f"    N={n}: {wall:6.2f} s, speed-up over local {local / wall:.2f}x")
    print(f"  the limit (N >= {CANDIDATES}): {models / 2:.1f}x, the baseline's own pass runs before the rest")


if __name__ == "__main__":
    main()

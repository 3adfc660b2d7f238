"""The session: what a candidate after the first costs, against that candidate's own evaluation.

An optimization loop proposes candidates one by one. Before the session each step was an ``evaluate()`` of
the baseline and the candidate (data loaded, baseline evaluated again). With the session the baseline is
evaluated once; each later candidate is its own per-model unit (plus, with latency metrics, the paired
timing rounds beside the baseline, which this bench leaves out: accuracy only).

Printed, each a median over rounds in one process:
* session candidate / the candidate's own evaluation (a ModelEvaluator on the loaded data, writing its
  per-example records as a run does): target <= 1.05;
* session candidate / a fresh evaluate() of the baseline and that candidate (what a loop paid before).

Run: ``python bench/bench_session.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _models import classification_parquet, mlp_onnx

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.engine.model.runner import ModelEvaluator
from olive_eval.engine.run.data_store import DataStore
from olive_eval.engine.run.plan import make_plan
from olive_eval.engine.session.session import Evaluation
from olive_eval.records.writer import InstanceWriter

SIZES = [256, 512, 512, 10]
ROUNDS = 7


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        models = [mlp_onnx(root / f"m{i}.onnx", SIZES, seed=i) for i in range(ROUNDS + 2)]
        data = {
            "name": "d",
            "load_dataset_config": {
                "data_name": "parquet",
                "data_files": str(classification_parquet(root / "d.parquet", 10_000, SIZES[0], 10)),
            },
            "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
            "dataloader_config": {"batch_size": 64},
        }
        metric = {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [
                {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.5}},
                {"name": "f1_score", "metric_config": {"average": "macro"}},
                {"name": "precision", "metric_config": {"average": "macro"}},
            ],
        }

        def model(i: int) -> dict:
            return {"type": "ONNXModel", "name": f"m{i}", "model_path": str(models[i])}

        config = {"input_model": model(0), "data_configs": [data], "metrics": [metric], "output_dir": str(root / "o")}
        run = load_run_config(config)
        store = DataStore(run)
        store.preload(make_plan(run).data_configs())
        own, in_session, fresh = [], [], []
        with Evaluation(config, output_dir=root / "s") as session:
            session.evaluate(model(1))  # the first candidate (the baseline comes with it)
            for i in range(2, ROUNDS + 2):
                candidate = load_run_config({**config, "input_model": model(i)}).input_model
                start = time.perf_counter()
                writer = InstanceWriter(root / f"own{i}", ["acc"])
                result = ModelEvaluator(run, make_plan(run), store, writer=writer).evaluate(candidate)
                own.append(time.perf_counter() - start)
                assert result.status == "ok", result.error

                start = time.perf_counter()
                assert session.evaluate(model(i)).status == "ok"
                in_session.append(time.perf_counter() - start)

                start = time.perf_counter()
                evaluate({**config, "candidates": [model(i)]}, output_dir=root / f"f{i}")
                fresh.append(time.perf_counter() - start)
        o, s, f = (statistics.median(t) for t in (own, in_session, fresh))
        print(f"MLP {SIZES}, 10k examples, three accuracy sub-types; medians of {ROUNDS} candidates")
        print(f"  the candidate's own evaluation {o:.3f}s; in the session {s:.3f}s; fresh evaluate() {f:.3f}s")
        print(f"  session candidate / its own evaluation = {s / o:.3f} (target <= 1.05)")
        print(f"  session candidate / fresh evaluate() of baseline + candidate = {s / f:.3f}")


if __name__ == "__main__":
    main()

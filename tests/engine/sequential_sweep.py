"""A labelled data set and Python models whose accuracy is set per model, for sequential runs (tests and bench).

Example ``i`` has the label ``i % 3``; a model answers example ``i`` right when its own seeded uniform draw for
``i`` is below its accuracy, else with the next label. Each model appends the examples of every call to a file,
so a test counts what was run; ``delay`` seconds per example make a model cost time.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

MODEL_SCRIPT = """
import json
import zlib
import time
from pathlib import Path

import numpy as np


def load(model_path):
    spec = json.loads(Path(model_path).read_text())
    draws = np.random.default_rng(spec["seed"]).random(spec["n"])

    def predict(batch):
        ids = np.asarray(batch["x"]).astype(np.int64).reshape(-1)
        labels = ids % 3
        right = draws[ids] < spec["accuracy"]
        answer = np.where(right, labels, (labels + 1) % 3)
        if spec["delay"]:
            time.sleep(spec["delay"] * len(ids))
        with open(spec["calls"], "a") as calls:
            calls.write(f"{len(ids)}\\n")
        return np.eye(3, dtype=np.float32)[answer]

    return predict
"""


class Sweep:
    """``n`` labelled examples and PythonModels of given accuracies under ``root``."""

    def __init__(self, root: Path, n: int = 2000, delay: float = 0.0) -> None:
        self.root, self.n, self.delay = root, n, delay
        root.mkdir(parents=True, exist_ok=True)
        self.data = root / "data.jsonl"
        self.data.write_text("".join(json.dumps({"x": i, "label": i % 3}) + "\n" for i in range(n)))
        self.script = root / "model.py"
        self.script.write_text(MODEL_SCRIPT)

    def model(self, name: str, accuracy: float, seed: int | None = None) -> dict[str, Any]:
        spec = self.root / f"{name}.json"
        calls = self.root / f"{name}.calls"
        spec.write_text(
            json.dumps(
                {
                    "accuracy": accuracy,
                    "seed": seed if seed is not None else zlib.crc32(name.encode()),
                    "n": self.n,
                    "calls": str(calls),
                    "delay": self.delay,
                }
            )
        )
        return {
            "type": "PythonModel",
            "name": name,
            "user_script": str(self.script),
            "model_loader": "load",
            "model_path": str(spec),
        }

    def calls(self, name: str) -> int:
        """Examples model ``name`` was called on, over every call so far."""
        path = self.root / f"{name}.calls"
        return sum(int(line) for line in path.read_text().split()) if path.exists() else 0

    def config(
        self,
        candidates: dict[str, float],
        goal: dict[str, Any] | None = None,
        sequential: dict[str, Any] | None = None,
        metrics: list[dict[str, Any]] | None = None,
        baseline: float = 0.9,
        batch_size: int = 50,
    ) -> dict[str, Any]:
        goal = goal or {"type": "max-degradation", "value": 0.02, "confidence": 0.95}
        accuracy = {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [{"name": "accuracy_score", "priority": 1, "goal": goal}],
        }
        config: dict[str, Any] = {
            "input_model": self.model("base", baseline, seed=1),
            "candidates": [self.model(name, acc) for name, acc in candidates.items()],
            "data_configs": [
                {
                    "name": "d",
                    "type": "HuggingfaceContainer",
                    "load_dataset_config": {"data_name": "json", "data_files": str(self.data), "split": "train"},
                    "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
                    "dataloader_config": {"batch_size": batch_size},
                }
            ],
            "metrics": metrics if metrics is not None else [accuracy],
            "output_dir": str(self.root / "out"),
        }
        if sequential is not None:
            config["sequential"] = sequential
        return config

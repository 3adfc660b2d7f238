"""Small models and datasets built inside the tests (nothing is downloaded)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from olive_eval.config.data import DataConfig
from olive_eval.data.batch import Batch
from olive_eval.data.components import build, registries
from olive_eval.data.prepared import PrepareContext
from olive_eval.data.sources import DataContext

N_FEATURES, N_CLASSES = 8, 3


def linear_onnx(path: Path, weights: np.ndarray, input_name: str = "x", batch: int | str = "N") -> Path:
    """``logits = x @ weights`` as an ONNX graph."""
    n_in, n_out = weights.shape
    graph = helper.make_graph(
        [helper.make_node("MatMul", [input_name, "W"], ["logits"])],
        "linear",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, [batch, n_in])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, n_out])],
        [numpy_helper.from_array(weights.astype(np.float32), "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def python_model_run(
    folder: Path,
    metric: dict[str, Any],
    *,
    data: str = "d",
    batch_size: int = 4,
    model_path: str = "loaded",
    out: str = "out",
) -> dict[str, Any]:
    """A run of the PythonModel ``m`` (``load`` in ``folder/models.py``, handed ``folder/<model_path>``) over the JSON
    lines file ``folder/d.jsonl`` read as stored, with ``target`` as the label, scored by ``metric``."""
    return {
        "input_model": {
            "type": "PythonModel",
            "name": "m",
            "user_script": str(folder / "models.py"),
            "model_loader": "load",
            "model_path": str(folder / model_path),
        },
        "data_configs": [
            {
                "name": data,
                "load_dataset_config": {"data_name": "json", "data_files": str(folder / "d.jsonl")},
                "pre_process_data_config": {"type": "skip_pre_process", "label_col": "target"},
                "dataloader_config": {"batch_size": batch_size},
            }
        ],
        "metrics": [{"type": "accuracy", "data_config": data, **metric}],
        "output_dir": str(folder / out),
    }


class ToyProblem:
    """A 3-class linear problem: the baseline is exact, candidates get weight noise."""

    def __init__(self, root: Path, n: int = 120, seed: int = 0) -> None:
        self.root = root
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.weights = rng.standard_normal((N_FEATURES, N_CLASSES)).astype(np.float32)
        self.x = rng.standard_normal((n, N_FEATURES)).astype(np.float32).round(4)
        self.labels = (self.x @ self.weights).argmax(axis=1)
        self.data_file = write_jsonl(
            root / "data.jsonl", [{"x": x.tolist(), "label": int(y)} for x, y in zip(self.x, self.labels, strict=True)]
        )

    def model(self, name: str, noise: float = 0.0) -> Path:
        weights = self.weights + noise * self.rng.standard_normal(self.weights.shape).astype(np.float32)
        return linear_onnx(self.root / f"{name}.onnx", weights)

    def data_config(self, name: str = "toy", batch_size: int = 16) -> dict[str, Any]:
        return {
            "name": name,
            "type": "HuggingfaceContainer",
            "load_dataset_config": {"data_name": "json", "data_files": str(self.data_file), "split": "train"},
            "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
            "dataloader_config": {"batch_size": batch_size},
        }

    def config(self, candidates: dict[str, float], metrics: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "input_model": {"type": "ONNXModel", "name": "base", "model_path": str(self.model("base"))},
            "candidates": [
                {"type": "ONNXModel", "name": name, "model_path": str(self.model(name, noise))}
                for name, noise in candidates.items()
            ],
            "data_configs": [self.data_config()],
            "metrics": metrics,
            "output_dir": str(self.root / "out"),
        }


def batches_of(dc: DataConfig, processor: Path | None = None) -> tuple[Any, list[Batch]]:
    """A data config's dataset opened, prepared and batched, as a pass does: (prepared data, batches)."""
    source = build("dataset", dc.load_dataset_config).open(dc.name, DataContext())
    prepared = build("pre-process", dc.pre_process_data_config).prepare(source, PrepareContext(dc.name, processor))
    return prepared, list(build("dataloader", dc.dataloader_config).batches(prepared))


def write_margin_metric(path: Path, name: str) -> Path:
    """A user script registering ``name``: an instance metric reading logits, the label's margin over the next
    class (names differ per test: a name is registered once per process)."""
    path.write_text(
        "from olive_eval import register_metric\n\n\n"
        f'@register_metric(name="{name}", higher_is_better=True, kind="instance", reads=("logits", "references"))\n'
        "def margin(logits, reference, scale: float = 1.0):\n"
        "    return scale * float(logits[reference] - max(v for i, v in enumerate(logits) if i != reference))\n"
    )
    return path


@contextmanager
def data_components_forgotten() -> Iterator[None]:
    """Data components registered inside (a user script's) are removed on leaving: names are process-wide, and
    another test's did-you-mean hint would offer them."""
    before = {kind: set(registry.names()) for kind, registry in registries.items()}
    try:
        yield
    finally:
        for kind, registry in registries.items():
            for name in set(registry.names()) - before[kind]:
                registry.unregister(name)

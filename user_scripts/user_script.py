"""An example user script for olive-eval's ``custom`` metrics.

olive-eval calls two kinds of function from a user script:

``evaluate_func(model, device, execution_providers, **evaluate_func_kwargs)``
    Runs the model itself. ``model`` is the loaded model: for an ``ONNXModel`` it has
    ``.session`` (an ``onnxruntime.InferenceSession``), ``.model_path`` and ``.run(inputs)``, where
    ``inputs`` maps input names to numpy arrays and the outputs come back as a list of numpy arrays.
    ``device`` is ``"cpu"`` or ``"gpu"``; ``execution_providers`` lists the run's provider names.

``metric_func(model_output, targets, **metric_func_kwargs)``
    Scores predictions that olive-eval computed in its single inference pass over the metric's
    ``data_config`` (shared with every other metric on that data). ``model_output.preds`` is the
    post-processed output, ``model_output.logits`` the raw one; ``targets`` holds the labels.

Either function returns a number (when the metric has one sub-type) or a dict keyed by sub-type
name. Anything else, a NaN, or an exception fails that model with a message naming the function.
When a metric gives both, ``evaluate_func`` is used, as in Olive.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def eval_accuracy(model, device: str, execution_providers: list[str], data_file: str, batch_size: int = 64) -> float:
    """Accuracy of a digits classifier over a JSON-lines file, batching the data itself.

    ``data_file`` is resolved against this script's folder when it is relative.
    """
    path = Path(data_file) if Path(data_file).is_absolute() else HERE / data_file
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    pixels = np.asarray([row["pixels"] for row in rows], dtype=np.float32)
    labels = np.asarray([row["label"] for row in rows])
    correct = 0
    for start in range(0, len(rows), batch_size):
        logits = model.run({"pixels": pixels[start : start + batch_size]})[0]
        correct += int(np.sum(np.argmax(logits, axis=1) == labels[start : start + batch_size]))
    return correct / len(rows)


def confidence_metrics(model_output, targets: np.ndarray, top_k: int = 2) -> dict[str, float]:
    """Top-k accuracy and the mean softmax probability of the predicted class."""
    logits = np.asarray(model_output.logits, dtype=np.float64)
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = shifted / shifted.sum(axis=1, keepdims=True)
    top = np.argsort(-logits, axis=1)[:, :top_k]
    return {
        f"top{top_k}_accuracy": float(np.mean(np.any(top == targets[:, None], axis=1))),
        "mean_confidence": float(np.mean(probs.max(axis=1))),
    }

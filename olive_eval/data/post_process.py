"""Built-in post-processing: model outputs → the ``preds`` metrics read (``logits`` stay raw)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from olive_eval.errors import EvaluationError


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


POST_PROCESSORS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "identity": lambda x: x,
    "argmax": lambda x: np.argmax(x, axis=-1),
    "softmax": _softmax,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
}


def select_output(outputs: list[np.ndarray], names: list[str], which: str | int) -> np.ndarray:
    if isinstance(which, int):
        if not -len(outputs) <= which < len(outputs):
            raise EvaluationError(f"model has {len(outputs)} outputs; output_name index {which} is out of range")
        return outputs[which]
    if which not in names:
        raise EvaluationError(f"model has no output '{which}'; outputs: {', '.join(names)}")
    return outputs[names.index(which)]


def post_process(kind: str, logits: np.ndarray) -> np.ndarray:
    return POST_PROCESSORS[kind](logits)


def check_finite(output: np.ndarray, what: str) -> None:
    """Refuse NaN and infinite model outputs: one NaN input can turn every logit into NaN, and the
    metrics would still return numbers (accuracy 0.1, AUROC 0.5) that a goal then compares."""
    if not np.issubdtype(output.dtype, np.floating) and not np.issubdtype(output.dtype, np.complexfloating):
        return
    bad = ~np.isfinite(output)
    if not bad.any():
        return
    rows = bad.reshape(len(bad), -1).any(axis=1) if bad.ndim > 1 else bad
    first = int(np.argmax(rows))
    raise EvaluationError(
        f"{what} has non-finite values (NaN or infinity) in {int(rows.sum())} of {len(rows)} examples "
        f"(first: example {first}); check the model and its inputs"
    )

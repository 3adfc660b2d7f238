"""What calibration is measured on: each example's confidence and whether it came true. Pure numpy.

The rules are torchmetrics' ``CalibrationError`` (and the classification family's):

* ``multiclass``: scores ``[N, C]``; the confidence is the top class's probability, and it comes true (a *hit*)
  when the top class is the label; on a tie for the top score the first class is the prediction (numpy's
  ``argmax``, torch's ``max``);
* ``binary``: scores ``[N]`` (or ``[N, 1]``; ``[N, 2]``: the positive column); the confidence is the positive
  class's probability and the hit is the label itself (1: positive), so the bins compare the predicted and the
  observed frequency of the positive class;
* scores with any value outside [0, 1] are logits: a softmax over the classes (``[N, C]``, ``[N, 2]``) or a
  sigmoid (``[N]``); as in torchmetrics, the rule looks at one call's scores (in a pass, one batch) at a time.

The task is ``multiclass`` for scores with more than two columns, else ``binary``, unless set. Errors are one
line naming the column and the first bad example, numbered from ``start`` (in a pass, a batch's first example).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import numpy as np

from olive_eval.metrics.classification.inputs import check_binary, check_labels, column

Task = Literal["binary", "multiclass"]

#: Scores per block: a block, transposed, stays in cache while the max, the tie check and the softmax read it
#: along contiguous rows (numpy is slow along a short last axis, such as 10 classes).
BLOCK_SCORES = 1 << 17
BINARY_LABELS = "binary labels are 0 (negative) or 1 (positive)"


def scores_column(values: object, *, start: int = 0) -> tuple[np.ndarray, bool]:
    """Finite float scores, and whether they are logits (torchmetrics' rule: any value outside [0, 1] means
    every score of the call is a logit). Labels, NaN and infinity are errors."""
    scores = column(values, "predictions", start=start)
    if scores.dtype.kind != "f":
        raise ValueError(
            f"predictions: calibration needs class scores (probabilities or logits), not {scores.dtype} values "
            "(predicted labels carry no confidence)"
        )
    if not scores.size:
        return scores, False
    lowest, highest = scores.min(), scores.max()
    if not (np.isfinite(lowest) and np.isfinite(highest)):
        bad = ~np.isfinite(scores.reshape(len(scores), -1)).all(axis=1)
        raise ValueError(f"predictions: example {start + int(np.argmax(bad))} holds NaN or infinity, not a score")
    return scores, bool(lowest < 0 or highest > 1)


def resolve_task(scores: np.ndarray, task: Task | None) -> Task:
    """``task`` checked against the scores' shape, or the shape's task: more than two columns is multiclass."""
    wide = scores.ndim == 2 and scores.shape[1] > 2
    if task is None:
        return "multiclass" if wide else "binary"
    if task == "binary" and (wide or scores.ndim > 2):
        raise ValueError(f"binary scores must have shape [N], [N, 1] or [N, 2], got {list(scores.shape)}")
    if task == "multiclass" and (scores.ndim != 2 or scores.shape[1] < 2):
        raise ValueError(f"multiclass scores must have shape [N, C] with C >= 2, got {list(scores.shape)}")
    return task


def labels_column(values: object, num_examples: int, *, start: int = 0) -> np.ndarray:
    """``[N]`` reference labels (``[N, 1]`` accepted), as many as there are score rows."""
    labels = column(values, "references", start=start, labels=True)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels.reshape(-1)
    if labels.ndim != 1:
        raise ValueError(f"references must be one class label per example, got shape {list(labels.shape)}")
    if len(labels) != num_examples:
        raise ValueError(
            f"predictions and references hold different numbers of examples: {num_examples} vs {len(labels)}"
        )
    return labels


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function in float64, without overflow."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=np.float64)))


def positive_probability(scores: np.ndarray, logits: bool) -> np.ndarray:
    """Binary scores ``[N]``, ``[N, 1]`` or ``[N, 2]`` as the positive class's probability, float64 ``[N]``."""
    if scores.ndim == 2 and scores.shape[1] == 2:
        if logits:  # softmax(l)[:, 1] = sigmoid(l1 - l0)
            return sigmoid(scores[:, 1].astype(np.float64) - scores[:, 0])
        return scores[:, 1].astype(np.float64)
    flat = scores.reshape(len(scores))
    return sigmoid(flat) if logits else flat.astype(np.float64)


def block_rows(classes: int) -> int:
    """Examples per block of scores with ``classes`` columns."""
    return max(1024, BLOCK_SCORES // max(classes, 1))


def blocks(scores: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
    """``(rows, transposed block)``: the scores ``[N, C]`` as ``[C, rows]`` blocks in one reused buffer (float32,
    float64 for float64 scores). A block may be changed in place: the next one overwrites it."""
    n, c = scores.shape
    dtype = np.float64 if scores.dtype == np.float64 else np.float32
    step = block_rows(c)
    buffer = np.empty((c, min(n, step)), dtype)
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        block = buffer[:, : rows.stop - start]
        np.copyto(block, scores[rows].T)
        yield rows, block


def top_label(scores: np.ndarray, labels: np.ndarray, logits: bool, out: np.ndarray) -> None:
    """Multiclass confidences and hits of scores ``[N, C]`` against labels in ``[0, C)``, into ``out[:, 0]`` and
    ``out[:, 1]`` (1.0: the top class, the first on ties, is the label)."""
    lanes = np.arange(block_rows(scores.shape[1]))
    for rows, block in blocks(scores):
        top = block.max(axis=0)
        is_top = block == top  # [C, rows], contiguous
        y = labels[rows]
        if np.count_nonzero(is_top) > len(y):  # a tie for the top score in this block
            out[rows, 1] = block.argmax(axis=0) == y
        else:
            out[rows, 1] = is_top.ravel().take(y * len(y) + lanes[: len(y)])
        if logits:  # the top class's softmax: 1 / sum(exp(l - max))
            np.subtract(block, top, out=block)
            np.exp(block, out=block)
            out[rows, 0] = 1.0 / np.add.reduce(block, axis=0, dtype=np.float64)
        else:
            out[rows, 0] = top


def squared_errors(scores: np.ndarray, labels: np.ndarray, logits: bool) -> np.ndarray:
    """Multiclass per-example ``sum_k (p_k - [k == label])^2 = sum_k p_k^2 - 2 p_label + 1``, in float64; from
    logits, ``p = e / s`` with ``e = exp(l - max)`` and ``s = sum_k e_k``, so the block is never divided."""
    out = np.empty(len(scores))
    lanes = np.arange(block_rows(scores.shape[1]))
    for rows, block in blocks(scores):
        values = block.astype(np.float64)
        if logits:
            values -= values.max(axis=0)
            np.exp(values, out=values)
        y = labels[rows]
        picked = values.ravel().take(y * len(y) + lanes[: len(y)])
        squares = np.einsum("ij,ij->j", values, values)
        if logits:
            total = values.sum(axis=0)
            out[rows] = squares / total**2 - 2.0 * picked / total + 1.0
        else:
            out[rows] = squares - 2.0 * picked + 1.0
    return out


def confidences(scores: object, references: object, task: Task | None, *, start: int = 0) -> tuple[np.ndarray, Task]:
    """Checked inputs as ``([N, 2] float64: each example's confidence and hit (1.0 or 0.0), task)``."""
    p, logits = scores_column(scores, start=start)
    task = resolve_task(p, task)
    y = labels_column(references, len(p), start=start)
    out = np.empty((len(p), 2))
    if task == "binary":
        check_binary(y, "references", why=BINARY_LABELS, start=start)
        out[:, 0], out[:, 1] = positive_probability(p, logits), y == 1
    else:
        width = p.shape[1]
        y = check_labels(y, width, "references", why=f"the scores have {width} columns", start=start)
        top_label(p, y, logits, out)
    return out, task


def brier_terms(scores: object, references: object, task: Task | None, *, start: int = 0) -> np.ndarray:
    """Checked inputs as each example's squared error: ``sum_k (p_k - y_k)^2`` (multiclass), ``(p - y)^2`` (binary)."""
    p, logits = scores_column(scores, start=start)
    task = resolve_task(p, task)
    y = labels_column(references, len(p), start=start)
    if task == "binary":
        check_binary(y, "references", why=BINARY_LABELS, start=start)
        return (positive_probability(p, logits) - (y == 1)) ** 2
    width = p.shape[1]
    y = check_labels(y, width, "references", why=f"the scores have {width} columns", start=start)
    return squared_errors(p, y, logits)

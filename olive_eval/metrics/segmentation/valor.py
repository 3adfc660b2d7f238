"""``convention="valor"``: valor-lite's semantic-segmentation metrics from the same pixel confusion matrices.

valor-lite (``semantic_segmentation.Evaluator.compute_precision_recall_iou``) reads label maps in which pixel
value 0 is background and ``c >= 1`` is the ``c``-th declared label. Mapped onto a ``[C, C]`` matrix (rows
reference, columns prediction) with class 0 as background:

* background has no per-class value (NaN here), and is left out of every mean; its pixels still count in the
  other classes' counts (a background pixel predicted as ``c`` is a false positive of ``c``);
* a declared label with no pixels on either side, or a ratio over nothing, is 0.0, not undefined: IoU
  ``tp / (tp + fp + fn)``, precision ``tp / (tp + fp)``, recall ``tp / (tp + fn)``, F1 (their harmonic mean);
* mIOU is the plain mean of the foreground IoUs (valor-lite reports no mean precision, recall or F1; the mean
  here is the same plain mean over the foreground);
* the confusion matrix is valor-lite's: for every pair of foreground labels ``(g, p)`` the "IoU"
  ``M[g, p] / (rows_g + cols_p - M[g, p])`` (``rows_g`` every pixel whose reference is ``g``, ``cols_p`` every
  pixel predicted ``p``), and the ratios of unmatched predictions ``M[0, p] / cols_p`` and unmatched
  references ``M[g, 0] / rows_g``, 0.0 over nothing;
* pixel accuracy includes background, as the default convention's does.

A matrix without pixels (every pixel ignored, or no images) has no values at all: valor-lite refuses such data.

valor-lite has no ignored label: its numbers are reproduced where no reference pixel equals ``ignore_index``.
An ``ignore_index`` class inside ``[1, C)`` has no value here either (NaN), as in the default convention.

Every function takes a stack ``[..., C, C]`` of summed matrices (bootstrap resamples) and returns one value per
matrix, like :mod:`.kernels`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BACKGROUND", "valor_confusion", "valor_per_class"]

#: The class index valor-lite treats as background (pixel value 0).
BACKGROUND = 0

_PARTS = ("iou", "precision", "recall", "f1")


def _zero_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def valor_per_class(matrix: np.ndarray, part: str, *, ignore_index: int | None = None) -> np.ndarray:
    """``part`` (``iou``, ``precision``, ``recall`` or ``f1``) per class ``[..., C]``: 0.0 where a ratio is
    over nothing, NaN for background and for ``ignore_index``."""
    if part not in _PARTS:
        raise ValueError(f"part must be one of {_PARTS}, got {part!r}")
    m = np.asarray(matrix)
    if m.ndim < 2 or m.shape[-1] != m.shape[-2]:
        raise ValueError(f"a confusion matrix must have shape [..., C, C], got {list(m.shape)}")
    tp = np.diagonal(m, axis1=-2, axis2=-1).astype(np.float64)
    references = m.sum(axis=-1, dtype=np.float64)
    predicted = m.sum(axis=-2, dtype=np.float64)
    if part == "iou":
        out = _zero_ratio(tp, references + predicted - tp)
    elif part == "precision":
        out = _zero_ratio(tp, predicted)
    elif part == "recall":
        out = _zero_ratio(tp, references)
    else:  # 2PR / (P + R) is 2tp / (2tp + fp + fn) wherever tp > 0, and 0 elsewhere
        out = _zero_ratio(2 * tp, references + predicted)
    out[..., BACKGROUND] = np.nan
    out[m.sum(axis=(-2, -1)) == 0] = np.nan  # no pixel counts: valor-lite refuses such data, nothing is scored
    if ignore_index is not None and 0 <= ignore_index < out.shape[-1]:
        out[..., ignore_index] = np.nan
    return out


def valor_confusion(matrix: np.ndarray, class_names: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """valor-lite's ``ConfusionMatrix`` value of one ``[C, C]`` matrix, keyed by the foreground class names:
    ``confusion_matrix`` ``{reference: {predicted: {"iou": v}}}``, ``unmatched_predictions`` and
    ``unmatched_ground_truths`` ``{name: {"ratio": v}}``."""
    m = np.asarray(matrix)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] != len(class_names):
        raise ValueError(f"one [C, C] matrix with C = {len(class_names)} class names, got {list(m.shape)}")
    references = m.sum(axis=1, dtype=np.float64)
    predicted = m.sum(axis=0, dtype=np.float64)
    inner = m[1:, 1:].astype(np.float64)
    pair_iou = _zero_ratio(inner, references[1:, None] + predicted[None, 1:] - inner)
    unmatched_predictions = _zero_ratio(m[0, 1:].astype(np.float64), predicted[1:])
    unmatched_references = _zero_ratio(m[1:, 0].astype(np.float64), references[1:])
    names = class_names[1:]
    return {
        "confusion_matrix": {
            g: {p: {"iou": float(pair_iou[i, j])} for j, p in enumerate(names)} for i, g in enumerate(names)
        },
        "unmatched_predictions": {p: {"ratio": float(v)} for p, v in zip(names, unmatched_predictions, strict=True)},
        "unmatched_ground_truths": {g: {"ratio": float(v)} for g, v in zip(names, unmatched_references, strict=True)},
    }

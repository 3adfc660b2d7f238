"""Confusion matrix of two integer label arrays: pure numpy, shared by classification and segmentation.

``matrix[r, p]`` counts the positions whose reference label is ``r`` and predicted label is ``p`` (rows are
the reference, as in scikit-learn's ``confusion_matrix``). Positions whose reference equals
``ignore_index`` count nowhere, whatever was predicted there. A predicted label outside ``[0, C)`` is an
error (also where the reference is ignored), and so is a reference label outside ``[0, C)`` that is not
``ignore_index``.

The matrix is additive: the matrix of a union of examples (images) is the sum of their matrices, so a
``[B, C, C]`` stack of per-example matrices resamples by summing selected rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["class_names_or_indices", "confusion_dict", "confusion_matrix"]

_SMALL = 256  # uint8 maps take the fast path: one uint16 code per position, counted by np.bincount


def _as_labels(values: object, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{what} must be an integer array, got dtype {arr.dtype}")
    return arr


def _range_error(what: str, low: int, high: int, num_classes: int) -> ValueError:
    return ValueError(f"{what} labels must lie in [0, {num_classes - 1}], found values in [{low}, {high}]")


def confusion_matrix(
    reference: object, predicted: object, num_classes: int, *, ignore_index: int | None = None
) -> np.ndarray:
    """``int64 [C, C]`` counts of (reference, predicted) label pairs over same-shaped integer arrays."""
    if num_classes < 1:
        raise ValueError(f"num_classes must be >= 1, got {num_classes}")
    ref, pred = _as_labels(reference, "reference"), _as_labels(predicted, "predicted")
    if ref.shape != pred.shape:
        raise ValueError(f"reference and predicted shapes differ: {list(ref.shape)} vs {list(pred.shape)}")
    c = num_classes
    if pred.size == 0:
        return np.zeros((c, c), np.int64)
    low, high = int(pred.min()), int(pred.max())
    if low < 0 or high >= c:
        raise _range_error("predicted", low, high, c)

    if ref.dtype == np.uint8 and c <= _SMALL:
        # every (reference, predicted) pair as one uint16 code; ignored and invalid references land in rows >= C
        code = ref.astype(np.uint16)
        code *= c
        np.add(code, pred, out=code, casting="unsafe")  # pred is range-checked: no wrap-around
        rows = np.bincount(code.ravel(), minlength=_SMALL * c).reshape(_SMALL, c)
        if ignore_index is not None and 0 <= ignore_index < _SMALL:
            rows[ignore_index] = 0
        if rows[c:].any():
            bad = np.flatnonzero(rows[c:].any(axis=1)) + c
            raise _range_error("reference", int(bad.min()), int(bad.max()), c)
        return rows[:c].copy()

    r, p = ref.ravel(), pred.ravel()
    if ignore_index is not None:
        keep = r != ignore_index
        if not keep.all():
            r, p = r[keep], p[keep]
    if r.size == 0:
        return np.zeros((c, c), np.int64)
    low, high = int(r.min()), int(r.max())
    if low < 0 or high >= c:
        raise _range_error("reference", low, high, c)
    code = r.astype(np.intp) * c
    code += p
    return np.bincount(code, minlength=c * c).reshape(c, c)


def confusion_dict(matrix: np.ndarray, class_names: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
    """``{reference name: {predicted name: count}}`` (JSON-friendly); names default to ``"0"``, ``"1"``, ..."""
    m = np.asarray(matrix)
    names = class_names_or_indices(class_names, m.shape[-1])
    return {names[r]: {names[p]: int(m[r, p]) for p in range(len(names))} for r in range(len(names))}


def class_names_or_indices(class_names: Sequence[str] | Mapping[int, str] | None, num_classes: int) -> list[str]:
    """``num_classes`` names: the given ones (a sequence, or a mapping from index), else the indices as text."""
    if class_names is None:
        return [str(i) for i in range(num_classes)]
    names = [class_names[i] for i in range(num_classes)] if isinstance(class_names, Mapping) else list(class_names)
    if len(names) != num_classes:
        raise ValueError(f"{len(names)} class names given for {num_classes} classes")
    if len(set(names)) != len(names):
        raise ValueError("class names must be unique")
    return [str(n) for n in names]

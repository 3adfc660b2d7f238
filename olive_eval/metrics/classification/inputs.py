"""Classification inputs at the edge: columns checked, the task inferred, class labels validated. Pure numpy.

Every error is one line naming the column (``predictions`` or ``references``) and the first bad example,
numbered from ``start`` (in a pass, a batch's first example), so a user can find it in the data. A label
must lie in ``[0, C)``, ``C`` being the number of classes: the width of the scores when the metric sees
scores (or, in a pass, the width of the logits that predicted labels were taken from), else the configured
``num_classes``, else inferred from the largest label. Binary and multilabel labels are 0 or 1.
"""

from __future__ import annotations

from numbers import Real
from typing import Literal

import numpy as np

Task = Literal["binary", "multiclass", "multilabel"]
TASKS = ("binary", "multiclass", "multilabel")


def _shown(value: object) -> str:
    value = value.item() if isinstance(value, np.generic) else value
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _where(index: tuple[int, ...], start: int) -> str:
    rest = f" at position {list(index[1:])}" if len(index) > 1 else ""
    return f"example {start + index[0]}{rest}"


def _is_numeric(value: object) -> bool:
    if isinstance(value, Real):
        return True
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            return np.asarray(value).dtype.kind in "biuf"
        except ValueError:  # ragged
            return False
    return False


def column(values: object, what: str, *, start: int = 0, labels: bool = False) -> np.ndarray:
    """A numeric array (a scalar becomes one example); ``labels`` also refuses NaN (a missing label)."""
    try:
        arr = np.asarray(values)
    except ValueError:  # ragged rows
        arr = np.asarray(values, dtype=object)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.dtype.kind not in "biuf":
        items = values if isinstance(values, (list, tuple)) else list(arr)
        bad = next((i for i, v in enumerate(items) if not _is_numeric(v)), None)
        if bad is None:
            raise ValueError(f"{what}: examples hold different numbers of values; a dense numeric array is needed")
        expected = "a class label" if labels else "a number (a class label or a score)"
        raise ValueError(f"{what}: example {start + bad} is {_shown(items[bad])}, not {expected}")
    if labels and arr.dtype.kind == "f":
        nan = np.isnan(arr)
        if nan.any():
            where = _where(tuple(int(i) for i in np.argwhere(nan)[0]), start)
            raise ValueError(f"{what}: {where} is NaN, not a class label (a missing label?)")
    return arr


def is_float(arr: np.ndarray) -> bool:
    return np.issubdtype(arr.dtype, np.floating)


def valid_mask(targets: np.ndarray, ignore_index: int | None) -> np.ndarray:
    return np.ones(targets.shape, bool) if ignore_index is None else targets != ignore_index


def _whole(arr: np.ndarray) -> bool:
    return not is_float(arr) or bool(np.array_equal(arr, np.round(arr)))


def infer_task(preds: object, targets: object, ignore_index: int | None = None) -> Task:
    """Multilabel when targets are 2-D with the preds' shape; multiclass when preds have > 2 score columns
    or an integer label exceeds 1; binary otherwise (``[N]`` fractional scores are always binary)."""
    p, t = column(preds, "predictions"), column(targets, "references", labels=True)
    if t.ndim >= 2 and p.ndim == t.ndim + 1:
        return "multiclass"  # scores [N, C, ...] for labels [N, ...]
    valid = t[valid_mask(t, ignore_index)]
    if t.ndim == 2 and p.shape == t.shape:  # multilabel, unless a label exceeds 1 (per-token classes)
        above = (valid.size and valid.max() > 1) or (not is_float(p) and p.size and p.max() > 1)
        return "multiclass" if above else "multilabel"
    if t.ndim > 2 and p.shape == t.shape:
        return "multiclass"
    if p.ndim == 2 and p.shape[1] > 2:
        return "multiclass"
    if p.ndim == 1 and not _whole(p):
        return "binary"  # scores of the positive class, whatever the labels (a label above 1 is then an error)
    labels = [valid]
    if p.ndim == 1 and not is_float(p):
        labels.append(p)
    if any(a.size and a.max() > 1 for a in labels):
        return "multiclass"
    return "binary"


def resolve_task(preds: object, targets: object, task: Task | None, ignore_index: int | None = None) -> Task:
    """``task`` itself when given (validated), else :func:`infer_task`."""
    if task is None:
        return infer_task(preds, targets, ignore_index)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    return task


def check_labels(
    arr: np.ndarray,
    num_classes: int,
    what: str,
    *,
    why: str,
    start: int = 0,
    valid: np.ndarray | None = None,
    allow: int | None = None,
) -> np.ndarray:
    """``arr`` as ``int64`` labels, each in ``[0, num_classes)`` where ``valid`` (or equal to ``allow``).

    ``why`` says where ``num_classes`` came from, for the error (``"the scores have 3 columns"``).
    """
    if arr.size == 0:
        return arr.astype(np.int64)
    whole = arr == np.round(arr) if is_float(arr) else np.ones(arr.shape, bool)
    bad = ~whole | (arr < 0) | (arr >= num_classes)
    if allow is not None:
        bad &= arr != allow
    if valid is not None:
        bad &= valid
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        value = arr[index]
        where = _where(index, start)
        if not whole[index]:
            raise ValueError(f"{what}: {where} is {_shown(value)}, not an integer class label")
        raise ValueError(f"{what}: {where} is {_shown(value)}, outside [0, {num_classes}): {why}")
    return arr.astype(np.int64)


def check_binary(arr: np.ndarray, what: str, *, why: str, start: int = 0, valid: np.ndarray | None = None) -> None:
    """Every entry of ``arr`` (where ``valid``) is 0 or 1."""
    check_labels(arr, 2, what, why=why, start=start, valid=valid)


def resolve_num_classes(p: np.ndarray, t: np.ndarray, valid: np.ndarray, num_classes: int | None) -> tuple[int, str]:
    """The number of classes of multiclass inputs, and where it came from (for label errors)."""
    if p.ndim == 2:
        if num_classes is not None and num_classes != p.shape[1]:
            raise ValueError(f"num_classes is {num_classes} but the predictions have {p.shape[1]} score columns")
        return int(p.shape[1]), f"the scores have {p.shape[1]} columns"
    if num_classes is not None:
        return num_classes, f"num_classes is {num_classes}"
    largest = max(int(t[valid].max()) if valid.any() else 0, int(p.max()) if p.size else 0)
    n = max(2, largest + 1)
    return n, f"{n} classes inferred from the largest label (set num_classes)"


def prepare(
    preds: object, targets: object, task: Task | None, ignore_index: int | None
) -> tuple[np.ndarray, np.ndarray, Task, np.ndarray]:
    """Checked ``(preds, targets, task, valid)``: ``valid`` marks the targets that are not ``ignore_index``."""
    p, t = column(preds, "predictions"), column(targets, "references", labels=True)
    if len(p) != len(t):
        raise ValueError(f"predictions and references hold different numbers of examples: {len(p)} vs {len(t)}")
    task = resolve_task(p, t, task, ignore_index)
    if task == "multilabel" and (p.ndim != 2 or p.shape != t.shape):
        raise ValueError(f"multilabel preds and targets must both be [N, L], got {list(p.shape)} and {list(t.shape)}")
    if task != "multilabel" and t.ndim != 1:
        raise ValueError(f"{task} targets must have shape [N], got {list(t.shape)}")
    return p, t, task, valid_mask(t, ignore_index)

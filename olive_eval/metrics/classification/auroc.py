"""AUROC of classification scores: one sort per class column, ties as one diagonal step. Pure numpy.

Arguments mean what they mean to torchmetrics' task-style ``auroc`` (see :mod:`.stat_scores`); the registered
``auroc`` metric (:mod:`.metrics`) adapts its config to :func:`auroc`.
"""

from __future__ import annotations

import numpy as np

from olive_eval.metrics.classification.inputs import Task, check_binary, check_labels, prepare, resolve_num_classes
from olive_eval.metrics.classification.stat_scores import (
    AVERAGES,
    Average,
    one_hot,
    safe_divide,
    softmax_if_logits,
)

_trapezoid = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2 has only trapz
_AUC_CHUNK = 1 << 23  # elements per block of columns sorted at once (bounds memory for N x C scores)


def _auc_columns(scores: np.ndarray, positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """Trapezoidal ROC AUC of every column of ``scores`` [N, K]; ``positive``/``negative`` [N, K] mark
    which entries count as each (an entry that is neither, e.g. ignored, moves neither axis).

    One descending sort per column, cumulative tp/fp counts, and every point moved to the end of its
    tie group, so tied scores form one diagonal step (thresholds are the distinct scores). A column
    without positives (or without negatives) has no ROC curve: its AUC is NaN, undefined (torchmetrics
    reports 0.0, which reads as "always wrong"; scikit-learn refuses).
    """
    n, k = scores.shape
    out = np.full(k, np.nan)
    if n == 0:
        return out
    step = max(1, _AUC_CHUNK // n)
    for lo in range(0, k, step):  # blocks of columns, never a loop over examples
        # rows = classes, contiguous along examples; order within a tie group does not matter
        s = np.ascontiguousarray(scores[:, lo : lo + step].T, dtype=np.float64)
        order = np.argsort(s, axis=1)[:, ::-1]
        s = np.take_along_axis(s, order, axis=1)
        tps = np.cumsum(np.take_along_axis(positive[:, lo : lo + step].T, order, axis=1), axis=1, dtype=np.float64)
        fps = np.cumsum(np.take_along_axis(negative[:, lo : lo + step].T, order, axis=1), axis=1, dtype=np.float64)
        is_end = np.ones(s.shape, bool)
        is_end[:, :-1] = s[:, :-1] != s[:, 1:]
        group_end = np.minimum.accumulate(np.where(is_end, np.arange(n), n - 1)[:, ::-1], axis=1)[:, ::-1]
        tpr = safe_divide(np.take_along_axis(tps, group_end, axis=1), tps[:, -1:])
        fpr = safe_divide(np.take_along_axis(fps, group_end, axis=1), fps[:, -1:])
        zero = np.zeros((len(s), 1))
        out[lo : lo + step] = _trapezoid(np.hstack([zero, tpr]), np.hstack([zero, fpr]), axis=1)
    out[(positive.sum(axis=0) == 0) | (negative.sum(axis=0) == 0)] = np.nan
    return out


def binary_auroc(scores: object, targets: object) -> float:
    """ROC AUC of ``[N]`` scores against ``{0, 1}`` targets (equals sklearn's ``roc_auc_score``)."""
    s = np.asarray(scores, np.float64).reshape(-1, 1)
    t = np.asarray(targets).reshape(-1, 1)
    return float(_auc_columns(s, t == 1, t == 0)[0])


def auroc(
    preds,
    targets,
    *,
    task: Task | None = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: Average = "macro",
    ignore_index: int | None = None,
) -> float | np.ndarray:
    """Area under the ROC curve.

    binary: ``[N]`` scores (or ``[N, 2]``, positive column); scores are used as given, since a
    sigmoid/softmax does not change their order. multiclass: ``[N, C]`` scores, softmax'ed when any
    value lies outside [0, 1] (torchmetrics' rule), one-vs-rest per class. multilabel: ``[N, L]``,
    per label. ``macro`` is the plain mean over classes, ``weighted`` weights by positive support,
    ``micro`` pools all (entry, class) pairs, ``none`` returns the per-class ``[C]`` array. Binary
    ignores ``average``. A class without positives or without negatives has no ROC curve: its AUC is
    NaN and the averages leave it out; the result is NaN (undefined) when nothing is left, e.g. binary
    targets of one class.
    """
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    p, t, task, valid = prepare(preds, targets, task, ignore_index)
    if task == "binary":
        if p.ndim == 2 and p.shape[1] == 2:  # positive column; for logits softmax(.)[:, 1] ranks as l1 - l0
            s = p[:, 1] if _is_probability(p) else p[:, 1].astype(np.float64) - p[:, 0]
        elif p.ndim == 1 or (p.ndim == 2 and p.shape[1] == 1):
            s = p.reshape(-1)
        else:
            raise ValueError(f"binary preds must have shape [N], [N, 1] or [N, 2], got {list(p.shape)}")
        check_binary(t, "references", why="a binary task has the labels 0 and 1", valid=valid)
        return float(
            _auc_columns(s.astype(np.float64)[:, None], ((t == 1) & valid)[:, None], ((t == 0) & valid)[:, None])[0]
        )
    if task == "multiclass":
        if p.ndim != 2:
            raise ValueError(f"multiclass auroc needs per-class scores [N, C], got {list(p.shape)}")
        n_cls, why = resolve_num_classes(p, t, valid, num_classes)
        check_labels(t, n_cls, "references", why=why, valid=valid)
        p, t = softmax_if_logits(p[valid]), t[valid].astype(np.int64)
        positive = one_hot(t, n_cls)
        negative = ~positive
    else:
        if num_labels is not None and num_labels != p.shape[1]:
            raise ValueError(f"num_labels is {num_labels} but preds have {p.shape[1]} columns")
        check_binary(t, "references", why="multilabel labels are 0 or 1", valid=valid)
        p = p.astype(np.float64)
        positive, negative = (t == 1) & valid, (t == 0) & valid
    if average == "micro":
        return float(_auc_columns(p.reshape(-1, 1), positive.reshape(-1, 1), negative.reshape(-1, 1))[0])
    per_class = _auc_columns(p.astype(np.float64), positive, negative)
    if average == "none":
        return per_class
    defined = ~np.isnan(per_class)
    if not defined.any():
        return float("nan")
    if average == "weighted":
        support = positive.sum(axis=0).astype(np.float64)[defined]
        return float(safe_divide((support * per_class[defined]).sum(), support.sum()))
    return float(per_class[defined].mean())


def _is_probability(p: np.ndarray) -> bool:
    return bool(p.size == 0 or (p.min() >= 0 and p.max() <= 1))

"""AUROC of classification scores: one sort per class column, ties as one diagonal step (:func:`.curves.curve_sums`).

Arguments mean what they mean to torchmetrics' task-style ``auroc`` (see :mod:`.stat_scores`); the registered
``auroc`` metric (:mod:`.metrics`) adapts its config to :func:`auroc`.
"""

from __future__ import annotations

import numpy as np

from olive_eval.metrics.classification.confusion_rows import one_hot
from olive_eval.metrics.classification.curves import class_sums, curve_sums
from olive_eval.metrics.classification.inputs import Task, check_binary, check_labels, prepare, resolve_num_classes
from olive_eval.metrics.classification.stat_scores import (
    AVERAGES,
    Average,
    safe_divide,
    softmax_if_logits,
)


def _auc_columns(scores: np.ndarray, positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """ROC AUC of every column of ``scores`` [N, K]; ``positive``/``negative`` [N, K] mark which entries count
    as each (an entry that is neither, e.g. ignored, moves neither axis).

    Each column is one curve of :func:`.curves.curve_sums` (one sort, ties as one diagonal step, the trapezoids
    summed exactly in integers; in C when built). A column without positives (or without negatives) has no ROC
    curve: its AUC is NaN, undefined (torchmetrics reports 0.0, which reads as "always wrong"; scikit-learn refuses).
    """
    out = np.full(scores.shape[1], np.nan)
    for k in range(scores.shape[1]):
        counted = positive[:, k] | negative[:, k]
        s, y = (scores[:, k], positive[:, k]) if counted.all() else (scores[counted, k], positive[counted, k])
        out[k] = curve_sums(s, y).roc_auc
    return out


def _class_aucs(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """One-vs-rest ROC AUC of every column of ``scores`` [N, C] against integer ``labels`` [N] (all counted)."""
    sums = class_sums(np.asarray(scores, np.float64), labels.astype(np.int64, copy=False))  # every column at once
    if sums is not None:
        return np.array([t.roc_auc for t in sums], dtype=np.float64)
    return np.array([curve_sums(scores[:, c], labels == c).roc_auc for c in range(scores.shape[1])], np.float64)


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
        if not valid.all():  # no copy of the [N, C] scores when nothing is ignored
            p, t = p[valid], t[valid]
        p, t = softmax_if_logits(p), t.astype(np.int64)
        if average == "micro":
            positive = one_hot(t, n_cls)
            return float(_auc_columns(p.reshape(-1, 1), positive.reshape(-1, 1), ~positive.reshape(-1, 1))[0])
        return _reduce(_class_aucs(p, t), np.bincount(t, minlength=n_cls), average)
    else:
        if num_labels is not None and num_labels != p.shape[1]:
            raise ValueError(f"num_labels is {num_labels} but preds have {p.shape[1]} columns")
        check_binary(t, "references", why="multilabel labels are 0 or 1", valid=valid)
        p = p.astype(np.float64)
        positive, negative = (t == 1) & valid, (t == 0) & valid
    if average == "micro":
        return float(_auc_columns(p.reshape(-1, 1), positive.reshape(-1, 1), negative.reshape(-1, 1))[0])
    return _reduce(_auc_columns(p, positive, negative), positive.sum(axis=0), average)


def _reduce(per_class: np.ndarray, support: np.ndarray, average: Average) -> float | np.ndarray:
    """``average`` of per-class AUCs (``support``: each class's positives), leaving out the undefined (NaN) ones."""
    if average == "none":
        return per_class
    defined = ~np.isnan(per_class)
    if not defined.any():
        return float("nan")
    if average == "weighted":
        weights = support.astype(np.float64)[defined]
        return float(safe_divide((weights * per_class[defined]).sum(), weights.sum()))
    return float(per_class[defined].mean())


def _is_probability(p: np.ndarray) -> bool:
    return bool(p.size == 0 or (p.min() >= 0 and p.max() <= 1))

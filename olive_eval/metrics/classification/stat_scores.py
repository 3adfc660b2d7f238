"""Classification kernels: pure numpy, no I/O, no config objects.

The functional forms built on them (``accuracy``, ``precision``, ``recall``, ``f1_score``, ``auroc``)
and the registered metric classes live in :mod:`olive_eval.metrics.classification`.

The meaning of every argument follows torchmetrics' ``task``-style classification API:

* ``task`` -- ``"binary"``, ``"multiclass"``, ``"multilabel"`` or None to infer it
  (:func:`~olive_eval.metrics.classification.inputs.infer_task`);
* ``num_classes`` / ``num_labels`` -- None to infer from the score columns or the largest label; a label
  outside ``[0, num_classes)`` is an error naming its example (:mod:`~olive_eval.metrics.classification.inputs`);
* ``threshold`` -- a binary/multilabel score counts as positive when ``score > threshold`` (strictly,
  as torchmetrics); float scores with any value outside [0, 1] are logits and go through a sigmoid first;
* ``top_k`` -- multiclass only, torchmetrics >= 1.6 semantics: a row's predicted class is its target
  when the target is among its ``k`` highest scores (ties rank the lower class index first), else its
  top-1 class. Every row thus predicts one class, micro precision = recall = top-k accuracy;
* ``ignore_index`` -- binary/multiclass rows, or multilabel entries, whose target equals it count nowhere.

Sufficient statistics (:func:`stat_scores`) are an ``int8`` array of shape ``[N, C, 4]`` holding
``(tp, fp, fn, tn)`` of every example for every class (``C = 1`` for binary, ``C = num_labels`` for
multilabel). An ignored row (or multilabel entry) keeps its place with all-zero counts, so row ``i`` is
always example ``i`` and resampling can index the array directly. Sum with ``np.sum`` (which widens
small integers to int64) or pass it straight to :func:`reduce_stat_scores`. Multiclass inputs with extra
dimensions (a label per token) give ``int32`` rows: each example's counts summed over its positions.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from olive_eval.metrics.classification.inputs import (
    Task,
    check_binary,
    check_labels,
    column,
    is_float,
    prepare,
    resolve_num_classes,
    resolve_task,
    valid_mask,
)

Average = Literal["micro", "macro", "weighted", "none"]
StatName = Literal["accuracy", "precision", "recall", "f1"]

AVERAGES = ("micro", "macro", "weighted", "none")
TP, FP, FN, TN = 0, 1, 2, 3

_trapezoid = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2 has only trapz
_AUC_CHUNK = 1 << 23  # elements per block of columns sorted at once (bounds memory for N x C scores)


# ---------------------------------------------------------------------------------------------- scores
def _sigmoid_if_logits(scores: np.ndarray) -> np.ndarray:
    """torchmetrics' rule: any value outside [0, 1] means the whole array holds logits."""
    scores = scores.astype(np.float64, copy=False)
    if scores.size and (scores.min() < 0 or scores.max() > 1):
        return 0.5 * (1.0 + np.tanh(0.5 * scores))  # overflow-free sigmoid
    return scores


def softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax in float64."""
    z = scores.astype(np.float64) - np.max(scores, axis=axis, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=axis, keepdims=True)
    return z


def _softmax_if_logits(scores: np.ndarray) -> np.ndarray:
    scores = scores.astype(np.float64, copy=False)
    if scores.size and (scores.min() < 0 or scores.max() > 1):
        return softmax(scores, axis=1)
    return scores


def _binary_scores(preds: np.ndarray) -> np.ndarray:
    """``[N]`` scores, or ``[N, 2]`` scores reduced to the positive column (softmax'ed if logits)."""
    if preds.ndim == 2 and preds.shape[1] == 2:
        if not is_float(preds):
            raise ValueError("binary preds of shape [N, 2] must be float scores (probabilities or logits)")
        return _softmax_if_logits(preds)[:, 1]
    if preds.ndim != 1:
        raise ValueError(f"binary preds must have shape [N] or [N, 2], got {list(preds.shape)}")
    return preds


# ------------------------------------------------------------------------------------ map/reduce stats
def _confusion(pred: np.ndarray, tgt: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``[N, C]`` booleans → ``[N, C, 4]`` int8 (tp, fp, fn, tn), zero where not valid."""
    pred, tgt = pred & valid, tgt & valid
    npred, ntgt = ~pred & valid, ~tgt & valid
    return np.stack([pred & tgt, pred & ntgt, npred & tgt, npred & ntgt], axis=-1).view(np.int8)


def _one_hot(labels: np.ndarray, num_classes: int) -> np.ndarray:
    out = np.zeros((len(labels), num_classes), bool)
    out[np.arange(len(labels)), labels] = True
    return out


def _positive(scores: np.ndarray, threshold: float, why: str, start: int) -> np.ndarray:
    """Binary/multilabel predictions: scores (logits get a sigmoid) above ``threshold``, or 0/1 labels."""
    if is_float(scores):
        return _sigmoid_if_logits(scores) > threshold
    check_binary(scores, "predictions", why=why, start=start)
    return scores == 1


def stat_scores(
    preds: object,
    targets: object,
    *,
    task: Task | None = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    threshold: float = 0.5,
    top_k: int = 1,
    ignore_index: int | None = None,
    start: int = 0,
) -> np.ndarray:
    """Per-example ``(tp, fp, fn, tn)`` counts, ``int8`` of shape ``[N, C, 4]`` (see the module docstring).

    ``task=None`` infers the task (:func:`resolve_task` tells which one, to pass on to the reduce).
    ``start`` numbers the examples in errors (a batch's first example in a pass).
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must lie in [0, 1], got {threshold}")
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    if resolve_task(preds, targets, task, ignore_index) == "multiclass" and np.ndim(targets) >= 2:
        return _multidim_stat_scores(preds, targets, num_classes, top_k, ignore_index, start)
    p, t, task, valid = prepare(preds, targets, task, ignore_index)
    if top_k > 1 and task != "multiclass":
        raise ValueError(f"top_k applies to multiclass inputs only, but the task is {task}")

    if task == "binary":
        why = "a binary task has the labels 0 and 1"
        check_binary(t, "references", why=why, start=start, valid=valid)
        pred = _positive(_binary_scores(p), threshold, why, start)
        tgt = np.where(valid, t, 0) == 1
        return _confusion(pred[:, None], tgt[:, None], valid[:, None])

    if task == "multilabel":
        if num_labels is not None and num_labels != p.shape[1]:
            raise ValueError(f"num_labels is {num_labels} but preds have {p.shape[1]} columns")
        why = "multilabel labels are 0 or 1"
        check_binary(t, "references", why=why, start=start, valid=valid)
        return _confusion(_positive(p, threshold, why, start), np.where(valid, t, 0) == 1, valid)

    # multiclass
    if p.ndim not in (1, 2):
        raise ValueError(f"multiclass preds must be labels [N] or scores [N, C], got {list(p.shape)}")
    n_cls, why = resolve_num_classes(p, t, valid, num_classes)
    if n_cls < 2:
        raise ValueError(f"num_classes must be >= 2, got {n_cls}")
    tgt_labels = check_labels(np.where(valid, t, 0), n_cls, "references", why=why, start=start, valid=valid)
    if top_k > n_cls:
        raise ValueError(f"top_k ({top_k}) cannot exceed num_classes ({n_cls})")
    if p.ndim == 1:
        if top_k > 1:
            raise ValueError("top_k > 1 needs per-class scores [N, C], not predicted labels [N]")
        pred = _one_hot(check_labels(p, n_cls, "predictions", why=why, start=start), n_cls)
    elif top_k == 1:
        pred = _one_hot(np.argmax(p, axis=1), n_cls)
    else:  # the target when it ranks among the k best (ties: lower index first), else the top-1 class
        own = p[np.arange(len(p)), tgt_labels][:, None]
        rank = (p > own).sum(axis=1) + ((p == own) & (np.arange(n_cls) < tgt_labels[:, None])).sum(axis=1)
        pred = _one_hot(np.where(rank < top_k, tgt_labels, np.argmax(p, axis=1)), n_cls)
    return _confusion(pred, _one_hot(tgt_labels, n_cls), valid[:, None])


def _multidim_stat_scores(
    preds: object, targets: object, num_classes: int | None, top_k: int, ignore_index: int | None, start: int
) -> np.ndarray:
    """Multiclass with extra dimensions (torchmetrics' ``[N, ...]`` labels or ``[N, C, ...]`` scores for
    ``[N, ...]`` targets, e.g. a label per token): every position is scored as one prediction, and each
    example's counts are summed over its positions, so row ``i`` stays example ``i`` (``int32`` ``[N, C, 4]``).
    Global sums equal torchmetrics' ``multidim_average="global"``. Labels are checked before flattening, so
    an error names the example and the position in it."""
    p, t = column(preds, "predictions", start=start), column(targets, "references", start=start, labels=True)
    n, positions = t.shape[0], int(np.prod(t.shape[1:]))
    if p.shape == t.shape:
        flat_p = p.reshape(-1)
    elif p.ndim == t.ndim + 1 and p.shape[0] == n and p.shape[2:] == t.shape[1:]:
        flat_p = np.moveaxis(p, 1, -1).reshape(-1, p.shape[1])
    else:
        raise ValueError(
            f"multiclass preds must be labels [N, ...] or scores [N, C, ...] for targets [N, ...], got preds "
            f"{list(p.shape)} and targets {list(t.shape)}"
        )
    valid = valid_mask(t, ignore_index)
    n_cls, why = resolve_num_classes(flat_p, t, valid, num_classes)
    check_labels(t, n_cls, "references", why=why, start=start, valid=valid)
    if p.shape == t.shape:
        check_labels(p, n_cls, "predictions", why=why, start=start)
    flat = stat_scores(
        flat_p, t.reshape(-1), task="multiclass", num_classes=n_cls, top_k=top_k, ignore_index=ignore_index
    )
    return flat.reshape(n, positions, *flat.shape[1:]).sum(axis=1, dtype=np.int32)


def _safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0)


def _per_class(stat: StatName, tp, fp, fn, tn, task: Task) -> np.ndarray:
    if stat == "accuracy":
        if task == "multiclass":
            return _safe_divide(tp, tp + fn)
        return _safe_divide(tp + tn, tp + tn + fp + fn)
    if stat == "precision":
        return _safe_divide(tp, tp + fp)
    if stat == "recall":
        return _safe_divide(tp, tp + fn)
    if stat == "f1":
        return _safe_divide(2 * tp, 2 * tp + fp + fn)
    raise ValueError(f"unknown statistic {stat!r}")


def macro_weights(totals: np.ndarray, task: Task, top_k: int = 1) -> np.ndarray:
    """Which classes a macro average counts (1.0) or skips (0.0): multiclass skips classes with
    ``tp + fp + fn == 0`` (``tp + fn == 0`` when ``top_k > 1``); multilabel and binary count all.
    ``totals`` is ``[..., C, 4]``; the weights are ``[..., C]``."""
    tp, fp, fn = totals[..., TP], totals[..., FP], totals[..., FN]
    if task != "multiclass":
        return np.ones(tp.shape)
    empty = (tp + fn == 0) if top_k > 1 else (tp + fp + fn == 0)
    return (~empty).astype(np.float64)


def reduce_totals_batch(
    totals: np.ndarray, stat: StatName, average: Average, *, task: Task, top_k: int = 1
) -> np.ndarray:
    """The metric for each of ``B`` summed statistics ``[B, C, 4]`` at once (bootstrap resamples).

    Same definitions as :func:`reduce_stat_scores`; ``none`` gives the macro value (the registered
    metrics report that as their value).
    """
    t = np.asarray(totals, dtype=np.float64)
    if task == "binary" or average == "micro":
        pooled = t.sum(axis=1)
        if task == "multiclass" and stat == "accuracy":
            return _safe_divide(pooled[:, TP], pooled[:, TP] + pooled[:, FN])
        return _per_class(stat, pooled[:, TP], pooled[:, FP], pooled[:, FN], pooled[:, TN], task)
    scores = _per_class(stat, t[..., TP], t[..., FP], t[..., FN], t[..., TN], task)
    weights = t[..., TP] + t[..., FN] if average == "weighted" else macro_weights(t, task, top_k)
    return _safe_divide((weights * scores).sum(axis=-1), weights.sum(axis=-1))


def reduce_stat_scores(
    stats: np.ndarray, stat: StatName, average: Average, *, task: Task, top_k: int = 1
) -> float | np.ndarray:
    """Reduce ``[N, C, 4]`` statistics (or their ``[C, 4]`` sum) to accuracy / precision / recall / f1.

    Binary ignores ``average`` (one class). ``micro`` pools the counts of all classes first, ``macro``
    averages per-class values over :func:`macro_weights`, ``weighted`` weights them by support
    ``tp + fn``, ``none`` returns the ``[C]`` per-class values. Zero denominators give 0.
    """
    stats = np.asarray(stats)
    totals = stats.sum(axis=0, dtype=np.int64) if stats.ndim == 3 else stats.astype(np.int64)
    if totals.ndim != 2 or totals.shape[1] != 4:
        raise ValueError(f"statistics must have shape [N, C, 4] or [C, 4], got {list(stats.shape)}")
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    tp, fp, fn, tn = totals.T
    if task == "binary":
        return float(_per_class(stat, *totals.sum(axis=0), task))
    if average == "micro":
        pooled = totals.sum(axis=0)
        if stat == "accuracy" and task == "multiclass":
            return float(_safe_divide(pooled[TP], pooled[TP] + pooled[FN]))
        return float(_per_class(stat, *pooled, task))
    scores = _per_class(stat, tp, fp, fn, tn, task)
    if average == "none":
        return scores
    weights = (tp + fn).astype(np.float64) if average == "weighted" else macro_weights(totals, task, top_k)
    return float(_safe_divide((weights * scores).sum(), weights.sum()))


# ---------------------------------------------------------------------------------------------- AUROC
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
        tpr = _safe_divide(np.take_along_axis(tps, group_end, axis=1), tps[:, -1:])
        fpr = _safe_divide(np.take_along_axis(fps, group_end, axis=1), fps[:, -1:])
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
        p, t = _softmax_if_logits(p[valid]), t[valid].astype(np.int64)
        positive = _one_hot(t, n_cls)
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
        return float(_safe_divide((support * per_class[defined]).sum(), support.sum()))
    return float(per_class[defined].mean())


def _is_probability(p: np.ndarray) -> bool:
    return bool(p.size == 0 or (p.min() >= 0 and p.max() <= 1))

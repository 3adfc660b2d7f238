"""Stat scores: per-example (tp, fp, fn, tn) counts of classification and their reductions. Pure numpy, no I/O,
no config objects.

The functional forms built on them (``accuracy``, ``precision``, ``recall``, ``f1_score``) live in
:mod:`.functional`, the registered metric classes in :mod:`.metrics`, the AUROC kernel in :mod:`.auroc`.

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

The reductions' ``labels`` picks the classes a multiclass average runs over: ``observed`` (every class seen in the
predictions or the references: scikit-learn's default label set) or ``references`` (the classes with support,
``tp + fn > 0``: scikit-learn with ``labels=set(references)``, Unitxt's ``F1Micro``/``F1Macro``). The set is read
off the statistics being reduced, so each bootstrap resample averages over the classes of its own references.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from olive_eval.metrics.classification.confusion_rows import (
    binary_confusion,
    confusion,
    multiclass_confusion,
    pair_rows,
)
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
LabelSet = Literal["observed", "references"]

AVERAGES = ("micro", "macro", "weighted", "none")
LABEL_SETS = ("observed", "references")
TP, FP, FN, TN = 0, 1, 2, 3


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


def softmax_if_logits(scores: np.ndarray) -> np.ndarray:
    scores = scores.astype(np.float64, copy=False)
    if scores.size and (scores.min() < 0 or scores.max() > 1):
        return softmax(scores, axis=1)
    return scores


def _binary_scores(preds: np.ndarray) -> np.ndarray:
    """``[N]`` scores, or ``[N, 2]`` scores reduced to the positive column (softmax'ed if logits)."""
    if preds.ndim == 2 and preds.shape[1] == 2:
        if not is_float(preds):
            raise ValueError("binary preds of shape [N, 2] must be float scores (probabilities or logits)")
        return softmax_if_logits(preds)[:, 1]
    if preds.ndim != 1:
        raise ValueError(f"binary preds must have shape [N] or [N, 2], got {list(preds.shape)}")
    return preds


# ------------------------------------------------------------------------------------ map/reduce stats
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
    return coded_stat_scores(
        preds,
        targets,
        task=task,
        num_classes=num_classes,
        num_labels=num_labels,
        threshold=threshold,
        top_k=top_k,
        ignore_index=ignore_index,
        start=start,
    )[0]


def coded_stat_scores(
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
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`stat_scores` and, where one label per example fixes its row (binary, multiclass without extra
    dimensions), each example's :func:`~.confusion_rows.pair_codes` (else None), for the row grouping."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must lie in [0, 1], got {threshold}")
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    if resolve_task(preds, targets, task, ignore_index) == "multiclass" and np.ndim(targets) >= 2:
        return _multidim_stat_scores(preds, targets, num_classes, top_k, ignore_index, start), None
    p, t, task, valid = prepare(preds, targets, task, ignore_index)
    if top_k > 1 and task != "multiclass":
        raise ValueError(f"top_k applies to multiclass inputs only, but the task is {task}")

    if task == "binary":
        why = "a binary task has the labels 0 and 1"
        check_binary(t, "references", why=why, start=start, valid=valid)
        pred = _positive(_binary_scores(p), threshold, why, start)
        tgt = np.where(valid, t, 0) == 1
        return pair_rows(pred, tgt, valid, 2, binary_confusion)

    if task == "multilabel":
        if num_labels is not None and num_labels != p.shape[1]:
            raise ValueError(f"num_labels is {num_labels} but preds have {p.shape[1]} columns")
        why = "multilabel labels are 0 or 1"
        check_binary(t, "references", why=why, start=start, valid=valid)
        return confusion(_positive(p, threshold, why, start), np.where(valid, t, 0) == 1, valid), None

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
        pred = check_labels(p, n_cls, "predictions", why=why, start=start)
    elif top_k == 1:
        pred = np.argmax(p, axis=1)
    else:  # the target when it ranks among the k best (ties: lower index first), else the top-1 class
        own = p[np.arange(len(p)), tgt_labels][:, None]
        rank = (p > own).sum(axis=1) + ((p == own) & (np.arange(n_cls) < tgt_labels[:, None])).sum(axis=1)
        pred = np.where(rank < top_k, tgt_labels, np.argmax(p, axis=1))
    return pair_rows(pred, tgt_labels, valid, n_cls, multiclass_confusion(n_cls))


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


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0)


def _per_class(stat: StatName, tp, fp, fn, tn, task: Task) -> np.ndarray:
    if stat == "accuracy":
        if task == "multiclass":
            return safe_divide(tp, tp + fn)
        return safe_divide(tp + tn, tp + tn + fp + fn)
    if stat == "precision":
        return safe_divide(tp, tp + fp)
    if stat == "recall":
        return safe_divide(tp, tp + fn)
    if stat == "f1":
        return safe_divide(2 * tp, 2 * tp + fp + fn)
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


def reference_classes(totals: np.ndarray) -> np.ndarray:
    """The classes of the references in summed statistics ``[..., C, 4]``: those with support ``tp + fn > 0``."""
    return (totals[..., TP] + totals[..., FN]) > 0


def _check_label_set(labels: LabelSet, task: Task) -> None:
    if labels not in LABEL_SETS:
        raise ValueError(f"labels must be one of {LABEL_SETS}, got {labels!r}")
    if labels == "references" and task != "multiclass":
        raise ValueError(
            f"labels 'references' averages over the classes of a multiclass task, but the task is {task} "
            "(set task 'multiclass' to score 0/1 labels as two classes)"
        )


def reduce_totals_batch(
    totals: np.ndarray,
    stat: StatName,
    average: Average,
    *,
    task: Task,
    top_k: int = 1,
    labels: LabelSet = "observed",
) -> np.ndarray:
    """The metric for each of ``B`` summed statistics ``[B, C, 4]`` at once (bootstrap resamples).

    Same definitions as :func:`reduce_stat_scores`; ``none`` gives the macro value (the registered
    metrics report that as their value).
    """
    _check_label_set(labels, task)
    t = np.asarray(totals, dtype=np.float64)
    if labels == "references":  # every count of a class outside the resample's references is left out
        t = t * reference_classes(t)[..., None]
    if task == "binary" or average == "micro":
        pooled = t.sum(axis=1)
        if task == "multiclass" and stat == "accuracy":
            return safe_divide(pooled[:, TP], pooled[:, TP] + pooled[:, FN])
        return _per_class(stat, pooled[:, TP], pooled[:, FP], pooled[:, FN], pooled[:, TN], task)
    scores = _per_class(stat, t[..., TP], t[..., FP], t[..., FN], t[..., TN], task)
    if average == "weighted":
        weights = t[..., TP] + t[..., FN]
    else:
        weights = reference_classes(t).astype(np.float64) if labels == "references" else macro_weights(t, task, top_k)
    return safe_divide((weights * scores).sum(axis=-1), weights.sum(axis=-1))


def reduce_stat_scores(
    stats: np.ndarray,
    stat: StatName,
    average: Average,
    *,
    task: Task,
    top_k: int = 1,
    labels: LabelSet = "observed",
) -> float | np.ndarray:
    """Reduce ``[N, C, 4]`` statistics (or their ``[C, 4]`` sum) to accuracy / precision / recall / f1.

    Binary ignores ``average`` (one class). ``micro`` pools the counts of all classes first, ``macro``
    averages per-class values over :func:`macro_weights`, ``weighted`` weights them by support
    ``tp + fn``, ``none`` returns the ``[C]`` per-class values. Zero denominators give 0. With
    ``labels="references"`` (multiclass only) the classes outside the references count nowhere: not in micro's
    pooled counts, not in macro's mean, NaN in ``none``.
    """
    stats = np.asarray(stats)
    totals = stats.sum(axis=0, dtype=np.int64) if stats.ndim == 3 else stats.astype(np.int64)
    if totals.ndim != 2 or totals.shape[1] != 4:
        raise ValueError(f"statistics must have shape [N, C, 4] or [C, 4], got {list(stats.shape)}")
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    _check_label_set(labels, task)
    if labels == "references":
        if average == "none":
            scores = reduce_stat_scores(totals, stat, "none", task=task, top_k=top_k)
            return np.where(reference_classes(totals), scores, np.nan)
        return float(reduce_totals_batch(totals[None], stat, average, task=task, top_k=top_k, labels=labels)[0])
    tp, fp, fn, tn = totals.T
    if task == "binary":
        return float(_per_class(stat, *totals.sum(axis=0), task))
    if average == "micro":
        pooled = totals.sum(axis=0)
        if stat == "accuracy" and task == "multiclass":
            return float(safe_divide(pooled[TP], pooled[TP] + pooled[FN]))
        return float(_per_class(stat, *pooled, task))
    scores = _per_class(stat, tp, fp, fn, tn, task)
    if average == "none":
        return scores
    weights = (tp + fn).astype(np.float64) if average == "weighted" else macro_weights(totals, task, top_k)
    return float(safe_divide((weights * scores).sum(), weights.sum()))

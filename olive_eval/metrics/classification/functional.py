"""The functional forms of accuracy, precision, recall and F1: arrays in, a value out, torchmetrics' task-style
keyword options (and ``labels``, the classes a multiclass average runs over: :mod:`.stat_scores`). They build the per-example stat scores (:mod:`.stat_scores`) and reduce them at once; AUROC's
functional form is :func:`.auroc.auroc`.
"""

from __future__ import annotations

from typing import Any, TypedDict

import numpy as np
from typing_extensions import Unpack

from olive_eval.metrics.classification import stat_scores as K
from olive_eval.metrics.classification.inputs import Task, resolve_task

__all__ = ["StatOptions", "accuracy", "f1_score", "precision", "recall"]


class StatOptions(TypedDict, total=False):
    """Keyword options of the functional forms; the meanings of torchmetrics' task-style functions."""

    task: Task | None
    num_classes: int | None
    num_labels: int | None
    average: K.Average
    threshold: float
    top_k: int
    ignore_index: int | None
    labels: K.LabelSet


def _functional(stat: K.StatName, preds: Any, targets: Any, options: StatOptions) -> float | np.ndarray:
    top_k, ignore_index = options.get("top_k", 1), options.get("ignore_index")
    task = resolve_task(preds, targets, options.get("task"), ignore_index)
    stats = K.stat_scores(
        preds,
        targets,
        task=task,
        num_classes=options.get("num_classes"),
        num_labels=options.get("num_labels"),
        threshold=options.get("threshold", 0.5),
        top_k=top_k,
        ignore_index=ignore_index,
    )
    average, labels = options.get("average", "micro"), options.get("labels", "observed")
    return K.reduce_stat_scores(stats, stat, average, task=task, top_k=top_k, labels=labels)


def accuracy(preds: Any, targets: Any, **options: Unpack[StatOptions]) -> float | np.ndarray:
    """Accuracy: binary/multilabel ``(tp+tn)/total``; multiclass ``tp/(tp+fn)`` (micro = top-k accuracy).

    Returns a float, or the ``[C]`` per-class array for ``average="none"`` (as torchmetrics).
    """
    return _functional("accuracy", preds, targets, options)


def precision(preds: Any, targets: Any, **options: Unpack[StatOptions]) -> float | np.ndarray:
    """Precision ``tp/(tp+fp)``; a float, or the ``[C]`` per-class array for ``average="none"``."""
    return _functional("precision", preds, targets, options)


def recall(preds: Any, targets: Any, **options: Unpack[StatOptions]) -> float | np.ndarray:
    """Recall ``tp/(tp+fn)``; a float, or the ``[C]`` per-class array for ``average="none"``."""
    return _functional("recall", preds, targets, options)


def f1_score(preds: Any, targets: Any, **options: Unpack[StatOptions]) -> float | np.ndarray:
    """F1 ``2tp/(2tp+fp+fn)``; a float, or the ``[C]`` per-class array for ``average="none"``."""
    return _functional("f1", preds, targets, options)

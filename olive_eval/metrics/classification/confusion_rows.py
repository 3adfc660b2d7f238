"""Per-example confusion rows ``(tp, fp, fn, tn)`` (``int8 [N, C, 4]``) from predicted and true booleans, and from
label pairs: with one label per example (binary, multiclass), an example's row is fixed by its (target, prediction)
pair. Its pair as one number (:func:`pair_codes`) is what the row grouping needs (equal codes exactly where the rows
are equal, :func:`~olive_eval.metrics.row_groups.coded_groups`), and the rows are taken from a table of every pair's
row, built by :func:`confusion` itself, so they are exactly :func:`confusion`'s. Pure numpy."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: ``(pred, tgt, valid)`` labels ``[N]`` (``valid``: counted) -> their confusion rows ``[N, C, 4]``.
PairConfusion = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def confusion(pred: np.ndarray, tgt: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``[N, C]`` booleans → ``[N, C, 4]`` int8 (tp, fp, fn, tn), zero where not valid."""
    pred, tgt = pred & valid, tgt & valid
    npred, ntgt = ~pred & valid, ~tgt & valid
    return np.stack([pred & tgt, pred & ntgt, npred & tgt, npred & ntgt], axis=-1).view(np.int8)


def one_hot(labels: np.ndarray, num_classes: int) -> np.ndarray:
    out = np.zeros((len(labels), num_classes), bool)
    out[np.arange(len(labels)), labels] = True
    return out


def multiclass_confusion(num_classes: int) -> PairConfusion:
    """Rows of ``num_classes`` classes: a prediction and a target class per example."""
    return lambda pred, tgt, valid: confusion(one_hot(pred, num_classes), one_hot(tgt, num_classes), valid[:, None])


def binary_confusion(pred: np.ndarray, tgt: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Rows of the positive class alone (``C = 1``): 0/1 predictions and targets."""
    return confusion((pred == 1)[:, None], (tgt == 1)[:, None], valid[:, None])


def pair_codes(pred: np.ndarray, tgt: np.ndarray, valid: np.ndarray, labels: int) -> np.ndarray:
    """Each example's pair as ``tgt * labels + pred`` (labels in ``[0, labels)``); ``labels ** 2`` where not valid."""
    return np.where(valid, tgt.astype(np.intp) * labels + pred, labels * labels)


def pair_rows(
    pred: np.ndarray, tgt: np.ndarray, valid: np.ndarray, labels: int, rows_of: PairConfusion
) -> tuple[np.ndarray, np.ndarray]:
    """(``rows_of(pred, tgt, valid)``, :func:`pair_codes`): the rows taken from a table of every pair's row where
    the table is smaller than the rows (fewer pairs than examples), else computed directly."""
    codes = pair_codes(pred, tgt, valid, labels)
    pairs = labels * labels
    if pairs + 1 > len(codes):
        return rows_of(pred, tgt, valid), codes
    every = np.arange(pairs + 1)
    tgt_of, pred_of = np.divmod(np.minimum(every, pairs - 1), labels)  # the last code: a row not counted
    return rows_of(pred_of, tgt_of, every < pairs).take(codes, axis=0), codes

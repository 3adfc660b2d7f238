"""Leave-one-out ROC AUC and average precision: each example's value is the metric over the set without it.

Why: ROC AUC and average precision are rank statistics over the whole set; an example alone has no value, but
how much the set's value moves when it is left out says which examples pull it down (error analysis). Computing
each by re-running the metric would cost O(n^2 log n); both have closed forms from one sort, O(n log n):

* ROC AUC is the Mann-Whitney statistic ``U / (P * N)``, ``U`` counting (positive, negative) pairs ordered
  right, ties counting a half. Leaving out a positive removes its pairs: the negatives scored below it plus
  half those tied with it (one search in the sorted negative scores); a negative, likewise, the positives
  above it plus half those tied. ``(U - own) / ((P - 1) * N)`` or ``/ (P * (N - 1))``.
* Average precision is ``sum_t pos_t * tp_t / k_t / P`` over the distinct scores ``t`` in descending order
  (``pos_t`` positives scored ``t``, ``tp_t`` positives and ``k_t`` examples scored ``>= t``: scikit-learn's
  step-wise sum). Leaving out an example scored ``s`` lowers ``k_t`` by one for every ``t <= s`` (and ``tp_t``
  too, with ``pos_s`` and ``P``, for a positive): prefix sums of the unchanged terms above ``s`` and suffix
  sums of the shifted terms below it give every value at once.

NaN where the rest has no value (no positive left; for ROC AUC also no negative left).
"""

from __future__ import annotations

import numpy as np

__all__ = ["loo_average_precision", "loo_roc_auc", "per_class_leave_one_out"]


def loo_roc_auc(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """``[N]``: the ROC AUC of the set without each example."""
    s, pos = np.asarray(scores, dtype=np.float64).reshape(-1), np.asarray(positive, dtype=bool).reshape(-1)
    neg_sorted, pos_sorted = np.sort(s[~pos]), np.sort(s[pos])
    n_pos, n_neg = len(pos_sorted), len(neg_sorted)
    below = np.searchsorted(neg_sorted, s, side="left")  # negatives strictly below each score
    tied_neg = np.searchsorted(neg_sorted, s, side="right") - below
    above = n_pos - np.searchsorted(pos_sorted, s, side="right")  # positives strictly above
    tied_pos = np.searchsorted(pos_sorted, s, side="right") - np.searchsorted(pos_sorted, s, side="left")
    own = np.where(pos, below + 0.5 * tied_neg, above + 0.5 * tied_pos)
    total = float(own[pos].sum())
    pairs = np.where(pos, (n_pos - 1) * n_neg, n_pos * (n_neg - 1)).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pairs > 0, (total - own) / pairs, np.nan)


def loo_average_precision(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """``[N]``: the average precision of the set without each example."""
    s, pos = np.asarray(scores, dtype=np.float64).reshape(-1), np.asarray(positive, dtype=bool).reshape(-1)
    if s.size == 0:
        return np.empty(0)
    order = np.argsort(-s, kind="stable")
    distinct, group_of_sorted = np.unique(-s[order], return_inverse=True)  # groups in descending score
    group = np.empty(len(s), dtype=np.int64)
    group[order] = group_of_sorted
    n_groups = len(distinct)
    pos_t = np.bincount(group, weights=pos, minlength=n_groups)
    k = np.cumsum(np.bincount(group, minlength=n_groups)).astype(np.float64)
    tp = np.cumsum(pos_t)
    n_pos = float(pos.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        kept = pos_t * tp / k  # a term no removal below it changes
        shifted_neg = np.nan_to_num(pos_t * tp / (k - 1))  # k - 1 = 0 only where tp = 0
        shifted_pos = np.nan_to_num(pos_t * (tp - 1) / (k - 1))
        own_group = np.nan_to_num((pos_t - 1) * (tp - 1) / (k - 1))  # the removed positive's own group
    kept_above = np.concatenate(([0.0], np.cumsum(kept)))[group]  # groups before each example's
    neg_from = np.cumsum(shifted_neg[::-1])[::-1][group]  # its group and those after
    pos_after = np.concatenate((np.cumsum(shifted_pos[::-1])[::-1], [0.0]))[group + 1]
    total = np.where(pos, kept_above + own_group[group] + pos_after, kept_above + neg_from)
    rest_pos = np.where(pos, n_pos - 1, n_pos)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rest_pos > 0, total / rest_pos, np.nan)


def per_class_leave_one_out(scores: np.ndarray, labels: np.ndarray, kernel: str) -> np.ndarray:
    """``[N]``: the one-vs-rest macro mean (classes with a value) without each example; ``scores`` ``[N, C]``,
    ``labels`` ``[N]`` (-1: a negative for every class). ``kernel``: ``roc_auc`` or ``average_precision``."""
    loo = loo_roc_auc if kernel == "roc_auc" else loo_average_precision
    s, y = np.asarray(scores, dtype=np.float64), np.asarray(labels).reshape(-1)
    per_class = np.stack([loo(s[:, c], y == c) for c in range(s.shape[1])], axis=1)
    defined = (~np.isnan(per_class)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(defined > 0, np.nansum(per_class, axis=1) / defined, np.nan)

"""Classification at score thresholds with Valor's semantics: counts, precision, recall, F1 and accuracy of
class scores (the confusion matrices are in :mod:`.threshold_confusion`). Pure numpy, no I/O.

Inputs: ``scores`` ``[N, C]`` (probabilities, one column per class, in ``[0, 1]``) and integer ``labels``
``[N]`` in ``[0, C)``, or ``NO_LABEL`` (-1) for an example without a reference label: it is a negative for
every class, and whatever it predicts is a false positive (a hallucination).

A label *qualifies* for an example at threshold ``t`` when its score is ``>= t``. The ``"valor"`` rule
(valor-lite's ``compute_precision_recall`` and ``compute_confusion_matrix``) adds two conditions:

* a score ``<= 1e-8`` never qualifies, even at ``t = 0`` (valor-lite's ``np.isclose(score, 0)``; its
  confusion matrix uses ``> 1e-9``, which differs only for scores in ``(1e-9, 1e-8]``);
* with ``hardmax``, only the example's highest score can qualify (ties: the lowest column; valor-lite
  takes the first of the datum's predictions, the same when they are listed in column order).

Counting rules, per class ``c`` and threshold:

* ``"valor"``: tp = examples of ``c`` where ``c`` qualifies; fp = other examples where ``c`` qualifies;
  fn = examples of ``c`` where ``c`` does not qualify **or another label does** (so, without hardmax, a
  correct prediction next to a wrong one is both a tp and an fn); tn = other examples where ``c`` does
  not qualify. Accuracy is ``sum(tp) / N``.
* ``"one_vs_rest"``: each class its own binary problem at ``score >= t`` (no zero rule): fn = examples of
  ``c`` where ``c`` does not qualify. This is Valor's precision-recall curve and scikit-learn's binary
  counts of ``(labels == c, scores[:, c] >= t)``.

Per-example statistics: :func:`threshold_stat_scores` gives each example's ``(tp, fp, fn, tn)`` as
``int8 [N, T, C, 4]``; their sum is :func:`threshold_counts` (computed without materialising them), and
:meth:`ThresholdMetrics.from_counts` turns any sum (e.g. a bootstrap resample's) into the metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

import numpy as np

from olive_eval.metrics.classification import stat_scores as K
from olive_eval.metrics.classification.inputs import check_labels, column
from olive_eval.metrics.confusion import class_names_or_indices

__all__ = [
    "NO_LABEL",
    "ThresholdMetrics",
    "threshold_counts",
    "threshold_metrics",
    "threshold_stat_scores",
]  # the helpers below (check_*, at_or_above, ...) are shared with curves, pr_curves, threshold_confusion

NO_LABEL = -1
ZERO_SCORE = 1e-8  # Valor: a score this close to zero is no prediction
Rule = Literal["valor", "one_vs_rest"]
_CHUNK = 1 << 22  # (example, class) entries per block, to bound temporary memory


# ----------------------------------------------------------------------------------------------- input
def check_scores_labels(scores: object, labels: object, *, probabilities: bool) -> tuple[np.ndarray, np.ndarray]:
    """``float64 [N, C]`` scores and ``int64 [N]`` labels, validated; ``probabilities`` requires ``[0, 1]``.

    A bad label is named with its example (:mod:`~olive_eval.metrics.classification.inputs`)."""
    s, y = column(scores, "predictions"), column(labels, "references", labels=True)
    if s.ndim != 2 or s.shape[1] < 1:
        raise ValueError(f"scores must have shape [N, C], got {list(s.shape)}")
    if s.dtype == bool:
        raise ValueError(f"scores must be numeric, got dtype {s.dtype}")
    if y.ndim != 1 or len(y) != len(s):
        raise ValueError(f"labels must have shape [{len(s)}] to match the scores, got {list(y.shape)}")
    s = np.ascontiguousarray(s, dtype=np.float64)
    if s.size:
        low, high = s.min(), s.max()
        if np.isnan(low) or np.isnan(high):
            raise ValueError("scores contain NaN")
        if probabilities and (low < 0 or high > 1):
            raise ValueError(f"scores must lie in [0, 1] when score thresholds apply, found [{low}, {high}]")
    why = f"the scores have {s.shape[1]} columns ({NO_LABEL}: no reference label)"
    return s, check_labels(y, s.shape[1], "references", why=why, allow=NO_LABEL)


def check_thresholds(thresholds: object) -> np.ndarray:
    t = np.asarray(thresholds, dtype=np.float64).reshape(-1)
    if t.size == 0:
        raise ValueError("at least one score threshold is needed")
    if not np.isfinite(t).all():
        raise ValueError(f"score thresholds must be finite, got {t.tolist()}")
    return t


def qualifying_scores(scores: np.ndarray, *, hardmax: bool, drop_zero: bool) -> np.ndarray:
    """A copy of ``scores`` with ``-inf`` where a label can never qualify (hardmax losers, zero scores)."""
    out = scores.copy()
    if hardmax and out.shape[1] > 1:
        winner = np.argmax(scores, axis=1)
        keep = out[np.arange(len(out)), winner]
        out.fill(-np.inf)
        out[np.arange(len(out)), winner] = keep
    if drop_zero:
        out[np.abs(out) <= ZERO_SCORE] = -np.inf
    return out


def at_or_above(values: np.ndarray, groups: np.ndarray, n_groups: int, thresholds: np.ndarray) -> np.ndarray:
    """``int64 [n_groups, T]``: how many ``values`` of each group are ``>= thresholds[t]``.

    One binary search per value over the sorted thresholds and one histogram, so a sweep over ``T``
    thresholds costs about one pass, not ``T``.
    """
    order = np.argsort(thresholds, kind="stable")
    n_t = len(thresholds)
    level = np.searchsorted(thresholds[order], values, side="right")  # thresholds passed, in sorted order
    hist = np.bincount(groups * (n_t + 1) + level, minlength=n_groups * (n_t + 1)).reshape(n_groups, n_t + 1)
    passed = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1][:, 1:]
    out = np.empty_like(passed)
    out[:, order] = passed
    return out


def _row_blocks(n: int, width: int) -> list[slice]:
    """Slices of ``n`` rows holding about ``_CHUNK`` entries of ``width`` each."""
    step = max(1, _CHUNK // max(1, width))
    return [slice(lo, lo + step) for lo in range(0, n, step)]


# ---------------------------------------------------------------------------------------------- counts
def threshold_counts(
    scores: object,
    labels: object,
    *,
    score_thresholds: Sequence[float] = (0.0,),
    hardmax: bool = True,
    rule: Rule = "valor",
) -> np.ndarray:
    """``int64 [T, C, 4]``: ``(tp, fp, fn, tn)`` per threshold and class under ``rule`` (module docstring)."""
    if rule not in ("valor", "one_vs_rest"):
        raise ValueError(f"rule must be 'valor' or 'one_vs_rest', got {rule!r}")
    s, y = check_scores_labels(scores, labels, probabilities=True)
    ts = check_thresholds(score_thresholds)
    n, c = s.shape
    q = qualifying_scores(s, hardmax=hardmax, drop_zero=rule == "valor")
    support = np.bincount(y[y >= 0], minlength=c)
    predicted = np.zeros((2 * c, len(ts)), np.int64)  # row 2c + is_reference: qualifying entries of class c
    both = np.zeros((c, len(ts)), np.int64)  # valor: examples where their own label and another both qualify
    for block in _row_blocks(n, c):
        qb, yb = q[block], y[block]
        groups = 2 * np.arange(c) + (yb[:, None] == np.arange(c))
        predicted += at_or_above(qb.ravel(), groups.ravel(), 2 * c, ts)
        if rule == "valor":
            rows = np.flatnonzero(yb >= 0)
            own = qb[rows, yb[rows]]
            others = qb[rows].copy()
            others[np.arange(len(rows)), yb[rows]] = -np.inf
            both += at_or_above(np.minimum(own, others.max(axis=1)), yb[rows], c, ts)
    tp, fp = predicted[1::2], predicted[0::2]
    fn = support[:, None] - tp + both
    tn = (n - support)[:, None] - fp
    return np.stack([tp, fp, fn, tn], axis=-1).transpose(1, 0, 2)


def threshold_stat_scores(
    scores: object,
    labels: object,
    *,
    score_thresholds: Sequence[float] = (0.0,),
    hardmax: bool = True,
    rule: Rule = "valor",
) -> np.ndarray:
    """Per-example ``(tp, fp, fn, tn)``: ``int8 [N, T, C, 4]``, summing to :func:`threshold_counts`.

    Row ``i`` is example ``i`` (the ``[N, C, 4]`` layout of ``classification_kernels.stat_scores`` with a
    threshold axis), so a bootstrap resamples rows. Memory is ``4·N·T·C`` bytes.
    """
    s, y = check_scores_labels(scores, labels, probabilities=True)
    ts = check_thresholds(score_thresholds)
    q = qualifying_scores(s, hardmax=hardmax, drop_zero=rule == "valor")[:, None, :] >= ts[None, :, None]
    is_ref = (y[:, None] == np.arange(s.shape[1]))[:, None, :]
    tp, fp, tn = q & is_ref, q & ~is_ref, ~q & ~is_ref
    if rule == "valor":
        fn = is_ref & (~tp.any(axis=-1) | fp.any(axis=-1))[..., None]
    elif rule == "one_vs_rest":
        fn = is_ref & ~q
    else:
        raise ValueError(f"rule must be 'valor' or 'one_vs_rest', got {rule!r}")
    return np.stack([tp, fp, fn, tn], axis=-1).view(np.int8)


@dataclass(frozen=True)
class ThresholdMetrics:
    """Valor's classification metrics at each score threshold; per-class arrays are ``[T, C]``.

    Undefined ratios are 0, as in valor-lite: precision without predictions, recall without references.
    """

    score_thresholds: np.ndarray
    counts: np.ndarray  # [T, C, 4] (tp, fp, fn, tn)
    n_examples: int
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    accuracy: np.ndarray  # [T]: sum(tp) / N

    @classmethod
    def from_counts(cls, counts: np.ndarray, score_thresholds: Sequence[float], n_examples: int) -> ThresholdMetrics:
        counts = np.asarray(counts, dtype=np.int64)
        per_class = {
            stat: np.stack([K.reduce_stat_scores(c, stat, "none", task="multiclass") for c in counts])
            for stat in ("precision", "recall", "f1")
        }
        tp_total = counts[..., K.TP].sum(axis=-1).astype(np.float64)
        accuracy = tp_total / n_examples if n_examples else np.zeros(len(counts))
        return cls(np.asarray(score_thresholds, np.float64), counts, n_examples, accuracy=accuracy, **per_class)

    def average(
        self, stat: Literal["precision", "recall", "f1"], average: Literal["macro", "micro", "weighted"]
    ) -> np.ndarray:
        """``[T]`` averages: ``macro`` over classes with any tp, fp or fn (scikit-learn's label set),
        ``micro`` pools the counts, ``weighted`` weights by support (see classification_kernels)."""
        return K.reduce_totals_batch(self.counts, stat, average, task="multiclass")

    def to_dict(self, class_names: Sequence[str] | None = None) -> dict[str, Any]:
        """``{"accuracy": {threshold: value}, "<label>": {threshold: {tp, fp, fn, tn, precision, recall, f1_score}}}``."""
        names = class_names_or_indices(class_names, self.counts.shape[1])
        keys = threshold_keys(self.score_thresholds)
        out: dict[str, Any] = {"accuracy": {k: float(a) for k, a in zip(keys, self.accuracy, strict=True)}}
        for ci, name in enumerate(names):
            out[name] = {
                k: {
                    **dict(zip(("tp", "fp", "fn", "tn"), (int(v) for v in self.counts[ti, ci]), strict=True)),
                    "precision": float(self.precision[ti, ci]),
                    "recall": float(self.recall[ti, ci]),
                    "f1_score": float(self.f1[ti, ci]),
                }
                for ti, k in enumerate(keys)
            }
        return out


def threshold_metrics(
    scores: object, labels: object, *, score_thresholds: Sequence[float] = (0.0,), hardmax: bool = True
) -> ThresholdMetrics:
    """Valor's Counts, Precision, Recall, F1 and Accuracy at each of ``score_thresholds``."""
    counts = threshold_counts(scores, labels, score_thresholds=score_thresholds, hardmax=hardmax)
    return ThresholdMetrics.from_counts(counts, check_thresholds(score_thresholds), len(np.asarray(labels)))


def threshold_keys(thresholds: np.ndarray) -> list[str]:
    """JSON keys of thresholds: the shortest text that reads back as the same float (``0.05``, ``0.15``)."""
    return [repr(float(t)) for t in thresholds]


def first_members(members: np.ndarray, groups: np.ndarray, n_groups: int, limit: int | None) -> list[np.ndarray]:
    """For each group id in ``[0, n_groups)``, its first ``limit`` members (all when None), in given order."""
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(n_groups + 1))
    ranked = members[order]
    return [ranked[lo : hi if limit is None else min(hi, lo + limit)] for lo, hi in pairwise(bounds)]


def example_id(example_ids: Sequence[Any] | None, index: int) -> Any:
    value = index if example_ids is None else example_ids[index]
    return value.item() if isinstance(value, np.generic) else value

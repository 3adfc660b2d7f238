"""Ranking curves of classification scores: ROC AUC and average precision, binary and per class. Pure numpy.

Inputs as in :mod:`olive_eval.metrics.classification.thresholds`: ``scores`` ``[N, C]`` and integer
``labels`` ``[N]`` in ``[0, C)`` or ``NO_LABEL`` (-1, a negative for every class). Each class is scored
one-vs-rest. The binary kernels take ``[N]`` scores and ``{0, 1}`` targets.

ROC AUC and average precision sort each score column once and read counts at every distinct score
(ties collapse into one step), with scikit-learn's definitions: ROC AUC is the trapezoidal area under
(fpr, tpr) from (0, 0); average precision is the step-wise sum ``sum((R_k - R_{k-1}) * P_k)``. Both
are undefined (NaN) for a class without positives, ROC AUC also for one without negatives. They are
rank statistics and do not decompose over examples: resample by calling them on the resample. Valor's
precision-recall curves at fixed thresholds are in :mod:`.pr_curves`.

Non-negative float scores are sorted as ``uint64`` keys (the bit pattern shifted left, the label in the
freed sign bit): one radix-friendly sort and no gather. Negative scores fall back to ``argsort``.

ROC AUC and average precision need only two sums over the curve (:func:`curve_sums`): the optional C extension
``_curves`` computes them in one radix sort of those keys (no curve arrays), the numpy form from
:func:`binary_curve`; the tests hold the two equal. :func:`class_sums` sorts the columns of ``[N, C]`` scores
on threads (:mod:`.curve_threads`), with the same values on any count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from olive_eval.metrics.classification.curve_threads import curve_threads
from olive_eval.metrics.classification.thresholds import (
    at_or_above,
    check_scores_labels,
    check_thresholds,
)

try:
    from olive_eval.metrics.classification import _curves as curves_extension
except ImportError:  # installed without a C compiler: the numpy form
    curves_extension = None

__all__ = [
    "BinaryCurve",
    "average_precision",
    "binary_average_precision",
    "binary_counts",
    "binary_curve",
    "binary_f1",
    "binary_roc_auc",
    "class_sums",
    "curve_average_precision",
    "curve_roc_auc",
    "curve_sums",
    "macro_average",
    "roc_auc",
]

Undefined = Literal["skip", "zero", "nan"]


@dataclass(frozen=True)
class BinaryCurve:
    """Counts at each distinct score, highest first: ``tps[k]`` positives and ``fps[k]`` negatives score
    ``>= thresholds[k]``."""

    thresholds: np.ndarray
    tps: np.ndarray
    fps: np.ndarray

    @property
    def positives(self) -> int:
        return int(self.tps[-1]) if len(self.tps) else 0

    @property
    def negatives(self) -> int:
        return int(self.fps[-1]) if len(self.fps) else 0


def binary_curve(scores: object, positive: object) -> BinaryCurve:
    """The counting curve of ``[N]`` finite scores against ``[N]`` booleans (True = positive)."""
    s = np.ascontiguousarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(positive, dtype=bool).reshape(-1)
    if len(s) != len(y):
        raise ValueError(f"scores and targets hold different numbers of examples: {len(s)} vs {len(y)}")
    if s.size == 0:
        return BinaryCurve(np.empty(0), np.zeros(0, np.int64), np.zeros(0, np.int64))
    low = s.min()  # NaN if any score is NaN
    if np.isnan(low):
        raise ValueError("scores contain NaN")
    if low >= 0:  # non-negative floats order like their bit patterns; -0.0 shifts to the key of +0.0
        key = s.view(np.uint64) << np.uint64(1)
        key |= y
        key.sort()
        step = key[1:] ^ key[:-1]
        starts = np.flatnonzero(step > 1)
        del step
        starts += 1
        cum_pos = np.cumsum(key & np.uint64(1), dtype=np.int64)
        values = key[np.r_[0, starts]]
        values >>= np.uint64(1)
        values = values.view(np.float64)
    else:
        order = np.argsort(s)
        ordered = s[order]
        starts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
        cum_pos = np.cumsum(y[order], dtype=np.int64)
        values = ordered[np.r_[0, starts]]
    n, total_pos = len(s), int(cum_pos[-1])
    fps = n - np.r_[0, starts]  # examples scoring >= each distinct score (ascending scores) ...
    tps = np.r_[0, cum_pos[starts - 1]]  # positives below each distinct score ...
    np.subtract(total_pos, tps, out=tps)  # ... turned into positives at or above it
    fps -= tps  # ... and negatives at or above it
    return BinaryCurve(values[::-1], tps[::-1], fps[::-1])  # highest score first (views)


def curve_roc_auc(curve: BinaryCurve) -> float:
    """Trapezoidal area under the ROC curve, summed exactly in integers; NaN without positives or negatives."""
    return numpy_curve_sums(curve).roc_auc


def curve_average_precision(curve: BinaryCurve) -> float:
    """``sum((R_k - R_{k-1}) * P_k)`` over distinct scores; NaN without positives."""
    return numpy_curve_sums(curve).average_precision


@dataclass(frozen=True)
class CurveSums:
    """What ROC AUC and average precision read of a curve: the positives and negatives, ``twice_area`` =
    ``sum((fp_k - fp_{k-1}) * (tp_k + tp_{k-1}))`` (an integer) and ``ap_sum`` = ``sum((tp_k - tp_{k-1}) * P_k)``."""

    positives: int
    negatives: int
    twice_area: int
    ap_sum: float

    @property
    def roc_auc(self) -> float:
        p, n = self.positives, self.negatives
        return float("nan") if p == 0 or n == 0 else self.twice_area / (2 * p * n)

    @property
    def average_precision(self) -> float:
        return float("nan") if self.positives == 0 else float(self.ap_sum / self.positives)


def numpy_curve_sums(curve: BinaryCurve) -> CurveSums:
    """:class:`CurveSums` of a counting curve (the numpy form)."""
    p, n = curve.positives, curve.negatives
    if p == 0 and n == 0:
        return CurveSums(0, 0, 0, 0.0)
    tps, fps = np.r_[0, curve.tps], np.r_[0, curve.fps]
    twice_area = int(np.dot(np.diff(fps), tps[1:] + tps[:-1]))
    precision = curve.tps / (curve.tps + curve.fps)  # never 0 / 0: every distinct score has an example
    return CurveSums(p, n, twice_area, float(np.dot(np.diff(tps), precision)))


def curve_sums(scores: np.ndarray, positive: np.ndarray, *, native: bool = True) -> CurveSums:
    """:class:`CurveSums` of ``[N]`` finite scores against ``[N]`` booleans; in C when built (``native``) and the
    scores are non-negative, else through :func:`binary_curve`."""
    s = np.asarray(scores, dtype=np.float64)
    s = s if s.ndim == 1 else s.reshape(-1)  # a column of a wider array stays a strided view: C reads it in place
    y = np.asarray(positive, dtype=bool).reshape(-1)
    if native and curves_extension is not None and len(s) == len(y) and s.size and s.min() >= 0:
        return CurveSums(*curves_extension.curve_sums(s, y))  # s.min() is NaN (not >= 0) if any score is NaN
    return numpy_curve_sums(binary_curve(s, y))


def class_sums(scores: np.ndarray, labels: np.ndarray) -> list[CurveSums] | None:
    """One-vs-rest :class:`CurveSums` of every column of ``[N, C]`` float64 scores against int64 ``labels``, in
    one C call (columns on :func:`.curve_threads.curve_threads` threads); None without the extension or with a
    negative or NaN score (the per-column path then)."""
    if curves_extension is None:
        return None
    sums = curves_extension.class_curve_sums(scores, labels, curve_threads(*scores.shape))
    return None if sums is None else [CurveSums(*t) for t in sums]


def _binary_targets(targets: object, n: int) -> np.ndarray:
    t = np.asarray(targets).reshape(-1)
    if len(t) != n:
        raise ValueError(f"scores and targets hold different numbers of examples: {n} vs {len(t)}")
    if t.dtype != bool:
        if t.size and not ((t == 0) | (t == 1)).all():
            raise ValueError("binary targets must be 0 or 1")
        t = t == 1
    return t


def binary_roc_auc(scores: object, targets: object) -> float:
    """ROC AUC of ``[N]`` scores against ``{0, 1}`` targets (scikit-learn's ``roc_auc_score``; NaN if undefined)."""
    s = np.asarray(scores)
    return curve_sums(s, _binary_targets(targets, s.size)).roc_auc


def binary_average_precision(scores: object, targets: object) -> float:
    """Average precision of ``[N]`` scores (scikit-learn's ``average_precision_score``; NaN without positives)."""
    s = np.asarray(scores)
    return curve_sums(s, _binary_targets(targets, s.size)).average_precision


def binary_counts(scores: object, targets: object, thresholds: Sequence[float] = (0.5,)) -> np.ndarray:
    """``int64 [T, 4]`` ``(tp, fp, fn, tn)`` of the decisions ``score >= t`` (one pass for all thresholds)."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    y = _binary_targets(targets, s.size)
    ts = check_thresholds(thresholds)
    above = at_or_above(s, y.astype(np.intp), 2, ts)
    n_pos = int(np.count_nonzero(y))
    tp, fp = above[1], above[0]
    return np.stack([tp, fp, n_pos - tp, (len(s) - n_pos) - fp], axis=-1)


def binary_f1(scores: object, targets: object, threshold: float = 0.5) -> float:
    """F1 ``2tp / (2tp + fp + fn)`` of the decisions ``score >= threshold`` (0 when undefined, as scikit-learn)."""
    tp, fp, fn, _ = binary_counts(scores, targets, (threshold,))[0]
    return float(2 * tp / (2 * tp + fp + fn)) if tp else 0.0


def _per_class(
    scores: object, labels: object, measure: Callable[[CurveSums], float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s, y = check_scores_labels(scores, labels, probabilities=False)
    sums = class_sums(s, y)
    if sums is not None:
        return np.array([measure(t) for t in sums], dtype=np.float64), s, y
    values = np.array([measure(curve_sums(s[:, c], y == c)) for c in range(s.shape[1])], dtype=np.float64)
    return values, s, y


def roc_auc(scores: object, labels: object, *, convention: Literal["sklearn", "valor"] = "sklearn") -> np.ndarray:
    """One-vs-rest ROC AUC per class, ``[C]``.

    ``sklearn``: NaN for a class without positives or negatives (scikit-learn's per-class binary
    ``roc_auc_score``). ``valor``: valor-lite's ``ROCAUC``: 0.0 for those, and 0.0 for a class whose
    scores are all zero. Average with :func:`macro_average`: scikit-learn's ``roc_auc_score(...,
    multi_class="ovr", average="macro")`` is ``undefined="nan"``, valor-lite's ``mROCAUC`` is the plain
    mean of the ``valor`` values.
    """
    values, s, _ = _per_class(scores, labels, lambda sums: sums.roc_auc)
    if convention == "valor":
        values[np.isnan(values)] = 0.0
        if len(s):
            values[s.max(axis=0) == 0] = 0.0
    elif convention != "sklearn":
        raise ValueError(f"convention must be 'sklearn' or 'valor', got {convention!r}")
    return values


def average_precision(scores: object, labels: object) -> np.ndarray:
    """One-vs-rest average precision per class, ``[C]``; NaN for a class without positives.

    scikit-learn's ``average_precision_score(one_hot(labels), scores, average="macro")`` counts such a
    class as 0: :func:`macro_average` with ``undefined="zero"``.
    """
    return _per_class(scores, labels, lambda sums: sums.average_precision)[0]


def macro_average(per_class: np.ndarray, *, undefined: Undefined = "skip") -> float:
    """Mean of per-class values; NaN classes are left out (``skip``), count as 0 (``zero``) or make the
    mean NaN (``nan``). ``skip`` with nothing defined is NaN."""
    v = np.asarray(per_class, dtype=np.float64)
    if undefined == "zero":
        return float(np.nan_to_num(v, nan=0.0).mean()) if v.size else float("nan")
    if undefined == "nan":
        return float(v.mean()) if v.size else float("nan")
    if undefined != "skip":
        raise ValueError(f"undefined must be 'skip', 'zero' or 'nan', got {undefined!r}")
    defined = v[~np.isnan(v)]
    return float(defined.mean()) if defined.size else float("nan")

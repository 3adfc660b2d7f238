"""Ranking curves of classification scores: ROC AUC, average precision, precision-recall curves. Pure numpy.

Inputs as in :mod:`olive_eval.metrics.classification.thresholds`: ``scores`` ``[N, C]`` and integer
``labels`` ``[N]`` in ``[0, C)`` or ``NO_LABEL`` (-1, a negative for every class). Each class is scored
one-vs-rest. The binary kernels take ``[N]`` scores and ``{0, 1}`` targets.

ROC AUC and average precision sort each score column once and read counts at every distinct score
(ties collapse into one step), with scikit-learn's definitions: ROC AUC is the trapezoidal area under
(fpr, tpr) from (0, 0); average precision is the step-wise sum ``sum((R_k - R_{k-1}) * P_k)``. Both
are undefined (NaN) for a class without positives, ROC AUC also for one without negatives. They are
rank statistics and do not decompose over examples: resample by calling them on the resample.

Non-negative float scores are sorted as ``uint64`` keys (the bit pattern shifted left, the label in the
freed sign bit): one radix-friendly sort and no gather. Negative scores fall back to ``argsort``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from olive_eval.metrics.classification.thresholds import (
    at_or_above,
    check_scores_labels,
    check_thresholds,
    example_id,
    first_members,
    qualifying_scores,
    threshold_counts,
    threshold_keys,
)
from olive_eval.metrics.confusion import class_names_or_indices

__all__ = [
    "DEFAULT_THRESHOLDS",
    "BinaryCurve",
    "DetailedPRCurve",
    "PRCurve",
    "average_precision",
    "binary_average_precision",
    "binary_counts",
    "binary_curve",
    "binary_f1",
    "binary_roc_auc",
    "curve_average_precision",
    "curve_roc_auc",
    "detailed_pr_curve",
    "macro_average",
    "pr_curve",
    "roc_auc",
]

DEFAULT_THRESHOLDS = np.arange(5, 100, 5) / 100  # 0.05 ... 0.95, each exactly k/100 as Valor writes them
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
    p, n = curve.positives, curve.negatives
    if p == 0 or n == 0:
        return float("nan")
    tps, fps = np.r_[0, curve.tps], np.r_[0, curve.fps]
    twice_area = int(np.dot(np.diff(fps), tps[1:] + tps[:-1]))
    return twice_area / (2 * p * n)


def curve_average_precision(curve: BinaryCurve) -> float:
    """``sum((R_k - R_{k-1}) * P_k)`` over distinct scores; NaN without positives."""
    p = curve.positives
    if p == 0:
        return float("nan")
    gained = np.diff(curve.tps, prepend=0)
    precision = curve.tps / (curve.tps + curve.fps)  # never 0 / 0: every distinct score has an example
    return float(np.dot(gained, precision) / p)


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
    return curve_roc_auc(binary_curve(s, _binary_targets(targets, s.size)))


def binary_average_precision(scores: object, targets: object) -> float:
    """Average precision of ``[N]`` scores (scikit-learn's ``average_precision_score``; NaN without positives)."""
    s = np.asarray(scores)
    return curve_average_precision(binary_curve(s, _binary_targets(targets, s.size)))


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
    scores: object, labels: object, measure: Callable[[BinaryCurve], float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s, y = check_scores_labels(scores, labels, probabilities=False)
    values = np.array([measure(binary_curve(s[:, c], y == c)) for c in range(s.shape[1])])
    return values, s, y


def roc_auc(scores: object, labels: object, *, convention: Literal["sklearn", "valor"] = "sklearn") -> np.ndarray:
    """One-vs-rest ROC AUC per class, ``[C]``.

    ``sklearn``: NaN for a class without positives or negatives (scikit-learn's per-class binary
    ``roc_auc_score``). ``valor``: valor-lite's ``ROCAUC``: 0.0 for those, and 0.0 for a class whose
    scores are all zero. Average with :func:`macro_average`: scikit-learn's ``roc_auc_score(...,
    multi_class="ovr", average="macro")`` is ``undefined="nan"``, valor-lite's ``mROCAUC`` is the plain
    mean of the ``valor`` values.
    """
    values, s, _ = _per_class(scores, labels, curve_roc_auc)
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
    return _per_class(scores, labels, curve_average_precision)[0]


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


# ------------------------------------------------------------------------------------ precision-recall
def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0)


@dataclass(frozen=True)
class PRCurve:
    """Per class ``[C, T]`` counts at each threshold (Valor's ``PrecisionRecallCurve``); undefined ratios are 0."""

    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    tn: np.ndarray

    @property
    def precision(self) -> np.ndarray:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> np.ndarray:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> np.ndarray:
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    def to_dict(self, class_names: Sequence[str] | None = None) -> dict[str, dict[str, dict[str, float | int]]]:
        """``{label: {threshold: {tp, fp, fn, tn, precision, recall, f1_score}}}`` (threshold keys ``"0.05"``...)."""
        names = class_names_or_indices(class_names, self.tp.shape[0])
        keys = threshold_keys(self.thresholds)
        columns = {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn}
        ratios = {"precision": self.precision, "recall": self.recall, "f1_score": self.f1}
        return {
            name: {
                key: {
                    **{k: int(v[ci, ti]) for k, v in columns.items()},
                    **{k: float(v[ci, ti]) for k, v in ratios.items()},
                }
                for ti, key in enumerate(keys)
            }
            for ci, name in enumerate(names)
        }


def pr_curve(
    scores: object, labels: object, *, thresholds: Sequence[float] = DEFAULT_THRESHOLDS, hardmax: bool = False
) -> PRCurve:
    """Valor's precision-recall curve: each class its own binary problem, positive when its score is
    ``>= t`` (with ``hardmax``, only for the example's top class). Counts are sums over examples:
    ``threshold_stat_scores(..., rule="one_vs_rest")`` gives them per example."""
    counts = threshold_counts(scores, labels, score_thresholds=thresholds, hardmax=hardmax, rule="one_vs_rest")
    tp, fp, fn, tn = (counts[..., i].T for i in range(4))
    return PRCurve(check_thresholds(thresholds), tp, fp, fn, tn)


DETAILED_KINDS = ("tp", "fp_misclassification", "fp_hallucination", "fn_misclassification", "fn_no_prediction")


@dataclass(frozen=True)
class DetailedPRCurve:
    """Valor's ``DetailedPrecisionRecallCurve``: ``counts[kind]`` is ``[C, T]``, ``examples[kind][c][t]`` the
    indices of the first examples of that kind (example order), ``tn`` counts only."""

    thresholds: np.ndarray
    counts: dict[str, np.ndarray]
    examples: dict[str, list[list[np.ndarray]]]
    tn: np.ndarray

    def to_dict(
        self, class_names: Sequence[str] | None = None, example_ids: Sequence[Any] | None = None
    ) -> dict[str, dict[str, dict[str, Any]]]:
        """``{label: {threshold: {"tp"|"fp"|"fn": {"total", "observations": {kind: {"count", "examples"}}},
        "tn": {"total"}}}}`` with Valor's observation names."""
        names = class_names_or_indices(class_names, self.tn.shape[0])
        groups = {
            "tp": {"all": "tp"},
            "fp": {"misclassifications": "fp_misclassification", "hallucinations": "fp_hallucination"},
            "fn": {"misclassifications": "fn_misclassification", "no_predictions": "fn_no_prediction"},
        }

        def observed(kind: str, ci: int, ti: int) -> dict[str, Any]:
            ids = [example_id(example_ids, int(i)) for i in self.examples[kind][ci][ti]]
            return {"count": int(self.counts[kind][ci, ti]), "examples": ids}

        out: dict[str, dict[str, dict[str, Any]]] = {}
        for ci, name in enumerate(names):
            out[name] = {}
            for ti, key in enumerate(threshold_keys(self.thresholds)):
                entry: dict[str, Any] = {}
                for outcome, kinds in groups.items():
                    obs = {label: observed(kind, ci, ti) for label, kind in kinds.items()}
                    entry[outcome] = {"total": sum(o["count"] for o in obs.values()), "observations": obs}
                entry["tn"] = {"total": int(self.tn[ci, ti])}
                out[name][key] = entry
        return out


def detailed_pr_curve(
    scores: object,
    labels: object,
    *,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    hardmax: bool = False,
    max_examples: int | None = 1,
) -> DetailedPRCurve:
    """:func:`pr_curve` with its errors explained, as Valor's docs describe for classification.

    A false positive of class ``c`` (``c`` positive on an example of another class) is a
    *misclassification*, or a *hallucination* on an example without a reference label (``NO_LABEL``).
    A false negative (an example of ``c`` where ``c`` is not positive) is a *misclassification* when
    another class is positive there, else *no prediction*. Examples are the first ``max_examples``
    indices in example order (Valor's service sampled at random); ``to_dict`` maps them to ids.
    """
    s, y = check_scores_labels(scores, labels, probabilities=True)
    ts = check_thresholds(thresholds)
    n, c = s.shape
    q = qualifying_scores(s, hardmax=hardmax, drop_zero=False)
    best = np.argmax(q, axis=1)
    runner_up = q.copy()
    runner_up[np.arange(n), best] = -np.inf
    top, second = q[np.arange(n), best], runner_up.max(axis=1, initial=-np.inf)
    counts = {kind: np.zeros((c, len(ts)), np.int64) for kind in DETAILED_KINDS}
    examples: dict[str, list[list[np.ndarray]]] = {kind: [] for kind in DETAILED_KINDS}
    lowest = ts.min()
    for ci in range(c):
        refs = np.flatnonzero(y == ci)
        own, other = q[refs, ci], np.where(best[refs] == ci, second[refs], top[refs])
        wrong = np.flatnonzero((y != ci) & (q[:, ci] >= lowest))
        masks = {
            "tp": (refs, own[None, :] >= ts[:, None]),
            "fn_misclassification": (refs, (own[None, :] < ts[:, None]) & (other[None, :] >= ts[:, None])),
            "fn_no_prediction": (refs, (own[None, :] < ts[:, None]) & (other[None, :] < ts[:, None])),
            "fp_misclassification": (wrong, (q[wrong, ci][None, :] >= ts[:, None]) & (y[wrong] >= 0)),
            "fp_hallucination": (wrong, (q[wrong, ci][None, :] >= ts[:, None]) & (y[wrong] < 0)),
        }
        for kind, (members, mask) in masks.items():
            counts[kind][ci] = mask.sum(axis=1)
            t_idx, m_idx = np.nonzero(mask)
            examples[kind].append(first_members(members[m_idx], t_idx, len(ts), max_examples))
    support = np.bincount(y[y >= 0], minlength=c)
    fp = counts["fp_misclassification"] + counts["fp_hallucination"]
    return DetailedPRCurve(ts, counts, examples, (n - support)[:, None] - fp)

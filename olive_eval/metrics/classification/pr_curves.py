"""Valor's precision-recall curves of classification scores: counts per class at fixed score thresholds, and the
detailed curve that tells each error's kind with example indices. Pure numpy.

Inputs as in :mod:`.thresholds`: ``scores`` ``[N, C]`` and integer ``labels`` ``[N]`` in ``[0, C)`` or
``NO_LABEL`` (-1, a negative for every class). Each class is its own binary problem (one-vs-rest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from olive_eval.metrics.classification.thresholds import (
    check_scores_labels,
    check_thresholds,
    example_id,
    first_members,
    qualifying_scores,
    threshold_counts,
    threshold_keys,
)
from olive_eval.metrics.confusion import class_names_or_indices

__all__ = ["DEFAULT_THRESHOLDS", "DETAILED_KINDS", "DetailedPRCurve", "PRCurve", "detailed_pr_curve", "pr_curve"]

DEFAULT_THRESHOLDS = np.arange(5, 100, 5) / 100  # 0.05 ... 0.95, each exactly k/100 as Valor writes them


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

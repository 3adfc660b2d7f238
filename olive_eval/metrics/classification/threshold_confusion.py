"""Valor's confusion matrices of classification scores at score thresholds, and the one that lists each cell's
first examples. Pure numpy.

Inputs and the ``"valor"`` qualification of a label as in :mod:`.thresholds`: ``scores`` ``[N, C]`` in
``[0, 1]`` and integer ``labels`` ``[N]`` in ``[0, C)`` or ``NO_LABEL`` (-1). The matrices are additive over
examples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from olive_eval.metrics.classification.thresholds import (
    at_or_above,
    check_scores_labels,
    check_thresholds,
    example_id,
    first_members,
    qualifying_scores,
)
from olive_eval.metrics.confusion import class_names_or_indices

__all__ = ["ThresholdConfusion", "confusion_matrix_with_examples", "threshold_confusion_matrix"]


@dataclass(frozen=True)
class ThresholdConfusion:
    """Valor's confusion matrices: ``matrix[t, r, p]`` counts examples of reference ``r`` where ``p``
    qualifies (without hardmax one example may add to several cells of its row);
    ``unmatched_references[t, r]`` counts examples of ``r`` where nothing qualifies (no prediction);
    ``unmatched_predictions[t, p]`` counts ``p`` qualifying on examples without a reference label."""

    score_thresholds: np.ndarray
    matrix: np.ndarray  # [T, C, C]
    unmatched_references: np.ndarray  # [T, C]
    unmatched_predictions: np.ndarray  # [T, C]

    def to_dict(self, class_names: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """One entry per threshold, in valor-lite's ``ConfusionMatrix`` form."""
        names = class_names_or_indices(class_names, self.matrix.shape[-1])
        return [
            {
                "score_threshold": float(t),
                "confusion_matrix": {
                    r: {p: int(self.matrix[ti, ri, pi]) for pi, p in enumerate(names)} for ri, r in enumerate(names)
                },
                "unmatched_ground_truths": {r: int(self.unmatched_references[ti, ri]) for ri, r in enumerate(names)},
            }
            for ti, t in enumerate(self.score_thresholds)
        ]


def threshold_confusion_matrix(
    scores: object, labels: object, *, score_thresholds: Sequence[float] = (0.0,), hardmax: bool = True
) -> ThresholdConfusion:
    """Valor's confusion matrix at each threshold (``"valor"`` qualification, see :mod:`.thresholds`).

    With ``hardmax`` and positive scores it equals scikit-learn's ``confusion_matrix(labels,
    argmax(scores))`` at any threshold a winner reaches. Additive over examples.
    """
    s, y = check_scores_labels(scores, labels, probabilities=True)
    ts = check_thresholds(score_thresholds)
    c = s.shape[1]
    q = qualifying_scores(s, hardmax=hardmax, drop_zero=True)
    ref, free = y >= 0, y < 0
    cells = at_or_above(q[ref].ravel(), (y[ref, None] * c + np.arange(c)).ravel(), c * c, ts)
    matched = at_or_above(q[ref].max(axis=1, initial=-np.inf), y[ref], c, ts)
    loose = at_or_above(q[free].ravel(), np.tile(np.arange(c), int(free.sum())), c, ts)
    support = np.bincount(y[ref], minlength=c)
    return ThresholdConfusion(
        ts, cells.reshape(c, c, len(ts)).transpose(2, 0, 1), (support[:, None] - matched).T, loose.T
    )


def confusion_matrix_with_examples(
    scores: object,
    labels: object,
    *,
    score_threshold: float = 0.0,
    hardmax: bool = True,
    max_examples: int | None = 1,
    example_ids: Sequence[Any] | None = None,
    class_names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """valor-lite's ``ConfusionMatrixWithExamples`` value at one threshold: every cell and every
    unmatched reference label with its count and its first ``max_examples`` examples (all when None),
    in example order, as ``{"datum_id": id, "score": s}`` / ``{"datum_id": id}``; ids default to indices."""
    s, y = check_scores_labels(scores, labels, probabilities=True)
    if example_ids is not None and len(example_ids) != len(y):
        raise ValueError(f"{len(example_ids)} example ids for {len(y)} examples")
    c = s.shape[1]
    names = class_names_or_indices(class_names, c)
    q = qualifying_scores(s, hardmax=hardmax, drop_zero=True) >= float(check_thresholds(score_threshold)[0])
    q[y < 0] = False
    rows, cols = np.nonzero(q)
    cells = y[rows] * c + cols
    picked = first_members(np.arange(len(rows)), cells, c * c, max_examples)
    counts = np.bincount(cells, minlength=c * c)
    lonely = np.flatnonzero((y >= 0) & ~q.any(axis=1))
    lonely_picked = first_members(lonely, y[lonely], c, max_examples)
    lonely_counts = np.bincount(y[lonely], minlength=c)
    matrix = {
        names[r]: {
            names[p]: {
                "count": int(counts[r * c + p]),
                "examples": [
                    {"datum_id": example_id(example_ids, int(rows[k])), "score": float(s[rows[k], cols[k]])}
                    for k in picked[r * c + p]
                ],
            }
            for p in range(c)
        }
        for r in range(c)
    }
    unmatched = {
        names[r]: {
            "count": int(lonely_counts[r]),
            "examples": [{"datum_id": example_id(example_ids, int(i))} for i in lonely_picked[r]],
        }
        for r in range(c)
    }
    return {"confusion_matrix": matrix, "unmatched_ground_truths": unmatched}

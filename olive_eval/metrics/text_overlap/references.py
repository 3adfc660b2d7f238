"""Predictions against one or several reference texts per example, flattened into (prediction, reference) pairs.

A reference column holds, per example, a string (one reference) or a list of strings (several; the score is the
best over them). Unlike the answer metrics, a string is never split on ``|``: a summary or a translation may hold
one. The parsed form is :class:`~olive_eval.metrics.answers.references.Answers` (flat texts with offsets).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np

from olive_eval.metrics.answers.references import (
    Answers,
    check_lengths,
    check_predictions,
    single_example,
    to_answers,
)

__all__ = ["pair_up", "per_example"]

_LISTS = (list, tuple, np.ndarray)


def pair_up(predictions: Any, references: Any, metric: str, start: int = 0) -> tuple[list[str], Answers]:
    """The predictions (checked strings) and their references, examples numbered from ``start`` in errors.

    A bare prediction string with its reference(s) is one example, as :func:`compute_metric` passes it.
    """
    predictions, references = single_example(predictions, references)
    preds = check_predictions(predictions, start=start)
    if isinstance(references, str):
        raise TypeError("references must be a sequence with one entry per example, got a single str")
    column = [[r] if isinstance(r, str) else r for r in references]
    if column and not all(isinstance(r, _LISTS) for r in column):
        i = next(i for i, r in enumerate(column) if not isinstance(r, _LISTS))
        raise TypeError(
            f"reference of example {start + i} is {type(column[i]).__name__}, expected a str or a list of str"
        )
    answers = to_answers(column, start=start) if column else Answers(np.zeros(1, np.int64), [])
    check_lengths(len(preds), len(answers), metric)
    return preds, answers


def per_example(answers: Answers) -> list[list[str]]:
    """Each example's references, as a list (at least one)."""
    bounds = answers.offsets.tolist()
    return [answers.texts[a:b] for a, b in pairwise(bounds)]

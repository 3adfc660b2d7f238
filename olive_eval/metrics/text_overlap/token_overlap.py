"""Unitxt's ``TokenOverlap`` as accuracy sub-types: ``token_overlap_f1``, ``token_overlap_precision``, ``token_overlap_recall``.

Unitxt scores each (prediction, reference) pair on the SQuAD-normalized words of both texts (lowercased, ASCII
punctuation deleted, the words ``a``, ``an``, ``the`` removed, split at whitespace): with ``common`` the size of the
multiset intersection, precision is ``common / prediction words`` and recall ``common / reference words``, F1 their
harmonic mean, and all three are 0 when nothing is shared (an empty text included). With several references each of
the three is its own maximum over them (Unitxt takes the max per measure, so the three may come from different
references). The value is the mean over examples.

The three sub-types share one pass over the texts: rows ``[precision, recall, f1, 1]`` per example
(:class:`~olive_eval.metrics.text_overlap.column_means.ColumnMean`).
"""

from __future__ import annotations

import re
import string
from collections import Counter

import numpy as np

from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.text_overlap.column_means import ColumnMean

__all__ = [
    "TokenOverlapF1",
    "TokenOverlapPrecision",
    "TokenOverlapRecall",
    "overlap_scores",
    "squad_words",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_DELETE_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
PRECISION, RECALL, F1 = 0, 1, 2


def squad_words(text: str) -> list[str]:
    """The SQuAD answer normalization Unitxt's ``normalize_answer`` applies, as words (order: lower, punctuation,
    articles, whitespace)."""
    return _ARTICLES.sub(" ", text.lower().translate(_DELETE_ASCII_PUNCTUATION)).split()


def pair_scores(prediction: Counter[str], n_prediction: int, reference: list[str]) -> tuple[float, float, float]:
    """(precision, recall, F1) of one pair: multiset overlap of the words; zeros when nothing is shared."""
    common = sum((prediction & Counter(reference)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    precision, recall = common / n_prediction, common / len(reference)
    return precision, recall, 2 * precision * recall / (precision + recall)


def overlap_scores(predictions: list[str], references: list[list[str]]) -> np.ndarray:
    """``[N, 3]`` precision, recall, F1 per example, each the max over the example's references."""
    rows = np.zeros((len(predictions), 3))
    for i, (prediction, refs) in enumerate(zip(predictions, references, strict=True)):
        words = squad_words(prediction)
        counts = Counter(words)
        rows[i] = np.max([pair_scores(counts, len(words), squad_words(r)) for r in refs], axis=0)
    return rows


class _TokenOverlap(ColumnMean):
    """Precision, recall and F1 from one pass; each sub-type reports its column."""

    higher_is_better = True
    width = 3
    family = "token_overlap"

    def scores(self, predictions: list[str], references: list[list[str]], start: int) -> np.ndarray:
        return overlap_scores(predictions, references)


@register_metric
class TokenOverlapF1(_TokenOverlap):
    """Unitxt's ``token_overlap`` main score: the mean of the examples' best word-overlap F1."""

    name = "token_overlap_f1"
    column = F1


@register_metric
class TokenOverlapPrecision(_TokenOverlap):
    """Unitxt's ``token_overlap`` precision: shared words over the prediction's words, best reference, mean."""

    name = "token_overlap_precision"
    column = PRECISION


@register_metric
class TokenOverlapRecall(_TokenOverlap):
    """Unitxt's ``token_overlap`` recall: shared words over the reference's words, best reference, mean."""

    name = "token_overlap_recall"
    column = RECALL

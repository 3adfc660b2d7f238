"""Unitxt's ``CharEditDistance`` as accuracy sub-types: ``char_edit_distance``, ``char_edit_distance_normalized`` and
``char_edit_dist_accuracy``.

Unitxt deletes every whitespace character from both texts (``"".join(text.split())``) and counts the Levenshtein
distance ``d`` between them (insertions, deletions, substitutions of single code points, each costing 1). Per
example:

* ``char_edit_distance`` -- ``d`` itself (lower is better); the value is the mean over examples, as Unitxt's;
* ``char_edit_distance_normalized`` -- ``d / max(len(prediction), len(reference))`` in [0, 1], 0 for two empty
  texts (lower is better; not one of Unitxt's scores, the normalized distance its accuracy is made of);
* ``char_edit_dist_accuracy`` -- Unitxt's ``1 - d / max(len(prediction), len(reference))``, and, as Unitxt, 0.0
  when both texts are empty after whitespace removal.

Unlike ``cer`` (jiwer's edits over the reference's characters, whitespace kept), nothing is divided by the
reference alone, so an empty reference is a value, not an error. Each example has exactly one reference (Unitxt's
``single_reference_per_prediction``): a list of one string is taken, a longer one is an error naming the example.
The three share one pass: rows ``[d, normalized, accuracy, 1]``
(:class:`~olive_eval.metrics.text_overlap.column_means.ColumnMean`).
"""

from __future__ import annotations

import numpy as np
from rapidfuzz.distance import Levenshtein

from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.text_overlap.column_means import ColumnMean

__all__ = ["CharEditDistance", "CharEditDistanceAccuracy", "CharEditDistanceNormalized", "edit_rows"]

DISTANCE, NORMALIZED, ACCURACY = 0, 1, 2


def without_whitespace(text: str) -> str:
    """The text with every whitespace character (``str.split``'s) deleted."""
    return "".join(text.split())


def edit_rows(predictions: list[str], references: list[str]) -> np.ndarray:
    """``[N, 3]`` rows ``[d, d / longest, accuracy]`` of each (prediction, reference) pair."""
    rows = np.zeros((len(predictions), 3))
    for i, (prediction, reference) in enumerate(zip(predictions, references, strict=True)):
        p, r = without_whitespace(prediction), without_whitespace(reference)
        longest = max(len(p), len(r))
        if longest == 0:
            continue  # Unitxt: 0.0 for the distance and for the accuracy; the normalized distance is 0 too
        distance = Levenshtein.distance(p, r)
        rows[i, :3] = distance, distance / longest, 1.0 - distance / longest
    return rows


class _CharEditDistance(ColumnMean):
    """The distance, its normalized form and Unitxt's accuracy from one pass; each sub-type reports its column."""

    higher_is_better = False
    width = 3
    family = "char_edit_distance"

    def scores(self, predictions: list[str], references: list[list[str]], start: int) -> np.ndarray:
        for i, texts in enumerate(references):
            if len(texts) != 1:
                raise ValueError(
                    f"{self.name}: example {start + i} has {len(texts)} references; "
                    "it takes exactly one per example (Unitxt's single_reference_per_prediction)"
                )
        return edit_rows(predictions, [texts[0] for texts in references])


@register_metric
class CharEditDistance(_CharEditDistance):
    """Unitxt's ``char_edit_distance``: the mean Levenshtein distance of the whitespace-free texts."""

    name = "char_edit_distance"
    column = DISTANCE


@register_metric
class CharEditDistanceNormalized(_CharEditDistance):
    """The mean of ``d / max(len(prediction), len(reference))`` (0 for two empty texts)."""

    name = "char_edit_distance_normalized"
    column = NORMALIZED


@register_metric
class CharEditDistanceAccuracy(_CharEditDistance):
    """Unitxt's ``char_edit_dist_accuracy``: the mean of ``1 - d / max(len)`` (0.0 for two empty texts)."""

    name = "char_edit_dist_accuracy"
    column = ACCURACY
    higher_is_better = True

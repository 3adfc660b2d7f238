"""``sts_spearman`` and ``sts_pearson``: an embedding model's semantic textual similarity, scored as MTEB scores it.

The model under evaluation embeds both sentences of each pair (a data config with ``encode_separately`` calls it
once per sentence column, and ``mean_pooling`` makes the embeddings; a Python model may return the two vectors
itself). The score is the correlation, over the pairs, between the cosine similarity of the two embeddings and the
gold similarity in the references: Spearman's rho (MTEB's main STS score, ``cosine_spearman``) or Pearson's r
(``cosine_pearson``). The correlation is what :mod:`olive_eval.metrics.regression` computes, on the cosines; its
statistics are per-pair ``(cosine, gold)``, so intervals and paired goals resample pairs.

A prediction is the pair's two embeddings: a dict of two vectors (what ``encode_separately`` gives, one per
sentence column), a sequence of two vectors, or a ``[2, d]`` array; a batch may also be one ``[n, 2, d]`` array.
A zero vector has cosine 0 with anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from olive_eval.metrics.embeddings.kernels import cosine_rows
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.regression.pair_metrics import PairedMetric, Pearson, Spearman

__all__ = ["StsMetric", "StsPearson", "StsSpearman", "pair_cosines"]


def _two_vectors(prediction: Any, example: int) -> tuple[np.ndarray, np.ndarray]:
    values = list(prediction.values()) if isinstance(prediction, Mapping) else prediction
    try:
        first, second = (np.asarray(v, dtype=np.float64) for v in values)
    except (TypeError, ValueError):
        shown = type(prediction).__name__
        raise ValueError(
            f"the prediction of example {example} is a {shown}, not the two embeddings of a sentence pair "
            "(encode each sentence column separately: encode_separately)"
        ) from None
    if first.ndim != 1 or first.shape != second.shape:
        raise ValueError(
            f"the prediction of example {example} holds embeddings of shapes {list(first.shape)} and "
            f"{list(second.shape)}; a pair needs two vectors of one length"
        )
    return first, second


def pair_cosines(predictions: Any, *, start: int = 0) -> np.ndarray:
    """The cosine similarity of each example's two embeddings, ``[n]`` float64."""
    if isinstance(predictions, np.ndarray) and predictions.dtype.kind in "biuf":
        if predictions.ndim != 3 or predictions.shape[1] != 2:
            raise ValueError(f"predictions of shape {list(predictions.shape)} are not [n, 2, d] pairs of embeddings")
        return cosine_rows(predictions[:, 0], predictions[:, 1])
    pairs = [_two_vectors(p, start + i) for i, p in enumerate(predictions)]
    if not pairs:
        return np.empty(0)
    widths = {first.shape for first, _ in pairs}
    if len(widths) > 1:
        raise ValueError(f"the embeddings of a batch differ in length: {sorted(w[0] for w in widths)}")
    return cosine_rows(np.stack([a for a, _ in pairs]), np.stack([b for _, b in pairs]))


class StsMetric(PairedMetric):
    """A correlation of the pairs' cosine similarities with the gold scores."""

    reads = ("prediction", "references")

    def checked(self, predictions: Any, references: Any) -> tuple[np.ndarray, np.ndarray]:
        """The pairs' cosines and the gold scores, ``[n, 1]`` each."""
        return self.columns(pair_cosines(predictions, start=self.seen), references)

    def shared_key(self) -> Any:
        """Both STS sub-types read the same cosines."""
        return ("sts", self.nan_policy)

    def undefined(self, x: np.ndarray, y: np.ndarray) -> str:
        if len(x) < 2:
            return f"{self.name} needs at least 2 sentence pairs, got {len(x)}"
        if np.all(x == x[0]):
            return "the cosine similarities are constant: a correlation needs both samples to vary"
        return "the gold scores are constant: a correlation needs both samples to vary"


@register_metric
class StsSpearman(StsMetric, Spearman):
    """Spearman's rho of the cosine similarities and the gold scores (MTEB's main STS score)."""

    name = "sts_spearman"


@register_metric
class StsPearson(StsMetric, Pearson):
    """Pearson's r of the cosine similarities and the gold scores."""

    name = "sts_pearson"

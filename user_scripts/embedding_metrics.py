"""Metrics for sentence embeddings of text pairs (the MiniLM example, ``configs/minilm.json``).

The data config encodes each sentence of a pair on its own (``encode_separately``), so a prediction is
``{"sentence1": embedding, "sentence2": embedding}``; ``mean_pooling`` made the embeddings unit length, so
their dot product is their cosine similarity. The label says whether the two sentences are paraphrases.
"""

from __future__ import annotations

import numpy as np

from olive_eval import register_metric
from olive_eval.metrics.classification.auroc import binary_auroc


def cosine(prediction: dict) -> float:
    a, b = (np.asarray(v, dtype=np.float64) for v in prediction.values())
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-12))


@register_metric(name="cosine_auroc", higher_is_better=True, kind="global")
def cosine_auroc(predictions: list, references: list) -> float:
    """How well the pair's cosine similarity separates paraphrases from other pairs (ROC AUC)."""
    return binary_auroc([cosine(p) for p in predictions], np.asarray(references))


@register_metric(name="cosine_accuracy", higher_is_better=True, kind="instance")
def cosine_accuracy(prediction: dict, reference: int, threshold: float = 0.5) -> float:
    """1 when the pair is called a paraphrase (cosine at or above ``threshold``) exactly when it is one."""
    return float((cosine(prediction) >= threshold) == bool(reference))

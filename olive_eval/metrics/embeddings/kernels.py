"""The numpy arithmetic of the embedding metrics, apart from any model: cosine of sentence vectors and BERTScore's
greedy token matching."""

from __future__ import annotations

import numpy as np

__all__ = ["cosine_rows", "greedy_match"]


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``a`` with the same row of ``b`` ``[n, d]`` → ``[n]``, in float64; a zero vector
    has cosine 0 with anything (sentence-transformers' ``cos_sim`` divides by a clamped norm the same way)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    norms = np.sqrt(np.einsum("nd,nd->n", a, a) * np.einsum("nd,nd->n", b, b))  # no [n, d] temporaries
    dots = np.einsum("nd,nd->n", a, b)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def greedy_match(
    candidate: np.ndarray, candidate_weights: np.ndarray, reference: np.ndarray, reference_weights: np.ndarray
) -> tuple[float, float, float]:
    """BERTScore's precision, recall and F1 of one candidate against one reference.

    ``candidate`` ``[m, d]`` and ``reference`` ``[k, d]`` are the token states (special tokens included: they
    can be matched), the weights say how much each token counts (0 for ``[CLS]``/``[SEP]``, 1 otherwise with idf
    off). Precision is the weighted mean over candidate tokens of their best cosine with any reference token,
    recall the same the other way round, F1 their harmonic mean. A best cosine below 0 counts as 0: bert-score
    multiplies the similarity matrix by its padding mask, so a padded position (similarity 0) is always a
    candidate for the maximum. When either side has no weighted token (an empty text: only ``[CLS] [SEP]``), all
    three are 0, as bert-score sets them.
    """
    wc = np.asarray(candidate_weights, np.float64)
    wr = np.asarray(reference_weights, np.float64)
    if wc.sum() <= 0 or wr.sum() <= 0:
        return 0.0, 0.0, 0.0
    sim = _unit(candidate) @ _unit(reference).T
    p = float(sim.max(axis=1, initial=0.0) @ wc / wc.sum())
    r = float(sim.max(axis=0, initial=0.0) @ wr / wr.sum())
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f

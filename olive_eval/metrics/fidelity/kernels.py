"""Per-example comparisons of a candidate's outputs with the baseline's, in numpy.

Class-axis measures (agreement, divergences) read the last axis as the classes and average over any positions
before it (a sequence's tokens); element-wise measures flatten each example. Every function takes the candidate
first and the baseline second, as ``[examples, ...]`` arrays of one shape, and returns one value per example
(element-wise sums for the map/reduce measures).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def paired(candidate: Any, baseline: Any, float64: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The two outputs as float64 arrays of one shape; a ValueError naming both shapes otherwise. ``float64``
    False keeps floating outputs as they are (an argmax needs no copy; sums need float64)."""
    c = _array(candidate, "candidate", float64)
    b = _array(baseline, "baseline", float64)
    if c.shape != b.shape:
        raise ValueError(
            f"the candidate's output has shape {c.shape[1:]} per example and the baseline's {b.shape[1:]} "
            f"({c.shape[0]} and {b.shape[0]} examples): fidelity compares outputs of one shape"
        )
    return c, b


def _stacked(column: Any) -> Any:
    """A column of mappings (``encode_separately``'s ``{column: embedding}`` per example) as one array per example:
    its values stacked in the mapping's order (a sentence pair's two embeddings: ``[2, d]``)."""
    if isinstance(column, (list, tuple)) and column and isinstance(column[0], Mapping):
        return [np.stack([np.asarray(v) for v in item.values()]) for item in column]
    return column


def _array(column: Any, who: str, float64: bool) -> np.ndarray:
    try:
        array = np.asarray(_stacked(column))
        if float64 or array.dtype.kind != "f":
            array = np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"the {who}'s output is not an array of numbers of one shape per example (it is {type(column).__name__})"
        ) from None
    if array.ndim == 0:
        raise ValueError(f"the {who}'s output is a single number, not one output per example")
    if array.size and np.isnan(array.min()):  # one pass, no mask; NaN would pass as argmax's first class
        nan = np.isnan(array.reshape(len(array), -1)).any(axis=1)
        raise ValueError(
            f"the {who}'s output holds NaN in {int(nan.sum())} of {len(nan)} examples (first: example "
            f"{int(np.argmax(nan))})"
        )
    return array.reshape(len(array), 1) if array.ndim == 1 else array


def _classes(array: np.ndarray) -> np.ndarray:
    """``[examples, positions, classes]``: the last axis the classes, the axes between them positions. One class
    is refused: a single logit would always agree and never diverge, whatever the candidate does."""
    classes = array.shape[-1]
    if classes < 2:
        raise ValueError(
            f"the output has {classes} class{'' if classes == 1 else 'es'} on its last axis: agreement and "
            "divergences compare classes; compare it with output_mse, max_abs_error, cosine_similarity or snr_db"
        )
    return array.reshape(array.shape[0], -1, classes)


def _log_softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    scaled = logits / temperature
    scaled = scaled - scaled.max(axis=-1, keepdims=True)
    return scaled - np.log(np.exp(scaled).sum(axis=-1, keepdims=True))


def _relative_entropy(log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """Σ p·(log p − log q) over the classes, with 0·log 0 = 0: a masked class (-inf logit) of ``p`` adds nothing."""
    p = np.exp(log_p)
    with np.errstate(invalid="ignore"):  # -inf − -inf where both mask a class; np.where drops it
        return np.where(p > 0, p * (log_p - log_q), 0.0).sum(axis=-1)


def top1_agreement(candidate: Any, baseline: Any) -> np.ndarray:
    """Per example, the share of positions where the two outputs' largest class is the same."""
    c, b = (_classes(a) for a in paired(candidate, baseline, float64=False))
    return (c.argmax(axis=-1) == b.argmax(axis=-1)).mean(axis=1)


def topk_agreement(candidate: Any, baseline: Any, k: int) -> np.ndarray:
    """Per example, the overlap of the two outputs' ``k`` largest classes, as a share of ``k`` (averaged over
    positions); ``k`` 1 is top-1 agreement. Among equal values, the one with the lower index ranks first."""
    c, b = (_classes(a) for a in paired(candidate, baseline, float64=False))
    if k > c.shape[-1]:
        raise ValueError(f"k {k} is more than the {c.shape[-1]} classes of the output")
    top_c = np.argsort(-c, axis=-1, kind="stable")[..., :k]
    top_b = np.argsort(-b, axis=-1, kind="stable")[..., :k]
    shared = (top_c[..., :, None] == top_b[..., None, :]).any(axis=-1).sum(axis=-1)
    return (shared / k).mean(axis=1)


def kl_divergence(candidate: Any, baseline: Any, temperature: float = 1.0) -> np.ndarray:
    """Per example, KL(baseline ‖ candidate) of the softmax of the outputs (natural log), averaged over positions."""
    c, b = (_classes(a) for a in paired(candidate, baseline))
    shifted_b, exp_b, log_z_b = _softmax_parts(b, temperature)
    shifted_c, _, log_z_c = _softmax_parts(c, temperature)
    # Σ p·(log p − log q) with log p = shifted_b − log z_b and Σ p = 1: two exps, no log-probability arrays
    with np.errstate(invalid="ignore"):  # NaN where a class is masked (-inf): those positions again, below
        np.subtract(shifted_b, shifted_c, out=shifted_c)
        kl = np.einsum("...k,...k->...", exp_b, shifted_c) / np.exp(log_z_b) - log_z_b + log_z_c
    masked = np.isnan(kl)  # inputs hold no NaN (refused): only -inf logits make one
    if masked.any():
        log_p, log_q = _log_softmax(b[masked], temperature), _log_softmax(c[masked], temperature)
        kl[masked] = _relative_entropy(log_p, log_q)
    return np.maximum(kl.mean(axis=1), 0.0)  # rounding dips below 0 for near-equal outputs


def _softmax_parts(logits: np.ndarray, temperature: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(logits / temperature shifted so that each position's largest is 0, their exp, log of the exps' sum)."""
    scaled = logits / temperature if temperature != 1 else logits
    shifted = scaled - scaled.max(axis=-1, keepdims=True)
    exps = np.exp(shifted)
    return shifted, exps, np.log(exps.sum(axis=-1))


def _log_midpoint(log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """log((p + q) / 2), exactly log p where the two are equal (so equal outputs diverge by exactly 0)."""
    high, low = np.maximum(log_p, log_q), np.minimum(log_p, log_q)
    with np.errstate(invalid="ignore"):  # -inf − -inf where both mask a class: p and q are 0 there, dropped
        return high + np.log((1.0 + np.exp(low - high)) / 2.0)


def js_divergence(candidate: Any, baseline: Any, temperature: float = 1.0) -> np.ndarray:
    """Per example, the Jensen-Shannon divergence of the two softmaxes (natural log: at most ln 2)."""
    c, b = (_classes(a) for a in paired(candidate, baseline))
    log_q, log_p = _log_softmax(c, temperature), _log_softmax(b, temperature)
    log_m = _log_midpoint(log_p, log_q)
    js = 0.5 * (_relative_entropy(log_p, log_m) + _relative_entropy(log_q, log_m))
    return np.maximum(js.mean(axis=1), 0.0)  # rounding dips below 0 for near-equal outputs


def cosine_similarity(candidate: Any, baseline: Any) -> np.ndarray:
    """Per example, the cosine of the two flattened outputs (1 where both are zero, 0 where one is)."""
    c, b = paired(candidate, baseline)
    c, b = c.reshape(len(c), -1), b.reshape(len(b), -1)
    norms = np.linalg.norm(c, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", c, b)
    both_zero = ~c.any(axis=1) & ~b.any(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
    return np.where(both_zero, 1.0, np.clip(cosine, -1.0, 1.0))


def squared_error(candidate: Any, baseline: Any) -> np.ndarray:
    """Per example, ``[sum of squared differences, elements]``."""
    c, b = paired(candidate, baseline)
    diff = (c - b).reshape(len(c), -1)
    return np.stack([np.einsum("ij,ij->i", diff, diff), np.full(len(c), diff.shape[1], dtype=np.float64)], axis=1)


def max_abs_error(candidate: Any, baseline: Any) -> np.ndarray:
    """Per example, the largest absolute difference of any element."""
    c, b = paired(candidate, baseline)
    return np.abs(c - b).reshape(len(c), -1).max(axis=1)


def signal_and_noise(candidate: Any, baseline: Any) -> np.ndarray:
    """Per example, ``[sum of the baseline's squares, sum of squared differences]``: the SNR's two energies."""
    c, b = paired(candidate, baseline)
    flat_b, diff = b.reshape(len(b), -1), (c - b).reshape(len(c), -1)
    return np.stack([np.einsum("ij,ij->i", flat_b, flat_b), np.einsum("ij,ij->i", diff, diff)], axis=1)


def log_softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Log-probabilities over the last axis, in float64."""
    return _log_softmax(np.asarray(logits, dtype=np.float64), 1.0)


def token_agreement(candidate_log_probs: np.ndarray, tokens: np.ndarray) -> float:
    """One example: the share of the baseline's tokens that are the candidate's most likely next token, the
    candidate fed the baseline's tokens before each (teacher forcing)."""
    return float(np.mean(np.asarray(candidate_log_probs).argmax(axis=-1) == np.asarray(tokens)))


def token_kl(candidate_log_probs: np.ndarray, baseline_log_probs: np.ndarray) -> float:
    """One example: the mean over the baseline's token positions of KL(baseline ‖ candidate) of the next-token
    distributions (natural log)."""
    log_q = log_softmax_rows(candidate_log_probs)
    log_p = log_softmax_rows(baseline_log_probs)
    if log_q.shape != log_p.shape:
        raise ValueError(
            f"the candidate's next-token distributions have shape {log_q.shape} and the baseline's {log_p.shape}: "
            "the two models need one vocabulary"
        )
    return float((np.exp(log_p) * (log_p - log_q)).sum(axis=-1).mean())

"""Language-modeling metrics: perplexity, from raw logits.

One input convention, the causal-LM one Olive uses: ``logits`` ``[N, T, V]`` are the model output for
the token ids ``targets`` ``[N, T]`` themselves, so the shift happens here -- ``logits[:, :-1]``
predict ``targets[:, 1:]``. Do not pass pre-shifted inputs (they would be shifted twice).

Perplexity is lower-is-better (Olive marks it higher-is-better, which is wrong).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel

__all__ = ["Perplexity", "PerplexityConfig", "perplexity", "perplexity_statistics", "reduce_perplexity"]

_CHUNK_ELEMENTS = 1 << 23  # logits converted to float64 per block of token positions (bounds memory)


def perplexity_statistics(logits: Any, targets: Any, *, ignore_index: int | None = -100) -> np.ndarray:
    """Per-example ``[N, 2]`` float64: (summed negative log-likelihood, number of scored tokens).

    ``logits[:, t]`` predicts ``targets[:, t + 1]``; target positions equal to ``ignore_index`` are not
    scored. An example with every target ignored (or with ``T == 1``) gets ``(0, 0)``. The log-softmax
    is the stable ``x - max - log(sum(exp(x - max)))``, computed in float64.
    """
    lg, tg = np.asarray(logits), np.asarray(targets)
    if lg.ndim != 3:
        raise ValueError(f"perplexity logits must have shape [N, T, V], got {list(lg.shape)}")
    if tg.shape != lg.shape[:2]:
        raise ValueError(f"perplexity targets must have shape [N, T] = {list(lg.shape[:2])}, got {list(tg.shape)}")
    if not np.issubdtype(lg.dtype, np.number) or not np.issubdtype(tg.dtype, np.integer):
        raise ValueError("perplexity needs numeric logits and integer token-id targets")
    n, t, v = lg.shape
    stats = np.zeros((n, 2))
    if t < 2 or n == 0:
        return stats
    tokens = tg[:, 1:].reshape(-1)
    valid = np.ones(tokens.shape, bool) if ignore_index is None else tokens != ignore_index
    bad = valid & ((tokens < 0) | (tokens >= v))
    if bad.any():
        raise ValueError(f"target token ids must lie in [0, {v - 1}] or be ignore_index, found {tokens[bad][0]}")
    scored = np.flatnonzero(valid)  # padding (ignored positions) costs nothing
    nll = np.zeros(n * (t - 1))
    step = max(1, _CHUNK_ELEMENTS // max(v, 1))
    for lo in range(0, len(scored), step):  # blocks of token positions, never a loop over examples
        flat = scored[lo : lo + step]
        x = lg[flat // (t - 1), flat % (t - 1)].astype(np.float64)  # [block, V]: no copy of all logits
        peak = x.max(axis=1, keepdims=True)
        log_norm = peak[:, 0] + np.log(np.exp(x - peak).sum(axis=1))
        nll[flat] = log_norm - x[np.arange(len(x)), tokens[flat]]
    nll = nll.reshape(n, t - 1)
    stats[:, 0] = nll.sum(axis=1)
    stats[:, 1] = valid.reshape(n, t - 1).sum(axis=1)
    return stats


def reduce_perplexity(statistics: Any) -> float:
    """``exp(sum(nll) / sum(count))`` over ``[N, 2]`` statistics; NaN when no token was scored."""
    stats = np.asarray(statistics, np.float64).reshape(-1, 2)
    total_nll, count = stats.sum(axis=0)
    return float(np.exp(total_nll / count)) if count > 0 else float("nan")


def perplexity(logits: Any, targets: Any, *, ignore_index: int | None = -100) -> float:
    """Perplexity of ``targets[:, 1:]`` under ``logits[:, :-1]`` (the shift happens here)."""
    return reduce_perplexity(perplexity_statistics(logits, targets, ignore_index=ignore_index))


class PerplexityConfig(StrictModel):
    ignore_index: int | None = -100


@register_metric
class Perplexity(Metric):
    """Token-level perplexity from causal-LM logits ``[N, T, V]`` and token ids ``[N, T]``."""

    name = "perplexity"
    higher_is_better = False
    kind = Kind.MAP_REDUCE
    reads = ("logits", "references")
    Config: ClassVar[type[StrictModel]] = PerplexityConfig

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        return perplexity_statistics(predictions, references, ignore_index=self.config.ignore_index)

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        """``exp(nll / count)`` for every resample's totals ``[B, 2]`` at once."""
        t = np.asarray(totals, np.float64).reshape(-1, 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(t[:, 1] > 0, np.exp(t[:, 0] / np.where(t[:, 1] > 0, t[:, 1], 1)), np.nan)

    def reduce(self, statistics: np.ndarray) -> Score:
        stats = np.asarray(statistics, np.float64).reshape(-1, 2)
        return Score(value=reduce_perplexity(stats), extra={"tokens": int(stats[:, 1].sum())})

"""Anytime-valid confidence sequences for the mean of bounded i.i.d. observations, seen in order.

A confidence sequence holds at every step at once: ``P(exists t: mean outside [lower_t, upper_t]) <= alpha``, so a
run may look after every chunk and stop at the first decision without the error growing with the looks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from olive_eval.decide.sequential.bernstein import bernstein_bounds
from olive_eval.decide.sequential.betting import betting_bounds, betting_excludes

METHODS = ("betting", "empirical_bernstein")

#: Elements per block of sequences in :func:`excludes`: temporaries stay in cache-sized pieces.
BLOCK_ELEMENTS = 1 << 18


def check_inputs(z: np.ndarray, low: float, high: float, alpha: float, method: str) -> np.ndarray:
    """The observations as floats, or a one-line ValueError naming what is wrong."""
    if method not in METHODS:
        raise ValueError(f"unknown confidence sequence method {method!r}; expected one of {', '.join(METHODS)}")
    if not (0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not (np.isfinite(low) and np.isfinite(high)) or low >= high:
        raise ValueError(f"the bounds need low < high (both finite), got low={low}, high={high}")
    values = np.asarray(z, dtype=np.float64)
    if values.ndim == 0 or values.shape[-1] == 0:
        raise ValueError("a confidence sequence needs at least one observation")
    if not np.all(np.isfinite(values)):
        raise ValueError("the observations must be finite")
    out = (values < low) | (values > high)
    if np.any(out):
        first = values[out].flat[0]
        raise ValueError(f"{int(out.sum())} observation(s) outside [{low}, {high}], e.g. {first}")
    return values


def mean_confidence_sequence(
    z: np.ndarray, low: float, high: float, alpha: float, method: str = "betting", *, points: Sequence[float] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """Anytime-valid two-sided (1 - alpha) confidence sequence for the mean of i.i.d. z_i in [low, high],
    observed in the given order: (lower[t], upper[t]) after the first t+1 observations, running intersection
    (monotone). P(exists t: mean outside [lower_t, upper_t]) <= alpha.

    ``method``: ``"betting"`` (hedged capital on a grid, tighter) or ``"empirical_bernstein"`` (closed form).
    ``points`` (betting only): means placed on the grid, so ``lower >= p`` and ``upper < p`` are exact for them.
    The intersection may become empty (lower > upper) only on the probability-alpha event of a miss.
    """
    values = check_inputs(z, low, high, alpha, method)
    if values.ndim != 1:
        raise ValueError(f"mean_confidence_sequence takes one sequence, got shape {values.shape}")
    span = high - low
    x = np.clip((values - low) / span, 0.0, 1.0)
    if method == "betting":
        scaled = [(float(p) - low) / span for p in points]
        lower, upper = betting_bounds(x, alpha, [p for p in scaled if 0.0 <= p <= 1.0])
    else:
        lower, upper = bernstein_bounds(x, alpha)
    lower = np.maximum.accumulate(lower)
    upper = np.minimum.accumulate(upper)
    return low + lower * span, low + upper * span


def excludes(
    z: np.ndarray, low: float, high: float, alpha: float, value: float, method: str = "betting"
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean arrays along the last axis (any leading axes are independent sequences): by step t, has the
    confidence sequence settled above ``value`` (``lower_t >= value``) or below it (``upper_t < value``)?

    The fast path of :func:`mean_confidence_sequence` for one value: no grid, vectorized over sequences.
    """
    values = check_inputs(z, low, high, alpha, method)
    if values.ndim > 1 and values.size > BLOCK_ELEMENTS:
        rows = values.reshape(-1, values.shape[-1])
        step = max(1, BLOCK_ELEMENTS // rows.shape[1])
        parts = [excludes(rows[i : i + step], low, high, alpha, value, method) for i in range(0, len(rows), step)]
        above = np.concatenate([a for a, _ in parts]).reshape(values.shape)
        return above, np.concatenate([b for _, b in parts]).reshape(values.shape)
    span = high - low
    x = np.clip((values - low) / span, 0.0, 1.0)
    m0 = (value - low) / span
    if method == "betting":
        if m0 <= 0.0 or m0 > 1.0:
            shape = values.shape
            return np.full(shape, m0 <= 0.0), np.full(shape, m0 > 1.0)
        return betting_excludes(x, alpha, m0)
    lower, upper = bernstein_bounds(x, alpha)
    above = np.maximum.accumulate(lower, axis=-1) >= m0
    below = np.minimum.accumulate(upper, axis=-1) < m0
    return above, below

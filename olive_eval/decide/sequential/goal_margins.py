"""An Olive goal as per-example margins: the goal is linear in the candidate's and the baseline's means, so it is
met exactly when the mean of one paired per-example quantity is >= 0, and a confidence sequence decides it.

With ``s = +1`` (higher is better) or ``-1``, every goal of :func:`olive_eval.decide.goals.threshold_from` reads
``s (C - k B - a) >= 0`` for the candidate's mean C and the baseline's mean B:

=========================  ================  ============
goal                       k                 a
=========================  ================  ============
threshold                  0                 value
min-improvement            1                 s * value
max-degradation            1                 -s * value
percent-min-improvement    1 + s * value/100 0
percent-max-degradation    1 - s * value/100 0
=========================  ================  ============

so ``z_i = s (c_i - k b_i - a)``. For a ratio of sums with a shared denominator (WER: errors over reference
words) ``C = sum c_i / sum w_i``, and ``z_i = s (c_i - k b_i - a w_i) / mean(w)``: the same sign, in metric units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GOAL_TYPES = ("threshold", "min-improvement", "max-degradation", "percent-min-improvement", "percent-max-degradation")


@dataclass(frozen=True)
class Margins:
    """Per-example margins whose mean >= 0 <=> the goal is met (paired, in example order), with their bounds."""

    z: np.ndarray
    low: float
    high: float


def goal_coefficients(goal_type: str, value: float, higher_is_better: bool) -> tuple[float, float, float]:
    """``(s, k, a)`` of the table above."""
    s = 1.0 if higher_is_better else -1.0
    table = {
        "threshold": (0.0, value),
        "min-improvement": (1.0, s * value),
        "max-degradation": (1.0, -s * value),
        "percent-min-improvement": (1.0 + s * value / 100, 0.0),
        "percent-max-degradation": (1.0 - s * value / 100, 0.0),
    }
    if goal_type not in table:
        raise ValueError(f"unknown goal type {goal_type!r}; expected one of {', '.join(GOAL_TYPES)}")
    k, a = table[goal_type]
    return s, k, a


def _span(values: np.ndarray, low: float, high: float, name: str) -> None:
    if values.ndim != 1:
        raise ValueError(f"{name} must be one value per example, got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite")
    out = (values < low) | (values > high)
    if np.any(out):
        raise ValueError(f"{int(out.sum())} {name} value(s) outside the stated bounds [{low}, {high}]")


def goal_margins(
    goal_type: str,
    value: float,
    candidate: np.ndarray,
    baseline: np.ndarray,
    higher_is_better: bool,
    low: float,
    high: float,
    weights: np.ndarray | None = None,
) -> Margins:
    """Per-example margins for an Olive goal (threshold, min-improvement, max-degradation, percent-min-improvement,
    percent-max-degradation) on a metric that is a mean of per-example values in [low, high] (accuracy,
    exact_match, fidelity agreement...), or a ratio of sums with a shared denominator (WER/CER: candidate[i],
    baseline[i] are per-example numerators, weights[i] the shared per-example denominator): the goal is linear in the
    two means, so mean(z) >= 0 <=> the goal is met.

    Bounds of z, from c_i, b_i in [low, high] (for a ratio: the numerators; weights >= 0 are fixed per example,
    known before any model runs, e.g. reference lengths, so their range over the data may set the bounds):
    ``s (c - k b - a w) / wbar`` over the box, i.e. its extremes at the corners; without weights w = wbar = 1.
    """
    if not (np.isfinite(low) and np.isfinite(high)) or low >= high:
        raise ValueError(f"the bounds need low < high (both finite), got low={low}, high={high}")
    if not np.isfinite(value):
        raise ValueError(f"the goal value must be finite, got {value}")
    s, k, a = goal_coefficients(goal_type, value, higher_is_better)
    c = np.asarray(candidate, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    _span(c, low, high, "candidate")
    _span(b, low, high, "baseline")
    if c.shape != b.shape:
        raise ValueError(f"candidate and baseline need one value per example each, got {len(c)} and {len(b)}")
    if weights is None:
        w = np.ones_like(c)
        w_range, scale = (1.0, 1.0), 1.0
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != c.shape:
            raise ValueError(f"weights need one value per example, got {len(w)} for {len(c)} examples")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
            raise ValueError("weights (the shared denominators) must be finite, >= 0 and not all 0")
        w_range, scale = (float(w.min()), float(w.max())), float(w.mean())
    z = s * (c - k * b - a * w) / scale
    corners = [s * (ci - k * bi - a * wi) / scale for ci in (low, high) for bi in (low, high) for wi in w_range]
    return Margins(z=z, low=float(min(corners)), high=float(max(corners)))


def difference_margins(
    a: np.ndarray, b: np.ndarray, higher_is_better: bool, low: float, high: float, weights: np.ndarray | None = None
) -> Margins:
    """Margins whose mean >= 0 <=> model A is at least as good as model B (``s (A - B) >= 0``), for racing:
    A is dominated by B with confidence when these are decided "missed"."""
    return goal_margins("min-improvement", 0.0, a, b, higher_is_better, low, high, weights)

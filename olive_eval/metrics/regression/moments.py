"""Pearson's r and the coefficient of determination from centred sums: two passes, never raw moments.

Raw sums (``Σx²  - (Σx)²/n``) lose every digit when the mean is large against the spread (timestamps, prices): the
sums here are of deviations from the mean, found in a first pass and refined in the second (the corrected two-pass
algorithm). The C extension (``_moments.c``, optional) makes both passes without temporaries; the numpy form gives
the same sums. Kernels take finite-or-NaN float64 ``[n]`` arrays and leave NaN policies to their callers.

Resampled forms take ``[B, n]`` rows (one bootstrap resample each) and give ``[B]`` values in one call.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from olive_eval.metrics.regression.native import moments_extension

__all__ = ["Moments", "centred_moments", "pearson", "pearson_rows", "r2", "r2_rows"]


class Moments(NamedTuple):
    """Means and centred sums of squares and products of two paired samples, and ``sum (x - y)^2``."""

    n: int
    mean_x: float
    mean_y: float
    sxx: float
    syy: float
    sxy: float
    sdd: float


def centred_moments(x: np.ndarray, y: np.ndarray, *, use_compiled: bool = True) -> Moments:
    """The moments of ``n >= 1`` pairs (in C where the extension is built, unless ``use_compiled`` is False)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)  # strided columns are read in place
    n = len(x)
    if use_compiled and moments_extension is not None and n:
        return Moments(n, *moments_extension.moments(x, y))
    dx, dy = x - x.mean(), y - y.mean()
    rx, ry = dx.sum(), dy.sum()  # the first pass's rounding error, removed as in the compiled form
    sxx = float(np.dot(dx, dx) - rx * rx / n)
    syy = float(np.dot(dy, dy) - ry * ry / n)
    sxy = float(np.dot(dx, dy) - rx * ry / n)
    difference = x - y
    sdd = float(np.dot(difference, difference))
    return Moments(n, float(x.mean() + rx / n), float(y.mean() + ry / n), sxx, syy, sxy, sdd)


def _correlation(sxx: np.ndarray, syy: np.ndarray, sxy: np.ndarray) -> np.ndarray:
    """``sxy / sqrt(sxx syy)`` in [-1, 1]; NaN where either sample does not vary."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx) / np.sqrt(syy)
    r = np.where((sxx > 0) & (syy > 0), r, np.nan)
    return np.clip(r, -1.0, 1.0)


def pearson(x: np.ndarray, y: np.ndarray, *, use_compiled: bool = True) -> float:
    """Pearson's r of paired samples (scipy.stats.pearsonr's statistic); NaN with fewer than 2 pairs or a
    constant sample."""
    if len(x) < 2:
        return float("nan")
    m = centred_moments(x, y, use_compiled=use_compiled)
    return float(_correlation(np.float64(m.sxx), np.float64(m.syy), np.float64(m.sxy)))


def _centred_rows(rows: np.ndarray, weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each row minus its weighted mean (0 where the weight is 0)."""
    means = (rows * weights).sum(axis=1, keepdims=True) / counts[:, None]
    return np.where(weights > 0, rows - means, 0.0)


def _weights(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """NaN-free rows (NaN as 0), the weights that leave NaN pairs out, and each row's count of pairs."""
    keep = ~(np.isnan(x) | np.isnan(y))
    weights = keep.astype(np.float64)
    return np.where(keep, x, 0.0), np.where(keep, y, 0.0), weights, weights.sum(axis=1)


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of each row pair of ``[B, n]`` arrays, NaN pairs left out; NaN for fewer than 2 pairs."""
    x, y, weights, counts = _weights(np.atleast_2d(x), np.atleast_2d(y))
    with np.errstate(invalid="ignore", divide="ignore"):
        dx, dy = _centred_rows(x, weights, counts), _centred_rows(y, weights, counts)
    r = _correlation((dx * dx).sum(axis=1), (dy * dy).sum(axis=1), (dx * dy).sum(axis=1))
    return np.where(counts >= 2, r, np.nan)


def r2(predictions: np.ndarray, references: np.ndarray) -> float:
    """``1 - SS_res / SS_tot`` (scikit-learn's ``r2_score`` of one output); NaN with fewer than 2 examples or
    constant references, where scikit-learn substitutes 1.0 or 0.0 (``force_finite``)."""
    if len(references) < 2:
        return float("nan")
    m = centred_moments(predictions, references)
    return 1.0 - m.sdd / m.syy if m.syy > 0 else float("nan")


def r2_rows(predictions: np.ndarray, references: np.ndarray) -> np.ndarray:
    """R² of each row pair of ``[B, n]`` arrays, NaN pairs left out; NaN where undefined."""
    p, y, weights, counts = _weights(np.atleast_2d(predictions), np.atleast_2d(references))
    with np.errstate(invalid="ignore", divide="ignore"):
        deviation = _centred_rows(y, weights, counts)
        ss_tot = (deviation * deviation).sum(axis=1)
        ss_res = ((y - p) ** 2 * weights).sum(axis=1)
        values = 1.0 - ss_res / ss_tot
    return np.where((counts >= 2) & (ss_tot > 0), values, np.nan)

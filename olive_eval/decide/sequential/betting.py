"""The hedged betting confidence sequence (Waudby-Smith & Ramdas 2024, section 4), for data scaled to [0, 1].

For a candidate mean ``m`` two gamblers bet on the next observation: ``K+_t(m) = prod (1 + lambda_i (x_i - m))``
wins when the mean is above ``m``, ``K-_t(m) = prod (1 - lambda_i (x_i - m))`` when below. Both are nonnegative
martingales with initial value 1 when ``m`` is the true mean, so is their average, and by Ville's inequality it
ever reaches ``1/alpha`` with probability at most ``alpha``. ``m`` is rejected when either capital reaches
``2/alpha`` (then the average reaches ``1/alpha``).

Here the bets ``lambda_i`` do not depend on ``m`` (capped at 1/2 for every m, a little more cautious than the
paper's ``c/m`` and ``c/(1 - m)``), so ``log K+_t`` is concave and decreasing in ``m`` and ``log K-_t`` concave and
increasing: the set kept at each step is the interval ``[l_t, u_t]``, and a chord between two grid points lies
below the concave function, so the chord's crossing is itself rejected. Bounds read off a grid with chords are
therefore never tighter than the exact ones, whatever the grid: the grid may depend on the data.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from olive_eval.decide.sequential.bets import predictable_bets

#: Columns (observations) per block, so the grid-by-time capital never needs more than grid x BLOCK floats.
BLOCK = 4096


def betting_excludes(x: np.ndarray, alpha: float, m0: float) -> tuple[np.ndarray, np.ndarray]:
    """Along the last axis: has ``m0`` been rejected from below (``lower_t >= m0``) or above (``upper_t < m0``)
    by step t, i.e. ``K+_s(m0) >= 2/alpha`` or ``K-_s(m0) > 2/alpha`` at some ``s <= t``. Exact, no grid."""
    lam = predictable_bets(x, alpha)
    step = lam * (x - m0)
    level = np.log(2 / alpha)
    above = np.maximum.accumulate(np.cumsum(np.log1p(step), axis=-1), axis=-1) >= level
    below = np.maximum.accumulate(np.cumsum(np.log1p(-step), axis=-1), axis=-1) > level
    return above, below


def grid_bounds(x: np.ndarray, lam: np.ndarray, alpha: float, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-step conservative bounds of the kept interval from the capital on a sorted grid (1-D ``x``).

    ``-inf`` / ``+inf`` where no grid point is rejected on that side (the grid says nothing there).
    """
    level = np.log(2 / alpha)
    n, size = len(x), len(grid)
    lower, upper = np.empty(n), np.empty(n)
    carry_up, carry_down = np.zeros(size), np.zeros(size)
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        step = lam[start:stop] * (x[start:stop] - grid[:, None])
        up = carry_up[:, None] + np.cumsum(np.log1p(step), axis=1)
        down = carry_down[:, None] + np.cumsum(np.log1p(-step), axis=1)
        carry_up, carry_down = up[:, -1].copy(), down[:, -1].copy()
        lower[start:stop] = _lower_from(up, grid, level)
        upper[start:stop] = _upper_from(down, grid, level)
    return lower, upper


def _lower_from(up: np.ndarray, grid: np.ndarray, level: float) -> np.ndarray:
    """``K+`` falls with m: the rejected points are a prefix; the chord crosses the level inside the bracket."""
    size = len(grid)
    k = np.count_nonzero(up >= level, axis=0)
    if size < 2:
        return np.where(k == 0, -np.inf, grid[-1])
    inner = np.clip(k, 1, size - 1)
    f_in = np.take_along_axis(up, (inner - 1)[None, :], axis=0)[0]
    f_out = np.take_along_axis(up, inner[None, :], axis=0)[0]
    g_in, g_out = grid[inner - 1], grid[inner]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.clip((f_in - level) / (f_in - f_out), 0.0, 1.0)
    chord = np.minimum(g_in + share * (g_out - g_in), np.nextafter(g_out, -np.inf))
    return np.where(k == 0, -np.inf, np.where(k == size, grid[-1], chord))


def _upper_from(down: np.ndarray, grid: np.ndarray, level: float) -> np.ndarray:
    """``K-`` rises with m: the rejected points are a suffix, mirrored from :func:`_lower_from`."""
    lower = _lower_from(down[::-1], -grid[::-1], level)
    return -lower


def betting_bounds(x: np.ndarray, alpha: float, points: Sequence[float] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Per-step bounds (1-D ``x``), from a coarse grid over [0, 1] then a fine one around the final interval.

    ``points`` join both grids, so comparing a bound with one of them agrees with :func:`betting_excludes`.
    """
    lam = predictable_bets(x, alpha)
    extra = np.asarray(points, dtype=np.float64)
    coarse = np.union1d(np.linspace(0.0, 1.0, 65), extra)
    lower, upper = grid_bounds(x, lam, alpha, coarse)
    low_end = float(np.max(np.maximum(lower, 0.0)))
    high_end = float(np.min(np.minimum(upper, 1.0)))
    width = max(high_end - low_end, 1e-6)
    reach = width * np.geomspace(1e-3, 64.0, 48)
    fine = np.concatenate([low_end - reach, np.linspace(low_end, max(high_end, low_end), 33), high_end + reach])
    fine = np.union1d(fine[(fine >= 0.0) & (fine <= 1.0)], extra)
    fine_lower, fine_upper = grid_bounds(x, lam, alpha, fine)
    lower = np.clip(np.maximum(lower, fine_lower), 0.0, 1.0)
    upper = np.clip(np.minimum(upper, fine_upper), 0.0, 1.0)
    return lower, upper

"""Independent references for the sequential tests: the paper's formulas as plain loops, and exact bisection."""

from __future__ import annotations

import math

import numpy as np


def loop_bets(x: np.ndarray, alpha: float, cap: float = 0.5) -> np.ndarray:
    """Waudby-Smith & Ramdas (2024) eq. (26): the predictable plug-in bets, one step at a time."""
    bets, total, squares, sigma2 = [], 0.0, 0.0, 0.25
    for t, xt in enumerate(x, start=1):
        bets.append(min(math.sqrt(2 * math.log(2 / alpha) / (sigma2 * t * math.log(1 + t))), cap))
        total += xt
        mu = (0.5 + total) / (t + 1)
        squares += (xt - mu) ** 2
        sigma2 = (0.25 + squares) / (t + 1)
    return np.array(bets)


def loop_bernstein(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 2's predictable plug-in empirical-Bernstein CS, running intersection, one step at a time."""
    bets = loop_bets(x, alpha)
    lower, upper = [], []
    mu_prev, total, s_lam, s_lx, s_v = 0.5, 0.0, 0.0, 0.0, 0.0
    lo, hi = 0.0, 1.0
    for t, (xt, lam) in enumerate(zip(x, bets, strict=True), start=1):
        s_lam += lam
        s_lx += lam * xt
        s_v += 4 * (xt - mu_prev) ** 2 * (-math.log(1 - lam) - lam) / 4
        half = (math.log(2 / alpha) + s_v) / s_lam
        lo, hi = max(lo, s_lx / s_lam - half), min(hi, s_lx / s_lam + half)
        lower.append(lo)
        upper.append(hi)
        total += xt
        mu_prev = (0.5 + total) / (t + 1)
    return np.array(lower), np.array(upper)


def exact_betting(x: np.ndarray, alpha: float, iterations: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """The betting CS without a grid: at every t, bisection on m of the two one-sided capitals; then the
    running intersection. O(n^2) per iteration, for short sequences."""
    bets = loop_bets(x, alpha)
    n, level = len(x), math.log(2 / alpha)
    upto = np.tril(np.ones((n, n)))  # row t sums observations 0..t

    def capital(m: np.ndarray, sign: float) -> np.ndarray:
        return (upto * np.log1p(sign * bets[None, :] * (x[None, :] - m[:, None]))).sum(axis=1)

    lo, hi = np.zeros(n), np.ones(n)  # lower: sup{m: K+ >= level}
    for _ in range(iterations):
        mid = (lo + hi) / 2
        rejected = capital(mid, 1.0) >= level
        lo, hi = np.where(rejected, mid, lo), np.where(rejected, hi, mid)
    lower = lo
    lo, hi = np.zeros(n), np.ones(n)  # upper: inf{m: K- >= level}
    for _ in range(iterations):
        mid = (lo + hi) / 2
        rejected = capital(mid, -1.0) >= level
        lo, hi = np.where(rejected, lo, mid), np.where(rejected, mid, hi)
    return np.maximum.accumulate(lower), np.minimum.accumulate(hi)

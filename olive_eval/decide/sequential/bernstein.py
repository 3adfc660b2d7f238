"""The predictable plug-in empirical-Bernstein confidence sequence (Waudby-Smith & Ramdas 2024, Theorem 2).

Closed form: ``sum lambda_i x_i / sum lambda_i +- (log(2/alpha) + sum v_i psi_E(lambda_i)) / sum lambda_i`` with
``v_i = 4 (x_i - mu_{i-1})^2`` and ``psi_E(l) = (-log(1 - l) - l) / 4``, for x in [0, 1].
"""

from __future__ import annotations

import numpy as np

from olive_eval.decide.sequential.bets import predictable_bets, predictable_means


def bernstein_bounds(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-step (not yet intersected) lower and upper bounds along the last axis, clipped to [0, 1]."""
    lam = predictable_bets(x, alpha)
    v = 4 * (x - predictable_means(x)) ** 2
    psi = (-np.log1p(-lam) - lam) / 4
    weight = np.cumsum(lam, axis=-1)
    centre = np.cumsum(lam * x, axis=-1) / weight
    margin = (np.log(2 / alpha) + np.cumsum(v * psi, axis=-1)) / weight
    return np.clip(centre - margin, 0.0, 1.0), np.clip(centre + margin, 0.0, 1.0)

"""The predictable plug-in bets shared by both confidence sequences (Waudby-Smith & Ramdas 2024, section 3.3).

Data are already scaled to [0, 1]. A bet at step ``t`` may use only the first ``t - 1`` observations, which is what
keeps the capital a (super)martingale and the sequence anytime-valid; the plug-in variance only makes it tight.
"""

from __future__ import annotations

import numpy as np

#: The bets' cap: every factor ``1 +- lambda (x - m)`` stays >= 1 - CAP > 0 for x, m in [0, 1].
CAP = 0.5


def predictable_bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """``lambda_t = sqrt(2 log(2/alpha) / (sigma^2_{t-1} t log(1 + t))) ^ CAP`` along the last axis.

    ``sigma^2_t = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t + 1)`` with ``mu_t = (1/2 + sum_{i<=t} x_i) / (t + 1)``:
    the prior terms 1/2 and 1/4 make the first bets finite.
    """
    n = x.shape[-1]
    t = np.arange(1, n + 1, dtype=np.float64)
    mu = np.cumsum(x, axis=-1)
    mu += 0.5
    mu /= t + 1
    np.subtract(x, mu, out=mu)
    np.square(mu, out=mu)
    sigma2 = np.cumsum(mu, axis=-1, out=mu)
    sigma2 += 0.25
    sigma2 /= t + 1
    lam = np.empty_like(sigma2)
    lam[..., 0] = 0.25
    lam[..., 1:] = sigma2[..., :-1]
    lam *= t * np.log1p(t) / (2 * np.log(2 / alpha))
    np.sqrt(lam, out=lam)
    np.reciprocal(lam, out=lam)
    return np.minimum(lam, CAP, out=lam)


def predictable_means(x: np.ndarray) -> np.ndarray:
    """``mu_{t-1}``, the running mean before step t (with the prior 1/2), along the last axis."""
    n = x.shape[-1]
    t = np.arange(1, n + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    return np.concatenate([np.full((*x.shape[:-1], 1), 0.5), mu[..., :-1]], axis=-1)

"""Matthews' correlation and Cohen's kappa from additive per-example rows. Pure numpy.

Neither needs the whole ``C x C`` confusion matrix: both are functions of its margins -- how often each class is
the reference (``t``) and the prediction (``p``) -- and of one weighted sum over its cells, the observed
disagreement ``sum w(r, p)`` over examples. So a row per example, ``[w(r, p), one_hot(r), one_hot(p)]`` (``2C + 1``
small integers), adds up over any set of examples (a batch, a bootstrap resample) to everything either value needs.

* Matthews (scikit-learn's multiclass form, which is the binary one for two classes), with ``w = [r != p]`` so that
  the correct count is ``c = s - sum w``: ``(c s - t.p) / sqrt((s^2 - p.p) (s^2 - t.t))``; 0 where a factor of
  the denominator is 0 (one class only, in the references or the predictions), as scikit-learn returns.
* Cohen's kappa, ``1 - observed / expected`` disagreement, ``expected = sum_ij w_ij t_i p_j / s``, with weights
  ``none`` (``[i != j]``), ``linear`` (``|i - j|``) or ``quadratic`` (``(i - j)^2``) on the label values: equal to
  scikit-learn's ``cohen_kappa_score(..., labels=range(C))`` (without ``labels`` scikit-learn spaces the weights by
  the rank of each label among those present, which differs when a label between two present ones is absent).
  Undefined (NaN) when expected disagreement is 0: both sides hold one and the same label.

``expected`` is computed in closed form from the margins (cumulative sums for ``linear``), O(C) per resample.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = [
    "WEIGHTS",
    "Weights",
    "agreement_rows",
    "agreement_totals",
    "cohen_kappa",
    "expected_disagreement",
    "kappa_from_totals",
    "matthews_corrcoef",
    "mcc_from_totals",
]

Weights = Literal["none", "linear", "quadratic"]
WEIGHTS: tuple[str, ...] = ("none", "linear", "quadratic")


def _disagreement(references: np.ndarray, predictions: np.ndarray, weights: Weights) -> np.ndarray:
    if weights == "none":
        return references != predictions
    difference = references - predictions
    return np.abs(difference) if weights == "linear" else difference * difference


def _dtype(num_classes: int, weights: Weights) -> type[np.integer]:
    """The smallest integer type holding a row's largest entry."""
    largest = {"none": 1, "linear": num_classes - 1, "quadratic": (num_classes - 1) ** 2}[weights]
    return next(t for t in (np.int8, np.int16, np.int32, np.int64) if largest <= np.iinfo(t).max)


def agreement_rows(
    references: np.ndarray, predictions: np.ndarray, num_classes: int, weights: Weights, valid: np.ndarray | None = None
) -> np.ndarray:
    """``[n, 2C + 1]`` rows ``[w(r, p), one_hot(r), one_hot(p)]`` of int64 labels in ``[0, C)``; zeros where not
    ``valid`` (an ignored example counts nowhere)."""
    n, c = len(references), num_classes
    rows = np.zeros((n, 2 * c + 1), dtype=_dtype(c, weights))
    keep = np.arange(n) if valid is None else np.flatnonzero(valid)
    r, p = references[keep], predictions[keep]
    rows[keep, 0] = _disagreement(r, p, weights)
    flat = rows.reshape(-1)
    base = keep * (2 * c + 1)
    flat[base + 1 + r] = 1
    flat[base + 1 + c + p] = 1
    return rows


def agreement_totals(
    references: np.ndarray, predictions: np.ndarray, num_classes: int, weights: Weights, valid: np.ndarray | None = None
) -> np.ndarray:
    """The column sums of :func:`agreement_rows` (int64 ``[2C + 1]``), without building the rows."""
    r, p = (references, predictions) if valid is None else (references[valid], predictions[valid])
    observed = np.count_nonzero(r != p) if weights == "none" else int(_disagreement(r, p, weights).sum())
    counts = [np.bincount(labels, minlength=num_classes) for labels in (r, p)]
    return np.concatenate([[observed], *counts]).astype(np.int64)


def _margins(totals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(observed disagreement [B], reference counts [B, C], prediction counts [B, C], examples [B]) as float64."""
    t = np.asarray(totals, dtype=np.float64).reshape(-1, np.shape(totals)[-1])
    c = (t.shape[1] - 1) // 2
    refs, preds = t[:, 1 : 1 + c], t[:, 1 + c :]
    return t[:, 0], refs, preds, refs.sum(axis=1)


def expected_disagreement(refs: np.ndarray, preds: np.ndarray, weights: Weights) -> np.ndarray:
    """``sum_ij w_ij t_i p_j / s`` of ``[B, C]`` margins, in closed form."""
    s = refs.sum(axis=1)
    labels = np.arange(refs.shape[1], dtype=np.float64)
    if weights == "none":
        pairs = s * preds.sum(axis=1) - (refs * preds).sum(axis=1)
    elif weights == "quadratic":
        moment = [(m * labels**k).sum(axis=1) for m in (refs, preds) for k in range(3)]
        t0, t1, t2, p0, p1, p2 = moment
        pairs = t2 * p0 + t0 * p2 - 2 * t1 * p1
    elif weights == "linear":  # sum_j |i - j| p_j = i P(i) - Q(i) + (Q - Q(i)) - i (P - P(i)), P and Q cumulative
        below, below_weighted = np.cumsum(preds, axis=1), np.cumsum(preds * labels, axis=1)
        total, total_weighted = below[:, -1:], below_weighted[:, -1:]
        distance = labels * below - below_weighted + (total_weighted - below_weighted) - labels * (total - below)
        pairs = (refs * distance).sum(axis=1)
    else:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s > 0, pairs / s, np.nan)


def kappa_from_totals(totals: np.ndarray, weights: Weights) -> np.ndarray:
    """Cohen's kappa of each row of summed rows ``[B, 2C + 1]``; NaN where expected disagreement is 0."""
    observed, refs, preds, _ = _margins(totals)
    expected = expected_disagreement(refs, preds, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - observed / expected, np.nan)


def mcc_from_totals(totals: np.ndarray) -> np.ndarray:
    """Matthews' correlation of each row of summed rows ``[B, 2C + 1]`` (weights ``none``); 0 where a factor of
    the denominator is 0, NaN without examples."""
    wrong, refs, preds, s = _margins(totals)
    covariance = (s - wrong) * s - (refs * preds).sum(axis=1)
    spread_preds = s * s - (preds * preds).sum(axis=1)
    spread_refs = s * s - (refs * refs).sum(axis=1)
    product = spread_preds * spread_refs
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(product > 0, covariance / np.sqrt(spread_refs) / np.sqrt(spread_preds), 0.0)
    return np.where(s > 0, value, np.nan)


def _labels(references: object, predictions: object, num_classes: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    r, p = np.asarray(references, dtype=np.int64).reshape(-1), np.asarray(predictions, dtype=np.int64).reshape(-1)
    if len(r) != len(p):
        raise ValueError(f"references and predictions hold different numbers of examples: {len(r)} vs {len(p)}")
    largest = max(int(r.max()) if r.size else 0, int(p.max()) if p.size else 0)
    c = num_classes if num_classes is not None else largest + 1
    if (r.size and r.min() < 0) or (p.size and p.min() < 0) or largest >= c:
        raise ValueError(f"labels must lie in [0, {c})")
    return r, p, c


def matthews_corrcoef(references: object, predictions: object, num_classes: int | None = None) -> float:
    """Matthews' correlation of integer labels in ``[0, C)``."""
    r, p, c = _labels(references, predictions, num_classes)
    return float(mcc_from_totals(agreement_totals(r, p, c, "none"))[0])


def cohen_kappa(
    references: object, predictions: object, weights: Weights = "none", num_classes: int | None = None
) -> float:
    """Cohen's kappa of integer labels in ``[0, C)``, weighted by label distance."""
    r, p, c = _labels(references, predictions, num_classes)
    return float(kappa_from_totals(agreement_totals(r, p, c, weights), weights)[0])

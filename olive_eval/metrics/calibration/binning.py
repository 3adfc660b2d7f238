"""Bins of confidences and their totals, which calibration errors and the reliability diagram are made of. Pure numpy.

* ``uniform`` (torchmetrics' ``CalibrationError``): bin ``k`` holds the confidences in ``[k/n, (k+1)/n)``, so a
  confidence exactly on an edge belongs to the bin above it, and a confidence of exactly 1 has a bin of its own,
  bin ``n`` (``torch.bucketize(right=True)`` over ``linspace(0, 1, n + 1)`` puts it past the last edge). Empty
  bins weigh nothing. The edges here are the float64 values nearest ``k/n``; torchmetrics makes them with
  ``torch.linspace`` in the scores' precision (float32 for multiclass), whose last bit varies with ``k`` and the
  CPU's vector width, so a confidence within a rounding error of an edge that is not exactly representable may
  fall in the neighbouring bin there.
* ``adaptive`` (equal mass): the confidences in ascending order (ties: misses first, so the bins do not depend
  on the order of the examples), cut into ``n`` runs whose sizes differ by at most one, the larger first (numpy's
  ``array_split``); with fewer examples than bins the last bins are empty.

Totals are ``[..., 3, bins]``: count, sum of confidences, sum of hits. A bootstrap resample is a row of example
indices; the totals of many resamples come out of one call.
"""

from __future__ import annotations

import numpy as np

COUNT, CONFIDENCE, HITS = 0, 1, 2

#: Confidences binned per step (their float64 temporaries stay in cache).
_BIN_STEP = 1 << 16
#: Gathered elements per step of a resampled computation (bounds the memory of a chunk of resamples).
_STEP_ELEMENTS = 1 << 20


def uniform_edges(n_bins: int) -> np.ndarray:
    """``[n_bins + 1]``: the edges ``k / n_bins``, the float64 quotients (1 is the lower edge of the last bin)."""
    return np.arange(n_bins + 1, dtype=np.float64) / n_bins


def _bin_step(confidence: np.ndarray, n_bins: int, bins: np.ndarray) -> None:
    """``bins`` (int32) of one step of confidences: ``floor(c * n)``, moved back or on where rounding put it across an
    edge; ``k / n`` here is the same float64 quotient as :func:`uniform_edges`'s ``k``-th edge."""
    np.multiply(confidence, n_bins, out=bins, casting="unsafe")  # truncates: c >= 0
    bins -= confidence < bins / n_bins
    bins += confidence >= (bins + 1) / n_bins


def uniform_bins(confidence: np.ndarray, n_bins: int) -> np.ndarray:
    """Each confidence's bin (int32, in ``[0, n_bins]``), in steps whose temporaries stay in cache."""
    out = np.empty(len(confidence), np.int32)
    for lo in range(0, len(confidence), _BIN_STEP):
        _bin_step(confidence[lo : lo + _BIN_STEP], n_bins, out[lo : lo + _BIN_STEP])
    return out


def uniform_totals(confidence: np.ndarray, hit: np.ndarray, n_bins: int) -> np.ndarray:
    """``[3, n_bins + 1]`` totals of the examples, binned and summed step by step."""
    width = n_bins + 1
    counts, sums = np.zeros(2 * width, np.int64), np.zeros(width)
    bins = np.empty(min(len(confidence), _BIN_STEP), np.int32)
    for lo in range(0, len(confidence), _BIN_STEP):
        c = confidence[lo : lo + _BIN_STEP]
        step = bins[: len(c)]
        _bin_step(c, n_bins, step)
        sums += np.bincount(step, c, width)
        step *= 2
        step += hit[lo : lo + _BIN_STEP]
        counts += np.bincount(step, minlength=2 * width)
    pairs = counts.reshape(width, 2)
    return np.stack([pairs.sum(axis=1), sums, pairs[:, 1]]).astype(np.float64)


def uniform_resampled_totals(
    bins: np.ndarray, confidence: np.ndarray, hit: np.ndarray, idx: np.ndarray, n_bins: int
) -> np.ndarray:
    """``[B, 3, n_bins + 1]`` totals of each resample ``idx`` ``[B, n]``: per resample and (bin, hit) a count and a
    sum of confidences, from two gathers and two bincounts."""
    width = n_bins + 1
    code = bins.astype(np.intp) * 2 + hit  # (bin, hit) as one key
    out = np.empty((len(idx), 3, width))
    rows = max(1, _STEP_ELEMENTS // max(idx.shape[1], 1))
    for lo in range(0, len(idx), rows):
        part = idx[lo : lo + rows]
        size = len(part) * 2 * width
        keys = code.take(part)
        keys += 2 * width * np.arange(len(part))[:, None]
        keys = keys.ravel()
        counts = np.bincount(keys, minlength=size).reshape(len(part), width, 2)
        sums = np.bincount(keys, confidence.take(part).ravel(), size).reshape(len(part), width, 2)
        out[lo : lo + rows, COUNT] = counts.sum(axis=2)
        out[lo : lo + rows, CONFIDENCE] = sums.sum(axis=2)
        out[lo : lo + rows, HITS] = counts[:, :, 1]
    return out


def _order_keys(confidence: np.ndarray, hit: np.ndarray) -> np.ndarray:
    """One int64 per example ordered as (confidence, hit): a non-negative float64's bits order as its value does,
    and doubling them leaves the lowest bit for the hit (``+ 0.0`` turns a -0.0 into 0.0)."""
    return (np.asarray(confidence, np.float64) + 0.0).view(np.int64) * 2 + hit


def ascending(confidence: np.ndarray, hit: np.ndarray) -> np.ndarray:
    """The examples by confidence, misses before hits among equal confidences."""
    return np.argsort(_order_keys(confidence, hit))


def sorted_pairs(confidence: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Confidences and hits (float64) in :func:`ascending` order, from one sort of values (no indices)."""
    keys = np.sort(_order_keys(confidence, hit))
    return (keys >> 1).view(np.float64), (keys & 1).astype(np.float64)


def equal_mass_cuts(total: int, n_bins: int) -> np.ndarray:
    """``[n_bins + 1]`` positions cutting ``total`` sorted items into runs as ``np.array_split`` does."""
    size, larger = divmod(total, n_bins)
    j = np.arange(n_bins + 1)
    return j * size + np.minimum(j, larger)


def adaptive_totals(confidence: np.ndarray, hit: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """``([3, n_bins] totals, [2, n_bins] lowest and highest confidence per bin, NaN when empty)``."""
    c, h = sorted_pairs(confidence, hit)
    cuts = equal_mass_cuts(len(c), n_bins)
    prefix = np.zeros((2, len(c) + 1))
    np.cumsum(c, out=prefix[0, 1:])
    np.cumsum(h, out=prefix[1, 1:])
    totals = np.stack([np.diff(cuts).astype(np.float64), *np.diff(prefix[:, cuts], axis=1)])
    empty = cuts[1:] == cuts[:-1]
    padded = np.append(c, np.nan)
    lowest = np.where(empty, np.nan, padded[np.minimum(cuts[:-1], len(c))])
    highest = np.where(empty, np.nan, padded[np.maximum(cuts[1:] - 1, 0)])
    return totals, np.stack([lowest, highest])


def adaptive_resampled_totals(confidence: np.ndarray, hit: np.ndarray, idx: np.ndarray, n_bins: int) -> np.ndarray:
    """``[B, 3, n_bins]`` totals of each resample ``idx`` ``[B, n]``, binned by its own equal-mass cuts.

    A resample is a multiplicity per example in ascending order; a bin's sum is a difference of two prefix sums at
    its cuts, where a cut may fall among the copies of one example (a prefix there counts some of its copies).
    """
    order = ascending(confidence, hit)
    n = len(order)
    rank = np.empty(n, np.intp)
    rank[order] = np.arange(n)
    values = np.stack([np.ones(n), confidence[order], hit[order].astype(np.float64)])  # [3, n]
    padded = np.concatenate([values, np.zeros((3, 1))], axis=1)  # a cut at the very end takes nothing more
    total = idx.shape[1]
    cuts = equal_mass_cuts(total, n_bins)
    out = np.empty((len(idx), 3, n_bins))
    rows = max(1, _STEP_ELEMENTS // max(n, total, 1))
    for lo in range(0, len(idx), rows):
        part = idx[lo : lo + rows]
        b = len(part)
        keys = (rank.take(part) + n * np.arange(b)[:, None]).ravel()
        weights = np.bincount(keys, minlength=b * n).reshape(b, n).astype(np.float64)
        covered = np.zeros((b, n + 1))  # copies before each example, per resample
        np.cumsum(weights, axis=1, out=covered[:, 1:])
        # per resample and cut: how many examples lie wholly before it (rows offset so one search serves all)
        offsets = (total + 1) * np.arange(b)[:, None]
        before = np.searchsorted((covered + offsets).ravel(), (cuts + offsets).ravel(), side="right")
        before = before.reshape(b, -1) - (n + 1) * np.arange(b)[:, None] - 1
        partial = cuts - np.take_along_axis(covered, before, axis=1)  # copies of example `before` counted
        for s in range(3):
            prefix = np.zeros((b, n + 1))
            np.cumsum(weights * values[s], axis=1, out=prefix[:, 1:])
            at_cuts = np.take_along_axis(prefix, before, axis=1) + partial * padded[s].take(before)
            out[lo : lo + rows, s] = np.diff(at_cuts, axis=1)
    return out


def expected_error(totals: np.ndarray) -> np.ndarray:
    """ECE of totals ``[..., 3, bins]``: the count-weighted mean gap between confidence and hits."""
    count = totals[..., COUNT, :].sum(axis=-1)
    gap = np.abs(totals[..., CONFIDENCE, :] - totals[..., HITS, :]).sum(axis=-1)
    return np.divide(gap, count, out=np.full(count.shape, np.nan), where=count > 0)


def max_error(totals: np.ndarray) -> np.ndarray:
    """MCE of totals ``[..., 3, bins]``: the largest gap between mean confidence and hit rate of a non-empty bin."""
    count = totals[..., COUNT, :]
    gap = np.abs(totals[..., CONFIDENCE, :] - totals[..., HITS, :])
    per_bin = np.divide(gap, count, out=np.full(count.shape, -np.inf), where=count > 0)
    worst = per_bin.max(axis=-1)
    return np.where(np.isfinite(worst), worst, np.nan)

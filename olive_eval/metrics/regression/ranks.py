"""Rank statistics of paired samples: average ranks, Spearman's rho and Kendall's tau-b, with ties.

* :func:`average_ranks` -- 1-based ranks, tied values sharing the mean of their ranks (scipy.stats.rankdata's
  ``average``);
* :func:`spearman` -- Pearson's r of the two samples' average ranks (scipy.stats.spearmanr);
* :func:`kendall_tau_b` -- ``(concordant - discordant) / sqrt((P - ties_x) (P - ties_y))`` over the ``P = n(n-1)/2``
  pairs (scipy.stats.kendalltau, variant ``b``), from the counts of :func:`kendall_counts`: tied pairs in x, in y,
  in both, and discordant pairs, the inversions of y's ranks once the pairs are ordered by (x, y): O(n log n).

Each runs in C where the extension is built (``_ranks.c``, found by :mod:`.native`: a radix sort, or a hash table
for few distinct values) and in numpy otherwise (``use_compiled=False`` forces it; the tests hold the two equal).
Inputs are float64 ``[n]`` arrays without NaN; -0.0 and 0.0 are one value. Undefined values (fewer than 2 pairs, a constant sample) are NaN.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from olive_eval.metrics.regression.moments import pearson
from olive_eval.metrics.regression.native import ranks_extension

__all__ = ["KendallCounts", "average_ranks", "inversions", "kendall_counts", "kendall_tau_b", "spearman"]


class KendallCounts(NamedTuple):
    """Pairs of examples tied in x, tied in y, tied in both, and discordant (ordered oppositely)."""

    x_ties: int
    y_ties: int
    joint_ties: int
    discordant: int


def _column(values: np.ndarray) -> np.ndarray:
    """A float64 ``[n]`` array; a strided column of a wider array stays a view (the C kernels read it in place)."""
    x = np.asarray(values, dtype=np.float64)
    return x if x.ndim == 1 else x.reshape(-1)


def average_ranks(values: np.ndarray, *, use_compiled: bool = True) -> np.ndarray:
    """1-based ranks of ``values``, ties given the mean of the ranks they span."""
    x = _column(values)
    if use_compiled and ranks_extension is not None:
        return np.frombuffer(ranks_extension.average_ranks(x), dtype=np.float64)
    n = len(x)
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if n else np.empty(0, np.intp)
    ends = np.r_[starts[1:], n]
    ranks = np.empty(n)
    ranks[order] = np.repeat((starts + 1 + ends) / 2, ends - starts)
    return ranks


def spearman(x: np.ndarray, y: np.ndarray, *, use_compiled: bool = True) -> float:
    """Spearman's rho: Pearson's r of the average ranks."""
    if len(x) < 2:
        return float("nan")
    rx = average_ranks(x, use_compiled=use_compiled)
    ry = average_ranks(y, use_compiled=use_compiled)
    return pearson(rx, ry, use_compiled=use_compiled)


def _tied_pairs(counts: np.ndarray) -> int:
    counts = counts.astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def inversions(values: np.ndarray, bits: int) -> int:
    """Pairs ``i < j`` with ``values[i] > values[j]`` for integers in ``[0, 2**bits)``, in numpy, one bit at a time.

    From the most significant bit down: among values equal above the bit, an earlier value with the bit set and a
    later one with it clear form an inversion decided at this bit; each such group is then split stably (clear
    bits first), which keeps the groups of the next bit contiguous. ``bits`` passes of a few array operations.
    """
    v = np.asarray(values, dtype=np.int64)
    n, count = len(v), 0
    if n == 0:
        return 0
    index = np.arange(n)
    for level in range(bits - 1, -1, -1):
        prefix = v >> (level + 1)
        bit = (v >> level) & 1
        starts = np.flatnonzero(np.r_[True, prefix[1:] != prefix[:-1]])
        group = np.cumsum(np.r_[True, prefix[1:] != prefix[:-1]]) - 1
        ones_before = np.cumsum(bit) - bit  # set bits strictly before each position, over the whole array
        zeros_before = index - ones_before
        ones_at_start, zeros_at_start = ones_before[starts][group], zeros_before[starts][group]
        clear = bit == 0
        count += int((ones_before - ones_at_start)[clear].sum())
        zeros_in_group = np.add.reduceat(1 - bit, starts)[group]
        position = np.where(
            clear,
            starts[group] + zeros_before - zeros_at_start,
            starts[group] + zeros_in_group + ones_before - ones_at_start,
        )
        split = np.empty_like(v)
        split[position] = v
        v = split
    return count


def kendall_counts(x: np.ndarray, y: np.ndarray, *, use_compiled: bool = True) -> KendallCounts:
    """The tied and discordant pair counts of ``n`` pairs."""
    x, y = _column(x), _column(y)
    if len(x) != len(y):
        raise ValueError(f"x and y hold different numbers of values: {len(x)} vs {len(y)}")
    if use_compiled and ranks_extension is not None:
        return KendallCounts(*ranks_extension.kendall_counts(x, y))
    if len(x) == 0:
        return KendallCounts(0, 0, 0, 0)
    _, dense_x, count_x = np.unique(x, return_inverse=True, return_counts=True)
    _, dense_y, count_y = np.unique(y, return_inverse=True, return_counts=True)
    order = np.lexsort((dense_y, dense_x))  # by x, then y
    sx, sy = dense_x[order], dense_y[order]
    starts = np.flatnonzero(np.r_[True, (sx[1:] != sx[:-1]) | (sy[1:] != sy[:-1])])
    joint = np.diff(np.r_[starts, len(sx)])
    bits = max(1, int(len(count_y) - 1).bit_length())
    return KendallCounts(_tied_pairs(count_x), _tied_pairs(count_y), _tied_pairs(joint), inversions(sy, bits))


def tau_b(n: int, counts: KendallCounts) -> float:
    """Kendall's tau-b of ``n`` pairs from their counts; NaN when either sample is constant (or n < 2)."""
    pairs = n * (n - 1) // 2
    if counts.x_ties >= pairs or counts.y_ties >= pairs:
        return float("nan")
    difference = pairs - counts.x_ties - counts.y_ties + counts.joint_ties - 2 * counts.discordant
    tau = difference / np.sqrt(float(pairs - counts.x_ties)) / np.sqrt(float(pairs - counts.y_ties))
    return float(min(1.0, max(-1.0, tau)))


def kendall_tau_b(x: np.ndarray, y: np.ndarray, *, use_compiled: bool = True) -> float:
    """Kendall's tau-b of paired samples, ties included."""
    return tau_b(len(x), kendall_counts(x, y, use_compiled=use_compiled))

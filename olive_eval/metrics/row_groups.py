"""Equal rows of a 2-D array grouped, as ``np.unique`` over the rows' raw bytes groups them, with one sort of n
64-bit hashes in place of a sort of n byte strings (a chunk's ``[8192, C, 4]`` confusion rows: several times
faster). The hash only proposes the groups: each row is checked against its group's first row, and any
collision falls back to the byte sort, so the result is always the byte sort's. Rows that come with codes (a
number per row, equal exactly where the rows are: a classification example's label pair) are grouped by their
codes alone (:func:`coded_groups`), without reading the rows but for one of each group. Pure numpy."""

from __future__ import annotations

import numpy as np

#: Below this many rows the byte sort is as fast as hashing.
HASHED_FROM = 512
#: Codes below this are counted in bins (a bincount of this many entries at most), larger ones sorted.
BINNED_CODES = 1 << 16
#: Odd 64-bit multipliers, one per 8-byte word of a row (cycled): a fixed, arbitrary choice.
MULTIPLIERS = np.random.default_rng(0x5EED).integers(1, 2**63, size=64, dtype=np.uint64) | np.uint64(1)


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct rows in the byte order of their raw bytes, each row's index into them, each one's count)."""
    rows = np.ascontiguousarray(rows)
    if len(rows) >= HASHED_FROM and rows.ndim == 2 and rows.size:
        hashed = hashed_groups(rows)
        if hashed is not None:
            return hashed
    return byte_groups(rows)


def coded_groups(rows: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`unique_rows` of ``rows`` whose non-negative integer ``codes`` are equal exactly where the rows are."""
    rows = np.ascontiguousarray(rows)
    if len(codes) and codes.max() < BINNED_CODES:
        tally = np.bincount(codes)
        present = np.flatnonzero(tally)
        slot = np.empty(len(tally), dtype=np.intp)
        slot[present] = np.arange(len(present))
        inverse = slot[codes]
        taken = np.empty(len(present), dtype=np.intp)
        taken[inverse] = np.arange(len(codes))  # a row of each code (any one: they are equal)
        counts = tally[present]
    else:
        _, taken, inverse, counts = np.unique(codes, return_index=True, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
    return _in_byte_order(rows[taken], inverse, counts)


def _as_bytes(rows: np.ndarray) -> np.ndarray:
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def byte_groups(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _, first, inverse, counts = np.unique(_as_bytes(rows), return_index=True, return_inverse=True, return_counts=True)
    return rows[first], inverse.reshape(-1), counts


def hashed_groups(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The byte sort's result through hashes; None when two distinct rows share a hash."""
    raw = rows.view(np.uint8).reshape(len(rows), -1)
    width = -(-raw.shape[1] // 8) * 8
    if width != raw.shape[1]:
        padded = np.zeros((len(rows), width), dtype=np.uint8)
        padded[:, : raw.shape[1]] = raw
        raw = padded
    words = raw.view(np.uint64)
    multipliers = np.resize(MULTIPLIERS, words.shape[1])
    with np.errstate(over="ignore"):
        hashes = (words * multipliers).sum(axis=1, dtype=np.uint64)  # wraps modulo 2**64
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(words[first][inverse], words):
        return None
    return _in_byte_order(rows[first], inverse, np.bincount(inverse))


def _in_byte_order(
    candidates: np.ndarray, inverse: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The groups of distinct ``candidates`` (each row's index into them, their counts) with the candidates sorted
    by their bytes, as the byte sort lists them."""
    order = np.argsort(_as_bytes(candidates), kind="stable")  # the few distinct rows, in byte order
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return candidates[order], rank[inverse], counts[order]

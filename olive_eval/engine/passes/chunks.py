"""Consecutive batches joined into chunks before they are scored.

A metric kernel and an instance record pay a fixed cost per call (numpy dispatch, a sort, an encoder), which
over batches of 64 was most of a small model's scoring time. Batches are buffered until a chunk holds
``CHUNK_EXAMPLES`` examples or ``CHUNK_BYTES`` bytes, so memory stays bounded; a batch whose arrays would not
join the buffered ones as they are (another dtype, another length past the first axis) closes the chunk
first, so a metric sees the same kind of column it would have seen per batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from olive_eval.data.batch import Column, concat

CHUNK_EXAMPLES = 8192
CHUNK_BYTES = 32 * 2**20

Fields = dict[str, Column]


def _kind(column: Column) -> tuple[Any, ...]:
    """What must agree for columns of two batches to join as one: an array's dtype and trailing shape (and its
    number of axes, which a batch's 1-D column is compared by alone)."""
    if isinstance(column, np.ndarray) and column.dtype != object:
        return ("array", column.dtype, column.shape[1:], column.ndim)
    return ("rows",)


class Chunker:
    """Buffers the columns ``names`` of consecutive batches (each a dict of per-example columns)."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.start = 0
        self.size = 0
        self._parts: dict[str, list[Column]] = {}
        self._kinds: dict[str, tuple[Any, ...]] = {}
        self._bytes = 0

    def joins(self, fields: Fields) -> bool:
        """Whether the batch's columns join the buffered ones unchanged (always true of an empty buffer)."""
        if not self.size:
            return True
        for name, kind in self._kinds.items():  # ``_kind`` inlined: this runs for every batch of every metric
            column = fields[name]
            if kind[0] == "array":  # an array of the buffered dtype (never object: ``_kind``) and trailing shape
                if not isinstance(column, np.ndarray) or column.dtype != kind[1] or column.ndim != kind[3]:
                    return False
                if kind[3] > 1 and column.shape[1:] != kind[2]:
                    return False
            elif isinstance(column, np.ndarray) and column.dtype != object:  # rows, and a dense array is not
                return False
        return True

    def add(self, fields: Fields, start: int, size: int) -> None:
        if not self.size:
            self.start = start
            self._parts = {name: [] for name in self.names if name in fields}
            self._kinds = {name: _kind(fields[name]) for name in self._parts}
        for name, parts in self._parts.items():  # this runs for every batch of every metric: no helper call
            column = fields[name]
            parts.append(column)
            self._bytes += column.nbytes if isinstance(column, np.ndarray) else 64 * len(column)
        self.size += size

    def takes_whole(self, fields: Fields, sizes: list[int]) -> bool:
        """Whether consecutive batches of ``sizes`` examples, joined in ``fields``, may be added as one: they join
        the buffer, and adding them one by one would not fill it before the last (so it closes where it would have)."""
        if not self.joins(fields):
            return False
        total, last = sum(sizes), sizes[-1]
        if self.size + total - last >= CHUNK_EXAMPLES:
            return False
        before = 0  # the bytes of the batches before the last, as ``add`` counts them
        for name in self._parts if self.size else [name for name in self.names if name in fields]:
            column = fields[name]
            per_row = column.nbytes // total if isinstance(column, np.ndarray) else 64
            before += per_row * (total - last)
        return self._bytes + before < CHUNK_BYTES

    @property
    def full(self) -> bool:
        return self.size >= CHUNK_EXAMPLES or self._bytes >= CHUNK_BYTES

    def take(self) -> tuple[int, int, Fields]:
        """(first example, examples, joined columns) of the buffer, which is emptied."""
        joined = {name: parts[0] if len(parts) == 1 else concat(parts) for name, parts in self._parts.items()}
        out = (self.start, self.size, joined)
        self.size = self._bytes = 0
        self._parts = {}
        return out

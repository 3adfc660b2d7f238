"""Ordinary batches held by the pass until its scorers' chunk boundary, then post-processed, checked and scored as one.

Every scorer buffers a pass's batches into chunks before it scores them (:mod:`olive_eval.engine.passes.chunks`), so
for an ordinary pass (one model call per batch, dense outputs, a post-process that reads each row's outputs alone)
post-processing each batch, checking it for NaN and building its fields was the same work done 128 times a chunk:
about half of what a small model's pass spent outside its model calls. The pass holds such batches, by the chunk
rule, over the columns the scorers read and the model's outputs; when the held batches fill a chunk (or one does not
join them, or the data ends) they are joined and handled as one batch. A row-wise post-process's predictions of the
joined outputs are the joined predictions of each batch, so what a scorer receives is what it would have buffered;
one whose chunk would close inside the held batches takes them one at a time (:func:`update_by_batch`), as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from olive_eval.data.batch import Batch, Column, Columns, Outputs, concat
from olive_eval.engine.passes import chunks


@dataclass
class HeldBatch:
    """One model call's batch, its outputs, and its timing record (whose post-processing share is added later)."""

    batch: Batch
    outputs: Outputs
    timing: Any


def dense_outputs(outputs: Outputs, size: int) -> bool:
    """Whether every output is a numeric numpy array of a row per example (``size``): outputs that join by
    concatenation."""
    for value in outputs.values():
        if type(value) is not np.ndarray or value.dtype == object or not value.ndim or len(value) != size:
            return False
    return bool(outputs)


def _rows_alone(post: Any, outputs: Outputs) -> bool:
    """Whether the post-process reads each example's row of the output it starts from alone."""
    try:
        return bool(post.row_wise(post.raw(outputs).ndim))
    except Exception:  # an output it cannot select: the batch alone raises it where it would
        return False


#: A kept column's kind: (type, dtype, shape past the first axis) of an array, or the list type of a list column.
Kind = tuple[type, Any, tuple[int, ...]]


def _kind(column: Column) -> Kind:
    if isinstance(column, np.ndarray):
        return (type(column), column.dtype, column.shape[1:])
    return (type(column), None, ())


class HeldBatches:
    """Consecutive batches, held while their kept columns and outputs join as they are (the same types, dtypes
    and shapes past the first axis), until a chunk's examples or bytes are held (:attr:`full`) and :meth:`take`."""

    def __init__(self, kept: set[str]) -> None:
        """``kept``: the fields the scorers read (the batch columns among them are held)."""
        self._kept = kept
        self.held: list[HeldBatch] = []
        self._outputs: list[tuple[str, Any, tuple[int, ...]]] = []
        self._columns: list[tuple[str, Kind]] = []
        self._rows = 0
        self._row_bytes = 0

    def add(self, batch: Batch, outputs: Outputs, timing: Any, post: Any) -> bool | None:
        """Hold the batch (True); False: it does not join the held ones (take those, then ask again); None: it
        cannot be held (outputs that are not dense arrays, a post-process that reads more than a row)."""
        if self.held:
            if not self._joins(batch, outputs):
                return False
        elif not dense_outputs(outputs, timing.size) or not _rows_alone(post, outputs):
            return None
        else:
            self._start(batch, outputs, timing.size)
        self.held.append(HeldBatch(batch, outputs, timing))
        self._rows += timing.size
        return True

    def _start(self, batch: Batch, outputs: Outputs, size: int) -> None:
        kept = {k: v for k, v in batch.columns.items() if k in self._kept}
        self._outputs = [(name, value.dtype, value.shape[1:]) for name, value in outputs.items()]
        self._columns = [(k, _kind(v)) for k, v in kept.items()]
        self._row_bytes = sum(value.nbytes for value in outputs.values()) // size + sum(
            column.nbytes // size if isinstance(column, np.ndarray) else 64 for column in kept.values()
        )

    def _joins(self, batch: Batch, outputs: Outputs) -> bool:
        if len(outputs) != len(self._outputs):
            return False
        for name, dtype, shape in self._outputs:
            value = outputs.get(name)
            if type(value) is not np.ndarray or value.dtype != dtype or value.shape[1:] != shape:
                return False
        columns = batch.columns
        for name, kind in self._columns:
            column = columns.get(name)
            if type(column) is not kind[0]:
                return False
            if kind[1] is not None and (column.dtype != kind[1] or column.shape[1:] != kind[2]):  # type: ignore[union-attr]
                return False
        return True

    @property
    def full(self) -> bool:
        return self._rows >= chunks.CHUNK_EXAMPLES or self._rows * self._row_bytes >= chunks.CHUNK_BYTES

    def take(self) -> tuple[Batch, Outputs, list[HeldBatch]]:
        """The held batches as one batch (its kept columns) and its outputs, with the batches themselves."""
        held, self.held, self._rows = self.held, [], 0
        first = held[0]
        if len(held) == 1:
            columns = {name: first.batch.columns[name] for name, _ in self._columns}
            return (
                Batch(columns, list(first.batch.inputs), first.batch.start, first.batch.call_mode),
                first.outputs,
                held,
            )
        columns = {name: concat([h.batch.columns[name] for h in held]) for name, _ in self._columns}
        outputs = {name: np.concatenate([h.outputs[name] for h in held]) for name, _, _ in self._outputs}
        return Batch(columns, list(first.batch.inputs), first.batch.start, first.batch.call_mode), outputs, held


def batch_slices(fields: Columns, sizes: list[int]) -> Iterator[tuple[int, Columns]]:
    """(offset, fields) of each batch of joined ``fields``, the batches ``sizes`` long: views, not copies."""
    offset = 0
    for size in sizes:
        stop = offset + size
        yield offset, {name: column[offset:stop] for name, column in fields.items()}
        offset = stop


def update_by_batch(consumer: Any, fields: Columns, start: int, sizes: list[int], cache: dict[Any, Any]) -> None:
    """Hand ``consumer`` the joined batches' fields one batch at a time, as the pass would have."""
    for offset, part in batch_slices(fields, sizes):
        consumer.update(part, start + offset, cache)


def takes_joined(consumer: Any) -> bool:
    """Whether a consumer takes held batches joined (``update_joined``): one that reads only what its
    ``pass_reads`` names, buffering by the chunk rule. The pass holds batches only when every consumer does."""
    takes = getattr(consumer, "takes_joined", None)
    return takes is not None and bool(takes())


def rows_before(sizes: list[int], row: int) -> int:
    """How many of the batches (``sizes`` long) end at or before ``row``: the index of the batch holding it."""
    return int(np.searchsorted(np.cumsum(sizes), row, side="right"))

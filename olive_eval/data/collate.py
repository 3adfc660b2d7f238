"""Dataloaders (``dataloader_config``): prepared examples → batches, with variable-length sequences padded.

Token lists stay ragged until here; each batch pads them to its longest row (or ``pad_to_multiple_of``),
on the side the pre-processing asked for (left for generation), with the pad value it declared.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import Field

from olive_eval.data.batch import Batch, Column, Columns, num_rows, take
from olive_eval.data.components import Component, ComponentParams, register_component
from olive_eval.data.prepared import Prepared
from olive_eval.errors import EvaluationError


class DataloaderParams(ComponentParams):
    batch_size: int = Field(1, ge=1)
    drop_last: bool = False
    pad_to_multiple_of: int | None = Field(None, ge=1)


@register_component("dataloader", "default_dataloader")
class DefaultDataloader(Component):
    """Consecutive batches of ``batch_size`` examples across the prepared chunks."""

    Params = DataloaderParams

    @property
    def batch_size(self) -> int:
        return int(getattr(self.params, "batch_size", 1))

    def batches(self, data: Prepared) -> Iterator[Batch]:
        size = self.batch_size
        pending: list[tuple[Columns, int]] = []  # chunks not cut through yet, with their row counts
        offset, held, start = 0, 0, 0  # the first pending chunk is cut from row ``offset``
        for chunk in data.chunks():
            n = num_rows(chunk)
            if not n:
                continue
            pending.append((chunk, n))
            held += n
            while held >= size:
                batch, pending, offset = _cut(pending, offset, size)
                held -= size
                yield self._batch(batch, data, start)
                start += size
        if held and not getattr(self.params, "drop_last", False):
            batch, _, _ = _cut(pending, offset, held)
            yield self._batch(batch, data, start)

    def _batch(self, columns: Columns, data: Prepared, start: int) -> Batch:
        check_labels(columns, data, start)
        if data.pad:
            multiple = getattr(self.params, "pad_to_multiple_of", None)
            for name, value in data.pad.items():
                if name in columns:
                    columns[name] = pad(columns[name], value, data.padding_side, multiple)
        return Batch(columns, list(filter(columns.__contains__, data.inputs)), start)


class IgnoredFieldsParams(DataloaderParams):
    fields_no_batch: str | list[str] = Field(
        "step",
        description="Olive's: model inputs passed unbatched, as the value of the batch's first example (a scalar "
        "'step' for a decoder's token-generation call)",
    )


@dataclass
class UnbatchedFieldsBatch(Batch):
    """A batch some of whose model inputs hold one value for the whole batch rather than one per example."""

    unbatched: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return num_rows({k: v for k, v in self.columns.items() if k not in self.unbatched})

    def select(self, index: Sequence[int] | np.ndarray) -> Batch:
        columns = {k: v if k in self.unbatched else take(v, index) for k, v in self.columns.items()}
        return UnbatchedFieldsBatch(columns, list(self.inputs), self.start, self.call_mode, self.unbatched)


@register_component("dataloader", "dataloader_with_ignored_batch_fields")
class IgnoredFieldsDataloader(DefaultDataloader):
    """Olive's: batches as ``default_dataloader`` makes them, except that each model input named in
    ``fields_no_batch`` is not batched: the batch carries its first example's single value as a scalar (Olive
    takes ``value[0].item()``), not a ``[batch]`` array. A field of several values per example is an error."""

    Params = IgnoredFieldsParams

    def _batch(self, columns: Columns, data: Prepared, start: int) -> Batch:
        batch = super()._batch(columns, data, start)
        fields = self.params.fields_no_batch  # type: ignore[attr-defined]
        names = tuple(n for n in ([fields] if isinstance(fields, str) else fields) if n in batch.inputs)
        for name in names:
            first = np.asarray(batch.columns[name][0])
            if first.size != 1:
                raise EvaluationError(
                    f"data config '{data.name}': fields_no_batch '{name}' holds {first.size} values per example "
                    f"(shape {list(first.shape)}); only a single value can be passed unbatched"
                )
            batch.columns[name] = first.reshape(())
        return UnbatchedFieldsBatch(batch.columns, batch.inputs, batch.start, batch.call_mode, names)


class NoAutoBatchParams(ComponentParams):
    batch_size: int | None = Field(None, description="Olive's: ignored (each dataset item is already a batch)")
    drop_last: bool | None = Field(None, description="Olive's: ignored")


@register_component("dataloader", "no_auto_batch_dataloader")
class NoAutoBatchDataloader(DefaultDataloader):
    """Olive's: each dataset item is already a batch and is passed through as it is, with no batch axis added
    (``raw_dataset``'s files hold their batch dimension). A reference or metadata value that is a scalar is
    the batch's one example's. An item whose columns do not hold the same number of rows is an error."""

    Params = NoAutoBatchParams

    @property
    def batch_size(self) -> int:
        return 1

    def batches(self, data: Prepared) -> Iterator[Batch]:
        start = 0
        for chunk in data.chunks():
            for i in range(num_rows(chunk)):
                item = {k: v[i] for k, v in chunk.items()}
                columns: Columns = {k: v if k in data.inputs or _sized(v) else _one_row(v) for k, v in item.items()}
                try:
                    rows = num_rows(columns) if all(_sized(v) for v in columns.values()) else None
                except ValueError:
                    rows = None
                if rows is None:
                    shapes = ", ".join(f"{k}: {np.shape(v) if _sized(v) else 'a scalar'}" for k, v in item.items())
                    raise EvaluationError(
                        f"data config '{data.name}': no_auto_batch_dataloader passes each dataset item unchanged as "
                        f"one batch (Olive's: the dataset returns batches), but item {start} is not a batch: its "
                        f"columns hold different numbers of rows ({shapes}); use default_dataloader to batch examples"
                    )
                check_labels(columns, data, start)
                yield Batch(columns, [c for c in data.inputs if c in columns], start)
                start += rows


def check_labels(columns: Columns, data: Prepared, start: int) -> None:
    """A label missing from a numeric label column (a null, which reads as NaN) would be scored as a wrong class;
    it is named, with its example, instead. ``start`` is the example of the first row."""
    label = data.references
    values = columns.get(label) if label else None
    if not isinstance(values, np.ndarray) or values.dtype.kind != "f" or not len(values):
        return
    missing = np.isnan(values.reshape(len(values), -1)).any(axis=1)
    if missing.any():
        raise EvaluationError(
            f"data config '{data.name}': label column '{label}' has no value (null or NaN) at example "
            f"{start + int(np.argmax(missing))}; fill it in, or leave the example out of the data"
        )


def _sized(value: Any) -> bool:
    """Whether ``value`` has rows (an array with an axis, a list); a string or a number is a scalar."""
    if isinstance(value, np.ndarray):
        return value.ndim > 0
    return isinstance(value, list | tuple)


def _one_row(value: Any) -> Column:
    return np.asarray([value]) if isinstance(value, np.generic | int | float | bool) else [value]


class VqaDataloaderParams(DataloaderParams):
    batch_size: int = Field(1, ge=1, description="Images differ in size: one at a time by default (Olive's).")


@register_component("dataloader", "vision_vqa_dataloader")
class VqaDataloader(DefaultDataloader):
    Params = VqaDataloaderParams


def _cut(chunks: list[tuple[Columns, int]], offset: int, size: int) -> tuple[Columns, list[tuple[Columns, int]], int]:
    """``size`` rows of the pending chunks from row ``offset`` of the first; the chunks left, and the offset
    into the first of them. The rest of a chunk is not sliced off at each batch (a list column would be copied
    once per batch)."""
    chunk, n = chunks[0]
    if offset + size < n:  # the common case: the batch lies inside the first chunk, which has rows left after it
        cut = slice(offset, offset + size)
        columns: Columns = {}
        for k, v in chunk.items():  # a loop, not a comprehension with a helper: this runs once per batch
            part = v[cut]  # ``take`` of a slice
            columns[k] = part if isinstance(part, (np.ndarray, list)) else list(part)  # as the joined parts below
        return columns, chunks, offset + size
    out: dict[str, list[Any]] = {}
    taken, used = 0, 0
    while taken < size:
        chunk, n = chunks[used]
        stop = min(n, offset + size - taken)
        for k, v in chunk.items():
            out.setdefault(k, []).append(take(v, slice(offset, stop)))
        taken += stop - offset
        offset = stop
        if stop == n:
            used, offset = used + 1, 0
    joined: Columns = {}
    for k, parts in out.items():
        if all(isinstance(p, np.ndarray) for p in parts) and len({p.shape[1:] for p in parts}) == 1:
            joined[k] = np.concatenate(parts) if len(parts) > 1 else parts[0]
        else:
            joined[k] = [row for p in parts for row in p]
    return joined, chunks[used:], offset


def pad(column: Any, value: int | float, side: str, multiple: int | None = None) -> np.ndarray:
    """Rows of different lengths as one ``[batch, longest]`` array, padded with ``value`` on ``side``."""
    rows = [np.asarray(r) for r in column]
    longest = max((len(r) for r in rows), default=0)
    if multiple:
        longest = -(-longest // multiple) * multiple
    dtype = np.result_type(*[r.dtype for r in rows]) if rows else np.int64
    out = np.full((len(rows), longest, *(rows[0].shape[1:] if rows else ())), value, dtype=dtype)
    for i, r in enumerate(rows):
        if side == "left":
            out[i, longest - len(r) :] = r
        else:
            out[i, : len(r)] = r
    return out

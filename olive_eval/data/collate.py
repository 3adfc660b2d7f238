"""Dataloaders (``dataloader_config``): prepared examples → batches, with variable-length sequences padded.

Token lists stay ragged until here; each batch pads them to its longest row (or ``pad_to_multiple_of``),
on the side the pre-processing asked for (left for generation), with the pad value it declared.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from pydantic import Field

from olive_eval.data.batch import Batch, Columns, num_rows, take
from olive_eval.data.components import Component, ComponentParams, register_component
from olive_eval.data.prepared import Prepared


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
        pending: list[Columns] = []
        held, start = 0, 0
        for chunk in data.chunks():
            n = num_rows(chunk)
            if not n:
                continue
            pending.append(chunk)
            held += n
            while held >= size:
                batch, pending, held = _cut(pending, size, held)
                yield self._batch(batch, data, start)
                start += size
        if held and not getattr(self.params, "drop_last", False):
            batch, _, _ = _cut(pending, held, held)
            yield self._batch(batch, data, start)

    def _batch(self, columns: Columns, data: Prepared, start: int) -> Batch:
        multiple = getattr(self.params, "pad_to_multiple_of", None)
        for name, value in data.pad.items():
            if name in columns:
                columns[name] = pad(columns[name], value, data.padding_side, multiple)
        inputs = [c for c in data.inputs if c in columns and c not in self.ignored]
        return Batch(columns, inputs, start)

    ignored: tuple[str, ...] = ()


class IgnoredFieldsParams(DataloaderParams):
    ignore_batch_fields: list[str] = Field(default_factory=list, description="Columns kept away from the model.")


@register_component("dataloader", "dataloader_with_ignored_batch_fields")
class IgnoredFieldsDataloader(DefaultDataloader):
    Params = IgnoredFieldsParams

    @property
    def ignored(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.params.ignore_batch_fields)  # type: ignore[attr-defined]


class SingleParams(ComponentParams):
    pass


@register_component("dataloader", "no_auto_batch_dataloader")
class NoAutoBatchDataloader(DefaultDataloader):
    """Olive's: one example at a time."""

    Params = SingleParams


class VqaDataloaderParams(DataloaderParams):
    batch_size: int = Field(1, ge=1, description="Images differ in size: one at a time by default (Olive's).")


@register_component("dataloader", "vision_vqa_dataloader")
class VqaDataloader(DefaultDataloader):
    Params = VqaDataloaderParams


def _cut(chunks: list[Columns], size: int, held: int) -> tuple[Columns, list[Columns], int]:
    """The first ``size`` rows of the pending chunks, and what is left."""
    out: dict[str, list[Any]] = {}
    taken, rest = 0, []
    for chunk in chunks:
        n = num_rows(chunk)
        need = size - taken
        if need <= 0:
            rest.append(chunk)
            continue
        part = {k: take(v, slice(0, min(n, need))) for k, v in chunk.items()}
        for k, v in part.items():
            out.setdefault(k, []).append(v)
        if n > need:
            rest.append({k: take(v, slice(need, None)) for k, v in chunk.items()})
        taken += min(n, need)
    joined: Columns = {}
    for k, parts in out.items():
        if all(isinstance(p, np.ndarray) for p in parts) and len({p.shape[1:] for p in parts}) == 1:
            joined[k] = np.concatenate(parts) if len(parts) > 1 else parts[0]
        else:
            joined[k] = [row for p in parts for row in p]
    return joined, rest, held - taken


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

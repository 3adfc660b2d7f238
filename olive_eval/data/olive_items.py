"""Olive's data as olive-eval's: datasets of ``(inputs, label)`` items as columns, and back.

An Olive dataset is an indexable (or iterable) object whose items are ``(inputs, label)`` pairs (inputs alone
for unlabelled data), or a Hugging Face dataset. Its items become Arrow chunks: ``inputs`` a dict gives a column
per key, one array (or tensor) the column ``input``; ``label`` the references column ``label``. A dataloader's
batches are the same pairs with a batch axis. The other way, prepared columns read as such items
(:class:`ColumnsDataset`) for an Olive dataloader over data olive-eval's own components prepared.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from olive_eval.data.arrow import table_columns
from olive_eval.data.batch import Column, Columns, num_rows
from olive_eval.data.prepared import Prepared
from olive_eval.data.sources import CHUNK_ROWS, Source, arrow_column
from olive_eval.errors import EvaluationError
from olive_eval.user_module import call_user

#: The column of a single (unnamed) model input, and of the labels.
INPUT, LABEL = "input", "label"
#: An item without a label.
NO_LABEL = object()
_END = object()


class ObjectSource(Source):
    """An Olive dataset object's rows as Arrow chunks: a Hugging Face dataset's columns, or ``(inputs, label)``
    items as a column per input and ``label``. ``dataset`` is the object, for an Olive pre-process or dataloader."""

    def __init__(self, name: str, dataset: Any, what: str) -> None:
        if isinstance(dataset, Iterator):  # read more than once: held
            dataset = list(user_iteration(dataset, f"data config '{name}': {what}: iterating the dataset"))
        self.name, self.dataset, self.what = name, dataset, what
        self._converted: list[pa.Table] = []
        self._complete = False
        self._table = hf_table(dataset)
        if self._table is not None:
            self.columns = list(self._table.column_names)
            self.label = LABEL if LABEL in self.columns else None  # as huggingface_pre_process's default
            return
        if not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")) and not isinstance(dataset, Iterable):
            raise EvaluationError(
                f"data config '{name}': {what} returned {type(dataset).__name__}; it must return a dataset: an object "
                "with __len__ and __getitem__ (or an iterable) giving (inputs, label) pairs, or a Hugging Face dataset"
            )
        first = next(iter(self._items()), None)
        if first is None:
            raise EvaluationError(f"data config '{name}': {what} returned a dataset with no items")
        inputs, label = split_item(first, f"data config '{name}': {what} gives item 0")
        self.label = None if label is NO_LABEL else LABEL
        self.columns = [*inputs, *([LABEL] if self.label else [])]

    @property
    def num_rows(self) -> int | None:
        if self._table is not None:
            return self._table.num_rows
        return len(self.dataset) if hasattr(self.dataset, "__len__") else None

    def chunks(self) -> Iterator[pa.Table]:
        if self._table is not None:
            for start in range(0, self._table.num_rows, CHUNK_ROWS):
                yield self._table.slice(start, CHUNK_ROWS)
            return
        yield from self._converted
        if self._complete:
            return
        # Converted once, held: the object is in memory already, and the plan's checks, the timing inputs and
        # every model's pass read it again (converting it each time cost Olive workflows 0.1 s a model at 10k rows).
        rows: list[tuple[dict[str, Any], Any]] = []
        start = sum(table.num_rows for table in self._converted)
        for index, item in enumerate(self._items(start), start):
            rows.append(self._row(item, index))
            if len(rows) == CHUNK_ROWS:
                self._hold(self._table_of(rows))
                rows = []
                yield self._converted[-1]
        if rows:
            self._hold(self._table_of(rows))
            yield self._converted[-1]
        self._complete = True

    def _hold(self, table: pa.Table) -> None:
        self._converted.append(table)
        total = self.num_rows
        self._complete = total is not None and sum(t.num_rows for t in self._converted) >= total

    def _items(self, start: int = 0) -> Iterator[Any]:
        """The items from index ``start`` on (an iterable dataset is iterated past the ones before)."""
        data = self.dataset
        if hasattr(data, "__getitem__") and hasattr(data, "__len__"):
            return (
                call_user(data.__getitem__, f"data config '{self.name}': {self.what}: item {i}", (i,), {})
                for i in range(start, len(data))
            )
        items = user_iteration(data, f"data config '{self.name}': {self.what}: iterating the dataset")
        return itertools.islice(items, start, None)

    def _row(self, item: Any, index: int) -> tuple[dict[str, Any], Any]:
        """One item as ``({column: value}, label)``, checked to have item 0's columns."""
        where = f"data config '{self.name}': {self.what} gives item {index}"
        inputs, label = split_item(item, where)
        expected = [c for c in self.columns if c != self.label]
        if list(inputs) != expected or (label is NO_LABEL) != (self.label is None):
            raise EvaluationError(
                f"{where} with inputs {', '.join(inputs)}{' and no label' if label is NO_LABEL else ''}; item 0 has "
                f"{', '.join(expected)}{' and a label' if self.label else ''}"
            )
        return inputs, label

    def _table_of(self, rows: list[tuple[dict[str, Any], Any]]) -> pa.Table:
        columns = {c: [r[0][c] for r in rows] for c in rows[0][0]}
        if self.label is not None:
            columns[LABEL] = [r[1] for r in rows]
        where = f"data config '{self.name}': {self.what}"
        return pa.table({c: to_arrow(values, f"{where}: column '{c}'") for c, values in columns.items()})


def split_item(item: Any, where: str) -> tuple[dict[str, Any], Any]:
    """An Olive item or batch ``(inputs, label)`` (or inputs alone) as ``({column: value}, label)``; the label is
    ``NO_LABEL`` when there is none. ``where`` names the item in errors."""
    inputs, label = (item[0], item[1]) if isinstance(item, (tuple, list)) and len(item) == 2 else (item, NO_LABEL)
    if isinstance(inputs, dict):
        named = {str(k): v for k, v in inputs.items()}
    elif _is_array(inputs):
        named = {INPUT: inputs}
    else:
        raise EvaluationError(
            f"{where} as {_shown(item)}; Olive's data gives (inputs, label) pairs, the inputs a dict "
            "{input name: array} or one array"
        )
    if LABEL in named and label is not NO_LABEL:
        raise EvaluationError(f"{where} with an input named '{LABEL}' beside the label; rename the input")
    return named, label


def hf_table(data: Any) -> pa.Table | None:
    """A Hugging Face dataset's rows as one Arrow table (None for anything else; ``datasets`` is imported only by
    whoever made the dataset)."""
    datasets = sys.modules.get("datasets")
    if datasets is None or not isinstance(data, datasets.Dataset):
        return None
    return data.with_format("arrow")[:]


def dataset_object(source: Source) -> Any:
    """What an Olive function is handed as the dataset: the object an Olive dataset returned, else a Hugging Face
    dataset of the rows (Olive's ``huggingface_dataset`` returns one)."""
    if isinstance(source, ObjectSource):
        return source.dataset
    import datasets
    from datasets.table import InMemoryTable

    tables = list(source.chunks())
    return datasets.Dataset(InMemoryTable(pa.concat_tables(tables) if tables else pa.table({})))


def to_arrow(values: list[Any], what: str) -> pa.Array:
    """Per-example values as an Arrow column: numbers of one shape as a dense column, anything else as is."""
    values = [to_numpy(v) for v in values]
    if all(isinstance(v, (np.ndarray, np.generic, int, float, bool)) for v in values):
        try:
            stacked = np.stack([np.asarray(v) for v in values])
        except ValueError:
            stacked = None
        if stacked is not None and stacked.dtype.kind in "biuf":
            return arrow_column(stacked)
    try:
        return pa.array([v.tolist() if isinstance(v, (np.ndarray, np.generic)) else v for v in values])
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise EvaluationError(f"{what} holds values Arrow cannot store together: {exc}") from None


def to_numpy(value: Any) -> Any:
    """A torch tensor as a numpy array (anything else as it is)."""
    if type(value).__module__.split(".")[0] == "torch" and hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return value


def _is_array(value: Any) -> bool:
    return isinstance(to_numpy(value), (np.ndarray, np.generic, int, float))


def _shown(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"a {type(value).__name__}"


def user_iteration(iterable: Any, what: str) -> Iterator[Any]:
    """The items of a user's iterable, a failure inside it reported as the user's (naming ``what``)."""
    iterator = call_user(iter, what, (iterable,), {})
    while (item := call_user(next, what, (iterator, _END), {})) is not _END:
        yield item


@dataclass
class ObjectPrepared(Prepared):
    """Prepared data that came from an Olive dataset object, which an Olive dataloader is handed as it is."""

    dataset: Any = None


def prepared_of(source: ObjectSource) -> ObjectPrepared:
    label = source.label
    inputs = [c for c in source.columns if c != label]

    def chunks() -> Iterator[Columns]:
        for table in source.chunks():
            yield table_columns(table)

    return ObjectPrepared(
        source.name,
        chunks,
        inputs,
        label,
        list(source.columns),
        num_rows=source.num_rows,
        as_stored=True,
        dataset=source.dataset,
    )


def column_of(value: Any) -> Column:
    """A batch's values (an array or tensor with the batch axis first, or a list) as a column; a single value is
    a batch of one."""
    value = to_numpy(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    return np.atleast_1d(np.asarray(value))


class ColumnsDataset:
    """Prepared columns as Olive's indexable dataset of ``(inputs, label)`` pairs, for an Olive dataloader over
    data that olive-eval's own components prepared."""

    def __init__(self, data: Prepared) -> None:
        self.inputs, self.label = data.inputs, data.references
        self.chunks = [c for c in data.chunks() if c]
        self.offsets = np.cumsum([0, *(num_rows(c) for c in self.chunks)])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def __getitem__(self, index: int) -> tuple[dict[str, Any], Any] | dict[str, Any]:
        if not 0 <= index < len(self):
            raise IndexError(index)
        chunk = int(np.searchsorted(self.offsets, index, side="right")) - 1
        columns, row = self.chunks[chunk], index - int(self.offsets[chunk])
        inputs = {name: columns[name][row] for name in self.inputs}
        return (inputs, columns[self.label][row]) if self.label else inputs

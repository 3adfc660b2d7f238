"""Columns and batches: examples as a table of columns of any type.

A column is a numpy array (dense: numbers of one shape per example) or a list (anything else: strings,
lists of strings, ragged token lists, waveforms, images, dicts of boxes). Ragged data stays ragged at
the edges; a kernel that wants a dense array asks :func:`dense`.

Inputs of several texts per example (a sentence pair for a bi-encoder) come as *groups*: a model input
column named ``"group:input"`` belongs to ``group``, and the model is called once per group.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from olive_eval.tasks.call_mode import CallMode

Column = np.ndarray | list[Any]
Columns = dict[str, Column]

#: A model's outputs on a batch, by name, in the model's order. Values are arrays (first axis: examples)
#: or, for models that return Python objects (a ``PythonModel``), lists with one entry per example.
Outputs = dict[str, Any]

#: Separates a group name from an input name: ``"sentence1:input_ids"``.
GROUP_SEP = ":"


def num_rows(columns: Mapping[str, Column]) -> int:
    lengths = set(map(len, columns.values()))  # no comprehension: a batch's size is asked once per batch
    if len(lengths) > 1:
        raise ValueError(f"columns differ in length: {sorted(lengths)}")
    return lengths.pop() if lengths else 0


def take(column: Column, index: Sequence[int] | np.ndarray | slice) -> Column:
    if isinstance(column, np.ndarray):
        return column[index]
    if isinstance(index, slice):
        return column[index]
    return [column[i] for i in np.asarray(index).tolist()]


def concat(parts: Sequence[Column]) -> Column:
    """Join columns of consecutive batches (arrays stay arrays when their shapes allow it)."""
    if not parts:
        return []
    if all(issubclass(kind, np.ndarray) for kind in set(map(type, parts))):  # each type once, not each part
        try:
            return np.concatenate(parts, axis=0)
        except ValueError:  # shapes differ past the first axis (e.g. sequence lengths): keep per example
            return [row for p in parts for row in p]
    return [row for p in parts for row in p]


def dense(column: Column, what: str = "column") -> np.ndarray:
    """The column as one array; a ragged or non-numeric column is a ValueError saying so."""
    if isinstance(column, np.ndarray) and column.dtype != object:
        return column
    try:
        array = np.asarray(column)
    except ValueError:
        array = np.empty(0, dtype=object)
    if array.dtype == object:
        raise ValueError(f"{what} holds rows of different shapes or non-numeric values; a dense array is needed here")
    return array


def split_group(name: str) -> tuple[str | None, str]:
    """``"sentence1:input_ids"`` → ``("sentence1", "input_ids")``; an ungrouped name → ``(None, name)``."""
    group, sep, inner = name.partition(GROUP_SEP)
    return (group, inner) if sep else (None, name)


@dataclass
class Batch:
    """A slice of examples: every column (inputs, references, metadata) and which columns feed the model."""

    columns: Columns
    inputs: list[str]
    start: int = 0
    #: How the model is called on it: the planned pass's mode (:mod:`olive_eval.tasks.call_mode`), stamped on
    #: every batch the pass and the timing phase use; None (a batch made elsewhere): the model's own first mode.
    call_mode: CallMode | None = None

    @property
    def size(self) -> int:
        return num_rows(self.columns)

    @property
    def groups(self) -> dict[str | None, Columns]:
        """Model inputs by group: ``{None: {...}}`` for an ordinary batch, one entry per text of a pair."""
        out: dict[str | None, Columns] = {}
        for name in self.inputs:
            group, inner = split_group(name)
            out.setdefault(group, {})[inner] = self.columns[name]
        return out

    def model_inputs(self) -> Columns:
        return {name: self.columns[name] for name in self.inputs}

    def select(self, index: Sequence[int] | np.ndarray) -> Batch:
        return Batch(
            {k: take(v, index) for k, v in self.columns.items()}, list(self.inputs), self.start, self.call_mode
        )


def batches(columns: Columns, inputs: list[str], batch_size: int, *, drop_last: bool = False) -> Iterator[Batch]:
    """Consecutive batches of ``batch_size`` examples."""
    n = num_rows(columns)
    for start in range(0, n, batch_size):
        stop = min(start + batch_size, n)
        if drop_last and stop - start < batch_size:
            return
        yield Batch({k: take(v, slice(start, stop)) for k, v in columns.items()}, list(inputs), start)


def select_output(outputs: Outputs, which: str | int) -> Column:
    """One of a model's outputs, by name or position."""
    names = list(outputs)
    if type(which) is int and 0 <= which < len(names):  # the common case (the first output): one test
        return outputs[names[which]]
    if isinstance(which, int):
        if not -len(names) <= which < len(names):
            from olive_eval.errors import EvaluationError

            raise EvaluationError(f"the model has {len(names)} outputs; output index {which} is out of range")
        return outputs[names[which]]
    if which not in outputs:
        from olive_eval.errors import EvaluationError

        raise EvaluationError(f"the model has no output '{which}'; outputs: {', '.join(names)}")
    return outputs[which]

"""Prepared data: a data config's examples after pre-processing, ready to be batched for a model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.data.batch import Column, Columns, concat
from olive_eval.data.processor import load_processor


class ProcessorDeferred(Exception):
    """Where pre-processing would load a tokenizer or processor while the run is planned: the checks before that
    point (columns, a tokenizer source) have passed, and what follows is checked when the model's pass runs."""


@dataclass
class PrepareContext:
    """What pre- and post-processing may need from the model being evaluated: its processor."""

    data_config: str
    processor_folder: Path | None = None
    allow_download: bool = False
    #: Things a reader should know that did not stop the run (e.g. empty generations), by message.
    notes: dict[str, int] = field(default_factory=dict)
    #: The run is being planned: asking for a processor that has a source raises :class:`ProcessorDeferred`.
    planning: bool = False

    def processor(self, name_or_path: str | Path | None = None, *, trust_remote_code: bool = False) -> Any:
        source = name_or_path or self.processor_folder
        if source is None:
            from olive_eval.errors import EvaluationError

            raise EvaluationError(
                f"data config '{self.data_config}' needs a tokenizer or processor: give the model's folder "
                "(HfModel model_path, ONNXModel processor_path) or pre_process_data_config.model_name; a model "
                "that takes the raw columns (a PythonModel) wants pre_process_data_config.type 'skip_pre_process'"
            )
        if self.planning:
            raise ProcessorDeferred(str(source))
        return load_processor(source, allow_download=self.allow_download, trust_remote_code=trust_remote_code)

    def note(self, message: str, count: int = 1) -> None:
        self.notes[message] = self.notes.get(message, 0) + count


@dataclass
class Prepared:
    """Pre-processed examples, as chunks of columns.

    ``inputs`` name the columns that feed the model (``"group:name"`` for several texts per example);
    ``references`` the column metrics score against; every other column is metadata a metric may read
    (``audio_seconds``, the question, the source text). ``pad`` holds the pad value of each column of
    variable-length sequences, which the dataloader pads per batch, on ``padding_side``.
    """

    name: str
    chunks: Callable[[], Iterator[Columns]]
    inputs: list[str]
    references: str | None
    columns: list[str]
    pad: dict[str, int | float] = field(default_factory=dict)
    padding_side: str = "right"
    num_rows: int | None = None
    #: Where the tokenizer or processor came from: data prepared with the same one is shared between models.
    processor_key: str | None = None
    #: The dataset's columns as they are stored (nothing decoded or tokenized): the first rows cost no more than
    #: reading them, so they are checked when the run is planned.
    as_stored: bool = False

    def cached(self) -> Prepared:
        """The same data held in memory: pre-processing that is worth sharing runs once."""
        held = list(self.chunks())
        rows = sum(len(next(iter(c.values()))) for c in held if c)
        return Prepared(
            self.name,
            lambda: iter(held),
            self.inputs,
            self.references,
            self.columns,
            self.pad,
            self.padding_side,
            rows,
            self.processor_key,
            self.as_stored,
        )

    def reordered(self, seed: int) -> Prepared:
        """The same examples in a seeded random order, held in memory: a sequential run reads every model's data
        in this one order, so a candidate's first examples are a random sample and pair with the baseline's."""
        held = [chunk for chunk in self.chunks() if chunk]
        joined = {name: concat([chunk[name] for chunk in held]) for name in (held[0] if held else {})}
        rows = len(next(iter(joined.values()))) if joined else 0
        order = np.random.default_rng(seed).permutation(rows)
        taken = {name: _take(column, order) for name, column in joined.items()}
        step = REORDERED_CHUNK
        parts = [{name: column[i : i + step] for name, column in taken.items()} for i in range(0, rows, step)]
        return Prepared(
            self.name,
            lambda: iter(parts),
            self.inputs,
            self.references,
            self.columns,
            self.pad,
            self.padding_side,
            rows,
            self.processor_key,
            self.as_stored,
        )


#: Rows per chunk of reordered data (the chunks a dataloader batches from).
REORDERED_CHUNK = 4096


def _take(column: Column, order: np.ndarray) -> Column:
    return column[order] if isinstance(column, np.ndarray) else [column[i] for i in order]

"""A run's data: each data config's source opened once, and its prepared data shared between models.

Pre-processing runs once per (data config, tokenizer or processor): models that share a tokenizer share
the tokenized data, held in memory. Data prepared without one (columns as they are) is not held: it is
read again, chunk by chunk, for each model, so memory does not grow with the dataset.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from olive_eval.config.data import DataConfig
from olive_eval.config.run import RunConfig
from olive_eval.data.batch import Batch
from olive_eval.data.components import build
from olive_eval.data.json_files import BLOCK_BYTES
from olive_eval.data.kept_chunks import KEPT, FilesKey, KeptChunks, files_key
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.data.sources import CHUNK_ROWS, DataContext, FileSource, Source, Subset
from olive_eval.engine.run.preflight import check_data
from olive_eval.runtimes.base import ModelConfig
from olive_eval.tasks.call_mode import CallMode


@dataclass
class DataView:
    """What a pass over one data config needs for one model: prepared data, batching, post-processing, and how the
    model is called (``call_mode``: the model's, for this post-process), stamped on every batch it gives, so the
    accuracy pass and the timing phase call the model alike."""

    config: DataConfig
    prepared: Prepared
    dataloader: Any
    post: Any
    context: PrepareContext
    call_mode: CallMode

    def batches(self) -> Iterator[Batch]:
        for batch in self.dataloader.batches(self.prepared):
            batch.call_mode = self.call_mode
            yield batch

    def first_batch(self) -> Batch:
        batch = next(iter(self.batches()), None)
        if batch is None:
            from olive_eval.errors import EvaluationError

            raise EvaluationError(f"data config '{self.config.name}' has no examples")
        return batch


#: A json or csv source this small is read to its end with its first chunk (a reader's block is 16 MiB).
PEEK_BYTES = BLOCK_BYTES


#: A row count not asked of the source yet.
_UNASKED = object()


class FirstChunkHeld(Source):
    """A file source whose first chunk (at most ``CHUNK_ROWS`` rows) is read once and held for the run.

    The plan-time checks (rows, columns, a first batch) and each model's pass start from it instead of reading
    the file again; a source that is that one chunk is never read again. A larger one is read again from its
    second chunk on, each pass, so memory stays bounded (one held chunk beside the one being read).

    ``kept``: where a plain file source of one chunk is also kept for the process's later runs
    (:mod:`olive_eval.data.kept_chunks`), found again while its files are unchanged.

    A json or csv source of at most :data:`PEEK_BYTES` is read to its end with its first chunk (its reader is there
    already, a block being larger), so it is known to be one chunk at once, not by the first pass reading the file
    again: a process executor's children (each with a copy of this source) would each read it again.
    """

    def __init__(self, source: Source, kept: KeptChunks | None = None) -> None:
        self.source, self.name, self.columns, self.label = source, source.name, source.columns, source.label
        self._first: pa.Table | None = None
        self._whole = False
        self._kept = kept if type(source) is FileSource else None
        self._key: FilesKey | None = None
        self._count: object = _UNASKED  # int | None once asked

    def __getattr__(self, name: str) -> Any:
        """What else the source says of itself (its ``files``, which speech data resolves paths against)."""
        if name == "source":
            raise AttributeError(name)
        return getattr(self.source, name)

    @property
    def num_rows(self) -> int | None:
        """The source's own count, asked once for the run (a parquet source reads its files' footers each time:
        the plan's checks and each model's pass would read them again)."""
        if self._count is _UNASKED:
            self._count = self.source.num_rows
        return self._count  # type: ignore[return-value]

    def chunks(self) -> Iterator[pa.Table]:
        rest: Iterator[pa.Table] | None = None
        if self._first is None and self._kept is not None:
            assert isinstance(self.source, FileSource)
            self._key = files_key(self.source.builder, self.source.files)
            self._first = self._kept.get(self._key)
            self._whole = self._first is not None
        if self._first is None:
            rest = iter(self.source.chunks())
            first = next(rest, None)
            if first is None:
                return
            if first.num_rows > CHUNK_ROWS:  # a shuffled subset, read whole: not held
                yield first
                yield from rest
                return
            self._first = first
            self._whole = first.num_rows == self.num_rows  # known without reading for parquet
            if not self._whole and self._small():
                after = next(rest, None)  # the reader's end, read with the first block
                self._whole = after is None
                rest = rest if after is None else itertools.chain([after], rest)
            self._keep()
        yield self._first
        if self._whole:
            return
        if rest is None:
            rest = iter(self.source.chunks())
            next(rest, None)  # read again past the held chunk
        more = False
        for chunk in rest:
            more = True
            yield chunk
        self._whole = not more
        self._keep()

    def _small(self) -> bool:
        """A json or csv file source (or the first rows of one) of at most :data:`PEEK_BYTES` in all."""
        source = self.source.source if isinstance(self.source, Subset) else self.source
        if type(source) is not FileSource or source.builder == "parquet":
            return False
        try:
            return sum(os.path.getsize(path) for path in source.files) <= PEEK_BYTES
        except OSError:  # gone since it was opened: the pass that reads it says so
            return False

    def _keep(self) -> None:
        """A file now known to be one chunk: kept for the process's later runs (where ``kept`` is given)."""
        if self._whole and self._kept is not None and self._first is not None:
            self._kept.put(self._key, self._first)


#: A prepared data's key in the store: (data config, the tokenizer or processor it was prepared with, if any).
PreparedKey = tuple[str, str | None]


@dataclass(frozen=True)
class DataSnapshot:
    """What a store holds at one moment (its opened sources and prepared data), to hand to another store: a
    child process's, a Ray worker's, or the run's own when a child sends back what it tokenized."""

    sources: dict[str, Source]
    prepared: dict[PreparedKey, Prepared]

    def held(self) -> tuple[tuple[str, ...], tuple[PreparedKey, ...]]:
        """What it holds, by name: equal for two snapshots of a store that opened and prepared nothing between."""
        return tuple(self.sources), tuple(self.prepared)


class DataStore:
    """Sources and prepared data of a run, loaded when first needed and kept for the other models."""

    def __init__(self, run: RunConfig) -> None:
        self._run = run
        self._sources: dict[str, Source] = {}
        self._prepared: dict[PreparedKey, Prepared] = {}
        #: How many times each (data config, processor) was pre-processed (tests check it is once).
        self.preparations: dict[PreparedKey, int] = {}

    def snapshot(self) -> DataSnapshot:
        """The sources opened and the data prepared so far (copies of the store's tables, the same objects)."""
        return DataSnapshot(dict(self._sources), dict(self._prepared))

    def restore(self, snapshot: DataSnapshot) -> None:
        """Hold what ``snapshot`` holds, in place of what this store holds under the same names."""
        self._sources.update(snapshot.sources)
        self._prepared.update(snapshot.prepared)

    def source(self, name: str) -> Source:
        if name not in self._sources:
            dc = self._run.data_config(name)
            dataset = build("dataset", dc.load_dataset_config)
            source = dataset.open(name, DataContext(self._run.allow_download))
            held = isinstance(source, (FileSource, Subset))
            self._sources[name] = FirstChunkHeld(source, KEPT) if held else source
        return self._sources[name]

    def view(self, name: str, model: ModelConfig) -> DataView:
        """The data config as ``model`` sees it: prepared with its processor, batched, post-processed."""
        dc = self._run.data_config(name)
        context = PrepareContext(name, model.processor_folder(), self._run.allow_download)
        pre = build("pre-process", dc.pre_process_data_config)
        key = (name, pre.processor_source(context))
        if key not in self._prepared:
            prepared = pre.prepare(self.source(name), context)
            self.preparations[key] = self.preparations.get(key, 0) + 1
            if self._run.sequential is not None:  # every model reads the one seeded order (held in memory)
                self._prepared[key] = prepared.reordered(self._run.sequential.seed)
            else:
                self._prepared[key] = prepared.cached() if prepared.processor_key is not None else prepared
        post = build("post-process", dc.post_process_data_config)
        return DataView(
            dc,
            self._prepared[key],
            build("dataloader", dc.dataloader_config),
            post,
            context,
            model.call_mode(post.generates),
        )

    def preload(self, names: list[str]) -> None:
        """Open the sources up front (one-time setup is the run's, not the first model's), and check what each
        data config gives before any model loads: a data error is the run's (exit 2), not every model's."""
        check_data(self._run, names, self.source)

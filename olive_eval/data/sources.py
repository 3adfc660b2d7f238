"""Datasets (``load_dataset_config``): where examples come from, read in chunks of Arrow tables.

* ``huggingface_dataset`` (:mod:`olive_eval.data.huggingface_dataset`): a ``datasets`` builder on local files,
  a folder saved with ``save_to_disk``, or a hub name found in the local Hugging Face cache; json, csv and parquet
  files are read here (:class:`FileSource`) with pyarrow, in a streaming way.
* ``dummy_dataset``: random inputs of fixed shapes (for latency).
* ``raw_dataset`` (:mod:`olive_eval.data.raw`) and the transformers dummy datasets
  (:mod:`olive_eval.data.dummy_text`) are Olive's, in their own modules.
* ``local_dataset``: Olive registers it but leaves it unimplemented (it returns nothing); refused by name.

:class:`Subset` selects a reproducible subset (``limit``: N rows, or a fraction with ``shuffle.seed``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pydantic import Field, model_validator

from olive_eval.data.components import Component, ComponentParams, not_built, register_component
from olive_eval.data.json_files import read_json

#: Rows per chunk read from a file: bounded memory however large the file.
CHUNK_ROWS = 65_536
#: Elements per dummy input (a float32 input this size is 1 GiB).
MAX_DUMMY_ELEMENTS = 1 << 28


@dataclass
class DataContext:
    """What loading needs from the run: whether the network may be used."""

    allow_download: bool = False


class Source:
    """A dataset's rows, read in chunks. ``num_rows`` may be unknown (None) until read."""

    name: str
    columns: list[str]
    #: The column that holds the references, when the dataset itself says which (raw_dataset's annotations).
    label: str | None = None
    #: Rows made for the model being evaluated (sized from its config): none to read before it is known.
    needs_model: bool = False

    def chunks(self) -> Iterator[pa.Table]:
        raise NotImplementedError

    @property
    def num_rows(self) -> int | None:
        return None


class TableSource(Source):
    """A dataset held in memory."""

    def __init__(self, name: str, table: pa.Table) -> None:
        self.name, self.table, self.columns = name, table, list(table.column_names)

    def chunks(self) -> Iterator[pa.Table]:
        for start in range(0, self.table.num_rows, CHUNK_ROWS):
            yield self.table.slice(start, CHUNK_ROWS)

    @property
    def num_rows(self) -> int:
        return self.table.num_rows


class FileSource(Source):
    """Local json/csv/parquet files, streamed chunk by chunk."""

    def __init__(self, name: str, builder: str, files: list[str]) -> None:
        self.name, self.builder, self.files = name, builder, files
        first = next(self._read(files[0], schema_only=True))
        self.columns = list(first.column_names)

    def chunks(self) -> Iterator[pa.Table]:
        for path in self.files:
            yield from self._read(path)

    @property
    def num_rows(self) -> int | None:
        if self.builder == "parquet":
            import pyarrow.parquet as pq

            return sum(pq.ParquetFile(f).metadata.num_rows for f in self.files)
        return None

    def _read(self, path: str, schema_only: bool = False) -> Iterator[pa.Table]:
        if self.builder == "parquet":
            import pyarrow.parquet as pq  # read_table would go through pyarrow.dataset, which imports pandas

            reader = pq.ParquetFile(path, pre_buffer=False)  # pre-buffering would keep every row group read
            if schema_only:
                yield pa.Table.from_batches([], schema=reader.schema_arrow)
                return
            for batch in reader.iter_batches(batch_size=CHUNK_ROWS):
                yield pa.Table.from_batches([batch])
            return
        if self.builder == "json":
            yield from read_json(path, self.name, schema_only)
            return
        import pyarrow.csv as pcsv

        reader = pcsv.open_csv(path, read_options=pcsv.ReadOptions(block_size=1 << 24))
        if schema_only:
            yield pa.Table.from_batches([], schema=reader.schema)
            return
        for batch in reader:
            yield pa.Table.from_batches([batch])


class Subset(Source):
    """``limit`` / ``shuffle`` applied to another source (materialises it to pick rows at random)."""

    def __init__(self, source: Source, limit: int | float | None, seed: int | None) -> None:
        self.name, self.columns = source.name, source.columns
        self.source, self.limit, self.seed = source, limit, seed

    def chunks(self) -> Iterator[pa.Table]:
        if self.seed is None and (self.limit is None or self.limit >= 1):
            remaining = int(self.limit) if self.limit is not None else math.inf
            for chunk in self.source.chunks():  # the first N rows: stop reading once they are there
                if remaining <= 0:
                    return
                yield chunk.slice(0, int(min(remaining, chunk.num_rows)))
                remaining -= chunk.num_rows
            return
        table = pa.concat_tables(list(self.source.chunks()))
        n = table.num_rows
        count = n if self.limit is None else (int(self.limit) if self.limit >= 1 else round(self.limit * n))
        order = np.random.default_rng(self.seed or 0).permutation(n)[: min(count, n)]
        if self.seed is None:  # a fraction without shuffle: a random subset in dataset order (Olive's)
            order = np.sort(order)
        yield table.take(pa.array(order))


class DummyDatasetParams(ComponentParams):
    """Random inputs of fixed shapes for latency-only metrics; read from the ONNX graph when omitted."""

    input_names: list[str] | None = None
    input_shapes: list[list[int]] | None = None
    input_types: list[str] | None = None
    max_samples: int = Field(32, ge=1)
    seed: int = 0

    @model_validator(mode="after")
    def _same_lengths(self) -> DummyDatasetParams:
        lengths = {len(v) for v in (self.input_names, self.input_shapes, self.input_types) if v is not None}
        if len(lengths) > 1:
            raise ValueError("input_names, input_shapes and input_types must have the same length")
        for shape in self.input_shapes or []:
            if any(d < 1 for d in shape) or math.prod(shape) > MAX_DUMMY_ELEMENTS:
                raise ValueError(
                    f"input shape {shape} must have positive dimensions and at most {MAX_DUMMY_ELEMENTS:,} elements"
                )
        return self


@register_component("dataset", "dummy_dataset")
class DummyDataset(Component):
    """Dummy inputs are made for the model at hand (see :mod:`olive_eval.data.dummy`), not read."""

    Params = DummyDatasetParams


not_built(
    "dataset",
    "local_dataset",
    "Olive 0.13 registers it but leaves it unimplemented: it returns no data; use huggingface_dataset with "
    "local files, or raw_dataset for raw arrays",
)


# ---------------------------------------------------------------------------------------------- helpers
def arrow_column(values: np.ndarray) -> pa.Array:
    """An array whose first axis is the examples as an Arrow column (nested fixed-size lists for the other
    axes), which :func:`olive_eval.data.arrow.column` reads back as the same dense array."""
    flat: pa.Array = pa.array(np.ascontiguousarray(values).reshape(-1))
    for axis in range(values.ndim - 1, 0, -1):
        size = values.shape[axis]
        if size:
            flat = pa.FixedSizeListArray.from_arrays(flat, size)
        else:  # Arrow's fixed-size lists cannot be empty: lists of length 0
            rows = int(np.prod(values.shape[:axis]))
            flat = pa.ListArray.from_arrays(pa.array(np.zeros(rows + 1, np.int32)), flat)
    return flat

"""Datasets (``load_dataset_config``): where examples come from, read in chunks of Arrow tables.

* ``huggingface_dataset``: a ``datasets`` builder on local files (json, csv and parquet are read with
  pyarrow directly, in a streaming way: ``datasets`` costs a second to import and would hand back the same
  table), a folder saved with ``save_to_disk``, or a hub name found in the local Hugging Face cache. Nothing
  is downloaded unless the run allows it.
* ``dummy_dataset``: random inputs of fixed shapes (for latency).
* ``raw_dataset`` (:mod:`olive_eval.data.raw`) and the transformers dummy datasets
  (:mod:`olive_eval.data.dummy_text`) are Olive's, in their own modules.
* ``local_dataset``: Olive registers it but leaves it unimplemented (it returns nothing); refused by name.

``limit`` (N rows, or a fraction with ``shuffle.seed``) and ``shuffle`` select a reproducible subset.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pydantic import Field, model_validator

from olive_eval.data.components import Component, ComponentParams, not_built, register_component
from olive_eval.data.json_files import read_json
from olive_eval.errors import EvaluationError, first_line
from olive_eval.huggingface_env import hub_dataset_cached, offline
from olive_eval.strict_model import StrictModel, closest

#: Rows per chunk read from a file: bounded memory however large the file.
CHUNK_ROWS = 65_536
#: Builders read straight with pyarrow.
ARROW_BUILDERS = ("json", "csv", "parquet")
#: Builders known without importing ``datasets``.
COMMON_BUILDERS = ("csv", "json", "parquet", "text", "imagefolder", "audiofolder")
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


class Shuffle(StrictModel):
    seed: int = 0


class HuggingfaceDatasetParams(ComponentParams):
    """Local data through ``datasets``: a builder with files, a ``save_to_disk`` folder, or a cached hub name."""

    data_name: str = Field(description="'json', 'csv', 'parquet', 'text', ..., a save_to_disk folder, or a hub name")
    subset: str | None = None
    split: str | None = Field(
        None, description="Default: 'train' for a plain data_files list, else 'validation' as in Olive."
    )
    data_files: str | list[str] | dict[str, str | list[str]] | None = None
    data_dir: str | None = None
    revision: str | None = None
    trust_remote_code: bool = Field(False, description="Olive's key; datasets 4 and later run no dataset scripts.")
    col_filters: dict[str, str | int | float | bool] | None = Field(None, description="Keep rows equal to these.")
    limit: int | float | None = Field(None, gt=0, description="The first N rows, or a fraction (with shuffle's seed).")
    shuffle: Shuffle | None = None

    @model_validator(mode="after")
    def _fraction(self) -> HuggingfaceDatasetParams:
        if self.limit is not None and self.limit != int(self.limit) and self.limit >= 1:
            raise ValueError("limit is a row count (an integer) or a fraction below 1")
        return self

    def source_problem(self, allow_download: bool = False) -> tuple[str, str] | None:
        """``(key, what is wrong)`` when the data cannot be read from this machine, checked before any model runs."""
        if Path(self.data_name).is_dir():
            return None
        builders = COMMON_BUILDERS if self.data_name in COMMON_BUILDERS else packaged_builders()
        if self.data_name not in builders:
            if Path(self.data_name).is_file():
                guess = Path(self.data_name).suffix.lstrip(".").replace("jsonl", "json")
                hint = f"data_name '{guess}' with data_files" if guess in builders else "a builder with data_files"
                return "data_name", f"'{self.data_name}' is a file; read it with {hint}"
            if allow_download or hub_dataset_cached(self.data_name):
                return None
            guess = closest(self.data_name, builders) or ("json" if "json" in self.data_name else None)
            hint = f"did you mean '{guess}'? " if guess else ""
            return "data_name", (
                f"'{self.data_name}' is neither a dataset builder, a local folder, nor a dataset in the local Hugging "
                f"Face cache; {hint}for local files use json, csv, parquet or text with data_files; to download it, "
                'set "allow_download": true in the config or pass --allow-download'
            )
        for f in _files(self.data_files):
            if "://" in f or any(ch in f for ch in "*?["):
                continue
            path = Path(f)
            if not path.exists():
                return "data_files", f"file not found: {f}"
            if path.is_file() and path.stat().st_size == 0:
                return "data_files", f"{f} is empty: it has no rows"
        return None


@register_component("dataset", "huggingface_dataset")
class HuggingfaceDataset(Component):
    Params = HuggingfaceDatasetParams

    def open(self, name: str, context: DataContext) -> Source:
        p: HuggingfaceDatasetParams = self.params  # type: ignore[assignment]
        try:
            if (
                p.data_name in ARROW_BUILDERS
                and p.data_files is not None
                and not (p.subset or p.data_dir or p.col_filters)
            ):
                source: Source = FileSource(name, p.data_name, _split_files(p.data_files, p.split, name))
            else:
                source = TableSource(name, _load_with_datasets(p, name, context))
        except EvaluationError:
            raise
        except Exception as exc:
            raise EvaluationError(
                f"data config '{name}': cannot load dataset '{p.data_name}': {first_line(exc)}"
            ) from exc
        if p.limit is not None or p.shuffle is not None:
            source = Subset(source, p.limit, p.shuffle.seed if p.shuffle else None)
        return source


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


def packaged_builders() -> list[str]:
    """The ``datasets`` builders that read local files (json, csv, parquet, text, imagefolder, ...)."""
    try:
        from datasets.packaged_modules import _PACKAGED_DATASETS_MODULES
    except ImportError:  # a datasets release that moved it: the builders every release has
        return sorted(COMMON_BUILDERS)
    return sorted(_PACKAGED_DATASETS_MODULES)


def _files(files: str | list[str] | dict[str, str | list[str]] | None) -> list[str]:
    if files is None:
        return []
    if isinstance(files, str):
        return [files]
    if isinstance(files, list):
        return list(files)
    return [f for v in files.values() for f in _files(v)]


def _split_files(files: str | list[str] | dict[str, str | list[str]], split: str | None, name: str) -> list[str]:
    """The files of ``split``: a plain file list is the ``train`` split, as ``datasets`` has it."""
    if isinstance(files, dict):
        split = split or ("validation" if "validation" in files else next(iter(files)))
        if split not in files:
            raise EvaluationError(
                f"data config '{name}': data_files has no split '{split}'; splits: {', '.join(files)}"
            )
        files = files[split]
    elif split not in (None, "train"):
        raise EvaluationError(
            f"data config '{name}': split '{split}' is not in data_files (a plain file list is the 'train' split; "
            "give a {split: files} mapping)"
        )
    return [files] if isinstance(files, str) else list(files)


def _load_with_datasets(p: HuggingfaceDatasetParams, name: str, context: DataContext) -> pa.Table:
    with offline(context.allow_download):
        import datasets

        datasets.disable_progress_bars()
        if p.data_files is None and Path(p.data_name).is_dir():
            loaded: Any = datasets.load_from_disk(p.data_name)
            if isinstance(loaded, datasets.DatasetDict):
                splits = list(loaded)
                split = p.split or (splits[0] if len(splits) == 1 else "validation" if "validation" in splits else None)
                if split not in loaded:
                    raise EvaluationError(
                        f"data config '{name}': saved dataset has no split '{split or p.split}'; splits: {', '.join(splits)}"
                    )
                loaded = loaded[split]
        else:
            split = p.split or ("train" if isinstance(p.data_files, (str, list)) else "validation")
            try:
                loaded = datasets.load_dataset(
                    p.data_name,
                    name=p.subset,
                    data_files=p.data_files,
                    data_dir=p.data_dir,
                    split=split,
                    revision=p.revision,
                    keep_in_memory=True,
                )
            except (ConnectionError, OSError) as exc:
                if context.allow_download:
                    raise
                raise EvaluationError(
                    f"data config '{name}': '{p.data_name}' is not in the local Hugging Face cache "
                    f"({first_line(exc)}); point data_name at local files, or allow downloads with "
                    '"allow_download": true or --allow-download'
                ) from None
        if p.col_filters:
            filters = dict(p.col_filters)
            loaded = loaded.filter(lambda row: all(row[k] == v for k, v in filters.items()))
        return loaded.with_format("arrow")[:]

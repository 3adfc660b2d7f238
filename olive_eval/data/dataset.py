"""Labelled data from a local file or saved dataset, held as numpy columns and sliced into batches."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from olive_eval.config.data import HuggingfaceDataConfig
from olive_eval.errors import EvaluationError


@dataclass
class LabelledData:
    """Model inputs keyed by input name (or by column when the mapping is left to the runtime), and labels."""

    name: str
    inputs: dict[str, np.ndarray]
    labels: np.ndarray | None
    batch_size: int

    def __len__(self) -> int:
        return len(next(iter(self.inputs.values())))

    def batches(self) -> Iterator[tuple[dict[str, np.ndarray], np.ndarray | None]]:
        n, bs = len(self), self.batch_size
        for start in range(0, n, bs):
            stop = min(start + bs, n)
            labels = None if self.labels is None else self.labels[start:stop]
            yield {k: v[start:stop] for k, v in self.inputs.items()}, labels

    def first_batch(self) -> dict[str, np.ndarray]:
        return next(self.batches())[0]


#: Builders read straight with pyarrow: importing ``datasets`` costs a second or more, and for local
#: json, csv and parquet files it would only hand the same Arrow table back.
_ARROW_READERS = ("json", "csv", "parquet")


def load_table(dc: HuggingfaceDataConfig) -> pa.Table:
    """The data config's split as one Arrow table."""
    load = dc.load_dataset_config
    try:
        if (
            load.data_name in _ARROW_READERS
            and load.data_files is not None
            and load.subset is None
            and not load.data_dir
        ):
            return _read_files(load.data_name, _split_files(load.data_files, load.split, dc.name))
        return _load_with_datasets(dc)
    except EvaluationError:
        raise
    except Exception as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EvaluationError(f"data config '{dc.name}': cannot load dataset '{load.data_name}': {first_line}") from exc


def _split_files(files: str | list[str] | dict[str, str | list[str]], split: str, name: str) -> list[str]:
    """The files of ``split``: a plain file list is the ``train`` split, as ``datasets`` has it."""
    if isinstance(files, dict):
        if split not in files:
            raise EvaluationError(
                f"data config '{name}': data_files has no split '{split}'; splits: {', '.join(files)}"
            )
        files = files[split]
    elif split != "train":
        raise EvaluationError(
            f"data config '{name}': split '{split}' is not in data_files (a plain file list is the 'train' split; "
            "give a {split: files} mapping)"
        )
    return [files] if isinstance(files, str) else list(files)


def _read_files(builder: str, files: list[str]) -> pa.Table:
    tables = [_read_file(builder, f) for f in files]
    return pa.concat_tables(tables, promote_options="default") if len(tables) > 1 else tables[0]


def _read_file(builder: str, path: str) -> pa.Table:
    if builder == "parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).read()  # read_table goes through pyarrow.dataset, which imports pandas
    if builder == "csv":
        import pyarrow.csv as pcsv

        return pcsv.read_csv(path)
    with open(path, "rb") as handle:
        head = handle.read(64).lstrip()
    if head.startswith(b"["):  # one JSON array of records rather than JSON lines
        with open(path, encoding="utf-8") as handle:
            return pa.Table.from_pylist(json.load(handle))
    import pyarrow.json as pjson

    return pjson.read_json(path, read_options=pjson.ReadOptions(block_size=1 << 24))


def _load_with_datasets(dc: HuggingfaceDataConfig) -> pa.Table:
    import datasets

    datasets.disable_progress_bars()
    load = dc.load_dataset_config
    if load.data_files is None and Path(load.data_name).is_dir():
        loaded = datasets.load_from_disk(load.data_name)
        if isinstance(loaded, datasets.DatasetDict):
            if load.split not in loaded:
                raise EvaluationError(
                    f"data config '{dc.name}': saved dataset has no split '{load.split}'; splits: {', '.join(loaded)}"
                )
            loaded = loaded[load.split]
    else:
        loaded = datasets.load_dataset(
            load.data_name,
            name=load.subset,
            data_files=load.data_files,
            data_dir=load.data_dir,
            split=load.split,
            keep_in_memory=True,  # the columns become numpy arrays anyway; skip the on-disk arrow cache
        )
    return loaded.with_format("arrow")[:]


def _arrow_to_numpy(array: pa.Array) -> np.ndarray:
    """Arrow → numpy without a Python object per row: list columns become extra dimensions."""
    kind = array.type
    if pa.types.is_fixed_size_list(kind):
        inner = _arrow_to_numpy(array.flatten())
        return inner.reshape(len(array), kind.list_size, *inner.shape[1:])
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        lengths = np.diff(_flat_to_numpy(array.offsets))
        if len(lengths) and not np.all(lengths == lengths[0]):
            raise ValueError("rows have different lengths")
        inner = _arrow_to_numpy(array.flatten())
        return inner.reshape(len(array), int(lengths[0]) if len(lengths) else 0, *inner.shape[1:])
    return _flat_to_numpy(array)


#: Arrow primitive types read straight from their data buffer.
_NUMPY_OF_ARROW = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "halffloat": np.float16, "float": np.float32, "double": np.float64,
}  # fmt: skip


def _valid(array: pa.Array) -> np.ndarray:
    bits = np.frombuffer(array.buffers()[0], dtype=np.uint8)
    return np.unpackbits(bits, bitorder="little")[array.offset : array.offset + len(array)].astype(bool)


def _flat_to_numpy(array: pa.Array) -> np.ndarray:
    """A flat Arrow array as numpy, from its buffers: pyarrow's own ``to_numpy`` imports pandas (a second
    of startup). Numeric nulls become NaN; other types go through Python objects."""
    name = str(array.type)
    if name in _NUMPY_OF_ARROW:
        dtype = np.dtype(_NUMPY_OF_ARROW[name])
        values = np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)
        if array.null_count:
            values = values.astype(np.float64)
            values[~_valid(array)] = np.nan
        return values
    if name == "bool" and not array.null_count:
        bits = np.frombuffer(array.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little")[array.offset : array.offset + len(array)].astype(bool)
    values = array.to_pylist()
    if values and all(isinstance(v, str) for v in values):
        return np.array(values, dtype=object)
    return np.array(values)


def _column(table: pa.Table, name: str) -> np.ndarray:
    try:
        return _arrow_to_numpy(table.column(name).combine_chunks())
    except ValueError:
        raise EvaluationError(f"column '{name}' holds rows of different lengths; pad them to one length") from None


def load_labelled_data(dc: HuggingfaceDataConfig, *, need_labels: bool) -> LabelledData:
    table = load_table(dc)
    pre = dc.pre_process_data_config
    columns = list(table.column_names)
    if pre.max_samples is not None:
        table = table.slice(0, min(pre.max_samples, table.num_rows))
    labels = None
    if pre.label_col is not None:
        if pre.label_col not in columns:
            raise EvaluationError(
                f"data config '{dc.name}': the dataset has no label column '{pre.label_col}'; columns: {', '.join(columns)}"
            )
        labels = _column(table, pre.label_col)
    elif need_labels:
        raise EvaluationError(
            f"data config '{dc.name}': its metrics need labels; set pre_process_data_config.label_col "
            f"(columns: {', '.join(columns)})"
        )
    if pre.input_cols is None:
        mapping = {c: c for c in columns if c != pre.label_col}
    elif isinstance(pre.input_cols, dict):
        mapping = dict(pre.input_cols)
    else:
        mapping = {c: c for c in pre.input_cols}
    missing = [c for c in mapping if c not in columns]
    if missing:
        raise EvaluationError(
            f"data config '{dc.name}': input column '{missing[0]}' is not in the dataset; columns: {', '.join(columns)}"
        )
    if table.num_rows == 0:
        raise EvaluationError(f"data config '{dc.name}': the dataset has no rows")
    inputs = {name: _column(table, column) for column, name in mapping.items()}
    if not inputs:
        raise EvaluationError(f"data config '{dc.name}': the dataset has no input columns")
    return LabelledData(dc.name, inputs, labels, dc.dataloader_config.batch_size)

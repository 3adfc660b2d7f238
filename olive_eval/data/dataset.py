"""Labelled data from a local file or saved dataset, held as numpy columns and sliced into batches."""

from __future__ import annotations

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


def _load_dataset(dc: HuggingfaceDataConfig):  # -> datasets.Dataset
    import datasets

    datasets.disable_progress_bars()
    load = dc.load_dataset_config
    try:
        if load.data_files is None and Path(load.data_name).is_dir():
            loaded = datasets.load_from_disk(load.data_name)
            if isinstance(loaded, datasets.DatasetDict):
                if load.split not in loaded:
                    raise EvaluationError(
                        f"data config '{dc.name}': saved dataset has no split '{load.split}'; splits: {', '.join(loaded)}"
                    )
                loaded = loaded[load.split]
            return loaded
        return datasets.load_dataset(
            load.data_name,
            name=load.subset,
            data_files=load.data_files,
            data_dir=load.data_dir,
            split=load.split,
            keep_in_memory=True,  # the columns become numpy arrays anyway; skip the on-disk arrow cache
        )
    except EvaluationError:
        raise
    except Exception as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EvaluationError(f"data config '{dc.name}': cannot load dataset '{load.data_name}': {first_line}") from exc


def _arrow_to_numpy(array: pa.Array) -> np.ndarray:
    """Arrow → numpy without a Python object per row: list columns become extra dimensions."""
    kind = array.type
    if pa.types.is_fixed_size_list(kind):
        inner = _arrow_to_numpy(array.flatten())
        return inner.reshape(len(array), kind.list_size, *inner.shape[1:])
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        lengths = np.diff(np.asarray(array.offsets))
        if len(lengths) and not np.all(lengths == lengths[0]):
            raise ValueError("rows have different lengths")
        inner = _arrow_to_numpy(array.flatten())
        return inner.reshape(len(array), int(lengths[0]) if len(lengths) else 0, *inner.shape[1:])
    return array.to_numpy(zero_copy_only=False)


def _column(ds, name: str) -> np.ndarray:
    chunked = ds.with_format("arrow")[name]
    try:
        return _arrow_to_numpy(chunked.combine_chunks())
    except ValueError:
        raise EvaluationError(f"column '{name}' holds rows of different lengths; pad them to one length") from None


def load_labelled_data(dc: HuggingfaceDataConfig, *, need_labels: bool) -> LabelledData:
    ds = _load_dataset(dc)
    pre = dc.pre_process_data_config
    columns = list(ds.column_names)
    if pre.max_samples is not None:
        ds = ds.select(range(min(pre.max_samples, len(ds))))
    labels = None
    if pre.label_col is not None:
        if pre.label_col not in columns:
            raise EvaluationError(
                f"data config '{dc.name}': the dataset has no label column '{pre.label_col}'; columns: {', '.join(columns)}"
            )
        labels = _column(ds, pre.label_col)
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
    inputs = {name: _column(ds, column) for column, name in mapping.items()}
    if not inputs or len(ds) == 0:
        raise EvaluationError(f"data config '{dc.name}': the dataset has no input columns or no rows")
    return LabelledData(dc.name, inputs, labels, dc.dataloader_config.batch_size)

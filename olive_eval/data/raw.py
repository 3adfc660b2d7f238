"""Olive's ``RawDataContainer`` and ``raw_dataset``: inputs stored as raw binary files, one folder per input.

``data_dir`` holds a folder per input (``input_dirs``, default the input names); each folder holds one file
per sample, with the same file names in every folder. A file is the flat values of an array of its input's
``input_shapes`` entry in ``input_types`` (default float32), read as Olive reads it (``numpy.fromfile``); a
file ending in ``.npy`` is read with its header (``numpy.load``) and must hold that shape. The files are
taken in the order of ``input_order_file`` (a file name a line, in ``data_dir``), else sorted by name,
those of the first input's folder ending in ``input_suffix``. ``annotations_file`` (a ``.npy`` in
``data_dir``) holds one label per file: it becomes the ``label`` column, the references.

Olive's shapes include the batch dimension, and so does each item here: one file, of its ``input_shapes``
shape, with its annotation. The container's ``no_auto_batch_dataloader`` passes each file as it is, so the
model is called on exactly the file's shape, as Olive does; ``default_dataloader`` stacks ``batch_size`` files
on a new first axis, as Olive's does. Olive's placeholder label 0 is not made up: without annotations there
are no references.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import numpy as np
import pyarrow as pa
from pydantic import Field, model_validator

from olive_eval.data.components import Component, ComponentParams, register_component
from olive_eval.data.containers import Container
from olive_eval.data.sources import MAX_DUMMY_ELEMENTS, DataContext, Source, arrow_column
from olive_eval.errors import EvaluationError

#: Files read at a time (their examples make one chunk of the dataset).
FILES_PER_CHUNK = 256
#: The references column made from ``annotations_file``.
LABEL = "label"


class RawDatasetParams(ComponentParams):
    """Olive's parameters of ``raw_dataset``."""

    data_dir: str = Field(
        description="Folder holding one sub-folder of files per input (and the order/annotations files)"
    )
    input_names: list[str] = Field(min_length=1)
    input_shapes: list[list[int]] = Field(description="Each input's shape per file, batch dimension first")
    input_types: list[str] | None = Field(None, description="numpy dtypes; default float32")
    input_dirs: list[str] | None = Field(None, description="Sub-folders of data_dir; default the input names")
    input_suffix: str | None = Field(None, description="Only the files ending in it (e.g. '.raw')")
    input_order_file: str | None = None
    annotations_file: str | None = None

    @model_validator(mode="after")
    def _check(self) -> RawDatasetParams:
        n = len(self.input_names)
        for key in ("input_shapes", "input_types", "input_dirs"):
            value = getattr(self, key)
            if value is not None and len(value) != n:
                raise ValueError(f"{key} has {len(value)} entries for {n} input_names")
        for shape in self.input_shapes:
            if not shape or any(d < 1 for d in shape) or math.prod(shape) > MAX_DUMMY_ELEMENTS:
                raise ValueError(
                    f"input shape {shape} must have positive dimensions and at most {MAX_DUMMY_ELEMENTS:,} elements"
                )
        for t in self.input_types or []:
            try:
                np.dtype(t)
            except TypeError:
                raise ValueError(f"input type '{t}' is not a numpy dtype (e.g. float32, int64)") from None
        if LABEL in self.input_names and self.annotations_file:
            raise ValueError(f"an input is named '{LABEL}', the column of the annotations; rename it")
        return self


class RawSource(Source):
    """The raw files, a chunk of files at a time."""

    def __init__(self, name: str, p: RawDatasetParams) -> None:
        self.name, self.p = name, p
        self.root = Path(p.data_dir)
        where = f"data config '{name}'"
        if not self.root.is_dir():
            raise EvaluationError(f"{where}: raw data folder not found: {self.root}")
        self.types = [np.dtype(t) for t in (p.input_types or ["float32"] * len(p.input_names))]
        self.dirs = [self.root / d for d in (p.input_dirs or p.input_names)]
        for folder, input_name in zip(self.dirs, p.input_names, strict=True):
            if not folder.is_dir():
                raise EvaluationError(f"{where}: no folder {folder} for input '{input_name}'")
        self.files = self._order(where)
        if not self.files:
            raise EvaluationError(f"{where}: no input files in {self.dirs[0]}")
        self.annotations = self._annotations(where)
        self.label = LABEL if self.annotations is not None else None
        self.columns = [*p.input_names, *([LABEL] if self.label else [])]

    @property
    def num_rows(self) -> int:
        return len(self.files)

    def chunks(self) -> Iterator[pa.Table]:
        for start in range(0, len(self.files), FILES_PER_CHUNK):
            names = self.files[start : start + FILES_PER_CHUNK]
            columns = {
                input_name: np.stack([self._read(folder / f, shape, dtype) for f in names])
                for input_name, folder, shape, dtype in zip(
                    self.p.input_names, self.dirs, self.p.input_shapes, self.types, strict=True
                )
            }
            if self.annotations is not None:
                columns[LABEL] = self.annotations[start : start + len(names)]
            yield pa.table({k: arrow_column(v) for k, v in columns.items()})

    def _order(self, where: str) -> list[str]:
        p = self.p
        if p.input_order_file is not None:
            path = self.root / p.input_order_file
            if not path.is_file():
                raise EvaluationError(f"{where}: input_order_file not found: {path}")
            return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        skip = {p.input_order_file, p.annotations_file}
        pattern = f"*{p.input_suffix}" if p.input_suffix else "*"
        return sorted(f.name for f in self.dirs[0].glob(pattern) if f.is_file() and f.name not in skip)

    def _annotations(self, where: str) -> np.ndarray | None:
        if self.p.annotations_file is None:
            return None
        path = self.root / self.p.annotations_file
        if not path.is_file():
            raise EvaluationError(f"{where}: annotations_file not found: {path}")
        try:
            annotations = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise EvaluationError(f"{where}: cannot read annotations {path} as a .npy array: {exc}") from None
        if annotations.ndim == 0 or len(annotations) != len(self.files):
            count = 0 if annotations.ndim == 0 else len(annotations)
            raise EvaluationError(
                f"{where}: {path.name} holds {count} annotations for {len(self.files)} input files; one per file is needed"
            )
        return annotations

    def _read(self, path: Path, shape: list[int], dtype: np.dtype) -> np.ndarray:
        where = f"data config '{self.name}'"
        if not path.is_file():
            raise EvaluationError(f"{where}: input file missing: {path} (every input folder needs the same files)")
        try:
            data = np.load(path, allow_pickle=False) if path.suffix == ".npy" else np.fromfile(path, dtype=dtype)
        except (OSError, ValueError) as exc:
            raise EvaluationError(f"{where}: cannot read {path}: {exc}") from None
        if path.suffix == ".npy":
            if list(data.shape) != list(shape):
                raise EvaluationError(
                    f"{where}: {path} holds an array of shape {list(data.shape)}; input_shapes gives {shape}"
                )
            return data.astype(dtype, copy=False)
        if data.size != math.prod(shape):
            raise EvaluationError(
                f"{where}: {path} holds {data.size} {dtype} values; input shape {shape} needs {math.prod(shape)}"
            )
        return data.reshape(shape)


@register_component("dataset", "raw_dataset")
class RawDataset(Component):
    Params = RawDatasetParams

    def open(self, name: str, context: DataContext) -> Source:
        return RawSource(name, self.params)  # type: ignore[arg-type]


@register_component("container", "RawDataContainer")
class RawDataContainer(Container):
    """Olive's: raw_dataset, its inputs as they are, one example a call (the shapes hold the batch dimension)."""

    defaults: ClassVar[dict[str, str]] = {
        "load_dataset_config": "raw_dataset",
        "pre_process_data_config": "skip_pre_process",
        "post_process_data_config": "post_process",
        "dataloader_config": "no_auto_batch_dataloader",
    }

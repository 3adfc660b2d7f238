"""``huggingface_dataset``: a ``datasets`` builder on local files, a folder saved with ``save_to_disk``, or a hub name
found in the local Hugging Face cache. Nothing is downloaded unless the run allows it.

json, csv and parquet files are read with pyarrow directly, in a streaming way
(:class:`~olive_eval.data.sources.FileSource`): ``datasets`` costs a second to import and would hand back the same
table. ``limit`` (N rows, or a fraction with ``shuffle.seed``) and ``shuffle`` select a reproducible subset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import Field, model_validator

from olive_eval.data.components import Component, ComponentParams, register_component
from olive_eval.data.sources import DataContext, FileSource, Source, Subset, TableSource
from olive_eval.errors import EvaluationError, first_line
from olive_eval.huggingface_env import hub_dataset_cached, offline
from olive_eval.strict_model import StrictModel, closest

#: Builders read straight with pyarrow.
ARROW_BUILDERS = ("json", "csv", "parquet")
#: Builders known without importing ``datasets``.
COMMON_BUILDERS = ("csv", "json", "parquet", "text", "imagefolder", "audiofolder")


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

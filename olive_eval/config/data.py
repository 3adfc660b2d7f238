"""Data configs, in Olive's shape: a container type plus load / pre-process / post-process / dataloader parts.

Olive writes each part as ``{"type": ..., "params": {...}}`` or with the params inline; both are accepted.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from olive_eval.strict_model import LaxPath, StrictModel, closest


class _Component(StrictModel):
    """A data pipeline part. ``params`` (Olive's nested form) is merged into the part's own keys."""

    @model_validator(mode="before")
    @classmethod
    def _inline_params(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("params"), dict):
            merged = {k: v for k, v in data.items() if k != "params"}
            for key, value in data["params"].items():
                if key in merged:
                    raise ValueError(f"'{key}' is given both inline and under 'params'")
                merged[key] = value
            return merged
        return data


class LoadDatasetConfig(_Component):
    """Local data through ``datasets``: a builder name (json, csv, parquet) with files, or a saved dataset."""

    type: Literal["huggingface_dataset"] = "huggingface_dataset"
    data_name: str = Field(
        description="'json', 'csv', 'parquet', or the directory of a dataset saved with save_to_disk"
    )
    data_files: str | list[str] | dict[str, str | list[str]] | None = None
    data_dir: str | None = None
    subset: str | None = None
    split: str = "train"

    def source_problem(self) -> tuple[str, str] | None:
        """``(key, what is wrong)`` when the data cannot be read from this machine, checked before any model runs.

        ``data_name`` must be a local folder (``save_to_disk``) or a packaged builder with local files;
        anything else would go to the Hugging Face hub, which a run never does on its own.
        """
        if Path(self.data_name).is_dir():
            return None
        builders = COMMON_BUILDERS if self.data_name in COMMON_BUILDERS else packaged_builders()
        if self.data_name not in builders:
            if Path(self.data_name).is_file():
                guess = Path(self.data_name).suffix.lstrip(".").replace("jsonl", "json")
                hint = f"data_name '{guess}' with data_files" if guess in builders else "a builder with data_files"
                return "data_name", f"'{self.data_name}' is a file; read it with {hint}"
            guess = closest(self.data_name, builders) or ("json" if "json" in self.data_name else None)
            hint = f"did you mean '{guess}'? " if guess else ""
            return "data_name", (
                f"'{self.data_name}' is neither a dataset builder nor a local folder; {hint}for local files use "
                "json, csv, parquet or text with data_files; hub datasets are not downloaded"
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


#: Elements per dummy input (a float32 input this size is 1 GiB).
MAX_DUMMY_ELEMENTS = 1 << 28


#: Builders known without importing ``datasets`` (which takes a second or more).
COMMON_BUILDERS = ("csv", "json", "parquet", "text")


def packaged_builders() -> list[str]:
    """The ``datasets`` builders that read local files (json, csv, parquet, text, imagefolder, ...)."""
    try:
        from datasets.packaged_modules import _PACKAGED_DATASETS_MODULES
    except ImportError:  # a datasets release that moved it: the builders every release has
        return ["arrow", "audiofolder", "csv", "imagefolder", "json", "pandas", "parquet", "text"]
    return sorted(_PACKAGED_DATASETS_MODULES)


def _files(files: str | list[str] | dict[str, str | list[str]] | None) -> list[str]:
    if files is None:
        return []
    if isinstance(files, str):
        return [files]
    if isinstance(files, list):
        return list(files)
    return [f for v in files.values() for f in _files(v)]


class DummyDatasetConfig(_Component):
    """Random inputs of fixed shapes for latency-only metrics; read from the ONNX graph when omitted."""

    type: Literal["dummy_dataset"] = "dummy_dataset"
    input_names: list[str] | None = None
    input_shapes: list[list[int]] | None = None
    input_types: list[str] | None = None
    max_samples: int = Field(32, ge=1)
    seed: int = 0

    @model_validator(mode="after")
    def _same_lengths(self) -> DummyDatasetConfig:
        lengths = {len(v) for v in (self.input_names, self.input_shapes, self.input_types) if v is not None}
        if len(lengths) > 1:
            raise ValueError("input_names, input_shapes and input_types must have the same length")
        for shape in self.input_shapes or []:
            if any(d < 1 for d in shape) or math.prod(shape) > MAX_DUMMY_ELEMENTS:
                raise ValueError(
                    f"input shape {shape} must have positive dimensions and at most {MAX_DUMMY_ELEMENTS:,} elements"
                )
        return self


class PreProcessConfig(_Component):
    """Which dataset columns feed which model inputs, and which column holds the label.

    ``input_cols`` is a list of column names (used as model input names; a single column feeds a
    single-input model whatever its name) or a mapping ``{column: model input name}``.
    """

    type: Literal["column_mapping"] = "column_mapping"
    input_cols: list[str] | dict[str, str] | None = None
    label_col: str | None = None
    max_samples: int | None = Field(None, ge=1)


class PostProcessConfig(_Component):
    """Turns raw model output (``logits``) into ``preds``. Olive's metrics read one or the other."""

    type: Literal["identity", "argmax", "softmax", "sigmoid"] = "identity"
    output_name: str | int = Field(0, description="Which model output to keep: its name or index.")


class DataLoaderConfig(_Component):
    type: Literal["default_dataloader"] = "default_dataloader"
    batch_size: int = Field(1, ge=1)


class _DataConfigBase(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9_\-.]+$")
    user_script: LaxPath | None = None
    script_dir: LaxPath | None = None
    post_process_data_config: PostProcessConfig = Field(default_factory=PostProcessConfig)
    dataloader_config: DataLoaderConfig = Field(default_factory=DataLoaderConfig)


class HuggingfaceDataConfig(_DataConfigBase):
    type: Literal["HuggingfaceContainer"] = "HuggingfaceContainer"
    load_dataset_config: LoadDatasetConfig
    pre_process_data_config: PreProcessConfig = Field(default_factory=PreProcessConfig)


class DummyDataConfig(_DataConfigBase):
    type: Literal["DummyDataContainer"]
    load_dataset_config: DummyDatasetConfig = Field(default_factory=DummyDatasetConfig)


def _data_config_tag(data: Any) -> str:
    if isinstance(data, dict):
        return str(data.get("type", "HuggingfaceContainer"))
    return str(getattr(data, "type", "HuggingfaceContainer"))


DataConfig = Annotated[
    Annotated[HuggingfaceDataConfig, Tag("HuggingfaceContainer")]
    | Annotated[DummyDataConfig, Tag("DummyDataContainer")],
    Discriminator(_data_config_tag),
]

"""``HfModel``'s config: where a transformers model's files are (a local folder, or a hub name in the local Hugging
Face cache), its task, load and generation options, and what is wrong with them before anything loads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from olive_eval.huggingface_env import hf_cache_root
from olive_eval.runtimes.base import ModelConfig
from olive_eval.runtimes.generation_kwargs import OpenGenerationKwargs
from olive_eval.runtimes.torch_threads import threads_field
from olive_eval.strict_model import StrictModel
from olive_eval.tasks.base import get_task, task_problem
from olive_eval.tasks.call_mode import CallMode

__all__ = ["HfLoadKwargs", "HfModelConfig"]


class HfLoadKwargs(StrictModel):
    torch_dtype: Literal["auto", "float32", "float16", "bfloat16"] | None = None
    trust_remote_code: bool = False
    revision: str | None = None
    attn_implementation: str | None = None


class HfModelConfig(ModelConfig):
    type: Literal["HfModel"]
    model_path: str = Field(description="A local model folder, or a hub name found in the local Hugging Face cache.")
    task: str = Field(
        "text-generation",
        description="A registered task, in transformers' or Olive's spelling (text-classification, ner, "
        "text-generation, speech-transcription...): it picks the model class and how the model is called.",
    )
    load_kwargs: HfLoadKwargs = Field(default_factory=HfLoadKwargs)
    generation_kwargs: OpenGenerationKwargs = Field(
        default_factory=OpenGenerationKwargs, description="Passed to generate(); the common ones are bounded."
    )
    model_attributes: dict[str, Any] | None = None
    threads: int | None = threads_field()

    def display_name(self) -> str:
        return self.name or Path(self.model_path).name

    def resolve_paths(self, base: Path) -> None:
        if not Path(self.model_path).is_absolute() and (base / self.model_path).exists():
            self.model_path = str(base / self.model_path)

    def folder(self) -> Path | None:
        """The model's files: the folder given, or the cached snapshot of a hub name (None when not cached)."""
        local = Path(self.model_path)
        if local.is_dir():
            return local
        try:
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(self.model_path, "config.json", revision=self.load_kwargs.revision)
        except Exception:  # not a valid repo id
            return None
        return Path(found).parent if isinstance(found, str) else None

    def call_mode(self, decodes: bool | None) -> CallMode:
        return get_task(self.task).call_mode(decodes)

    def path_problem(self, allow_download: bool = False) -> tuple[str, str] | None:
        if (problem := task_problem(self.task)) is not None:
            return "task", problem
        if not get_task(self.task).model_classes:
            return "task", f"task '{self.task}' names no transformers model class, so an HfModel cannot load for it"
        folder = self.folder()
        if folder is None:
            if not _is_repo_id(self.model_path):
                return "model_path", f"folder not found: {self.model_path}"
            if allow_download:
                return None
            return "model_path", (
                f"'{self.model_path}' is not a local folder nor in the local Hugging Face cache "
                f"({_hub_cache()}); point model_path at a model folder, or allow downloads with "
                '"allow_download": true or --allow-download'
            )
        config_file = folder / "config.json"
        if not config_file.is_file():
            return "model_path", f"{folder} has no config.json: it is not a transformers model folder"
        config = json.loads(config_file.read_text())
        if "auto_map" in config and not self.load_kwargs.trust_remote_code:
            return "load_kwargs.trust_remote_code", (
                f"{self.model_path} ships its own model code (auto_map in config.json); set "
                "load_kwargs.trust_remote_code to true if you trust it"
            )
        return None

    def files(self) -> list[Path]:
        folder = self.folder()
        return [folder] if folder is not None else []

    def no_files_reason(self) -> str | None:
        if self.folder() is None:
            return f"'{self.model_path}' is neither a local folder nor in the Hugging Face cache, so there is nothing to measure"
        return None

    def processor_folder(self) -> Path | None:
        return self.folder() or Path(self.model_path)


def _is_repo_id(name: str) -> bool:
    """A hub name (``name`` or ``org/name``), not a path: "org/name" holds a slash but is no folder."""
    if name.startswith((".", "~", os.sep)) or (os.altsep and name.startswith(os.altsep)):
        return False
    try:
        from huggingface_hub.utils import validate_repo_id

        validate_repo_id(name)
    except Exception:  # not a valid repo id (or huggingface_hub is missing): a path
        return False
    return True


def _hub_cache() -> str:
    try:
        from huggingface_hub import constants

        return str(constants.HF_HUB_CACHE)
    except ImportError:
        return str(hf_cache_root() / "hub")

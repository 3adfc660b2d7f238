"""``PyTorchModel``'s config: a TorchScript or ``torch.export`` file, or a ``model_loader`` function in a
``model_script``, with the input names, shapes and types its files may not say, and what is wrong with them before
anything loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import model_validator

from olive_eval.runtimes.base import ModelConfig
from olive_eval.runtimes.torch_threads import threads_field
from olive_eval.strict_model import LaxPath, StrictModel

__all__ = ["IOConfig", "PyTorchModelConfig"]


class IOConfig(StrictModel):
    """Input names, shapes (batch dimension included) and types, for models whose files do not say."""

    input_names: list[str]
    input_shapes: list[list[int]] | None = None
    input_types: list[str] | None = None


class PyTorchModelConfig(ModelConfig):
    """A TorchScript or ``torch.export`` file, or ``model_loader`` in ``model_script`` returning a module."""

    type: Literal["PyTorchModel"]
    model_path: LaxPath | None = None
    model_loader: str | None = None
    model_script: LaxPath | None = None
    script_dir: LaxPath | None = None
    io_config: IOConfig | None = None
    threads: int | None = threads_field()

    @model_validator(mode="after")
    def _source(self) -> PyTorchModelConfig:
        if self.model_loader is None and self.model_path is None:
            raise ValueError("a PyTorchModel needs model_path, or model_loader with model_script")
        if self.model_loader is not None and self.model_script is None:
            raise ValueError("model_loader names a function in model_script, which is missing")
        return self

    def display_name(self) -> str:
        if self.name:
            return self.name
        if self.model_path is not None:
            return self.model_path.stem
        return str(self.model_loader)

    def path_problem(self, allow_download: bool = False) -> tuple[str, str] | None:
        if self.model_script is not None and not self.model_script.is_file():
            if self.model_script.is_dir():
                return "model_script", f"{self.model_script} is a directory, not a Python file"
            return "model_script", f"file not found: {self.model_script}"
        if self.model_path is None or self.model_path.exists():
            if self.model_path is not None and self.model_path.is_dir() and self.model_loader is None:
                return "model_path", (
                    f"{self.model_path} is a directory; a PyTorchModel without model_loader needs a TorchScript "
                    "or torch.export (.pt2) file"
                )
            return None
        return "model_path", f"file not found: {self.model_path}"

    def files(self) -> list[Path]:
        """The model_path; a model_script is code, not the model."""
        return [self.model_path] if self.model_path is not None else []

    def no_files_reason(self) -> str | None:
        if self.model_path is None:
            return "a PyTorchModel built by its model_loader without model_path has no files to measure"
        return None

    def user_functions(self) -> list[tuple[str, Path, str, Path | None]]:
        if self.model_loader is None or self.model_script is None:
            return []
        return [("model_loader", self.model_script, self.model_loader, self.script_dir)]

"""``PythonModel``: any Python object as a model, from a loader function in the user's script.

The loader returns an object with ``__call__(batch)`` or ``predict(batch)``. It receives the pre-processed
batch, a dict of column → list or array (every column: inputs, references, metadata), and returns one
prediction per example (numbers, arrays, strings or dicts). This evaluates anything: an HTTP model,
pocketsphinx, tesseract, llama.cpp. Accuracy, latency, throughput and per-batch timing all work on it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from olive_eval.data.batch import Batch, Outputs
from olive_eval.errors import EvaluationError
from olive_eval.runtimes.base import BoundCall, Device, ModelConfig, PredictCall, Runtime, runtime_registry
from olive_eval.runtimes.providers import ProviderSpec
from olive_eval.strict_model import LaxPath, StrictModel
from olive_eval.user_module import call_user, load_function


class PythonModelConfig(ModelConfig):
    type: Literal["PythonModel"]
    user_script: LaxPath = Field(description="The script that defines model_loader.")
    model_loader: str = Field(description="A function of user_script: model_loader(model_path) -> the model.")
    model_path: str | None = Field(None, description="Handed to the loader (a file, a folder, a URL...).")
    script_dir: LaxPath | None = None
    processor_path: LaxPath | None = Field(None, description="A tokenizer/processor folder for pre/post-processing.")

    def display_name(self) -> str:
        return self.name or self.model_loader

    def path_problem(self, allow_download: bool = False) -> tuple[str, str] | None:
        if not self.user_script.is_file():
            return "user_script", f"file not found: {self.user_script}"
        return None

    def files(self) -> list[Path]:
        """The model_path (a file or a folder), as the loader gets it; the user_script is code, not the model."""
        return [Path(self.model_path)] if self.no_files_reason() is None else []

    def no_files_reason(self) -> str | None:
        if self.model_path is None:
            return "a PythonModel without model_path has no files to measure"
        if not Path(self.model_path).exists():
            return f"model_path '{self.model_path}' is not a file or folder on disk, so there is nothing to measure"
        return None

    def processor_folder(self) -> Path | None:
        return self.processor_path

    def user_functions(self) -> list[tuple[str, Path, str, Path | None]]:
        return [("model_loader", self.user_script, self.model_loader, self.script_dir)]


class PythonRuntime(Runtime):
    model_type = "PythonModel"
    Config = PythonModelConfig
    settings_key = "python"

    def __init__(self, obj: Any, call: Callable[[dict[str, Any]], Any], where: str) -> None:
        self.model = obj
        self.user_call = call
        self.where = where
        self._batches = 0

    @classmethod
    def load(
        cls,
        model_config: Any,
        device: Device,
        execution_providers: list[ProviderSpec],
        settings: StrictModel | None = None,
    ) -> PythonRuntime:
        config: PythonModelConfig = model_config
        loader = load_function(config.user_script, config.model_loader, config.script_dir)
        where = f"model_loader '{config.model_loader}' in {config.user_script}"
        obj = call_user(loader, where, (config.model_path,), {})
        call = obj if callable(obj) else getattr(obj, "predict", None)
        if not callable(call):
            raise EvaluationError(
                f"{where} returned {type(obj).__name__}, which has neither __call__(batch) nor predict(batch)"
            )
        return cls(obj, call, f"model '{config.display_name()}' ({type(obj).__name__})")

    def predict(self, batch: Batch) -> Outputs:
        self._batches += 1
        result = call_user(self.user_call, self.where, (dict(batch.columns),), {})
        if isinstance(result, np.ndarray) and result.ndim >= 1:
            predictions: Any = result
        elif isinstance(result, (list, tuple)):
            predictions = list(result)
        else:
            raise EvaluationError(
                f"{self.where} returned {type(result).__name__} for the batch of examples {batch.start}.."
                f"{batch.start + batch.size - 1}; it must return one prediction per example (a list)"
            )
        if len(predictions) != batch.size:
            raise EvaluationError(
                f"{self.where} returned {len(predictions)} predictions for the batch of {batch.size} examples "
                f"{batch.start}..{batch.start + batch.size - 1}"
            )
        return {"prediction": predictions}

    def bind(self, batch: Batch) -> BoundCall:
        return PredictCall(self, batch)

    def output_names(self) -> list[str]:
        return ["prediction"]

    def describe(self) -> dict[str, Any]:
        return {"runtime": "python", "object": f"{type(self.model).__module__}.{type(self.model).__qualname__}"}


runtime_registry.register("PythonModel", PythonRuntime)

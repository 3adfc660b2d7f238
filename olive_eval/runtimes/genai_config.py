"""``GenAIModel``'s config: an ONNX Runtime GenAI model folder, its generation options in transformers' names and
GenAI's own, its execution providers; what is wrong with them before anything loads, and the search options they
make for GenAI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from olive_eval.errors import EvaluationError, MissingDependencyError
from olive_eval.runtimes.base import ModelConfig
from olive_eval.runtimes.generation_kwargs import GenerationKwargs
from olive_eval.runtimes.providers import ProviderSpec, normalize_providers
from olive_eval.strict_model import LaxPath
from olive_eval.tasks.call_mode import CallMode

__all__ = ["CONFIG_FILE", "GenAIGeneration", "GenAIModelConfig", "genai", "search_options"]

CONFIG_FILE = "genai_config.json"


def genai() -> Any:
    """``onnxruntime_genai``, or an error naming the extra to install."""
    try:
        import onnxruntime_genai
    except ImportError:
        raise MissingDependencyError("onnxruntime-genai", "GenAIModel", "genai") from None
    return onnxruntime_genai


class GenAIGeneration(GenerationKwargs):
    """Generation options in transformers' names (bounded as an HfModel's), mapped onto GenAI's search options."""

    seed: int | None = Field(None, description="GenAI's random_seed, for sampling.")


class GenAIModelConfig(ModelConfig):
    type: Literal["GenAIModel"]
    model_path: LaxPath = Field(description=f"A folder with {CONFIG_FILE} (onnxruntime_genai.models.builder's output).")
    generation_kwargs: GenAIGeneration = Field(default_factory=GenAIGeneration)
    search_options: dict[str, int | float | bool] = Field(
        default_factory=dict, description="GenAI's own search options, passed as they are (after generation_kwargs)."
    )
    execution_provider: list[ProviderSpec] | None = Field(
        None, description="Providers for this model (ONNX Runtime's names); default: the run's."
    )

    @field_validator("execution_provider", mode="before")
    @classmethod
    def _providers(cls, value: Any) -> list[ProviderSpec] | None:
        return normalize_providers(value)

    def display_name(self) -> str:
        return self.name or Path(self.model_path).name

    def path_problem(self, allow_download: bool = False) -> tuple[str, str] | None:
        try:
            genai()
        except MissingDependencyError as exc:
            return "type", str(exc)
        folder = Path(self.model_path)
        if not folder.is_dir():
            return "model_path", f"folder not found: {folder}"
        if not (folder / CONFIG_FILE).is_file():
            return "model_path", (
                f"{folder} has no {CONFIG_FILE}: it is not an ONNX Runtime GenAI model folder "
                "(build one with python -m onnxruntime_genai.models.builder)"
            )
        try:
            self.genai_config()
        except EvaluationError as exc:
            return "model_path", str(exc)
        return None

    def files(self) -> list[Path]:
        return [Path(self.model_path)]

    def processor_folder(self) -> Path | None:
        return Path(self.model_path)

    def call_mode(self, decodes: bool | None) -> CallMode:
        """Always generating: a GenAI model has no other way of being called."""
        return CallMode.GENERATE

    def genai_config(self) -> dict[str, Any]:
        """The folder's ``genai_config.json``; a malformed one is an error naming the file and where it breaks."""
        file = Path(self.model_path) / CONFIG_FILE
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise EvaluationError(
                f"{file} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise EvaluationError(f"cannot read {file}: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
            raise EvaluationError(f'{file} has no "model" object: it is not an ONNX Runtime GenAI config')
        return data


#: transformers' ``top_k`` when sampling without one; GenAI's is the same but refuses a vocabulary smaller than it.
SAMPLING_TOP_K = 50


def search_options(
    config: GenAIModelConfig, prompt_tokens: int, context: int, vocab: int | None = None
) -> dict[str, Any]:
    """GenAI's search options for prompts of ``prompt_tokens`` tokens: ``max_length`` counts the prompt and
    stops at the model's context; sampling without a ``top_k`` keeps transformers' 50, or the whole vocabulary
    when it is smaller (``vocab``), as transformers' sampling does."""
    g = config.generation_kwargs
    options: dict[str, Any] = {}
    if g.max_new_tokens is not None:
        options["max_length"] = prompt_tokens + g.max_new_tokens
    elif g.max_length is not None:
        options["max_length"] = g.max_length
    if g.min_new_tokens is not None:
        options["min_length"] = prompt_tokens + g.min_new_tokens
    names = {"do_sample": "do_sample", "temperature": "temperature", "top_k": "top_k", "top_p": "top_p"}
    names |= {"num_beams": "num_beams", "repetition_penalty": "repetition_penalty", "seed": "random_seed"}
    options |= {genai_name: getattr(g, name) for name, genai_name in names.items() if getattr(g, name) is not None}
    options |= config.search_options
    options["max_length"] = min(int(options.get("max_length", context)), context)
    if options.get("do_sample") and "top_k" not in options:
        options["top_k"] = min(SAMPLING_TOP_K, vocab) if vocab else SAMPLING_TOP_K
    return options

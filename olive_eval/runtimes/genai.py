"""``GenAIModel``: an ONNX Runtime GenAI model (Olive's LLM output), a folder with ``genai_config.json`` built by
``onnxruntime_genai.models.builder``, run through ``onnxruntime-genai`` (the ``genai`` extra).

It always generates: a pass gives the generated token ids (``sequences``, end-of-sequence cut off, padded) for the
``decode`` post-process, as ``HfModel`` does. Prompts are the pre-process's left-padded ``input_ids``; each row
generates from its own unpadded prompt (GenAI takes no attention mask, so a padded row would attend to its pads),
rows of one length together. Generation options come from ``generation_kwargs`` (transformers' names) and
``search_options`` (GenAI's, passed as they are, last). The execution providers are the model's
``execution_provider`` or the run's, checked against what this onnxruntime-genai has: none is silently replaced.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator

from olive_eval.data.batch import Batch, Outputs
from olive_eval.errors import EvaluationError, MissingDependencyError
from olive_eval.runtimes.base import BoundCall, Device, Emits, ModelConfig, PredictCall, Runtime, runtime_registry
from olive_eval.runtimes.generation_kwargs import GenerationKwargs
from olive_eval.runtimes.providers import ProviderSpec, normalize_providers
from olive_eval.runtimes.streaming import StreamingCall
from olive_eval.strict_model import LaxPath, StrictModel
from olive_eval.tasks.call_mode import CallMode
from olive_eval.tasks.runtime_outputs import PROMPT_LENGTH, SEQUENCES

CONFIG_FILE = "genai_config.json"
#: The batch column a pass of repeats seeds each repeat with (``olive_eval.engine.repeats.SEED_COLUMN``): GenAI keeps
#: its own generator, so the seed becomes its ``random_seed``.
SEED_COLUMN = "repeat_seed"
#: ONNX Runtime's provider names → GenAI's, and the function that says whether this build has it.
PROVIDERS = {
    "CPUExecutionProvider": ("cpu", None),
    "CUDAExecutionProvider": ("cuda", "is_cuda_available"),
    "DmlExecutionProvider": ("dml", "is_dml_available"),
    "OpenVINOExecutionProvider": ("OpenVINO", "is_openvino_available"),
    "QNNExecutionProvider": ("QNN", "is_qnn_available"),
    "WebGpuExecutionProvider": ("WebGPU", "is_webgpu_available"),
}


def genai() -> Any:
    """``onnxruntime_genai``, or an error naming the extra to install."""
    try:
        import onnxruntime_genai
    except ImportError:
        raise MissingDependencyError("onnxruntime-genai", "GenAIModel", "genai") from None
    return onnxruntime_genai


def available_providers() -> list[str]:
    og = genai()
    return [name for name, (_, check) in PROVIDERS.items() if check is None or getattr(og, check, lambda: False)()]


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


class _Streamed(StreamingCall):
    """Exactly ``new_tokens`` tokens per row (min_length = max_length), every row of one prompt length."""

    def __init__(self, runtime: GenAIRuntime, prompts: np.ndarray, new_tokens: int) -> None:
        super().__init__()
        self._runtime, self._prompts, self._new = runtime, prompts, new_tokens

    @property
    def rows(self) -> int:
        return len(self._prompts)

    def _generate(self, on_token: Callable[[], None]) -> int:
        length = self._prompts.shape[1] + self._new
        self._runtime.generate(self._prompts, {"max_length": length, "min_length": length}, on_token)
        return int(self._prompts.size)

    def outputs(self) -> Outputs:
        return {}


class GenAIRuntime(Runtime):
    """An ``onnxruntime_genai.Model`` and its tokenizer's special ids."""

    model_type = "GenAIModel"
    Config = GenAIModelConfig
    settings_key = "genai"

    def __init__(self, model: Any, config: GenAIModelConfig, providers: list[str]) -> None:
        self.model, self.config, self.providers = model, config, providers
        spec = config.genai_config()["model"]
        self.context = int(spec.get("context_length") or 0) or 1 << 30
        self.vocab = int(spec.get("vocab_size") or 0) or None
        eos = spec.get("eos_token_id")
        self.eos = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
        self.pad = int(spec.get("pad_token_id") or next(iter(self.eos), 0))

    @classmethod
    def device_problem(cls, model_config: Any, device: Device, execution_providers: list[ProviderSpec]) -> str | None:
        try:
            available = available_providers()
        except MissingDependencyError:
            return None  # the model's path_problem names the extra to install
        if device == "gpu" and available == ["CPUExecutionProvider"]:
            return "this onnxruntime-genai build has no GPU provider (it has CPUExecutionProvider)"
        return None

    @classmethod
    def emits(cls, model_config: Any, generates: bool) -> Emits:
        return Emits((SEQUENCES, PROMPT_LENGTH), model_outputs=False)

    @classmethod
    def load(
        cls,
        model_config: Any,
        device: Device,
        execution_providers: list[ProviderSpec],
        settings: StrictModel | None = None,
    ) -> GenAIRuntime:
        config: GenAIModelConfig = model_config
        og = genai()
        available = available_providers()
        asked = list(config.execution_provider or execution_providers) or [("CPUExecutionProvider", {})]
        for name, _ in asked:
            if name not in available:
                raise EvaluationError(
                    f"execution provider '{name}' is not available in this onnxruntime-genai build; "
                    f"available: {', '.join(available)}"
                )
        built = _built_for(config)
        genai_names = {genai_name: name for name, (genai_name, _) in PROVIDERS.items()}
        missing = [p for p in built if genai_names.get(p, p) not in available]
        if missing:
            raise EvaluationError(
                f"{config.model_path} was built for the '{missing[0]}' provider ({CONFIG_FILE} "
                f"model.decoder.session_options.provider_options), which this onnxruntime-genai build lacks; "
                f"available: {', '.join(available)}"
            )
        og_config = og.Config(str(config.model_path))
        og_config.clear_providers()
        for name, options in asked:
            genai_name = PROVIDERS.get(name, (name, None))[0]
            if genai_name == "cpu":
                continue
            og_config.append_provider(genai_name)
            for key, value in options.items():
                og_config.set_provider_option(genai_name, key, str(value))
        try:
            model = og.Model(og_config)
        except RuntimeError as exc:
            raise EvaluationError(f"cannot load {config.model_path}: {str(exc).strip().splitlines()[0]}") from exc
        return cls(model, config, [name for name, _ in asked])

    # ------------------------------------------------------------------ generation
    def generate(
        self, prompts: np.ndarray, options: dict[str, Any], on_token: Callable[[], None] | None = None
    ) -> list[np.ndarray]:
        """The new tokens of each row of ``prompts`` (``[rows, length]``, one length), end-of-sequence cut off."""
        og = genai()
        params = og.GeneratorParams(self.model)
        params.set_search_options(batch_size=len(prompts), **options)
        generator = og.Generator(self.model, params)
        generator.append_tokens(np.ascontiguousarray(prompts, dtype=np.int32))
        while not generator.is_done():
            generator.generate_next_token()
            if on_token is not None:
                generator.get_next_tokens()  # on the host
                on_token()
        rows = []
        for i in range(len(prompts)):
            new = np.asarray(generator.get_sequence(i), dtype=np.int64)[prompts.shape[1] :]
            ends = np.flatnonzero(np.isin(new, list(self.eos)))
            rows.append(new[: ends[0]] if len(ends) else new)
        return rows

    def _prompts(self, batch: Batch) -> list[np.ndarray]:
        """Each row's own prompt: ``input_ids`` without the pre-process's padding."""
        if "input_ids" not in batch.columns:
            raise EvaluationError(
                f"model '{self.config.display_name()}' generates from input_ids, which the batch lacks (use the "
                "text_generation_huggingface_pre_process pre-process)"
            )
        ids = [np.asarray(row, dtype=np.int64).ravel() for row in batch.columns["input_ids"]]
        masks = batch.columns.get("attention_mask")
        if masks is not None:
            ids = [row[np.asarray(mask).ravel().astype(bool)] for row, mask in zip(ids, masks, strict=True)]
        for i, row in enumerate(ids):
            if len(row) >= self.context:
                raise EvaluationError(
                    f"example {batch.start + i}: its prompt has {len(row)} tokens, and model "
                    f"'{self.config.display_name()}' has a context of {self.context} ({CONFIG_FILE} "
                    "model.context_length); shorten the prompt (the pre-process's max_length)"
                )
        return ids

    def predict(self, batch: Batch) -> Outputs:
        prompts = self._prompts(batch)
        new: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * len(prompts)
        for length in sorted({len(p) for p in prompts}):
            index = [i for i, p in enumerate(prompts) if len(p) == length]
            options = search_options(self.config, length, self.context, self.vocab)
            if SEED_COLUMN in batch.columns:
                options["random_seed"] = int(np.asarray(batch.columns[SEED_COLUMN])[index[0]])
            for i, row in zip(index, self.generate(np.stack([prompts[i] for i in index]), options), strict=True):
                new[i] = row
        width = max((len(row) for row in new), default=0)
        sequences = np.full((len(new), width), self.pad, dtype=np.int64)
        for i, row in enumerate(new):
            sequences[i, : len(row)] = row
        return {SEQUENCES: sequences, PROMPT_LENGTH: np.zeros(len(new), dtype=np.int64)}

    def bind(self, batch: Batch) -> BoundCall:
        return PredictCall(self, batch)

    def bind_generation(self, batch: Batch, new_tokens: int) -> StreamingCall:
        prompts = self._prompts(batch)
        if len({len(p) for p in prompts}) != 1:
            raise EvaluationError("token-by-token timing needs prompts of one length (set prompt_tokens)")
        if len(prompts[0]) + new_tokens > self.context:
            raise EvaluationError(
                f"{len(prompts[0])} prompt tokens and {new_tokens} new tokens exceed model "
                f"'{self.config.display_name()}''s context of {self.context} ({CONFIG_FILE} model.context_length)"
            )
        return _Streamed(self, np.stack(prompts), new_tokens)

    def describe(self) -> dict[str, Any]:
        return {
            "runtime": "onnxruntime-genai",
            "version": genai().__version__,
            "providers": self.providers,
            "device": self.model.device_type,
        }

    def close(self) -> None:
        self.model = None


def _built_for(config: GenAIModelConfig) -> list[str]:
    """The providers the folder was built for (GenAI's names), from its ``genai_config.json``."""
    options = config.genai_config()["model"].get("decoder", {}).get("session_options", {}).get("provider_options", [])
    return [name for entry in options for name in entry]


runtime_registry.register("GenAIModel", GenAIRuntime)

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

from collections.abc import Callable
from typing import Any

import numpy as np

from olive_eval.data.batch import Batch, Outputs
from olive_eval.errors import EvaluationError, MissingDependencyError
from olive_eval.runtimes.base import BoundCall, Device, Emits, PredictCall, Runtime, runtime_registry
from olive_eval.runtimes.genai_config import CONFIG_FILE, GenAIModelConfig, genai, search_options
from olive_eval.runtimes.providers import ProviderSpec
from olive_eval.runtimes.streaming import StreamingCall
from olive_eval.strict_model import StrictModel
from olive_eval.tasks.runtime_outputs import PROMPT_LENGTH, SEQUENCES

#: The batch column a pass of repeats seeds each repeat with (``olive_eval.engine.passes.repeats.SEED_COLUMN``): GenAI keeps
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


def available_providers() -> list[str]:
    og = genai()
    return [name for name, (_, check) in PROVIDERS.items() if check is None or getattr(og, check, lambda: False)()]


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

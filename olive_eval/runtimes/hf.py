"""``HfModel``: a transformers model from a local folder, or a name found in the local Hugging Face cache.

The task (:mod:`olive_eval.tasks`) picks the model class and how it is called: a forward pass (logits, hidden
states), or ``generate()`` when the post-processing decodes text (text generation, speech recognition with a
sequence-to-sequence model, image-text-to-text). It runs on cpu, or on cuda when the run's ``device`` is gpu, and
records the dtype and device it ran with.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from olive_eval.cores import usable_cores
from olive_eval.data.batch import Batch, Outputs
from olive_eval.errors import EvaluationError
from olive_eval.huggingface_env import downloads_allowed, offline, quiet_transformers
from olive_eval.lazy import LazyModule
from olive_eval.runtimes.base import BoundCall, Device, Emits, Runtime, runtime_registry
from olive_eval.runtimes.hf_config import HfModelConfig
from olive_eval.runtimes.hf_shapes import misfit
from olive_eval.runtimes.hf_streaming import HfStreamed
from olive_eval.runtimes.inputs import input_array
from olive_eval.runtimes.memory import MemoryMeter, TorchDeviceMemory
from olive_eval.runtimes.providers import ProviderSpec
from olive_eval.runtimes.torch import gpu_problem
from olive_eval.runtimes.torch_threads import torch_threads
from olive_eval.strict_model import StrictModel
from olive_eval.tasks.base import find_task, get_task
from olive_eval.tasks.call_mode import CallMode
from olive_eval.tasks.runtime_outputs import OUTPUT_LENGTHS, PROMPT_LENGTH, SEQUENCES

torch = LazyModule("torch")
transformers = LazyModule("transformers")


class _Call(BoundCall):
    def __init__(self, runtime: HfRuntime, tensors: dict[str, Any], generate: bool, where: str) -> None:
        self._runtime, self._generate, self._where = runtime, generate, where
        self.tensors = tensors  #: the model inputs this call sends (public: a bench times the same tensors directly)
        self._outputs: Outputs = {}

    def __call__(self) -> None:
        self._result = self._runtime._call(self.tensors, self._generate, self._where)

    def outputs(self) -> Outputs:
        return self._runtime._outputs(self._result, self.tensors, self._generate)


class HfRuntime(Runtime):
    """A transformers model. Its ``handle`` offers Olive's ``prepare_session`` / ``run_session`` too."""

    model_type = "HfModel"
    Config = HfModelConfig
    settings_key = "hf"

    def __init__(self, model: Any, config: HfModelConfig, device: Any) -> None:
        self.model = model
        self.config = config
        self.device = device
        self.task = get_task(config.task)
        self.threads = config.threads or usable_cores()

    @classmethod
    def device_problem(cls, model_config: Any, device: Device, execution_providers: list[ProviderSpec]) -> str | None:
        return gpu_problem(device)

    @classmethod
    def memory_meter(cls, device: Device) -> MemoryMeter:
        """On a gpu, torch's own account of the device memory it allocated (the model lives there)."""
        return TorchDeviceMemory() if device == "gpu" else super().memory_meter(device)

    @classmethod
    def emits(cls, model_config: Any, generates: bool) -> Emits:
        """Generating: the sequences (and a decoder-only model's prompt length), nothing else; a forward pass:
        the model's outputs, and what its task adds."""
        if generates:
            return Emits((SEQUENCES, PROMPT_LENGTH), model_outputs=False)
        task = find_task(model_config.task)
        return Emits(task.provides if task is not None else ())

    @classmethod
    def load(
        cls,
        model_config: Any,
        device: Device,
        execution_providers: list[ProviderSpec],
        settings: StrictModel | None = None,
    ) -> HfRuntime:
        config: HfModelConfig = model_config
        if problem := cls.device_problem(config, device, execution_providers):
            raise EvaluationError(f"device gpu was requested but {problem}")
        target = torch.device("cuda" if device == "gpu" else "cpu")
        kwargs: dict[str, Any] = {
            "trust_remote_code": config.load_kwargs.trust_remote_code,
            "local_files_only": not downloads_allowed(),
        }
        if config.load_kwargs.torch_dtype is not None:
            kwargs["dtype"] = (
                config.load_kwargs.torch_dtype
                if config.load_kwargs.torch_dtype == "auto"
                else getattr(torch, config.load_kwargs.torch_dtype)
            )
        for key in ("revision", "attn_implementation"):
            if getattr(config.load_kwargs, key) is not None:
                kwargs[key] = getattr(config.load_kwargs, key)
        source = str(config.folder() or config.model_path)
        errors = []
        with offline(downloads_allowed()), quiet_transformers():
            for class_name in get_task(config.task).model_classes:
                auto = getattr(transformers, class_name, None)
                if auto is None:
                    continue
                try:
                    model = auto.from_pretrained(source, **kwargs)
                    break
                except (ValueError, KeyError) as exc:  # the config does not fit this class: try the next
                    errors.append(f"{class_name}: {_first_line(exc)}")
                except OSError as exc:
                    raise EvaluationError(f"cannot load {config.model_path}: {_first_line(exc)}") from exc
            else:
                raise EvaluationError(f"cannot load {config.model_path} for {config.task}: {'; '.join(errors)}")
        return cls(model.to(target).eval(), config, target)

    # ------------------------------------------------------------------ calls
    def _tensors(self, batch: Batch) -> dict[str, Any]:
        dtype = next(self.model.parameters()).dtype
        tensors = {}
        for name, column in batch.model_inputs().items():
            array = input_array(column, name, batch.start)
            if array.dtype == object:
                raise EvaluationError(
                    f"input '{name}' holds rows of different shapes; pad them (the dataloader pads token ids)"
                )
            tensor = torch.from_numpy(np.require(array, requirements="C")).to(self.device)
            tensors[name] = tensor.to(dtype) if tensor.is_floating_point() else tensor
        return tensors

    def _call(self, tensors: dict[str, Any], generate: bool, where: str = "the batch") -> Any:
        try:
            with torch_threads(self.threads), torch.inference_mode():
                if generate:
                    result = self.model.generate(**tensors, **self.config.generation_kwargs.passed())
                else:
                    result = self.model(**tensors)
        except torch.cuda.OutOfMemoryError:
            raise
        except (RuntimeError, ValueError, IndexError) as exc:  # what torch and transformers raise on bad shapes
            raise EvaluationError(self._rejected(tensors, where, exc)) from exc
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return result

    def _rejected(self, tensors: dict[str, Any], where: str, exc: BaseException) -> str:
        """Why the model refused a batch: the inputs whose shapes do not fit the model's config, or all shapes."""
        detail = misfit(self.model.config, {name: tuple(t.shape) for name, t in tensors.items()})
        if detail is None:
            detail = "inputs: " + ", ".join(
                f"{n} {list(t.shape)} {str(t.dtype).removeprefix('torch.')}" for n, t in tensors.items()
            )
        cause = f"{type(exc).__name__}: {_first_line(exc)}"
        return f"model '{self.config.display_name()}' rejected {where}: {detail} ({cause})"

    def _outputs(self, result: Any, tensors: dict[str, Any], generate: bool) -> Outputs:
        if generate:
            sequences = result if isinstance(result, torch.Tensor) else result.sequences
            out: Outputs = {SEQUENCES: sequences.cpu().numpy()}
            if not self.model.config.is_encoder_decoder and "input_ids" in tensors:
                out[PROMPT_LENGTH] = np.full(len(sequences), tensors["input_ids"].shape[1])
            return out
        named = {k: v for k, v in result.items() if isinstance(v, torch.Tensor)}
        order = [k for k in ("logits", "last_hidden_state") if k in named] + [
            k for k in named if k not in ("logits", "last_hidden_state")
        ]
        out = {k: _to_numpy(named[k]) for k in order}
        lengths = self._frame_lengths(tensors) if OUTPUT_LENGTHS in self.task.provides else None
        if lengths is not None and "logits" in out:
            out[OUTPUT_LENGTHS] = lengths
        return out

    def _frame_lengths(self, tensors: dict[str, Any]) -> np.ndarray | None:
        """Each clip's number of output frames, for an audio encoder called on a padded batch (a CTC model):
        the frames past it come from padding, and decoding them would add text to the shorter clips."""
        lengths_of = getattr(self.model, "_get_feat_extract_output_lengths", None)
        mask = tensors.get("attention_mask")
        if lengths_of is None or mask is None or "input_values" not in tensors:
            return None
        return lengths_of(mask.sum(-1)).cpu().numpy().astype(np.int64)

    def _generates(self, batch: Batch) -> bool:
        """The batch's call mode (the planned pass's), or the model's own on a batch made elsewhere."""
        mode = batch.call_mode if batch.call_mode in self.task.call_modes else self.config.call_mode(None)
        return mode is CallMode.GENERATE

    def predict(self, batch: Batch) -> Outputs:
        tensors = self._tensors(batch)
        generate = self._generates(batch)
        return self._outputs(self._call(tensors, generate, _where(batch)), tensors, generate)

    def bind(self, batch: Batch) -> BoundCall:
        return _Call(self, self._tensors(batch), self._generates(batch), _where(batch))

    def bind_generation(self, batch: Batch, new_tokens: int) -> HfStreamed:
        """Timed token by token (:mod:`olive_eval.runtimes.streaming`)."""
        return HfStreamed(self.model, self._tensors(batch), self.config.generation_kwargs.passed(), new_tokens)

    # ------------------------------------------------------------------ teacher forcing (token fidelity)
    def special_token_ids(self) -> tuple[int | None, int | None]:
        """The model's padding and end-of-sequence token ids (None where it has none)."""
        generation = getattr(self.model, "generation_config", None)
        pad = getattr(generation, "pad_token_id", None)
        eos = getattr(generation, "eos_token_id", None)
        pad = self.model.config.pad_token_id if pad is None else pad
        eos = self.model.config.eos_token_id if eos is None else eos
        return pad, eos[0] if isinstance(eos, list) else eos

    def teacher_forced(self, prompt: np.ndarray, continuation: np.ndarray) -> np.ndarray:
        """Next-token logits ``[len(continuation), vocab]`` at each continuation token's position, the model fed
        the prompt and the continuation before it (one sequence, no padding)."""
        if self.model.config.is_encoder_decoder:
            raise EvaluationError(
                f"model '{self.config.display_name()}' is an encoder-decoder: token fidelity feeds "
                "a decoder-only model its prompt and continuation"
            )
        ids = np.concatenate([prompt, continuation]).astype(np.int64)[None]
        tensor = torch.from_numpy(ids).to(self.device)
        logits = self._call({"input_ids": tensor, "attention_mask": torch.ones_like(tensor)}, False).logits
        return _to_numpy(logits[0, len(prompt) - 1 : -1].float())

    # ------------------------------------------------------------------ Olive's model handler API
    @property
    def inference_settings(self) -> dict[str, Any]:
        return {}

    def prepare_session(
        self, inference_settings: Any = None, device: str = "cpu", execution_providers: Any = None, rank: Any = None
    ) -> Any:
        return self.model

    def run_session(self, session: Any = None, inputs: Any = None, **kwargs: Any) -> Any:
        with torch.inference_mode():
            return (session or self.model)(**inputs, **kwargs)

    def describe(self) -> dict[str, Any]:
        return {
            "runtime": "transformers",
            "version": transformers.__version__,
            "task": self.config.task,
            "class": type(self.model).__name__,
            "device": str(self.device),
            "dtype": str(next(self.model.parameters()).dtype).removeprefix("torch."),
            "threads": self.threads,
        }

    def call_scope(self) -> Any:
        return torch_threads(self.threads)

    def close(self) -> None:
        self.model = None
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


def _where(batch: Batch) -> str:
    return f"the batch of examples {batch.start}..{batch.start + batch.size - 1}"


def _to_numpy(tensor: Any) -> np.ndarray:
    tensor = tensor.detach()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.cpu().numpy()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


runtime_registry.register("HfModel", HfRuntime)

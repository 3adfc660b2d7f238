"""PyTorch: a TorchScript file, a ``torch.export`` archive (both read by ``runtimes/torch_formats.py``), or a
module from the user's ``model_loader``.

Execution providers are an ONNX Runtime notion and are ignored here; ``device`` alone picks cpu or cuda.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.cores import usable_cores
from olive_eval.data.batch import Batch, Outputs
from olive_eval.errors import EvaluationError, first_line
from olive_eval.lazy import LazyModule
from olive_eval.runtimes.base import BoundCall, Device, InputSpec, Runtime, runtime_registry
from olive_eval.runtimes.inputs import input_array
from olive_eval.runtimes.memory import MemoryMeter, TorchDeviceMemory
from olive_eval.runtimes.providers import ProviderSpec
from olive_eval.runtimes.torch_config import IOConfig, PyTorchModelConfig
from olive_eval.runtimes.torch_formats import CallPlan, load_file
from olive_eval.runtimes.torch_threads import torch_threads
from olive_eval.strict_model import StrictModel
from olive_eval.user_module import call_user, load_function

torch = LazyModule("torch")


#: ``io_config.input_types`` names → (numpy dtype the engine should produce, torch dtype the model takes).
#: bfloat16 has no numpy dtype: the data comes as float32 and is converted on the way in.
_TYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32"}


def _io_dtypes(type_name: str) -> tuple[np.dtype, torch.dtype]:
    name = _TYPE_ALIASES.get(type_name, type_name)
    if name == "bfloat16":
        return np.dtype("float32"), torch.bfloat16
    try:
        np_dtype = np.dtype(name)
        return np_dtype, torch.from_numpy(np.zeros(0, dtype=np_dtype)).dtype
    except TypeError as exc:
        raise EvaluationError(f"io_config input type '{type_name}' is not a numpy/torch dtype name") from exc


def gpu_problem(device: Device) -> str | None:
    """Why torch cannot run on ``device``: a gpu without CUDA."""
    return "torch has no CUDA device" if device == "gpu" and not torch.cuda.is_available() else None


def _torch_device(device: Device) -> torch.device:
    if problem := gpu_problem(device):
        raise EvaluationError(f"device gpu was requested but {problem}")
    return torch.device("cuda" if device == "gpu" else "cpu")


def _flatten(name: str, value: Any, out: list[tuple[str, torch.Tensor]]) -> None:
    """Tensors in ``value`` with dotted names, in order; ``None`` and other non-tensors are skipped."""
    if isinstance(value, torch.Tensor):
        out.append((name, value))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _flatten(f"{name}.{key}", item, out)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _flatten(f"{name}.{i}", item, out)


def _named_outputs(result: Any) -> list[tuple[str, torch.Tensor]]:
    """A tensor → ``output_0``; a tuple/list → ``output_i``; a dict/ModelOutput → its keys, logits first."""
    out: list[tuple[str, torch.Tensor]] = []
    if isinstance(result, torch.Tensor):
        return [("output_0", result)]
    if isinstance(result, (list, tuple)) and not hasattr(result, "_fields"):
        for i, item in enumerate(result):
            _flatten(f"output_{i}", item, out)
        return out
    if isinstance(result, Mapping):
        items = dict(result.items())
    elif hasattr(result, "logits"):  # a ModelOutput-like object that is not a dict
        items = {k: v for k, v in getattr(result, "__dict__", {}).items() if not k.startswith("_")}
        items.setdefault("logits", result.logits)
    elif hasattr(result, "_asdict"):  # a namedtuple
        items = result._asdict()
    else:
        raise EvaluationError(f"model returned {type(result).__name__}; expected tensors, a tuple, or a dict")
    if "logits" in items:
        items = {"logits": items["logits"], **{k: v for k, v in items.items() if k != "logits"}}
    for key, item in items.items():
        _flatten(str(key), item, out)
    return out


def _to_numpy(tensor: torch.Tensor) -> np.ndarray:
    tensor = tensor.detach()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.cpu().numpy()


class _TorchCall(BoundCall):
    def __init__(self, runtime: TorchRuntime, tensors: dict[str, torch.Tensor]) -> None:
        self._runtime = runtime
        self._tensors = tensors
        self._result: Any = None

    def __call__(self) -> None:
        self._result = self._runtime._forward(self._tensors)

    def outputs(self) -> Outputs:
        if self._result is None:
            return {}
        return {name: _to_numpy(t) for name, t in self._runtime._record(self._result)}


class TorchRuntime(Runtime):
    """A module on a device. Its ``handle`` is itself: ``.module``, ``.device``, ``.model_path``, ``.run``, and
    Olive's model handler API (``prepare_session``, ``run_session``, ``inference_settings``)."""

    model_type = "PyTorchModel"
    settings_key = "pytorch"

    def __init__(
        self,
        module: Callable[..., Any],
        device: torch.device,
        model_path: Path | None,
        io_config: IOConfig | None,
        source: str,
        plan: CallPlan | None = None,
        threads: int | None = None,
    ) -> None:
        self.module = module
        self.threads = threads or usable_cores()
        self.device = device
        self.model_path = model_path
        self.source = source
        self._plan = plan or CallPlan()
        self._output_names: list[str] = []
        self._specs: list[InputSpec] = []
        self._torch_dtypes: dict[str, torch.dtype] = {}
        if io_config is not None:
            names = io_config.input_names
            types = io_config.input_types or ["float32"] * len(names)
            shapes = io_config.input_shapes or [None] * len(names)
            if not len(types) == len(shapes) == len(names):
                raise EvaluationError("io_config needs one input_types and input_shapes entry per input_name")
            for name, type_name, shape in zip(names, types, shapes, strict=True):
                np_dtype, torch_dtype = _io_dtypes(type_name)
                self._specs.append(InputSpec(name, np_dtype, tuple(shape) if shape is not None else None))
                self._torch_dtypes[name] = torch_dtype

    @classmethod
    def load(
        cls,
        model_config: Any,
        device: Device,
        execution_providers: list[ProviderSpec],
        settings: StrictModel | None = None,
    ) -> TorchRuntime:
        """Load the module. ``execution_providers`` are ONNX Runtime's; ignored here."""
        torch_device = _torch_device(device)
        path = Path(model_config.model_path) if model_config.model_path is not None else None
        plan = None
        if model_config.model_loader is not None:
            module = cls._from_loader(model_config, path)
            source = "model_loader"
        else:
            assert path is not None  # the config validator guarantees a path or a loader
            module, plan, source = load_file(path, torch_device)
        if isinstance(module, torch.nn.Module) and source != "torch.export":
            # Exported graphs refuse .to()/.eval(): their device and mode were fixed when exported.
            try:
                module = module.to(torch_device).eval()
            except Exception as exc:
                raise EvaluationError(f"cannot move the model to {torch_device}: {first_line(exc)}") from exc
        return cls(module, torch_device, path, model_config.io_config, source, plan, model_config.threads)

    @staticmethod
    def _from_loader(model_config: Any, path: Path | None) -> Callable[..., Any]:
        loader = load_function(model_config.model_script, model_config.model_loader, model_config.script_dir)
        where = f"model_loader '{model_config.model_loader}' in {model_config.model_script}"
        module = call_user(loader, where, (str(path) if path is not None else None,), {})
        if not callable(module):
            raise EvaluationError(
                f"{where} returned {type(module).__name__}; it must return a torch.nn.Module or a callable"
            )
        return module

    # ------------------------------------------------------------------ Olive's model handler API
    @property
    def inference_settings(self) -> dict[str, Any]:
        """Olive's PyTorch handler has no session settings; an empty dict keeps user scripts uniform."""
        return {}

    def prepare_session(
        self,
        inference_settings: dict[str, Any] | None = None,
        device: str = "cpu",
        execution_providers: Any = None,
        rank: int | None = None,
    ) -> Callable[..., Any]:
        """The module in eval mode on the run's device, as Olive's ``PyTorchModelHandler.prepare_session``."""
        return self.module

    def run_session(self, session: Any = None, inputs: Any = None, **kwargs: Any) -> Any:
        """``session(**inputs)`` for a dict of inputs, else ``session(inputs)``, as Olive's handler calls it."""
        module = session if session is not None else self.module
        with torch.inference_mode():
            return module(**inputs, **kwargs) if isinstance(inputs, Mapping) else module(inputs, **kwargs)

    def input_specs(self) -> list[InputSpec]:
        """From ``io_config`` or the ``torch.export`` archive; otherwise empty, and the engine passes the
        batch's keys as they are (one input positionally)."""
        return list(self._specs or self._plan.specs)

    def output_names(self) -> list[str]:
        """``output_i`` or the returned dict's keys. Unknown until the first call: empty before that."""
        return list(self._output_names)

    @classmethod
    def device_problem(cls, model_config: Any, device: Device, execution_providers: list[ProviderSpec]) -> str | None:
        return gpu_problem(device)

    @classmethod
    def memory_meter(cls, device: Device) -> MemoryMeter:
        """On a gpu, torch's own account of the device memory it allocated (the model lives there)."""
        return TorchDeviceMemory() if device == "gpu" else super().memory_meter(device)

    def _tensors(self, inputs: Mapping[str, np.ndarray], start: int = 0) -> dict[str, torch.Tensor]:
        needed = [s.name for s in self._specs]
        needed += [n for n in self._plan.names() if n not in needed]
        missing = [n for n in needed if n not in inputs]
        if missing:
            raise EvaluationError(
                f"the model needs input(s) {', '.join(missing)}; given: {', '.join(inputs) or 'nothing'}"
            )
        tensors = {}
        for name in needed or list(inputs):
            array = np.require(input_array(inputs[name], name, start), requirements="C")  # a 0-d input stays 0-d
            if not array.flags.writeable:  # torch.from_numpy warns on read-only memory
                array = array.copy()
            dtype = self._torch_dtypes.get(name)
            if dtype is None and array.dtype == np.float64:
                dtype = torch.float32
            try:
                tensor = torch.from_numpy(array)
            except TypeError as exc:
                raise EvaluationError(f"input '{name}' has dtype {array.dtype}, which torch cannot take") from exc
            tensors[name] = tensor.to(device=self.device, dtype=dtype or tensor.dtype)
        return tensors

    def _forward(self, tensors: dict[str, torch.Tensor]) -> Any:
        with torch_threads(self.threads), torch.inference_mode():
            result = self._plan(self.module, tensors)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return result

    def _record(self, result: Any) -> list[tuple[str, torch.Tensor]]:
        named = _named_outputs(result)
        self._output_names = [name for name, _ in named]
        return named

    def bind(self, batch: Batch) -> BoundCall:
        return _TorchCall(self, self._tensors(self._named(batch.model_inputs()), batch.start))

    def predict(self, batch: Batch) -> Outputs:
        result = self._forward(self._tensors(self._named(batch.model_inputs()), batch.start))
        return {name: _to_numpy(t) for name, t in self._record(result)}

    def _named(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """A single column feeds a single-input module whatever its name (the names come from io_config or
        the ``torch.export`` archive); otherwise columns are passed by their names."""
        wanted = [spec.name for spec in self.input_specs()]
        if len(wanted) == 1 and len(inputs) == 1 and wanted[0] not in inputs:
            return {wanted[0]: next(iter(inputs.values()))}
        return inputs

    def describe(self) -> dict[str, Any]:
        info = {"runtime": "torch", "version": torch.__version__, "device": str(self.device)}
        return {**info, "format": self.source, "threads": self.threads}

    def call_scope(self) -> Any:
        return torch_threads(self.threads)

    def close(self) -> None:
        self.module = None  # type: ignore[assignment]
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


TorchRuntime.Config = PyTorchModelConfig
runtime_registry.register("PyTorchModel", TorchRuntime)

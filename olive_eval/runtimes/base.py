"""The interface every runtime implements, and the registry of model types. The engine never branches on
a runtime's type: it asks the registered class.

A runtime module defines its model config (``Config``), the inference settings it takes from a metric's
``user_config.inference_settings[settings_key]`` (``Settings``), and the ``Runtime`` that loads the model
and calls it on batches; it registers itself under its Olive model type (``ONNXModel``, ``HfModel``...).
Heavy libraries are imported by the runtime module only, and the module only when a model of its type
appears in a config.
"""

from __future__ import annotations

import unicodedata
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from olive_eval.data.batch import Batch, Columns, Outputs
from olive_eval.data.input_spec import InputSpec
from olive_eval.registry import Registry
from olive_eval.runtimes.memory import MemoryMeter, ProcessMemory
from olive_eval.runtimes.providers import ProviderSpec
from olive_eval.strict_model import StrictModel
from olive_eval.tasks.call_mode import CallMode

Device = Literal["cpu", "gpu"]


def check_name(name: str) -> str:
    """Model and metric names show up in tables, progress lines and folder names: no control characters."""
    bad = next((ch for ch in name if unicodedata.category(ch).startswith("C")), None)
    if bad is not None:
        raise ValueError(f"name {name!r} contains the control character {bad!r}; use printable characters")
    if not name.strip():
        raise ValueError("name must not be empty or blank")
    return name


class ModelConfig(StrictModel):
    """What every model config has. A runtime module subclasses it with its own keys and a ``type`` literal."""

    type: str
    name: str | None = Field(None, description="Unique model name; defaults to the model file's stem.")
    version: str | None = Field(
        None, description="The model's or pipeline's version (e.g. 'zeroshot-index@2.2.5'): recorded in results.json."
    )

    def display_name(self) -> str:
        return self.name or self.type

    def path_problem(self, allow_download: bool = False) -> tuple[str, str] | None:
        """``(key, what is wrong)`` when a path the model names is missing or of the wrong kind."""
        return None

    def files(self) -> list[Path]:
        """The model's files on disk (for ``size_on_disk``)."""
        return []

    def no_files_reason(self) -> str | None:
        """Why the model has no files to measure, when it has none: its ``size_on_disk`` is then undefined."""
        return None

    def user_functions(self) -> list[tuple[str, Path, str, Path | None]]:
        """Functions the model needs from user scripts, checked before any model runs:
        ``(config key, script, function name, script_dir)``."""
        return []

    def processor_folder(self) -> Path | None:
        """The folder of the tokenizer or processor that pre- and post-processing use with this model."""
        return None

    def call_mode(self, decodes: bool | None) -> CallMode:
        """How this model is called on a pass whose post-process decodes generated tokens (``decodes``) or reads
        the outputs as they are, or on inputs no post-process reads (None). The pass and the timing phase both
        take it from here (:mod:`olive_eval.tasks.call_mode`); a model with a task asks its task. By default a
        model has one way of being called (a Python function, an ONNX graph, a module's forward)."""
        return CallMode.CALL

    def resolve_paths(self, base: Path) -> None:
        """Make relative paths absolute against the config file's folder (in place)."""
        for key, value in self:
            if isinstance(value, Path) and not value.is_absolute():
                setattr(self, key, base / value)


class BoundCall(ABC):
    """A model call with its inputs already prepared (cast, copied to the device, bound).

    Calling it runs the model once and returns when the work is finished (GPU runs synchronize),
    so a timer around ``__call__`` measures the model call and nothing else.
    """

    @abstractmethod
    def __call__(self) -> None: ...

    @abstractmethod
    def outputs(self) -> Outputs:
        """The outputs of the last call, on the host."""


class PredictCall(BoundCall):
    """A runtime's ``predict`` on one batch, bound: for runtimes whose prediction is the model call itself (a
    Python callable, a GenAI generation), with nothing to prepare apart."""

    def __init__(self, runtime: Runtime, batch: Batch) -> None:
        self._runtime, self._batch = runtime, batch
        self._outputs: Outputs = {}

    def __call__(self) -> None:
        self._outputs = self._runtime.predict(self._batch)

    def outputs(self) -> Outputs:
        return self._outputs


@dataclass(frozen=True)
class Emits:
    """The outputs ``predict`` gives for a model config, known before the model loads: ``names`` the runtime gives
    itself (those of :mod:`olive_eval.tasks.runtime_outputs`), and whether the model's own named outputs come too
    (``model_outputs``: then any name may appear, and only the loaded model knows which)."""

    names: tuple[str, ...] = ()
    model_outputs: bool = True

    def lacks(self, name: str) -> bool:
        """Whether ``name`` can never be among the outputs."""
        return not self.model_outputs and name not in self.names


class Runtime(ABC):
    """A loaded model on a device.

    ``predict`` serves prediction passes (a batch in, host outputs back); ``bind`` serves timing.
    ``handle`` is what a user's ``evaluate_func`` receives as its ``model`` argument.
    """

    model_type: ClassVar[str]
    Config: ClassVar[type[ModelConfig]]
    #: The key of this runtime's part of a metric's ``user_config.inference_settings`` (Olive's framework key).
    settings_key: ClassVar[str]
    Settings: ClassVar[type[StrictModel] | None] = None

    @classmethod
    @abstractmethod
    def load(
        cls,
        model_config: Any,
        device: Device,
        execution_providers: list[ProviderSpec],
        settings: StrictModel | None = None,
    ) -> Runtime:
        """Load the model. ``settings`` is the metric's override for this runtime (``Settings``), if any."""

    @classmethod
    def device_problem(cls, model_config: Any, device: Device, execution_providers: list[ProviderSpec]) -> str | None:
        """Why ``load`` would fail on ``device`` whatever the model file (a gpu this machine lacks), or None:
        asked when the run is planned, so the run stops before any model loads."""
        return None

    @classmethod
    def emits(cls, model_config: Any, generates: bool) -> Emits:
        """What ``predict`` gives for ``model_config`` when its call mode (:meth:`ModelConfig.call_mode`) generates
        (``generates``) or not: by default the model's own outputs and nothing added."""
        return Emits()

    @classmethod
    def memory_meter(cls, device: Device) -> MemoryMeter:
        """What ``peak_memory_mb`` reads for this runtime's models on ``device``, chosen before a model loads so
        that its load is measured too: the process's resident memory by default (host memory only on a gpu)."""
        return ProcessMemory(host_only=device == "gpu")

    @abstractmethod
    def predict(self, batch: Batch) -> Outputs:
        """Outputs for the examples of ``batch``."""

    @abstractmethod
    def bind(self, batch: Batch) -> BoundCall: ...

    def input_specs(self) -> list[InputSpec]:
        return []

    def output_names(self) -> list[str]:
        return []

    @property
    def handle(self) -> Any:
        return self

    def call_scope(self) -> AbstractContextManager[Any]:
        """What the model's calls run under (a torch model's thread count): the timing phase enters it around the
        warm-up and each round, so nothing is set inside a timed call. Nothing by default."""
        return nullcontext()

    def describe(self) -> dict[str, Any]:
        """What actually runs (providers, device, threads), recorded in results.json."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the session or module."""

    # Olive's tests and user scripts call a loaded model with a plain dict of arrays.
    def run(self, inputs: Columns) -> list[Any]:
        return list(self.predict(Batch(dict(inputs), list(inputs))).values())


def _adopt(name: str, cls: type[Runtime], origin: str) -> None:
    """A model type from another package's entry point (group ``olive_eval.model_types``)."""
    config = getattr(cls, "Config", None)
    if not (isinstance(config, type) and issubclass(config, ModelConfig)):
        raise TypeError(f"has no Config that subclasses ModelConfig (it has {config!r})")
    runtime_registry.register(name, cls, origin=origin)


#: Model types: every module of ``olive_eval.runtimes`` registers its own (heavy libraries load on use), and other
#: packages add Runtime subclasses through the entry-point group ``olive_eval.model_types``.
runtime_registry: Registry[type[Runtime]] = Registry(
    "model type", packages=("olive_eval.runtimes",), group="olive_eval.model_types", base=Runtime, adopt=_adopt
)


def memory_meter(model_config: ModelConfig, device: Device) -> MemoryMeter:
    """The meter of ``model_config``'s runtime on ``device`` (:meth:`Runtime.memory_meter`)."""
    return runtime_registry.get(model_config.type).memory_meter(device)


def create_runtime(
    model_config: ModelConfig,
    device: Device,
    execution_providers: list[ProviderSpec],
    inference_settings: dict[str, Any] | None = None,
) -> Runtime:
    """Load a model with the part of ``inference_settings`` (keyed by framework) that its runtime takes."""
    runtime_class = runtime_registry.get(model_config.type)
    raw = (inference_settings or {}).get(runtime_class.settings_key)
    settings = None
    if raw is not None and runtime_class.Settings is not None:
        settings = raw if isinstance(raw, StrictModel) else runtime_class.Settings.model_validate(raw)
    return runtime_class.load(model_config, device, execution_providers, settings)

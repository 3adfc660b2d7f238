"""The interface every runtime implements. The evaluator never branches on the runtime type."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from olive_eval.config.model import InferenceSettings, ProviderSpec
from olive_eval.registry import Registry

Device = Literal["cpu", "gpu"]


@dataclass(frozen=True)
class InputSpec:
    """One model input: its name, numpy dtype, and shape (``None`` or a string for a dynamic dimension)."""

    name: str
    dtype: np.dtype
    shape: tuple[int | str | None, ...] | None = None

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(isinstance(d, int) and d > 0 for d in self.shape)


class BoundCall(ABC):
    """A model call with its inputs already prepared (cast, copied to the device, bound).

    Calling it runs the model once and returns when the work is finished (GPU runs synchronize),
    so a timer around ``__call__`` measures the model call and nothing else.
    """

    @abstractmethod
    def __call__(self) -> None: ...

    @abstractmethod
    def outputs(self) -> list[np.ndarray]:
        """The outputs of the last call, copied to host memory."""


class Runtime(ABC):
    """A loaded model on a device.

    ``run`` serves accuracy passes (inputs in, host numpy outputs back); ``bind`` serves timing.
    ``handle`` is what a user's ``evaluate_func`` receives as its ``model`` argument.
    """

    model_type: ClassVar[str]

    @classmethod
    @abstractmethod
    def load(
        cls,
        model_config: Any,
        device: Device,
        execution_providers: list[ProviderSpec],
        inference_override: InferenceSettings | None = None,
    ) -> Runtime: ...

    @abstractmethod
    def input_specs(self) -> list[InputSpec]: ...

    @abstractmethod
    def output_names(self) -> list[str]: ...

    @abstractmethod
    def bind(self, inputs: Mapping[str, np.ndarray]) -> BoundCall: ...

    def run(self, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        call = self.bind(inputs)
        call()
        return call.outputs()

    @property
    def handle(self) -> Any:
        return self

    def describe(self) -> dict[str, Any]:
        """What actually runs (providers, device), recorded in results.json."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the session or module."""


runtime_registry: Registry[type[Runtime]] = Registry(
    "model type",
    lazy_entries={"ONNXModel": "olive_eval.runtimes.onnx", "PyTorchModel": "olive_eval.runtimes.torch"},
)


def create_runtime(
    model_config: Any,
    device: Device,
    execution_providers: list[ProviderSpec],
    inference_override: InferenceSettings | None = None,
) -> Runtime:
    runtime_class = runtime_registry.get(model_config.type)
    return runtime_class.load(model_config, device, execution_providers, inference_override)

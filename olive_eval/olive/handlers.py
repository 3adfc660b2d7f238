"""Olive model handlers as olive-eval model configs.

Olive hands its evaluator a model handler; olive-eval evaluates model configs. Each handler type maps to the
model type that loads the same files the same way (ONNX with its ``inference_settings``, PyTorch through its
file or ``model_loader``, transformers from a local folder); a handler olive-eval cannot load is refused in
one line that names it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olive_eval.errors import ConfigError

_SOURCE = "<olive model>"


def model_name(model_path: str | None, fallback: str) -> str:
    """A model's name in olive-eval's results: Olive's model id when the file sits in Olive's cache
    (``.../runs/<model id>/models/...``), else the file's stem."""
    if not model_path:
        return fallback
    path = Path(model_path)
    for parent in path.parents:
        if parent.parent.name == "runs":
            return parent.name
    return path.stem if path.suffix else path.name


def model_config(handler: Any, name: str) -> dict[str, Any]:
    """The olive-eval model config that loads what ``handler`` holds."""
    kind = type(handler).__name__
    if kind == "ONNXModelHandler":
        config: dict[str, Any] = {"type": "ONNXModel", "name": name, "model_path": str(handler.model_path)}
        if handler.inference_settings:
            config["inference_settings"] = dict(handler.inference_settings)
        return config
    if kind == "PyTorchModelHandler":
        config = {"type": "PyTorchModel", "name": name}
        loader = handler.model_loader
        if loader is not None and not isinstance(loader, str):
            raise ConfigError(
                f"PyTorch model '{name}' is loaded by a Python object ({loader!r}); olive-eval needs model_loader as "
                "a function name in model_script",
                path="model_loader",
                source=_SOURCE,
            )
        for key in ("model_path", "model_loader", "model_script", "script_dir"):
            value = getattr(handler, key, None)
            if value is not None:
                config[key] = str(value)
        if handler.io_config:
            config["io_config"] = dict(handler.io_config)
        return config
    if kind == "HfModelHandler":
        config = {"type": "HfModel", "name": name, "model_path": str(handler.model_path), "task": handler.task}
        return config
    if kind == "CompositeModelHandler":
        raise ConfigError(
            f"model '{name}' is a composite model (several component models); olive-eval evaluates one model at a "
            "time: evaluate each component with its own workflow, or export the composite to one ONNX model",
            path="type",
            source=_SOURCE,
        )
    raise ConfigError(
        f"olive-eval cannot evaluate an Olive {kind} (model '{name}'); it takes ONNXModelHandler, "
        "PyTorchModelHandler and HfModelHandler",
        path="type",
        source=_SOURCE,
    )

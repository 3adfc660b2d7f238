"""Execution providers as Olive and ONNX Runtime write them, normalised to ``(name, options)`` pairs."""

from __future__ import annotations

from typing import Any

#: ``(provider name, provider options)``, normalised from every shape Olive accepts.
ProviderSpec = tuple[str, dict[str, Any]]


def device_providers(device: str) -> list[ProviderSpec]:
    """The providers a device runs on when none are given: CUDA then CPU on a GPU, else the CPU."""
    if device == "gpu":
        return [("CUDAExecutionProvider", {}), ("CPUExecutionProvider", {})]
    return [("CPUExecutionProvider", {})]


def normalize_providers(value: Any) -> list[ProviderSpec] | None:
    """Accept ``"Name"``, ``["Name", {opts}]`` and lists of either, as Olive and ONNX Runtime do."""
    if value is None:
        return None
    if isinstance(value, str):
        return [(value, {})]
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], dict)
    ):
        return [(value[0], dict(value[1]))]
    if not isinstance(value, (list, tuple)):
        raise ValueError("execution providers must be a name, a [name, options] pair, or a list of those")
    out: list[ProviderSpec] = []
    for item in value:
        if isinstance(item, str):
            out.append((item, {}))
        elif (
            isinstance(item, (list, tuple))
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], dict)
        ):
            out.append((item[0], dict(item[1])))
        else:
            raise ValueError(f"bad execution provider {item!r}: use a name or a [name, options] pair")
    return out

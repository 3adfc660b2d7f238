"""The run's context: what every model of the run is loaded and evaluated under, made once from the config
and handed down explicitly (to the per-model units and the timing rounds)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olive_eval.config.run import RunConfig
from olive_eval.huggingface_env import download_policy
from olive_eval.runtimes.base import Device, Runtime, create_runtime
from olive_eval.runtimes.providers import ProviderSpec


@dataclass(frozen=True)
class RunContext:
    device: Device
    #: ONNX Runtime providers with their options, in order (the config's, else the device's default)
    providers: tuple[ProviderSpec, ...]
    #: whether datasets, models and tokenizers missing from the local cache may be downloaded
    allow_download: bool
    #: every seed the run uses, by where it is set (recorded in results.json)
    seeds: Mapping[str, int]
    #: the folder the config's relative paths were resolved against
    source_dir: Path | None

    @classmethod
    def of(cls, run: RunConfig) -> RunContext:
        providers = tuple((name, dict(options)) for name, options in run.default_providers())
        return cls(run.device, providers, run.allow_download, dict(run.seeds()), run.source_dir)

    @property
    def provider_names(self) -> list[str]:
        return [name for name, _ in self.providers]

    def load(self, model: Any, settings: dict[str, Any] | None = None) -> Runtime:
        """The model on the run's device and providers, downloaded only if the run allows it."""
        with download_policy(self.allow_download):
            return create_runtime(model, self.device, list(self.providers), settings)

"""A toy plugin distribution installed into a test's own folder: one module and its entry points."""

from __future__ import annotations

import re
from pathlib import Path

import pytest


def install_distribution(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    *,
    name: str,
    version: str,
    source: str,
    entry_points: str,
) -> str:
    """Install distribution ``name`` (its module's source and its ``entry_points.txt``, where ``{module}``
    stands for the module) on ``sys.path``; the module name is unique per test, so no import is reused."""
    module = name.replace("-", "_") + "_" + re.sub(r"\W", "_", request.node.name)
    site = tmp_path / "site"
    site.mkdir()
    (site / f"{module}.py").write_text(source)
    _dist_info(site, name, version, entry_points.format(module=module))
    monkeypatch.syspath_prepend(str(site))
    return module


def _dist_info(site: Path, name: str, version: str, entry_points: str) -> None:
    """The ``*.dist-info`` folder ``importlib.metadata`` finds: the distribution's name, version and entry points."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(entry_points)


def linear_runtime_source(type_name: str) -> str:
    """A plugin module's model type ``type_name``: logits = x @ W, W from a .npy file (its handle)."""
    return f'''
from typing import Literal

import numpy as np

from olive_eval.runtimes.base import ModelConfig, Runtime


class LinearConfig(ModelConfig):
    type: Literal["{type_name}"]
    weights_file: str


class LinearRuntime(Runtime):
    """logits = x @ W, W from a .npy file; its handle is W."""

    model_type = "{type_name}"
    Config = LinearConfig
    settings_key = "{type_name.lower()}"

    def __init__(self, weights):
        self.weights = weights

    @classmethod
    def load(cls, model_config, device, execution_providers, settings=None):
        return cls(np.load(model_config.weights_file))

    def predict(self, batch):
        return {{"logits": np.asarray(batch.columns["x"], dtype=np.float32) @ self.weights}}

    def bind(self, batch):
        raise NotImplementedError

    @property
    def handle(self):
        return self.weights
'''


def install_package(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    *,
    name: str,
    version: str,
    modules: dict[str, str],
    entry_points: str,
) -> str:
    """Install distribution ``name`` as a package of ``modules`` (module name -> source) with its
    ``entry_points.txt``, where ``{package}`` stands for the package; the package name is unique per test."""
    package = name.replace("-", "_") + "_" + re.sub(r"\W", "_", request.node.name)
    site = tmp_path / "site"
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text("")
    for module, source in modules.items():
        (site / package / f"{module}.py").write_text(source)
    _dist_info(site, name, version, entry_points.format(package=package))
    monkeypatch.syspath_prepend(str(site))
    return package

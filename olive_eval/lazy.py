"""A module imported on first use: runtime modules name torch and transformers at the top, but an ONNX-only
run must not pay for importing them (1-3 s), nor fail when they are not installed."""

from __future__ import annotations

import importlib
import types
from typing import Any


class LazyModule(types.ModuleType):
    """Stands for ``name`` until an attribute is read, then imports it."""

    def __init__(self, name: str) -> None:
        super().__init__(name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)

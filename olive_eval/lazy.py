"""Imports on first use. Runtime modules name torch and transformers at the top, but an ONNX-only run must not
pay for importing them (1-3 s), nor fail when they are not installed; and ``import olive_eval`` must not build
the config's pydantic models before anything asks for them."""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from typing import Any


class LazyModule(types.ModuleType):
    """Stands for ``name`` until an attribute is read, then imports it."""

    def __init__(self, name: str) -> None:
        super().__init__(name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


def lazy_attributes(
    namespace: dict[str, Any], sources: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562) for names that live in other modules: ``sources``
    maps each public name to the module that defines it; the first read imports it and keeps it in
    ``namespace`` (the package's globals), so later reads are plain lookups."""

    def __getattr__(name: str) -> Any:
        module = sources.get(name)
        if module is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(sources))

    return __getattr__, __dir__

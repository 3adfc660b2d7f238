"""One generic, typed registry with lazy entries (the lm-evaluation-harness pattern).

An entry is either a registered object or a lazy ``"package.module"`` placeholder: the module is
imported on first lookup and registers the real objects through the decorators.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from olive_eval.errors import OliveEvalError
from olive_eval.strict_model import unknown_choice_hint

T = TypeVar("T")


class RegistryError(OliveEvalError):
    """A name registered twice, or looked up but never registered."""


def _origin(obj: object) -> str:
    """Where an object was defined, for collision messages: ``file:line``."""
    target = obj if inspect.isclass(obj) or inspect.isfunction(obj) else type(obj)
    try:
        return f"{inspect.getsourcefile(target)}:{inspect.getsourcelines(target)[1]}"
    except (OSError, TypeError):
        return getattr(target, "__module__", "?")


class Registry(Generic[T]):
    """Name → object. Built-in entries come from the modules of ``packages``, imported (all of them,
    subpackages included) the first time a name is looked up that is not registered yet, or the names
    are listed. A new component is one new module in such a package: no list repeats the registry."""

    def __init__(self, kind: str, packages: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._packages = list(packages)
        self._lock = threading.RLock()

    def register(self, name: str, obj: T, *, origin: str | None = None) -> T:
        with self._lock:
            where = origin or _origin(obj)
            if name in self._entries:
                if self._origins[name] == where:  # the same module imported twice (e.g. a re-run script)
                    self._entries[name] = obj
                    return obj
                raise RegistryError(
                    f"{self.kind} '{name}' is registered twice: first in {self._origins[name]}, again in {where}"
                )
            self._entries[name] = obj
            self._origins[name] = where
            return obj

    def _load_lazy(self) -> None:
        with self._lock:
            while self._packages:
                import_package(self._packages.pop(0))

    def get(self, name: str) -> T:
        if name not in self._entries:
            self._load_lazy()
        try:
            return self._entries[name]
        except KeyError:
            raise RegistryError(f"unknown {self.kind} '{name}'{unknown_choice_hint(name, self.names())}") from None

    def __contains__(self, name: object) -> bool:
        if name not in self._entries:
            self._load_lazy()
        return name in self._entries

    def names(self) -> list[str]:
        self._load_lazy()
        return sorted(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def origin(self, name: str) -> str:
        self.get(name)
        return self._origins[name]

    def unregister(self, name: str) -> None:
        """Remove an entry (tests and interactive sessions that re-register a user metric)."""
        with self._lock:
            self._entries.pop(name, None)
            self._origins.pop(name, None)

    def decorator(self, name: str) -> Callable[[T], T]:
        def wrap(obj: T) -> T:
            return self.register(name, obj)

        return wrap


def import_package(name: str) -> None:
    """Import a package and every module below it (their decorators register what they define)."""
    package = importlib.import_module(name)
    for info in pkgutil.walk_packages(getattr(package, "__path__", []), prefix=f"{name}."):
        importlib.import_module(info.name)

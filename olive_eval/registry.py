"""One generic, typed registry with lazy entries per name (the lm-evaluation-harness pattern).

Built-in entries come from the modules of the registry's packages. A lookup of a built-in name imports the one
module that registers it, found in :mod:`olive_eval.registry_index` (derived from the registrations themselves
by ``python -m olive_eval.registry_build --write``); a name the index does not hold, or a listing of the names,
imports every module of the packages. Other packages add entries through an entry-point group
(``olive_eval.metrics``...): each entry point is one name, loaded when that name is first looked up and checked
against the registry's base class, so a broken plugin costs one line naming it and its distribution, and only
when it is used.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from olive_eval.errors import OliveEvalError
from olive_eval.registry_spec import SpecError, SpecForm, read_spec, type_problem, validate_spec
from olive_eval.strict_model import unknown_choice_hint

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

T = TypeVar("T")

#: ``adopt(name, obj, origin)``: register an entry point's object under ``name``, or raise TypeError saying why
#: the object is not one (the registry's base-class check has passed when it is called).
Adopt = Callable[[str, Any, str], None]


class RegistryError(OliveEvalError):
    """A name registered twice, or looked up but never registered."""


def _origin(obj: object) -> str:
    """Where an object was defined, for collision messages: ``file:line`` of a function, ``file:Class`` of a
    class (a class's line number means parsing its file: 5-30 ms a class, paid on every registration)."""
    target = obj if inspect.isclass(obj) or inspect.isfunction(obj) else type(obj)
    try:
        where = inspect.getsourcefile(target)
    except (TypeError, OSError):  # a built-in; a class typed at the prompt or in ``python -c``
        where = None
    if where is None:
        return getattr(target, "__module__", "?")
    code = getattr(target, "__code__", None)
    return f"{where}:{code.co_firstlineno if code is not None else target.__qualname__}"


def _registering_module() -> str | None:
    """The module whose top-level code is running the registration (the decorated class's module, or the module
    that calls a registering helper at import), which is what importing makes the name exist."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    return None if frame is None else frame.f_globals.get("__name__")


def indexed_module(kind: str, name: str) -> str | None:
    """The built-in module that registers ``name`` in the registry of ``kind``, per the generated index."""
    from olive_eval.registry_index import MODULES

    return MODULES.get(kind, {}).get(name)


#: Every registry with packages, for the index builder.
PACKAGED: list[Registry[Any]] = []


class Registry(Generic[T]):
    """Name → object. Built-in entries come from the modules of ``packages``: a lookup imports the one module
    that registers the name (:func:`indexed_module`), and a name the index lacks, or a listing of the names,
    imports all of them (subpackages included). A new component is one new module in such a package (then
    the index is written again), or one entry point in ``group`` of another distribution whose object subclasses
    ``base``: no list repeats the registry."""

    def __init__(
        self,
        kind: str,
        packages: tuple[str, ...] = (),
        *,
        group: str | None = None,
        base: type | None = None,
        adopt: Adopt | None = None,
        form: SpecForm | None = None,
    ) -> None:
        self.kind = kind
        self.group = group
        self._base = base
        self._adopt = adopt
        self._entries: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        #: How this registry's ``{"type": ...}`` specs read in a config (:meth:`build`).
        self.form = form if form is not None else SpecForm()
        self.packages: tuple[str, ...] = packages
        self._packages = list(packages)  # those not imported whole yet
        #: name → the module whose top-level code registered it, for a registry with packages (the index's source).
        self.modules: dict[str, str | None] = {}
        self._lock = threading.RLock()
        self._plugins: dict[str, EntryPoint] = {}
        self._plugins_seen_on: tuple[str, ...] | None = None
        self._from_plugins: set[str] = set()
        if packages:
            PACKAGED.append(self)

    def register(self, name: str, obj: T, *, origin: str | None = None) -> T:
        if name not in self._entries:
            # A built-in name registers first, so that taking it elsewhere is the collision it always is.
            self._load_indexed(name)
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
            if self.packages:
                self.modules[name] = _registering_module()
            return obj

    def _load_indexed(self, name: str) -> None:
        """Import the module that registers the built-in ``name``, unless every module is imported already or
        the index does not hold the name. An index entry naming a module that is gone is one the full import
        replaces (the index is stale: ``tests/test_registry_index.py`` says so)."""
        if not self._packages:
            return
        module = indexed_module(self.kind, name)
        if module is None or module in sys.modules:
            return
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise

    def _load_builtin(self, name: str) -> None:
        if name not in self._entries:
            self._load_indexed(name)
        if name not in self._entries:
            self._load_lazy()

    def _load_lazy(self) -> None:
        with self._lock:
            while self._packages:
                import_package(self._packages.pop(0))

    def entry_points(self) -> dict[str, EntryPoint]:
        """This registry's entry points by name, found again whenever ``sys.path`` has changed, less those that
        claim a name olive-eval (or a user script) has: only that name is refused, when it is looked up."""
        if self.group is None:
            return {}
        with self._lock:
            self._load_lazy()
            return {name: ep for name, ep in self._found().items() if not self._claims_taken(name)}

    def _found(self) -> dict[str, EntryPoint]:
        """Every entry point of the group by name (not loaded), cached until ``sys.path`` changes."""
        if self._plugins_seen_on != tuple(sys.path):
            from importlib.metadata import entry_points

            found = {ep.name: ep for ep in entry_points(group=self.group)} if self.group is not None else {}
            self._plugins, self._plugins_seen_on = found, tuple(sys.path)
        return self._plugins

    def _claims_taken(self, name: str) -> bool:
        """Whether an entry point names ``name`` while something else registered it (a built-in, a user script)."""
        return name in self._entries and name not in self._from_plugins and name in self._found()

    def _refuse_claimed(self, name: str) -> None:
        """RegistryError naming both definitions of ``name`` when a plugin's entry point claims it too."""
        if self.group is None or not self._claims_taken(name):
            return
        module = self.modules.get(name)
        builtin = f"module {module} ({self._origins[name]})" if module else self._origins[name]
        ep = self._found()[name]
        dist = getattr(ep, "dist", None)
        fix = f"uninstall '{dist.name}'" if dist is not None else "remove it"
        raise RegistryError(
            f"{self.kind} '{name}' is defined twice: in {builtin}, and by {describe_entry_point(ep)}; "
            f"rename the entry point or {fix}"
        )

    def _load_plugin(self, name: str) -> None:
        """Load the entry point of ``name``, if there is one: it registers through ``adopt``, or its module's
        import registered the name already (a decorator)."""
        ep = self.entry_points().get(name)
        if ep is None:
            return
        where = describe_entry_point(ep)
        with self._lock:
            try:
                obj = ep.load()
            except Exception as exc:
                raise RegistryError(f"{where} cannot be loaded: {type(exc).__name__}: {exc}") from exc
            if name in self._entries:
                self._from_plugins.add(name)
                return
            try:
                if self._base is not None and not (inspect.isclass(obj) and issubclass(obj, self._base)):
                    raise TypeError(f"is not a {self._base.__name__} subclass (it is {_shown(obj)})")
                if self._adopt is not None:
                    self._adopt(name, obj, where)
                else:
                    self.register(name, obj, origin=where)
            except TypeError as exc:
                raise RegistryError(f"{where} {exc}") from None
            self._from_plugins.add(name)

    def get(self, name: str) -> T:
        self._load_builtin(name)
        if name not in self._entries:
            self._load_plugin(name)
        else:
            with self._lock:
                self._refuse_claimed(name)
        try:
            return self._entries[name]
        except KeyError:
            raise RegistryError(f"unknown {self.kind} '{name}'{unknown_choice_hint(name, self.names())}") from None

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        self._load_builtin(name)
        return name in self._entries or name in self.entry_points()

    def names(self) -> list[str]:
        """Every name: built-ins, user scripts' and the entry points' (these not loaded until looked up)."""
        self._load_lazy()
        return sorted({*self._entries, *self.entry_points()})

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
            self.modules.pop(name, None)
            self._from_plugins.discard(name)

    def build(self, spec: Any, path: str = "", form: SpecForm | None = None) -> Any:
        """The object a config's ``{"type": name, ...keys}`` (or ``params`` form, or bare name) describes: the type
        looked up here, the other keys validated by the entry's model, the object built by the entry. ``form``
        (default: this registry's) says how specs read; a bad one is a :class:`SpecError`,
        ``"<path>.<key>: what is wrong"``."""
        form = form or self.form
        if form.built and isinstance(spec, form.built):
            return spec
        data, from_params = read_spec(spec, path, form)
        name = data.get("type")
        if not isinstance(name, str) or name not in self:
            built = form.other(data, path) if isinstance(name, str) and form.other is not None else None
            if built is None:
                raise SpecError(path, "type", type_problem(form, self.kind, name, self.names))
            return built
        try:
            entry = self.get(name)  # a plugin's entry loads here
        except RegistryError as exc:
            raise SpecError(path, "type", str(exc)) from None
        return form.make(entry, validate_spec(form, entry, data, path, from_params))

    def decorator(self, name: str) -> Callable[[T], T]:
        def wrap(obj: T) -> T:
            return self.register(name, obj)

        return wrap


def import_package(name: str) -> None:
    """Import a package and every module below it (their decorators register what they define)."""
    package = importlib.import_module(name)
    for info in pkgutil.walk_packages(getattr(package, "__path__", []), prefix=f"{name}."):
        importlib.import_module(info.name)


def describe_entry_point(ep: EntryPoint) -> str:
    """``entry point 'name = module:attr' (group g) of distribution 'dist 1.0'``, for one-line errors."""
    dist = getattr(ep, "dist", None)
    shown = f"'{dist.name} {dist.version}'" if dist is not None else "(unknown)"
    return f"entry point '{ep.name} = {ep.value}' (group {ep.group}) of distribution {shown}"


def _shown(obj: object) -> str:
    if inspect.isclass(obj):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    return f"a {type(obj).__name__}"

"""How a registry's ``{"type": ...}`` objects read in a config, and how their errors say where they are wrong.

:meth:`olive_eval.registry.Registry.build` is the one builder of such objects (filters, text transforms,
reductions, judge sources, data components, models, executors). What differs between them is data, a
:class:`SpecForm`: whether a bare name stands for ``{"type": name}``, whether Olive's ``"params"`` object is
merged in, the default type, what the entry validates with and what it builds, and the words of the one-line
errors that users (and tests) read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from olive_eval.strict_model import EXPECTED_JSON, shown_json, unknown_choice_hint

#: ``(JSON path below the spec, message)`` for one pydantic error.
Explain = Callable[[Any], tuple[str, str]]


class SpecError(ValueError):
    """A spec is wrong at ``key``, a JSON path below the spec at ``path``: one line, ``"<path>.<key>: message"``."""

    def __init__(self, path: str, key: str, message: str) -> None:
        self.path, self.key, self.message = path, key, message
        where = ".".join(part for part in (path, key) if part)
        super().__init__(f"{where}: {message}" if where else message)


def explain(err: Any) -> tuple[str, str]:
    """Pydantic's error in JSON's words: an unknown key named, a wrong type as ``expected X, got <json>``."""
    loc = [str(part) for part in err["loc"]]
    kind = err["type"]
    if kind == "unknown_key":
        loc, message = [err["ctx"]["key"]], err["msg"]
    elif kind == "missing":
        message = "missing required key"
    elif kind in EXPECTED_JSON:
        message = f"expected {EXPECTED_JSON[kind]}, got {shown_json(err['input'])}"
    else:
        message = err["msg"].removeprefix("Value error, ")
    return ".".join(loc), message


def params_model(entry: Any) -> type[BaseModel]:
    """The model an entry validates its keys with: the entry itself when it is one, else its ``Params``."""
    if isinstance(entry, type) and issubclass(entry, BaseModel):
        return entry
    return entry.Params


def construct(entry: Any, params: Any) -> Any:
    """The object an entry builds from its validated keys: ``entry(params)``."""
    return entry(params)


@dataclass(frozen=True)
class SpecForm:
    """What differs between the registries' specs; :meth:`Registry.build`'s steps are the same for all.

    The messages are templates: ``{kind}`` the words for the type, ``{name}`` the type given, ``{got}`` it in
    JSON, ``{hint}`` the closest registered name or else the list of them, ``{names}`` the registered names,
    ``{listed}`` those names after a did-you-mean hint (which lists none); ``not_object`` also has ``{type}``, the
    Python type of what was given.
    """

    #: Objects that are built already and pass through.
    built: type | tuple[type, ...] = ()
    #: Whether a bare name stands for ``{"type": name}``.
    names: bool = False
    #: Whether Olive's ``"params"`` object is merged into the keys (errors then name ``params.<key>``).
    params: bool = True
    #: The type of a spec that gives none (None: the type is required).
    default: str | None = None
    #: The words for the type in errors (None: the registry's kind).
    kind: str | None = None
    not_object: str = "expected an object with a 'type', got {got}"
    missing: str = "missing required key 'type'"
    not_text: str = "expected a string, got {got}"
    unknown: str = "unknown {kind} '{name}'{hint}"
    #: The pydantic model an entry validates its keys with.
    model: Callable[[Any], type[BaseModel]] = params_model
    #: The object an entry builds from its validated keys.
    make: Callable[[Any, Any], Any] = construct
    #: How a pydantic error reads; None lets the ValidationError itself go up (a caller inside a pydantic model).
    explain: Explain | None = explain
    #: Builds a spec whose type this registry lacks, or gives None (a filter that names a text transform).
    other: Callable[[dict[str, Any], str], Any] | None = None


def merge_params(spec: dict[str, Any], path: str = "") -> tuple[dict[str, Any], set[str]]:
    """Olive's ``{"type": t, "params": {...}}`` as ``{"type": t, ...}``, and the keys that came from ``params``."""
    params = spec["params"]
    if not isinstance(params, dict):
        raise SpecError(path, "params", f"expected an object, got {shown_json(params)}")
    data = {key: value for key, value in spec.items() if key != "params"}
    for key, value in params.items():
        if key in data:
            raise SpecError(path, f"params.{key}", f"'{key}' is given both inline and under 'params'")
        data[key] = value
    return data, set(params)


def read_spec(spec: Any, path: str, form: SpecForm) -> tuple[dict[str, Any], set[str]]:
    """The spec as one object of keys (a bare name as its type, ``params`` merged in), and the merged keys."""
    if form.names and isinstance(spec, str):
        return {"type": spec}, set()
    if not isinstance(spec, dict):
        raise SpecError(path, "", form.not_object.format(got=shown_json(spec), type=type(spec).__name__))
    data, from_params = merge_params(spec, path) if form.params and "params" in spec else (spec, set())
    if data.get("type") is None and form.default is not None:
        data = {**data, "type": form.default}
    return data, from_params


def type_problem(form: SpecForm, kind: str, name: Any, names: Callable[[], list[str]]) -> str:
    """Why ``name`` names no entry: missing, not a string, or unknown (with the closest registered names)."""
    template = form.missing if name is None else form.unknown if isinstance(name, str) else form.not_text
    values = {"kind": form.kind or kind, "name": name, "got": shown_json(name), "hint": "", "names": "", "listed": ""}
    if any(f"{{{key}}}" in template for key in ("hint", "names", "listed")):
        registered = names()
        hint = unknown_choice_hint(str(name), registered)
        values.update(hint=hint, names=", ".join(registered))
        if hint.startswith("; did you mean"):
            values["listed"] = f" Registered: {values['names']}"
    return template.format(**values)


def validate_spec(form: SpecForm, entry: Any, data: dict[str, Any], path: str, from_params: set[str]) -> Any:
    """The keys validated by the entry's model; :class:`SpecError` naming the first wrong key (unless the form
    lets pydantic's own error go up)."""
    model = form.model(entry)
    if form.explain is None:
        return model.model_validate(data)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        key, message = form.explain(exc.errors()[0])
        if key.split(".")[0] in from_params:
            key = f"params.{key}"
        raise SpecError(path, key, message) from None

"""Config fields whose shape comes from a registry: models, data components, filters.

A field annotated ``Annotated[Any, Registered(registry, ...)]`` takes Olive's ``{"type": ..., "params":
{...}}`` form or the params inline, looks the type up in the registry (importing its module only then),
and validates the rest with the registered class's own pydantic model. Nothing repeats the registry: no
union of classes, no ``Literal`` of names. The JSON Schema lists whatever is registered when it is asked
for, user scripts' components included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError
from pydantic_core import PydanticCustomError, core_schema

from olive_eval.config.errors import describe_error, json_path
from olive_eval.registry import Registry, RegistryError


def nested_error(subpath: str, message: str) -> PydanticCustomError:
    """An error located below the model that raises it (``subpath`` is appended to pydantic's location)."""
    return PydanticCustomError("nested", "{message}", {"subpath": subpath, "message": message})


def inline_params(data: dict[str, Any]) -> dict[str, Any]:
    """Olive's ``{"type": t, "params": {...}}`` as ``{"type": t, ...}`` (a key given both ways is an error)."""
    if not isinstance(data.get("params"), dict):
        return data
    merged = {k: v for k, v in data.items() if k != "params"}
    for key, value in data["params"].items():
        if key in merged:
            raise nested_error(f"params.{key}", f"'{key}' is given both inline and under 'params'")
        merged[key] = value
    return merged


def reraise_nested(exc: ValidationError, prefix: str = "") -> PydanticCustomError:
    """A ValidationError from a nested model, as one error whose path continues below this field."""
    err = exc.errors()[0]
    extra, message = describe_error(err)
    path = ".".join(p for p in (prefix, json_path(err["loc"]), extra) if p)
    return nested_error(path, message)


class Registered:
    """Validates a ``{type, ...params}`` object with the model of the registered class named by ``type``.

    ``model_of(entry)`` gives the pydantic model that validates an entry's config (default: the entry
    itself when it is a model, else its ``Params``). ``default_type`` is used when ``type`` is missing.
    The validated value is that model's instance, which keeps its ``type``.
    """

    def __init__(
        self,
        registry: Registry[Any],
        *,
        default_type: str | Callable[[dict[str, Any]], str | None] | None = None,
        model_of: Callable[[Any], type[BaseModel]] | None = None,
        what: str | None = None,
    ) -> None:
        self.registry = registry
        self.default_type = default_type
        self.model_of = model_of or _default_model_of
        self.what = what or registry.kind

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> Any:
        options = []
        for name in self.registry.names():
            try:
                model = self.model_of(self.registry.get(name))
            except (RegistryError, ImportError):  # a component whose optional dependency is missing
                continue
            options.append(handler(model.__pydantic_core_schema__))
        return {"oneOf": options, "description": f"A {self.what}: its 'type' and its parameters."}

    def validate(self, value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value
        if not isinstance(value, dict):
            raise PydanticCustomError("dict_type", "expected an object, got {given}", {"given": repr(value)})
        data = inline_params(value)
        name = data.get("type")
        if name is None:
            default = self.default_type(data) if callable(self.default_type) else self.default_type
            if default is None:
                raise nested_error("type", f"missing required key 'type' (a {self.what})")
            name = default
            data = {**data, "type": name}
        if not isinstance(name, str):
            raise nested_error("type", f"expected a string, got {name!r}")
        try:
            entry = self.registry.get(name)
        except RegistryError as exc:
            raise nested_error(
                "type", str(exc).replace(f"unknown {self.registry.kind}", f"unknown {self.what}")
            ) from None
        model = self.model_of(entry)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise reraise_nested(exc) from None


def _default_model_of(entry: Any) -> type[BaseModel]:
    if isinstance(entry, type) and issubclass(entry, BaseModel):
        return entry
    return entry.Params

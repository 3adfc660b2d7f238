"""Config fields whose shape comes from a registry: models, data components, filters.

A field annotated ``Annotated[Any, Registered(registry, ...)]`` takes Olive's ``{"type": ..., "params":
{...}}`` form or the params inline, looks the type up in the registry (importing its module only then),
and validates the rest with the registered class's own pydantic model. Nothing repeats the registry: no
union of classes, no ``Literal`` of names. The JSON Schema lists whatever is registered when it is asked
for, user scripts' components included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError
from pydantic_core import PydanticCustomError, core_schema

from olive_eval.config.errors import describe_error, json_path
from olive_eval.registry import Registry, RegistryError
from olive_eval.registry_spec import SpecError, merge_params


def nested_error(subpath: str, message: str) -> PydanticCustomError:
    """An error located below the model that raises it (``subpath`` is appended to pydantic's location)."""
    return PydanticCustomError("nested", "{message}", {"subpath": subpath, "message": message})


def inline_params(data: dict[str, Any]) -> dict[str, Any]:
    """Olive's ``{"type": t, "params": {...}}`` as ``{"type": t, ...}`` (a key given both ways is an error); a
    ``params`` that is not an object stays a key of its own, for the component's model to judge."""
    if not isinstance(data.get("params"), dict):
        return data
    try:
        return merge_params(data)[0]
    except SpecError as exc:
        raise nested_error(exc.key, exc.message) from None


def located(err: Any) -> tuple[str, str]:
    """(JSON path below the validated model, message) for one pydantic error."""
    extra, message = describe_error(err)
    return ".".join(p for p in (json_path(err["loc"]), extra) if p), message


def reraise_nested(exc: ValidationError, prefix: str = "") -> PydanticCustomError:
    """A ValidationError from a nested model, as one error whose path continues below this field."""
    path, message = located(exc.errors()[0])
    return nested_error(".".join(p for p in (prefix, path) if p), message)


class Registered:
    """Validates a ``{type, ...params}`` object with the model of the registered class named by ``type``.

    ``model_of(entry)`` gives the pydantic model that validates an entry's config, ``default_type`` is used when
    ``type`` is missing and ``what`` names the type in errors; each defaults to the registry's :class:`SpecForm`
    (the entry itself when it is a model, else its ``Params``; no default; the registry's kind). The validated value is that model's
    instance, which keeps its ``type``: :meth:`Registry.build` with a form that keeps the validated keys.
    """

    def __init__(
        self,
        registry: Registry[Any],
        *,
        default_type: str | None = None,
        model_of: Callable[[Any], type[BaseModel]] | None = None,
        what: str | None = None,
    ) -> None:
        self.registry = registry
        self.form = replace(  # the registry's own words for an unknown type, the rest as config fields read
            registry.form,
            built=(),
            names=False,
            other=None,
            params=False,  # merged first by inline_params, which leaves a params that is not an object alone
            default=default_type or registry.form.default,
            kind=what or registry.form.kind,
            missing="missing required key 'type' (a {kind})",
            not_text="expected a string, got {name!r}",
            model=model_of or registry.form.model,
            make=lambda entry, params: params,
            explain=located,
        )

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> Any:
        options = []
        for name in self.registry.names():
            try:
                model = self.form.model(self.registry.get(name))
            except (RegistryError, ImportError):  # a component whose optional dependency is missing
                continue
            options.append(handler(model.__pydantic_core_schema__))
        what = self.form.kind or self.registry.kind
        return {"oneOf": options, "description": f"A {what}: its 'type' and its parameters."}

    def validate(self, value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value
        if not isinstance(value, dict):
            raise PydanticCustomError("dict_type", "expected an object, got {given}", {"given": repr(value)})
        try:
            return self.registry.build(inline_params(value), form=self.form)
        except SpecError as exc:
            raise nested_error(exc.key, exc.message) from None

"""Turn a pydantic ValidationError into one line: the JSON path and what is wrong there."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from olive_eval.errors import ConfigError

#: Locations pydantic inserts for tagged unions; they are not part of the user's JSON.
_UNION_TAGS = {"ONNXModel", "PyTorchModel", "HuggingfaceContainer", "DummyDataContainer"}


def json_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in _UNION_TAGS or (isinstance(part, str) and part.startswith("function-")):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out


#: pydantic's strict type errors → what the JSON should hold there.
_EXPECTED = {
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "an object",
    "tuple_type": "a list",
    "finite_number": "a finite number",
}


def _shown(value: Any) -> str:
    """A value as it reads in JSON (``"64"`` with quotes is a string, ``true`` a boolean)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_error(err: Any) -> tuple[str, str]:
    """(extra path below pydantic's location, message) for one pydantic error."""
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind == "unknown_key":
        return ctx["key"], err["msg"]
    if kind == "nested":
        return ctx["subpath"], ctx["message"]
    if kind == "missing":
        return "", "missing required key"
    if kind == "union_tag_invalid":
        return "type", f"unknown type '{ctx['tag']}'; valid: {ctx['expected_tags']}"
    if kind == "union_tag_not_found":
        return "", f"missing required key '{ctx.get('discriminator', 'type').strip(chr(39))}'"
    if kind in _EXPECTED:
        return "", f"expected {_EXPECTED[kind]}, got {_shown(err['input'])}"
    if kind == "literal_error":
        return "", f"got {err['input']!r}; expected {ctx['expected']}"
    return "", err["msg"].removeprefix("Value error, ")


def from_validation_error(exc: ValidationError, source: str | None = None) -> ConfigError:
    err = exc.errors()[0]
    extra, message = describe_error(err)
    path = json_path(err["loc"])
    if extra:
        path = f"{path}.{extra}" if path else extra
    return ConfigError(message, path=path or "(top level)", source=source)

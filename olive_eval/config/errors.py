"""Turn a pydantic ValidationError into one line: the JSON path and what is wrong there."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from olive_eval.errors import ConfigError
from olive_eval.strict_model import EXPECTED_JSON, shown_json


def json_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.startswith("function-"):  # pydantic's name of a validator, not JSON
            continue
        else:
            out += f".{part}" if out else str(part)
    return out


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
    if kind in EXPECTED_JSON:
        return "", f"expected {EXPECTED_JSON[kind]}, got {shown_json(err['input'])}"
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

"""A pydantic base model that rejects unknown keys with a did-you-mean hint.

Olive warns about unknown keys and drops them, so a typo such as ``subtypes`` silently yields a
metric with no sub-types. Every config model here inherits from :class:`StrictModel` instead.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Strict, model_validator
from pydantic_core import PydanticCustomError

#: A path field: JSON has no path type, so a string is accepted here even though models are strict.
LaxPath = Annotated[Path, Strict(False)]


#: pydantic's strict type errors → what the JSON should hold there.
EXPECTED_JSON = {
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "an object",
    "tuple_type": "a list",
    "finite_number": "a finite number",
}


def shown_json(value: Any) -> str:
    """A value as it reads in JSON (``"64"`` with quotes is a string, ``true`` a boolean), shortened."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def closest(word: str, choices: list[str] | set[str] | tuple[str, ...]) -> str | None:
    """The choice most similar to ``word``, or None when nothing is close."""
    match = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return match[0] if match else None


def unknown_choice_hint(word: str, choices: list[str] | set[str] | tuple[str, ...]) -> str:
    """``"; did you mean 'x'?"`` when one choice is close, else the list of valid choices."""
    match = closest(word, choices)
    if match:
        return f"; did you mean '{match}'?"
    return f"; valid: {', '.join(sorted(choices))}"


class StrictModel(BaseModel):
    """Unknown keys are errors; numbers must be numbers and booleans booleans (``"1"``, ``1.0`` and
    ``true`` are not priorities); NaN and infinity are refused wherever a number is expected."""

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, validate_default=True, strict=True, allow_inf_nan=False
    )

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict) or cls.model_config.get("extra") == "allow":
            return data  # a model that keeps other keys (``extra="allow"``) takes them as they are
        known: set[str] = set()
        for name, field in cls.model_fields.items():
            known.add(name)
            if field.alias:
                known.add(field.alias)
        for key in data:
            if key not in known:
                raise PydanticCustomError(
                    "unknown_key",
                    "unknown key{hint}",
                    {"key": str(key), "hint": unknown_choice_hint(str(key), known)},
                )
        return data

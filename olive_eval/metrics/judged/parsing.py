"""Strict parsing of the judge's replies: one JSON object with the key the prompt asked for, and nothing else.

Whitespace around the object is allowed, and so is one Markdown code fence around it (```json ... ```), which
instruction-tuned models add unasked; prose, a second object, a wrong key, a wrong count of verdicts or a verdict
other than yes/no are not. A reply that fails is an :class:`Unparseable`, which the metric excludes and counts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Unparseable", "parse_items", "parse_score", "parse_verdicts"]


@dataclass(frozen=True)
class Unparseable:
    """Why a reply is not the JSON verdict asked for."""

    message: str


def _object(reply: str, key: str) -> Any:
    text = reply.strip()
    if not text:
        return Unparseable("the reply is empty")
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        inner = text[3:-3]
        first, _, rest = inner.partition("\n")
        text = (rest if first.strip().lower() in ("", "json") else inner).strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return Unparseable(f"the reply is not JSON ({exc.msg} at character {exc.pos}): {_excerpt(reply)}")
    if not isinstance(value, dict) or key not in value:
        return Unparseable(f'the reply is not a JSON object with "{key}": {_excerpt(reply)}')
    return value[key]


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


def parse_items(reply: str, key: str) -> list[str] | Unparseable:
    """``{"<key>": ["...", ...]}``: the statements, claims or opinions extracted from a text."""
    value = _object(reply, key)
    if isinstance(value, Unparseable):
        return value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return Unparseable(f'"{key}" is not a list of strings: {_excerpt(reply)}')
    return [v.strip() for v in value]


def _verdict(value: Any) -> bool | None:
    if isinstance(value, dict):
        value = value.get("verdict")
    if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
        return value.strip().lower() == "yes"
    return None


def parse_verdicts(reply: str, count: int) -> list[bool] | Unparseable:
    """``{"verdicts": ["yes", "no", ...]}`` with exactly ``count`` entries (each may be ``{"verdict": "yes", ...}``)."""
    value = _object(reply, "verdicts")
    if isinstance(value, Unparseable):
        return value
    if not isinstance(value, list):
        return Unparseable(f'"verdicts" is not a list: {_excerpt(reply)}')
    if len(value) != count:
        return Unparseable(f"{len(value)} verdicts for {count} items: {_excerpt(reply)}")
    verdicts = [_verdict(v) for v in value]
    if any(v is None for v in verdicts):
        return Unparseable(f'a verdict is not "yes" or "no": {_excerpt(reply)}')
    return [bool(v) for v in verdicts]


def parse_score(reply: str, low: int = 1, high: int = 5) -> int | Unparseable:
    """``{"score": N}`` with N an integer in [low, high] (``4.0`` is 4; ``4.5``, ``"4"`` and ``true`` are not)."""
    value = _object(reply, "score")
    if isinstance(value, Unparseable):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or float(value) != int(value):
        return Unparseable(f'"score" is not an integer: {_excerpt(reply)}')
    if not low <= int(value) <= high:
        return Unparseable(f'"score" {int(value)} is outside {low} to {high}')
    return int(value)

"""results.json's text: ``json.dumps(data, indent=2)`` with each list of numbers on one line, in one pass.

Python's JSON encoder writes indented text in pure Python, a generator yielding every token (the C encoder only
writes unindented text before Python 3.13), and the number lists were then joined by a regular expression over
the whole text: about 0.7 ms of each results.json write of a small run, written twice per ``evaluate()``. This writes the same text (tested against the two, character for
character) with the strings and numbers still encoded by the json module's own functions.
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii
from typing import Any

INDENT = "  "


def results_text(data: Any) -> str:
    """``json.dumps(data, indent=2)`` with each list of numbers on one line: the same characters."""
    out: list[str] = []
    _encode(data, out, "\n")
    return "".join(out)


def _number(value: Any) -> str | None:
    """A number's JSON text where the regular expression took it for one (finite; not a bool), else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__repr__(value)
    if isinstance(value, float) and value - value == 0.0:  # NaN and infinity are not: NaN, Infinity
        return float.__repr__(value)
    return None


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    """A dict key as ``json.dumps`` writes it: a string, or a number, bool or null as the string of its JSON."""
    if isinstance(key, str):
        return encode_basestring_ascii(key)
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, int):
        return '"' + int.__repr__(key) + '"'
    if isinstance(key, float):
        return '"' + _float(key) + '"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _encode(value: Any, out: list[str], newline: str) -> None:
    """``value``'s text onto ``out``; ``newline`` is a new line at the value's own indentation."""
    if isinstance(value, str):
        out.append(encode_basestring_ascii(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        numbers = [_number(v) for v in value]
        if None not in numbers:
            out.append("[" + ", ".join(numbers) + "]")  # type: ignore[arg-type]
            return
        inner = newline + INDENT
        out.append("[")
        for i, item in enumerate(value):
            out.append("," + inner if i else inner)
            _encode(item, out, inner)
        out.append(newline + "]")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + INDENT
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(("," + inner if i else inner) + _key(key) + ": ")
            _encode(item, out, inner)
        out.append(newline + "}")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

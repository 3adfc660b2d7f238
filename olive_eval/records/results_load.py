"""Reading results back into the result objects: results.json of an earlier run, or a cache entry.

Fields results.json leaves out (``write_errors``, ``tracebacks``) take their defaults.

results.json writes NaN and infinities as the strings ``"nan"``, ``"inf"`` and ``"-inf"`` (JSON has no
such numbers); they come back as floats wherever a number is expected, and in ``details`` (whose strings
"nan" and "inf" cannot be told from numbers there). A cache entry keeps them as numbers and asks for
no conversion.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from olive_eval.records.results import RESULTS_FILE, ModelResult, RunResult

NON_FINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))  # its own module's names


def _numbers(value: Any) -> Any:
    """``"nan"``/``"inf"``/``"-inf"`` strings anywhere in a JSON value, as floats."""
    if isinstance(value, str):
        return NON_FINITE.get(value, value)
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    return value


def _convert(value: Any, hint: Any, where: str, strings: bool) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(value, inner[0] if len(inner) == 1 else Any, where, strings)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, where, strings)
    if origin is dict and args and dataclasses.is_dataclass(args[1]):
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object")
        return {k: _build(args[1], v, f"{where}.{k}", strings) for k, v in value.items()}
    if hint is float and isinstance(value, str) and strings and value in NON_FINITE:
        return NON_FINITE[value]
    if hint is float and isinstance(value, bool | str):
        raise ValueError(f"{where}: expected a number, got {value!r}")
    if strings and (hint is Any or origin in (list, dict)):
        return _numbers(value)
    return value


def _build(cls: type, data: Any, where: str, strings: bool) -> Any:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ValueError(f"{where}: unknown key '{unknown[0]}'")
    required = [
        name
        for name, f in fields.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING and name not in data
    ]
    if required:
        raise ValueError(f"{where}: missing key '{required[0]}'")
    hints = _hints(cls)
    return cls(**{name: _convert(value, hints[name], f"{where}.{name}", strings) for name, value in data.items()})


def model_result_from_dict(data: Any, *, where: str = "model", nonfinite_strings: bool = True) -> ModelResult:
    """A :class:`ModelResult` from its JSON form; ``nonfinite_strings`` turns results.json's "nan"/"inf" into floats."""
    return _build(ModelResult, data, where, nonfinite_strings)


def run_result_from_dict(data: Any, *, where: str = RESULTS_FILE) -> RunResult:
    """A :class:`RunResult` from results.json's content. A malformed one raises ValueError naming the JSON path."""
    return _build(RunResult, data, where, True)


def read_results(path: Path) -> RunResult:
    """Read a results.json (or a folder holding one). ValueError names the file and what is wrong: it cannot be
    read, is not valid JSON (perhaps cut short), or is not an olive-eval results file."""
    path = path / RESULTS_FILE if path.is_dir() else path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}), perhaps cut short") from None
    try:
        return run_result_from_dict(data, where=str(path))
    except (TypeError, ValueError) as exc:  # the message starts with the file and the JSON path
        raise ValueError(f"{exc} (not an olive-eval results file)") from None

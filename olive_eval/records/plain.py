"""Result dataclasses as the plain values ``json.dumps`` takes, in one pass.

``dataclasses.asdict`` deep-copies every leaf value and looks up each class's fields on every call, and
results.json then went through a second pass turning NaN and infinity into strings: about 1.5 ms of a 30 ms
warm ``evaluate()`` per write, and results.json is written as each model starts and at the end. This is the same
conversion (the same keys in the same order, the same values; tested against ``asdict``), with each class's field
names looked up once, immutable leaves kept as they are, and non-finite floats written as strings on the way.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any

#: Leaves that ``asdict``'s deep copy returns unchanged (a ``float`` is checked for finiteness first).
_IMMUTABLE = frozenset({str, int, bool, type(None)})

#: Per dataclass and the fields left out of it, the names of the others, in order.
_FIELDS: dict[tuple[type, frozenset[str]], tuple[str, ...]] = {}
_NONE: frozenset[str] = frozenset()


def plain(value: Any, omit: dict[type, frozenset[str]] | None = None) -> Any:
    """``asdict(value)`` (a dataclass, or a list, tuple or dict holding them), with non-finite floats as strings
    (``"nan"``, ``"inf"``) outside tuples, as results.json writes them; fields named in ``omit[cls]`` left out.

    A tuple's values are converted as ``asdict`` converts them, with no float made a string: results.json has
    always written them so.
    """
    return _plain(value, omit or {}, True)


def _plain(value: Any, omit: dict[type, frozenset[str]], finite: bool) -> Any:
    cls = type(value)
    if cls is float:
        return value if not finite or math.isfinite(value) else str(value)
    if cls in _IMMUTABLE:
        return value
    if cls is list:
        return [_plain(v, omit, finite) for v in value]
    if cls is dict:
        return {_plain(k, omit, False): _plain(v, omit, finite) for k, v in value.items()}
    key = (cls, omit.get(cls, _NONE))
    names = _FIELDS.get(key)
    if names is None and dataclasses.is_dataclass(cls):
        names = _FIELDS[key] = tuple(f.name for f in dataclasses.fields(cls) if f.name not in key[1])
    if names is not None:
        return {name: _plain(getattr(value, name), omit, finite) for name in names}
    if isinstance(value, tuple):
        items = [_plain(v, omit, False) for v in value]
        return cls(*items) if hasattr(value, "_fields") else cls(items)
    if isinstance(value, list):  # a list subclass: a plain list once its values are converted
        return [_plain(v, omit, finite) for v in value]
    if isinstance(value, dict):
        return {_plain(k, omit, False): _plain(v, omit, finite) for k, v in value.items()}
    if finite and isinstance(value, float) and not math.isfinite(value):  # a float subclass (numpy's float64)
        return str(value)
    return copy.deepcopy(value)

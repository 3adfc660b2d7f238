"""Per-example values as JSON text, a column at a time: the sample log's lines, and the Parquet columns
Arrow has no type for (:mod:`olive_eval.records.parquet`).

One call per column, not one ``json.dumps`` per record: formatting each example's values is what records cost.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from itertools import chain, repeat
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

import numpy as np

#: Predictions with more values than this per example (e.g. LM logits) are written as their shape only.
MAX_VALUES_PER_RECORD = 256


#: Values JSON writes as they are (a float only where finite, so not among them).
_PLAIN = frozenset({int, str, bool, type(None)})


def jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.size > MAX_VALUES_PER_RECORD:
            return {"shape": list(value.shape)}
        if value.dtype.kind in "biu" or (value.dtype.kind == "f" and np.isfinite(value).all()):
            return value.tolist()  # Python numbers JSON takes as they are: no walk over each value
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        if all(type(v) in _PLAIN for v in value):  # token ids, labels: nothing to convert
            return list(value)
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return {"bytes": len(value)}
    if hasattr(value, "size") and hasattr(value, "mode"):  # a PIL image
        return {"image": list(value.size), "mode": value.mode}
    return value


def rows(values: Any) -> list[Any]:
    """Per-example JSON values, converted in one call per array (not one per row)."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        if values.ndim > 1 and values[0].size > MAX_VALUES_PER_RECORD:
            return [{"shape": list(values.shape[1:])}] * len(values)
        if not np.issubdtype(values.dtype, np.floating) or np.isfinite(values).all():
            return values.tolist()  # nothing for JSON to choke on: skip the per-value walk
        return jsonable(values.tolist())
    return [jsonable(v) for v in values]


#: Number arrays with more values than this are converted to text by Arrow (its import costs about 20 ms once).
ARROW_MIN_VALUES = 16384


def json_texts(values: Any, n: int) -> list[str]:
    """Each example's value as JSON text, converted one array at a time (10k records of 10 logits: about 15 ms,
    where one ``json.dumps`` per record took 150).

    Integers and strings read as ``json.dumps`` writes them; floats in their shortest round-trip form at their
    own precision (a float32 logit as ``0.19819158``), always with a point or exponent; NaN and infinity as the
    strings ``"nan"``, ``"inf"``, ``"-inf"``. ``None`` stands for a missing column (``null`` for every example).
    """
    if values is None:
        return ["null"] * n
    if isinstance(values, np.ndarray) and values.dtype != object and values.ndim in (1, 2):
        wide = values.ndim == 2 and values.shape[1] > MAX_VALUES_PER_RECORD
        if values.dtype == np.bool_ and values.ndim == 1:
            return ["true" if v else "false" for v in values.tolist()]
        if np.issubdtype(values.dtype, np.integer) and values.ndim == 1:
            return list(map(str, values.tolist()))
        if np.issubdtype(values.dtype, np.floating) and values.ndim == 1 and values.dtype.itemsize <= 8:
            bits = np.ascontiguousarray(values).view(f"u{values.dtype.itemsize}")  # -0.0 stays apart from 0.0
            _, first, inverse = np.unique(bits, return_index=True, return_inverse=True)
            texts = [json.dumps(jsonable(value)) for value in values[first].tolist()]
            return list(map(texts.__getitem__, inverse.reshape(-1).tolist()))
        numeric = np.issubdtype(values.dtype, np.integer) or values.dtype in (np.float32, np.float64)
        if numeric and not wide and values.size >= ARROW_MIN_VALUES:
            return _arrow_rows(values)
    elif isinstance(values, list) and all(type(v) is str for v in values):
        return list(map(encode_basestring_ascii, values))
    return list(map(json.dumps, rows(values)))


def _arrow_rows(values: np.ndarray) -> list[str]:
    """Rows of a 2-D number array as JSON lists, formatted by Arrow (C++, shortest round-trip for floats)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    flat = pa.array(np.ascontiguousarray(values).reshape(-1))
    text = pc.cast(flat, pa.string())
    floating = np.issubdtype(values.dtype, np.floating)
    if floating and np.any(values == np.trunc(values)):  # Arrow writes 1.0 as "1": keep it a float
        whole = pc.match_substring_regex(text, r"^-?[0-9]+$")
        text = pc.if_else(whole, pc.binary_join_element_wise(text, ".0", ""), text)
    if floating and not np.isfinite(values).all():  # NaN and infinity as strings, as jsonable does
        quoted = pc.binary_join_element_wise('"', text, '"', "")
        text = pc.if_else(pc.is_finite(flat), text, quoted)
    offsets = pa.array(np.arange(0, values.size + 1, values.shape[1], dtype=np.int64))
    joined = pc.binary_join(pa.LargeListArray.from_arrays(offsets, text), ", ")
    return pc.binary_join_element_wise("[", joined, "]", "").to_pylist()


def json_lines(columns: dict[str, Any], n: int) -> str:
    """``n`` records, one JSON object per line with the columns' keys in order: the text ``json.dumps`` gives
    each record (``{"index": 0, "prediction": 3}``), joined from the columns' texts in one pass."""
    if not columns:
        return "{}\n" * n
    parts: list[Iterable[str]] = []
    for k, (key, values) in enumerate(columns.items()):
        parts += [repeat(("{" if k == 0 else ", ") + json.dumps(key) + ": "), json_texts(values, n)]
    parts.append(repeat("}\n"))
    return "".join(chain.from_iterable(zip(*parts, strict=False)))  # the repeat() parts are endless

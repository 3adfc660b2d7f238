"""Detection labels: integer class ids, or text labels grouped by label key (Valor's ``Label(key, value)``).

An object's label is an integer, a string (a value with no key: valor-lite's plain labels), or an object
``{"key": "animal", "value": "dog"}``. There is no ``"key:value"`` shorthand: values may hold colons (times,
URLs), so a string is always a value. Integers and text do not mix. A text label's category id is a stable
63-bit hash of its key and value (blake2b), so the batches of a pass, which see different labels, agree on
ids without a shared vocabulary; the names travel beside the ids. Metrics are computed per label key (a
prediction only meets ground truths of its own key, as valor-lite run on one key's annotations) and the
headline value is the mean over the keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

Names = dict[int, tuple[str, str]]  # category id -> (label key, label value)


def label_id(key: str, value: str) -> int:
    digest = hashlib.blake2b(f"{key}\x00{value}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def label_name(key: str, value: str) -> str:
    """How a label is named in results: ``value``, or ``key: value`` for a keyed label."""
    return f"{key}: {value}" if key else value


def names_of(data: Any, category_id: int) -> str:
    """The text name of a category of ``data`` (anything with ``category_names``), or "" for integer labels."""
    names = data.category_names
    return label_name(*names[category_id]) if names else ""


def parse_labels(values: object, what: str) -> tuple[np.ndarray, Names]:
    """Category ids ``int64 [n]`` and, for text labels, their names; ValueError naming ``what`` otherwise."""
    items = values.tolist() if isinstance(values, np.ndarray) else values
    if not isinstance(items, list | tuple):
        items = [items]
    text = [isinstance(v, str | Mapping) for v in items]
    if not any(text):
        arr = np.asarray(values).reshape(-1)
        if arr.size == 0:
            return np.zeros(0, np.int64), {}
        if arr.dtype.kind == "f" and (not np.isfinite(arr).all() or (arr != np.round(arr)).any()):
            raise ValueError(f"{what} must be integers, text or {{key, value}} objects, got {arr[:5].tolist()}")
        if arr.dtype.kind not in "iuf" and arr.dtype != bool:
            raise ValueError(f"{what} must be integers, text or {{key, value}} objects, got {arr.dtype}")
        return arr.astype(np.int64), {}
    if not all(text):
        j = text.index(False)
        raise ValueError(f"{what}: label {j} ({items[j]!r}) is no text, but others are; integers and text do not mix")
    ids, names = np.zeros(len(items), np.int64), {}
    for j, v in enumerate(items):
        if isinstance(v, Mapping):
            if set(v) != {"key", "value"} or not all(isinstance(v[k], str) for k in v):
                raise ValueError(f"{what}: label {j} must be {{'key': str, 'value': str}}, got {dict(v)!r}")
            key, value = v["key"], v["value"]
        else:
            key, value = "", v
        ids[j] = label_id(key, value)
        names[int(ids[j])] = (key, value)
    return ids, names


def merge_names(parts: list[Names], category_ids: list[np.ndarray], what: str) -> Names:
    """The names of several parts; ValueError when one part has text labels and another integers."""
    has_text = [bool(n) for n, ids in zip(parts, category_ids, strict=True) if len(ids)]
    if any(has_text) and not all(has_text):
        raise ValueError(f"{what}: some labels are text and others integers; integers and text do not mix")
    out: Names = {}
    for names in parts:
        out.update(names)
    return out


def key_index(category_ids: np.ndarray, names: Names) -> tuple[np.ndarray, list[str]]:
    """Each category's label key as an index ``[K]`` into the sorted keys (one key, ``""``, for integers)."""
    keys = [names[int(i)][0] if names else "" for i in category_ids]
    distinct = sorted(set(keys)) or [""]
    return np.array([distinct.index(k) for k in keys], np.int64), distinct


def key_means(per_class: np.ndarray, keys: np.ndarray, n_keys: int) -> np.ndarray:
    """``[B, n_keys]``: each key's mean over its classes that have a value (NaN where none has); a key's mAP.

    The mean of per-class values is the mean over (IoU threshold, class) entries, as both conventions take
    it, since a class has a value at every threshold or at none."""
    defined = ~np.isnan(per_class)
    onehot = (keys[:, None] == np.arange(n_keys)[None]).astype(np.float64)  # [K, n_keys]
    total, count = np.where(defined, per_class, 0.0) @ onehot, defined.astype(np.float64) @ onehot
    return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)


def mean_of_keys(per_key: np.ndarray) -> np.ndarray:
    """``[B]``: the mean of the keys' values that are defined (NaN where none is): the headline value."""
    defined = ~np.isnan(per_key)
    count = defined.sum(axis=1)
    total = np.where(defined, per_key, 0.0).sum(axis=1)
    return np.divide(total, count, out=np.full(len(total), np.nan), where=count > 0)


def category_indices(gt: np.ndarray, dt: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every label either side names, ascending, and each side's labels as indices into it: ``np.unique`` and
    ``np.searchsorted``, or, for labels in a range not much wider than their number (class ids), one count per
    id and a lookup table, the same integers without a sort or a binary search per label."""
    both = np.concatenate([gt, dt])
    lo, hi = (int(both.min()), int(both.max())) if len(both) else (0, -1)
    if hi - lo > 4 * len(both) + 4096:  # wide ids (text labels' hashes): sort
        categories = np.unique(both)
        return categories, np.searchsorted(categories, gt).astype(np.int64), np.searchsorted(categories, dt)
    seen = np.bincount(both - lo, minlength=hi - lo + 1) > 0
    index = np.cumsum(seen) - 1
    return np.flatnonzero(seen) + lo, index[gt - lo], index[dt - lo]

"""Typed violations at the edge: each document's list of violation dicts, flattened into one batch of arrays.

A violation is a dict with ``span`` (``[start, end)`` character offsets into the document, or the span's text,
located at its first occurrence), ``rule``, ``category``, ``explanation`` and ``correction`` (strings). ``span``
and ``rule`` are always read; the other three only where their weight is not 0 (``needed``). Spans of one list
may overlap. Every error is one line naming the example, the side and the violation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

try:
    from olive_eval.metrics.violations import _columns as columns_extension
except ImportError:  # installed without a C compiler: the Python form
    columns_extension = None

__all__ = ["TEXT_FIELDS", "Violations", "flatten"]

#: The string fields of a violation besides its span, in the order :class:`Violations` keeps them.
TEXT_FIELDS = ("rule", "category", "explanation", "correction")


@dataclass
class Violations:
    """The violations of a batch of documents, flat: document ``d`` owns rows ``offsets[d]:offsets[d + 1]``."""

    offsets: np.ndarray  # int64 [documents + 1]
    starts: np.ndarray  # int64 [violations]
    ends: np.ndarray  # int64 [violations]
    texts: dict[str, list[str]]  # field -> one string per violation (the fields read)

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)


def _as_list(value: Any) -> list[Any] | None:
    if isinstance(value, np.ndarray):
        return list(value) if value.ndim == 1 else None
    if isinstance(value, (list, tuple)):
        return list(value)
    return None


def _where(example: int, side: str, k: int | None = None) -> str:
    return f"example {example}: {side}" + ("" if k is None else f" violation {k}")


def _span(value: Any, text: str, where: str) -> tuple[int, int]:
    """One span as ``(start, end)`` offsets, checked against the document."""
    if isinstance(value, str):
        if not value:
            raise ValueError(f"{where}: span text is empty")
        start = text.find(value)
        if start < 0:
            raise ValueError(f"{where}: span text {value[:40]!r} does not occur in the document")
        return start, start + len(value)
    pair = _as_list(value)
    if pair is None or len(pair) != 2 or not all(isinstance(v, (int, np.integer)) for v in pair):
        raise ValueError(f"{where}: span must be [start, end) integer offsets or the span's text, got {value!r}")
    start, end = int(pair[0]), int(pair[1])
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"{where}: span [{start}, {end}) is outside the document ({len(text)} characters) or reversed")
    return start, end


def _slow(items: list[Any], text: str, fields: tuple[str, ...], where: str) -> list[tuple[Any, ...]]:
    """The exact check of one list, violation by violation: the first problem raises, naming it."""
    out = []
    for k, item in enumerate(items):
        here = f"{where} violation {k}"
        if not isinstance(item, Mapping):
            raise ValueError(f"{here}: a violation must be a dict, got {type(item).__name__}")
        for key in ("span", *fields):
            if item.get(key) is None:
                raise ValueError(f"{here}: missing field {key!r} (has {', '.join(map(repr, item)) or 'none'})")
        for key in fields:
            if not isinstance(item[key], str):
                raise ValueError(f"{here}: {key} must be a string, got {type(item[key]).__name__}")
        out.append((*_span(item["span"], text, here), *(item[key] for key in fields)))
    return out


def _document(items: list[Any], text: str, fields: tuple[str, ...], where: str) -> list[tuple[Any, ...]]:
    """``(start, end, *fields)`` per violation; a fast path for well-formed offset spans, else :func:`_slow`."""
    if not items:
        return []
    try:
        rows = list(map(itemgetter("span", *fields), items))
        spans = np.array([r[0] for r in rows])
    except (KeyError, TypeError, ValueError):
        return _slow(items, text, fields, where)
    if (
        spans.shape != (len(items), 2)
        or spans.dtype.kind not in "iu"
        or not (spans >= 0).all()
        or not (spans[:, 0] <= spans[:, 1]).all()
        or not (spans[:, 1] <= len(text)).all()
        or not all(type(v) is str for r in rows for v in r[1:])
    ):
        return _slow(items, text, fields, where)
    return [(int(s), int(e), *r[1:]) for (s, e), r in zip(spans.tolist(), rows, strict=True)]


def _native(documents: Sequence[Any], texts: Sequence[Any], fields: tuple[str, ...]) -> Violations | None:
    """:func:`_fast` in C (``_columns.c``) for plain lists (exact dicts, list/tuple spans of ints, str fields)."""
    if columns_extension is None:
        return None
    got = columns_extension.columns(documents, texts, fields)
    if got is None:
        return None
    offsets, starts, ends, strings = got
    as_int = lambda b: np.frombuffer(b, dtype=np.int64)  # noqa: E731
    return Violations(as_int(offsets), as_int(starts), as_int(ends), dict(zip(fields, strings, strict=True)))


def _fast(documents: Sequence[Any], texts: Sequence[Any], fields: tuple[str, ...]) -> Violations | None:
    """The whole batch at once when every list is well-formed with offset spans (a few passes in C over the
    values); None when anything is off, for :func:`flatten`'s per-document path to find and name it."""
    native = _native(documents, texts, fields)
    if native is not None:
        return native
    if set(map(type, documents)) - {list} or set(map(type, texts)) - {str}:
        return None
    items = list(chain.from_iterable(documents))
    if set(map(type, items)) - {dict}:
        return None
    try:
        columns = [list(map(itemgetter(key), items)) for key in ("span", *fields)]
    except KeyError:
        return None
    try:
        flat = np.array(columns[0]) if items else np.zeros((0, 2), dtype=np.int64)
    except ValueError:  # ragged
        return None
    if flat.ndim != 2 or flat.shape[1] != 2 or flat.dtype.kind not in "iu":  # text spans, floats, bools: one by one
        return None
    if any(set(map(type, c)) - {str} for c in columns[1:]):
        return None
    flat = flat.astype(np.int64, copy=False)
    counts = np.fromiter(map(len, documents), dtype=np.int64, count=len(documents))
    lengths = np.repeat(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), counts)
    starts, ends = flat[:, 0], flat[:, 1]
    if not ((starts >= 0) & (starts <= ends) & (ends <= lengths)).all():
        return None
    offsets = np.zeros(len(documents) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return Violations(offsets, starts, ends, dict(zip(fields, columns[1:], strict=True)))


def flatten(
    documents: Sequence[Any], texts: Sequence[Any], side: str, needed: Iterable[str], start: int = 0
) -> Violations:
    """One side's violation lists for a batch (``side``: ``prediction`` or ``reference``, for errors); examples are
    numbered from ``start``. ``needed``: the string fields to read besides ``rule``."""
    fields = ("rule", *(f for f in TEXT_FIELDS[1:] if f in set(needed)))
    if len(documents) != len(texts):
        raise ValueError(f"{len(documents)} {side} lists for {len(texts)} documents")
    fast = _fast(documents, texts, fields)
    if fast is not None:
        return fast
    rows: list[tuple[Any, ...]] = []
    counts = np.zeros(len(documents), dtype=np.int64)
    for d, (items, text) in enumerate(zip(documents, texts, strict=True)):
        if not isinstance(text, str):
            raise ValueError(
                f"example {start + d}: the document (column 'text') must be a string, not {type(text).__name__}"
            )
        listed = [] if items is None and side == "reference" else _as_list(items)
        if listed is None:
            raise ValueError(
                f"{_where(start + d, side)}: must be a list of violation dicts, got {type(items).__name__}"
            )
        got = _document(listed, text, fields, _where(start + d, side))
        counts[d] = len(got)
        rows.extend(got)
    offsets = np.zeros(len(documents) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    columns = list(zip(*rows, strict=True)) if rows else [()] * (2 + len(fields))
    return Violations(
        offsets=offsets,
        starts=np.asarray(columns[0], dtype=np.int64),
        ends=np.asarray(columns[1], dtype=np.int64),
        texts={key: list(columns[2 + i]) for i, key in enumerate(fields)},
    )

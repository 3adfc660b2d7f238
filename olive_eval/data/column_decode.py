"""Decoding a column of files or bytes (images, audio clips) one example at a time.

Images and audio decode differently but report the same way: each example is named by its place in the
data (or a path found in the value), and a value that cannot be decoded either stops the column with one
line naming it (``on_error="raise"``) or is left out with that line kept (``"skip"``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def clip_name(where: str, name: str | None, kind: str) -> str:
    """How a message names the decoded thing: by its file, unless ``where`` already says it."""
    return f"{kind} '{name}'" if name and name not in where else f"the {kind}"


def example_label(index: int, value: Any, names: Sequence[str] | None) -> str:
    """``names[index]`` when given (a batch passes "example 130", its place in the data), else the position
    in the column, with a path found in the value."""
    if names is not None:
        return names[index]
    if isinstance(value, (str, os.PathLike)):
        return f"example {index} ({value})"
    if isinstance(value, Mapping) and value.get("path"):
        return f"example {index} ({value['path']})"
    return f"example {index}"


def decode_column(
    values: Sequence[Any],
    decode: Callable[[Any, str], T],
    error: type[Exception],
    on_error: str,
    names: Sequence[str] | None,
) -> tuple[list[T], list[int], list[str]]:
    """``decode(value, where)`` on each value: (decoded values, indices of the kept examples, messages of the
    skipped ones). Only ``error`` (the decoder's own, one-line) is skipped; anything else propagates."""
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if names is not None and len(names) != len(values):
        raise ValueError(f"names has {len(names)} entries for {len(values)} values")
    decoded: list[T] = []
    kept: list[int] = []
    skipped: list[str] = []
    for index, value in enumerate(values):
        try:
            decoded.append(decode(value, example_label(index, value, names)))
        except error as exc:
            if on_error == "raise":
                raise
            skipped.append(str(exc))
            continue
        kept.append(index)
    return decoded, kept, skipped

"""Reference answers: from a dataset's answer column to alternatives per example, and the checks on predictions.

An example may have several acceptable answers. A reference column holds, for every example, either

* a list (or tuple, or 1-D array) of strings: the alternatives as they are; or
* a string: alternatives joined by ``|``, the form Olive's ``vision_vqa_pre_process`` produces from list answers.

A column must hold one of the two forms throughout; a mix is an error (it is almost always a data bug).

Escaping, for a ``|`` inside an answer (Olive has none: it splits on every ``|``): in a joined string, ``\\|`` is a
literal ``|`` and ``\\\\`` a literal backslash; a backslash before any other character stays as it is. So
``r"a\\|b|c"`` is the two answers ``a|b`` and ``c``, and ``r"C:\\temp|D:"`` is ``C:\\temp`` and ``D:``.
:func:`join_alternatives` writes that form and :func:`split_alternatives` reads it back. A joined string always
yields at least one alternative (``""`` is the one empty answer), as in Olive.

The parsed form is :class:`Answers`, the alternatives of all examples in one flat list with offsets, so that a
kernel reads them without walking nested lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

__all__ = [
    "Alternatives",
    "Answers",
    "check_lengths",
    "check_predictions",
    "join_alternatives",
    "single_example",
    "split_alternatives",
    "to_answers",
]

_LIST_TYPES = (list, tuple, np.ndarray)


@dataclass(frozen=True)
class Alternatives:
    """How many acceptable answers each of ``n`` examples has: example ``i`` owns ``offsets[i] : offsets[i + 1]``."""

    offsets: np.ndarray

    def __len__(self) -> int:
        return int(self.offsets.size) - 1

    @property
    def counts(self) -> np.ndarray:
        """Number of alternatives of every example."""
        return np.diff(self.offsets)

    @property
    def single(self) -> bool:
        """Whether every example has exactly one alternative."""
        return int(self.offsets[-1]) == len(self)

    def owner(self) -> np.ndarray:
        """The example of every alternative."""
        if self.single:
            return np.arange(len(self))
        return np.repeat(np.arange(len(self)), self.counts)

    def best(self, scores: np.ndarray) -> np.ndarray:
        """Per example, the maximum of ``scores`` (one per alternative), as float64."""
        scores = np.asarray(scores, np.float64)
        if self.single or scores.size == 0:
            return scores
        return np.maximum.reduceat(scores, self.offsets[:-1])


@dataclass(frozen=True)
class Answers(Alternatives):
    """Alternatives of ``n`` examples: example ``i`` accepts ``texts[offsets[i] : offsets[i + 1]]`` (at least one)."""

    texts: list[str]

    def __getitem__(self, i: int) -> list[str]:
        return self.texts[self.offsets[i] : self.offsets[i + 1]]


def split_alternatives(text: str) -> list[str]:
    """The answers in a ``|``-joined string (see the module docstring for ``\\|`` and ``\\\\``)."""
    if "\\" not in text:
        return text.split("|")
    answers, current, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "|\\":
            current.append(text[i + 1])
            i += 2
            continue
        if ch == "|":
            answers.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    answers.append("".join(current))
    return answers


def join_alternatives(answers: Sequence[str]) -> str:
    """The ``|``-joined string that :func:`split_alternatives` reads back as ``answers``."""
    if not answers:
        raise ValueError("cannot join an empty list of answers: an example needs at least one")
    return "|".join(a.replace("\\", "\\\\").replace("|", "\\|") for a in answers)


def _type_name(value: object) -> str:
    return type(value).__name__


def _check_strings(values: Sequence[object], what: str, offsets: np.ndarray | None = None, start: int = 0) -> None:
    """TypeError naming the first value that is not a string, and its example (found through ``offsets``).

    ``start`` is the number of the first example (a batch's examples are numbered from there).
    """
    types = set(map(type, values))
    if types <= {str} or all(issubclass(t, str) for t in types):
        return
    k = next(k for k, v in enumerate(values) if not isinstance(v, str))
    example = k if offsets is None else int(np.searchsorted(offsets, k, side="right")) - 1
    raise TypeError(f"{what} of example {start + example} is {_type_name(values[k])}, expected str")


def check_predictions(predictions: Sequence[object], *, start: int = 0) -> list[str]:
    """The predictions as a list, after checking that every one is a string (examples numbered from ``start``)."""
    if isinstance(predictions, str):
        raise TypeError("predictions must be a sequence of strings, got a single str")
    predictions = list(predictions)
    _check_strings(predictions, "prediction", start=start)
    return predictions


def _bare_str(value: object) -> str | None:
    """``value`` if it is a str, the str in a 0-d array (how ``compute_metric`` passes a str), else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0 and isinstance(value.item(), str):
        return value.item()
    return None


def single_example(predictions: object, references: object) -> tuple[object, object]:
    """Columns as given, or one example given bare (as Olive's tests pass it) as columns of one.

    A bare prediction (a str, or a 0-d array of one) is one example; its reference is a str (``|``-joined answers)
    or the list of its answers. A bare reference beside a column of predictions is left to :func:`to_answers`'s
    error (a column of predictions needs a column of references).
    """
    prediction, reference = _bare_str(predictions), _bare_str(references)
    if prediction is None:
        return predictions, references if reference is None else reference
    return [prediction], [references if reference is None else reference]


def check_lengths(n_predictions: int, n_references: int, metric: str) -> None:
    """Olive's error when predictions and references differ in number."""
    if n_predictions != n_references:
        raise ValueError(
            f"Number of predictions ({n_predictions}) does not match number of references ({n_references}) "
            f"for {metric} metric."
        )


def _from_lists(column: Sequence[Sequence[str]], start: int) -> Answers:
    counts = np.fromiter(map(len, column), np.int64, len(column))
    if counts.size and counts.min() == 0:
        raise ValueError(f"example {start + int(np.argmin(counts))} has an empty list of reference answers")
    texts = list(chain.from_iterable(column))
    offsets = np.concatenate(([0], np.cumsum(counts)))
    _check_strings(texts, "a reference answer", offsets, start)
    return Answers(offsets, texts)


def _from_joined(column: Sequence[str]) -> Answers:
    text = "\x00".join(column)
    if "\\" in text or text.count("\x00") != len(column) - 1:  # escapes or NULs: one string at a time
        parts = [split_alternatives(s) for s in column]
        offsets = np.concatenate(([0], np.cumsum([len(p) for p in parts])))
        return Answers(offsets, list(chain.from_iterable(parts)))
    # no escapes: every "|" splits, and the "|" and NUL positions give the number of answers of each example
    marks = np.frombuffer(text.encode("utf-8", "surrogatepass") + b"\x00", np.uint8)
    pipes, ends = np.flatnonzero(marks == ord("|")), np.flatnonzero(marks == 0)
    offsets = np.concatenate(([0], np.searchsorted(pipes, ends) + np.arange(1, ends.size + 1)))
    return Answers(offsets, text.replace("\x00", "|").split("|"))


def to_answers(column: Sequence[object] | Answers, *, start: int = 0) -> Answers:
    """Parse a reference column: a list of strings (``|``-joined alternatives) or a list of lists of strings.

    Errors number the examples from ``start`` (the first example of a batch).
    """
    if isinstance(column, Answers):
        return column
    if isinstance(column, str):
        raise TypeError("references must be a sequence with one entry per example, got a single str")
    column = list(column)
    if not column:
        return Answers(np.zeros(1, np.int64), [])
    first = column[0]
    kind = str if isinstance(first, str) else _LIST_TYPES if isinstance(first, _LIST_TYPES) else None
    if kind is None:
        raise TypeError(f"reference of example {start} is {_type_name(first)}, expected a str or a list of str")
    types = set(map(type, column))
    if not all(issubclass(t, kind) for t in types):
        i = next(i for i, v in enumerate(column) if not isinstance(v, kind))
        bad = column[i]
        if isinstance(bad, (str, *_LIST_TYPES)):
            raise ValueError(
                f"reference column mixes types: example {start} is {_type_name(first)}, example {start + i} is "
                f"{_type_name(bad)}; "
                "use strings (alternatives joined by '|') or lists of strings throughout"
            )
        raise TypeError(f"reference of example {start + i} is {_type_name(bad)}, expected a str or a list of str")
    if kind is str:
        return _from_joined(column)
    return _from_lists(column, start)

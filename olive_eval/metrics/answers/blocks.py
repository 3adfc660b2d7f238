"""Examples in blocks, each block's predictions and reference answers normalized together into one buffer.

The kernels with Olive's normalization (exact_match, relaxed_accuracy ``olive``, word_sort_ratio ``olive``, anls)
never build a Python string per answer. A block's predictions and references are joined into one text and
normalized in bulk (:func:`~.text.normalized_bytes`); the buffer is then cut into segments, the predictions' first
and every reference alternative's after them (:class:`Block`). The three reference forms of :mod:`.references`:

* ``|``-joined strings (Olive's form): the buffer is cut at the ``|`` bytes of the references as well, so an
  alternative never exists as a string of its own. A block whose references hold a backslash (the escape of a
  literal ``|``) is split string by string instead.
* lists of strings: flattened, one segment per string.
* :class:`~.references.Answers` (already parsed): its texts, one segment each.

Inputs are validated as they are joined: ``str.join`` refuses anything that is not a string, and only then are
the block's values checked one by one, for an error that names the example. Blocks keep every buffer a few MB;
one built for a million answers is tens of MB, which the allocator maps fresh from the OS each time, and the
page faults then cost more than the work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from olive_eval.metrics.answers.references import (
    Alternatives,
    Answers,
    check_lengths,
    check_predictions,
    split_alternatives,
    to_answers,
)
from olive_eval.metrics.answers.text import Segments, normalized_bytes

__all__ = ["BLOCK", "Block", "blocks", "columns", "scores_by_block"]

BLOCK = 1 << 13  # examples per block (4-16k measured fastest at 1M pairs)
_LISTS = (list, tuple, np.ndarray)


@dataclass(frozen=True)
class Block:
    """A block's ``n`` predictions (segments ``0 .. n - 1``) and their alternatives (segments ``n ..``)."""

    seg: Segments
    n: int
    alternatives: Alternatives  # example i's alternatives are segments n + offsets[i] .. n + offsets[i + 1] - 1

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Segment indices of every (prediction, alternative) pair, one per alternative."""
        left = self.alternatives.owner()
        return left, np.arange(self.n, self.n + left.size)

    def matches(self) -> np.ndarray:
        """Per example: does the prediction equal one of the alternatives (normalized)?"""
        alternatives = self.alternatives
        right = slice(self.n, self.n + int(alternatives.offsets[-1]))
        if alternatives.single:
            return self.seg.equal(slice(0, self.n), right)
        return np.logical_or.reduceat(self.seg.equal(alternatives.owner(), right), alternatives.offsets[:-1])

    def best(self, scores: np.ndarray) -> np.ndarray:
        """Per example, the best of its alternatives' ``scores``."""
        return self.alternatives.best(scores)


def scores_by_block(
    predictions: Sequence[str], references: object, metric: str, score: Callable[[Block], np.ndarray]
) -> np.ndarray:
    """``score`` of every block, concatenated: one float64 per example."""
    parts = [score(block) for block in blocks(predictions, references, metric)]
    return np.concatenate(parts).astype(np.float64, copy=False) if parts else np.zeros(0)


def columns(predictions: Sequence[str], references: object, metric: str) -> tuple[list[str], list | Answers]:
    """Both columns as lists (or the references as :class:`Answers`), of equal length (Olive's error if not).

    Only the containers are checked here; the values are checked as they are read.
    """
    if isinstance(predictions, str):
        raise TypeError("predictions must be a sequence of strings, got a single str")
    preds = predictions if isinstance(predictions, list) else list(predictions)
    if isinstance(references, str):
        raise TypeError("references must be a sequence with one entry per example, got a single str")
    refs = references if isinstance(references, (list, Answers)) else list(references)  # type: ignore[call-overload]
    check_lengths(len(preds), len(refs), metric)
    return preds, refs


def blocks(predictions: Sequence[str], references: object, metric: str) -> Iterator[Block]:
    """The examples in blocks of :data:`BLOCK`; errors name the example (a wrong type, a length mismatch)."""
    preds, refs = columns(predictions, references, metric)
    if not preds:
        return
    joined = isinstance(refs, list) and isinstance(refs[0], str)
    if not (joined or isinstance(refs, Answers)):
        to_answers(refs[:1])  # the first entry decides the form: the error for neither
    for lo in range(0, len(preds), BLOCK):
        hi = min(lo + BLOCK, len(preds))
        try:
            if isinstance(refs, Answers):
                a, b = int(refs.offsets[lo]), int(refs.offsets[hi])
                block = _block(preds[lo:hi], refs.texts[a:b], refs.offsets[lo : hi + 1] - a)
            elif joined:
                block = _joined_block(preds[lo:hi], refs[lo:hi])
            else:
                block = _lists_block(preds[lo:hi], refs[lo:hi])
        except (TypeError, _Invalid):  # str.join met a value that is not a string, or a list check failed
            check_predictions(preds[lo:hi], start=lo)
            if not isinstance(refs, Answers):  # (Answers come from to_answers, checked)
                to_answers(refs[:hi])  # the column up to here, for an error that names the example
            raise
        yield block


def _block(preds: list[str], texts: list[str], offsets: np.ndarray) -> Block:
    return Block(Segments.ending_at(*normalized_bytes(preds + texts)), len(preds), Alternatives(offsets))


class _Invalid(Exception):
    """A block's references fail a check; :func:`to_answers` says which example and why."""


def _lists_block(preds: list[str], refs: list[Sequence[str]]) -> Block:
    kinds = set(map(type, refs))
    if not kinds <= set(_LISTS) and not all(isinstance(r, _LISTS) for r in refs):
        raise _Invalid  # a string among the lists, or neither
    counts = np.fromiter(map(len, refs), np.int64, len(refs))
    if counts.min() == 0:
        raise _Invalid  # an empty list of answers
    return _block(preds, list(chain.from_iterable(refs)), np.concatenate(([0], np.cumsum(counts))))


def _joined_block(preds: list[str], refs: list[str]) -> Block:
    """Predictions and ``|``-joined references: the references' ``|`` bytes end segments too."""
    buf, ends, nul = normalized_bytes(preds + refs)
    n = len(preds)
    first = int(ends[n - 1]) + 1  # the references' first byte
    tail = buf[first:]
    if (tail == ord("\\")).any():  # escapes: split string by string
        parts = [split_alternatives(r) for r in refs]
        offsets = np.concatenate(([0], np.cumsum([len(p) for p in parts])))
        return _block(preds, list(chain.from_iterable(parts)), offsets)
    pipes = np.flatnonzero(tail == ord("|"))
    if not pipes.size:
        return Block(Segments.ending_at(buf, ends, nul), n, Alternatives(np.arange(len(refs) + 1)))
    pipes += first
    example = np.searchsorted(ends[n:], pipes)  # the reference each "|" lies in
    counts = np.bincount(example, minlength=len(refs)) + 1
    buf = buf.copy() if not buf.flags.writeable else buf
    buf[pipes] = 0
    ends = np.sort(np.concatenate((ends, pipes)), kind="stable")  # two sorted runs: one merge
    return Block(Segments.ending_at(buf, ends, nul), n, Alternatives(np.concatenate(([0], np.cumsum(counts)))))

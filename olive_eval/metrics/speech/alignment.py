"""Edit-count kernels for speech error rates: one alignment per utterance, every measure from the counts.

Counts are an ``int64`` array ``[N, 4]``, one row per utterance, columns (hits, substitutions, deletions,
insertions) -- :data:`HITS`, :data:`SUBSTITUTIONS`, :data:`DELETIONS`, :data:`INSERTIONS`. The
reference length is ``H + S + D`` and the prediction length ``H + S + I``.

* :func:`word_edit_counts` -- jiwer 4's ``process_words`` exactly: its default transform's words
  (:func:`jiwer_words`: runs of two or more whitespace characters become a space, the ends are stripped,
  words are split at single spaces, so a lone tab or newline stays inside its word) and its alignment
  (rapidfuzz's Levenshtein edit operations with the reference as the source). On normalized text (single
  spaces) these are the words of ``str.split()``, as Olive and torchmetrics split.
* :func:`char_edit_counts` -- jiwer 4's CER alignment: each text stripped, every character a token,
  spaces included and not collapsed.
* :func:`leaderboard_edit_counts` -- the Open ASR Leaderboard's counting: kaldialign with
  ``merge_compounds=True``; hits there are ``reference words - S - D``, see its docstring.

The reducers (:func:`wer`, :func:`cer`, :func:`mer`, :func:`wil`, :func:`wip`) take counts summed over a
corpus, ``[4]`` -> float, or any ``[..., 4]`` (bootstrap resamples ``[B, 4]``) -> an array of the leading
shape. Corpus WER is total ``S + D + I`` over total reference words, not a mean of utterance rates.
Given per-utterance counts and ``empty_reference="jiwer"`` they are the instance scores
(:func:`instance_scores`).

Why the kernels are fast: where the optional C extension (``_edit_counts.c``) is built, one call counts every
pair with the GIL released: it splits the words (or characters) itself, compares them exactly (interned to ids
per pair), drops the common prefix and suffix and runs Hyyro's bit-parallel recurrence with rapidfuzz's walk
back, so the split into S, D and I is rapidfuzz's (the tests hold the two paths equal, and both equal to jiwer).
Pairs whose matrix would make rapidfuzz switch to Hirschberg's algorithm (a megabyte or more) come back to the
Python path. The Python path (``use_compiled=False``, or no compiler at install time): a prediction equal to its
reference is all hits and is not aligned; the other texts are split in C and passed to rapidfuzz as lists of str
(hashed in C, so two different words would only meet as equal through a 64-bit hash collision); one rapidfuzz
``editops`` call per utterance gives the distance ``d = S + D + I``; with the lengths ``n``, ``m`` this fixes the
split whenever ``d - |n - m| <= 1``, and otherwise the hits are read back in C by applying the edit operations to
a string of ``n`` zeros (``Editops.apply``). Python's cyclic garbage collector is paused while the per-utterance
lists exist (it would rescan them over and over); they hold no cycles.
"""

from __future__ import annotations

import contextlib
import gc
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress
from typing import Literal

import numpy as np
import numpy.typing as npt
from rapidfuzz.distance import Levenshtein

from olive_eval.metrics.speech.native import compiled_available, counts_extension, kernel_threads
from olive_eval.metrics.speech.normalize import as_texts

__all__ = [
    "COUNT_COLUMNS",
    "DELETIONS",
    "HITS",
    "INSERTIONS",
    "MEASURES",
    "SUBSTITUTIONS",
    "EmptyReference",
    "cer",
    "char_edit_counts",
    "compiled_available",
    "instance_scores",
    "jiwer_words",
    "leaderboard_edit_counts",
    "mer",
    "wer",
    "wil",
    "wip",
    "word_edit_counts",
]

HITS, SUBSTITUTIONS, DELETIONS, INSERTIONS = 0, 1, 2, 3
COUNT_COLUMNS = ("hits", "substitutions", "deletions", "insertions")

EmptyReference = Literal["raise", "jiwer"]

_WHITESPACE_RUN = re.compile(r"\s\s+")  # jiwer's RemoveMultipleSpaces
_OTHER_WHITESPACE = re.compile(r"[^\S ]")  # whitespace other than the space


# ----------------------------------------------------------------------------------------------- input
@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (the kernels create no cycles; they create many lists)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _pair(
    predictions: str | Iterable[str], references: str | Iterable[str], check: bool = True
) -> tuple[list[str], list[str]]:
    """Both sides as lists; ``check=False`` leaves the type check to the C kernel (see :func:`_edit_counts`)."""
    if check:
        preds, refs = as_texts(predictions, "prediction"), as_texts(references, "reference")
    else:
        preds = [predictions] if isinstance(predictions, str) else list(predictions)
        refs = [references] if isinstance(references, str) else list(references)
    if len(preds) != len(refs):
        raise ValueError(
            f"predictions and references must have the same length, got {len(preds)} predictions "
            f"and {len(refs)} references"
        )
    return preds, refs


def _lengths(sequences: Sequence[Sequence[object]]) -> np.ndarray:
    return np.fromiter(map(len, sequences), np.int64, len(sequences))


# ---------------------------------------------------------------------------------------------- counts
def _counts_from_editops(ref_tokens: list, pred_tokens: list) -> np.ndarray:
    """(H, S, D, I) per pair from rapidfuzz's edit operations, reference as the source (as jiwer)."""
    n, m = _lengths(ref_tokens), _lengths(pred_tokens)
    ops = list(map(Levenshtein.editops, ref_tokens, pred_tokens))
    dist = _lengths(ops)
    # S + D + I = d and I - D = m - n leave S = d - |n - m| - 2 min(D, I): forced when that is 0 or 1.
    excess = dist - np.abs(n - m)
    hits = n - excess - np.maximum(n - m, 0)
    open_rows = np.flatnonzero(excess > 1)
    if open_rows.size:
        hits[open_rows] = [
            ops[i].apply("0" * a, "1" * b).count("0")  # kept source items are the hits
            for i, a, b in zip(open_rows.tolist(), n[open_rows].tolist(), m[open_rows].tolist(), strict=True)
        ]
    subs = n + m - 2 * hits - dist
    return np.stack([hits, subs, n - hits - subs, m - hits - subs], axis=1)


def _python_counts(preds: list[str], refs: list[str], tokenize: Callable[[str], Sequence[object]]) -> np.ndarray:
    """Counts of every pair through rapidfuzz; a prediction equal to its reference is all hits without being aligned."""
    with _gc_paused():
        ref_tokens = list(map(tokenize, refs))
        counts = np.zeros((len(refs), 4), np.int64)
        counts[:, HITS] = _lengths(ref_tokens)
        differ = list(map(operator.ne, preds, refs))
        if any(differ):
            pred_tokens = list(map(tokenize, compress(preds, differ)))
            counts[np.flatnonzero(differ)] = _counts_from_editops(list(compress(ref_tokens, differ)), pred_tokens)
            del pred_tokens
        del ref_tokens  # freed before the collector resumes, so it never scans them
    return counts


def _edit_counts(
    preds: list[str],
    refs: list[str],
    tokenize: Callable[[str], Sequence[object]],
    chars: bool,
    use_compiled: bool,
    threads: int | None = None,
) -> np.ndarray:
    """Counts of every pair: in C where built (rows it leaves, Hirschberg-sized ones, through rapidfuzz)."""
    if not (use_compiled and counts_extension is not None):
        return _python_counts(preds, refs, tokenize)
    try:
        raw, late = counts_extension.counts(
            refs, preds, chars, kernel_threads(len(refs)) if threads is None else threads
        )
    except TypeError:  # a text that is not a str: the error that names it
        as_texts(preds, "prediction")
        as_texts(refs, "reference")
        raise
    counts = np.frombuffer(raw, np.int64).reshape(len(refs), 4)
    if late:
        counts[late] = _python_counts([preds[i] for i in late], [refs[i] for i in late], tokenize)
    return counts


def jiwer_words(text: str) -> list[str]:
    """The words of jiwer 4's default transform: whitespace runs of two or more to a space, stripped, split at spaces."""
    text = _WHITESPACE_RUN.sub(" ", text).strip()
    return text.split(" ") if text else []


def word_edit_counts(
    predictions: str | Iterable[str],
    references: str | Iterable[str],
    *,
    use_compiled: bool = True,
    threads: int | None = None,
) -> np.ndarray:
    """Per-utterance word counts ``[N, 4]`` (H, S, D, I) of already-normalized texts, as jiwer 4 counts them.

    A bare string is one utterance. An empty reference contributes its prediction's words as insertions.
    Where no text holds whitespace other than spaces, jiwer's words are those of ``str.split()`` (split in C).
    ``use_compiled=False`` takes the rapidfuzz path even where the C extension is built (the two are equal);
    ``threads`` is the C kernel's (None: one per core, see :func:`~olive_eval.metrics.speech.native.kernel_threads`).
    """
    if use_compiled and counts_extension is not None:
        return _edit_counts(*_pair(predictions, references, check=False), jiwer_words, False, True, threads)
    preds, refs = _pair(predictions, references)
    spaces_only = not (_OTHER_WHITESPACE.search("".join(preds)) or _OTHER_WHITESPACE.search("".join(refs)))
    return _edit_counts(preds, refs, str.split if spaces_only else jiwer_words, False, False)


def char_edit_counts(
    predictions: str | Iterable[str],
    references: str | Iterable[str],
    *,
    use_compiled: bool = True,
    threads: int | None = None,
) -> np.ndarray:
    """Per-utterance character counts ``[N, 4]``: jiwer 4's CER (texts stripped, spaces are characters).

    ``use_compiled`` and ``threads`` as in :func:`word_edit_counts`.
    """
    compiled = use_compiled and counts_extension is not None
    return _edit_counts(*_pair(predictions, references, check=not compiled), str.strip, True, compiled, threads)


def leaderboard_edit_counts(predictions: str | Iterable[str], references: str | Iterable[str]) -> np.ndarray:
    """Per-utterance counts ``[N, 4]`` as the Open ASR Leaderboard scores: kaldialign, ``merge_compounds=True``.

    S, D and I are kaldialign's; adjacent words of either side may join to match one word of the other
    at no cost ("ice cream" vs "icecream"), so H is defined as ``reference words - S - D`` and
    ``wer(counts)`` equals kaldialign's ``err_rate``. Only WER is defined on these counts: with merged
    compounds ``H + S + I`` need not be the prediction's length, so MER/WIL/WIP are not meaningful.
    Texts should already be normalized (the leaderboard uses Whisper's English normalizer).
    """
    try:
        import kaldialign
    except ImportError as exc:
        raise ImportError(
            "the 'open_asr_leaderboard' counting needs the kaldialign package: pip install kaldialign"
        ) from exc
    preds, refs = _pair(predictions, references)
    rows = []
    with _gc_paused():
        for ref, pred in zip(map(str.split, refs), map(str.split, preds), strict=True):
            if ref == pred:  # identical word lists: all hits, no alignment needed
                rows.append((len(ref), 0, 0, 0))
                continue
            result = kaldialign.edit_distance(ref, pred, merge_compounds=True)
            sub, dele = result["sub"], result["del"]
            rows.append((len(ref) - sub - dele, sub, dele, result["ins"]))
    return np.array(rows, np.int64).reshape(len(rows), 4)


# -------------------------------------------------------------------------------------------- reducers
def _columns(counts: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    c = np.asarray(counts)
    if c.ndim == 0 or c.shape[-1] != 4 or not np.issubdtype(c.dtype, np.integer):
        raise ValueError(f"edit counts must be integers of shape [..., 4] (H, S, D, I), got {c.dtype} {list(c.shape)}")
    c = c.astype(np.int64, copy=False)
    return c[..., HITS], c[..., SUBSTITUTIONS], c[..., DELETIONS], c[..., INSERTIONS]


def _finish(values: np.ndarray) -> float | np.ndarray:
    return float(values) if values.ndim == 0 else values


def _check_reference(n_ref: np.ndarray, empty_reference: EmptyReference, unit: str) -> np.ndarray:
    empty = n_ref == 0
    if empty_reference == "raise":
        if empty.any():
            raise ValueError(
                f"the references hold no {unit} at all (every reference is empty after normalization): "
                f"the error rate is undefined"
            )
    elif empty_reference != "jiwer":
        raise ValueError(f"empty_reference must be 'raise' or 'jiwer', got {empty_reference!r}")
    return empty


def _error_rate(counts: npt.ArrayLike, empty_reference: EmptyReference, unit: str) -> float | np.ndarray:
    h, s, d, i = _columns(counts)
    n_ref = h + s + d
    empty = _check_reference(n_ref, empty_reference, unit)
    # jiwer: with no reference words the "rate" is the number of insertions
    rate = np.where(empty, i, (s + d + i) / np.where(empty, 1, n_ref).astype(np.float64))
    return _finish(rate.astype(np.float64))


def wer(counts: npt.ArrayLike, *, empty_reference: EmptyReference = "raise") -> float | np.ndarray:
    """Word error rate ``(S + D + I) / (H + S + D)`` of summed counts ``[..., 4]``.

    No reference words: ``"raise"`` (the default) raises ValueError; ``"jiwer"`` gives jiwer 4's value,
    the number of insertions (0 for an empty prediction, 1 for one inserted word).
    """
    return _error_rate(counts, empty_reference, "words")


def cer(counts: npt.ArrayLike, *, empty_reference: EmptyReference = "raise") -> float | np.ndarray:
    """Character error rate: :func:`wer` over the counts of :func:`char_edit_counts`."""
    return _error_rate(counts, empty_reference, "characters")


def mer(counts: npt.ArrayLike, *, empty_reference: EmptyReference = "raise") -> float | np.ndarray:
    """Match error rate ``(S + D + I) / (H + S + D + I)``; no reference words -> 0 if no prediction words, else 1."""
    h, s, d, i = _columns(counts)
    empty = _check_reference(h + s + d, empty_reference, "words")
    errors = s + d + i
    rate = np.where(empty, (i > 0).astype(np.float64), errors / np.where(empty, 1, errors + h).astype(np.float64))
    return _finish(rate)


def wip(counts: npt.ArrayLike, *, empty_reference: EmptyReference = "raise") -> float | np.ndarray:
    """Word information preserved ``(H / reference words) * (H / prediction words)``, 0 if no prediction words.

    No reference words: 1 if there are no prediction words either, else 0 (jiwer 4).
    """
    h, s, d, i = _columns(counts)
    n_ref, n_pred = h + s + d, h + s + i
    empty = _check_reference(n_ref, empty_reference, "words")
    hf = h.astype(np.float64)
    preserved = (hf / np.maximum(n_ref, 1)) * (hf / np.maximum(n_pred, 1))  # jiwer's operation order
    rate = np.where(empty, (n_pred == 0).astype(np.float64), np.where(n_pred > 0, preserved, 0.0))
    return _finish(rate)


def wil(counts: npt.ArrayLike, *, empty_reference: EmptyReference = "raise") -> float | np.ndarray:
    """Word information lost, ``1 - wip``."""
    return _finish(1.0 - np.asarray(wip(counts, empty_reference=empty_reference), np.float64))


MEASURES: dict[str, Callable[..., float | np.ndarray]] = {"wer": wer, "cer": cer, "mer": mer, "wil": wil, "wip": wip}


def instance_scores(counts: npt.ArrayLike, measure: str = "wer") -> np.ndarray:
    """The measure of every utterance alone: ``[N, 4]`` per-utterance counts -> ``[N]`` float64.

    Empty references take jiwer 4's per-utterance values (WER = the insertions), so a corpus with some
    empty references still ranks every utterance; sort descending to find the worst.
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; choose one of {', '.join(MEASURES)}")
    c = np.asarray(counts)
    if c.ndim != 2:
        raise ValueError(f"per-utterance counts must have shape [N, 4], got {list(c.shape)}")
    return np.asarray(MEASURES[measure](c, empty_reference="jiwer"), np.float64)

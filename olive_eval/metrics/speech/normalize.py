r"""Text normalizers for speech error rates, registered as text transforms (:mod:`olive_eval.transforms`).

The speech metrics' ``normalizer`` is any transform spec: these names, another registered transform (a user's),
or a list of them applied in order. The names below are text transforms everywhere (filters, answer metrics).

* ``"olive"`` -- Olive's WER normalization: lowercase, every ``[^\w\s]`` character to a space, whitespace
  runs collapsed to one space, stripped. ``"don't"`` becomes ``"don t"`` (two words), ``"naïve"`` stays.
* ``"olive_raw"`` -- Olive's ``normalize: false``, and Olive 0.13's only rule: the text as it is but for its
  whitespace, each run of it one space and none at the ends, so the words are those of ``str.split()``, as
  torchmetrics (Olive's WER) splits them: a lone tab or newline separates words.
* ``"none"`` -- the text unchanged; words are then split as jiwer 4 splits them (a lone tab or newline stays
  inside its word, see :func:`olive_eval.metrics.speech.alignment.jiwer_words`).
* ``"whisper_english"`` -- Whisper's ``EnglishTextNormalizer`` with its British-to-American spelling
  mapping, from the ``whisper-normalizer`` package (fillers dropped, contractions expanded, spoken
  numbers to digits, ``colour`` to ``color``).
* ``"open_asr_leaderboard"`` -- the same Whisper English normalizer. The leaderboard's scoring differs in
  the counting, not the text: :func:`olive_eval.metrics.speech.alignment.leaderboard_edit_counts`.

:func:`normalize_texts` is the bulk form the metrics use; ``"olive"`` normalizes a whole corpus in a few
C-level passes over one joined string instead of three regex calls per utterance.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from itertools import repeat

import numpy as np

from olive_eval.transforms import (
    TextTransform,
    TransformParams,
    TransformSpec,
    build_transform,
    register_transform,
    transform_registry,
)

__all__ = ["NORMALIZERS", "as_texts", "get_normalizer", "normalize_texts", "olive_normalize"]

#: The speech normalizers this module registers (every other registered text transform is accepted too).
NORMALIZERS: tuple[str, ...] = ("olive", "olive_raw", "none", "whisper_english", "open_asr_leaderboard")

_NON_WORD = re.compile(r"[^\w\s]")
_WHITESPACE = re.compile(r"\s+")
_SPACE = 32
_SEP = "\x00"  # joins utterances for the bulk pass; it is neither \w nor \s, so it is kept out of the class
_NON_WORD_OR_SEP = re.compile(r"[^\w\s\x00]")


def _ascii_table() -> bytes:
    """A ``bytes.translate`` table doing Olive's three steps on ASCII text, derived from the same regexes."""
    table = bytearray(range(256))
    for code in range(1, 128):
        char = chr(code)
        table[code] = ord(" ") if _NON_WORD.match(char) or _WHITESPACE.match(char) else ord(char.lower())
    return bytes(table)


_ASCII_TABLE = _ascii_table()


def as_texts(texts: str | Iterable[str], what: str) -> list[str]:
    """``texts`` as a list of str (a bare string is one text); TypeError naming the first non-string."""
    items = [texts] if isinstance(texts, str) else list(texts)
    if not all(map(isinstance, items, repeat(str))):
        raise_non_string(items, what)
    return items


def raise_non_string(items: list[object], what: str) -> None:
    """Raise the TypeError for the first item of ``items`` that is not a str (used after a fast path failed)."""
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"{what} at index {index} is a {type(item).__name__}, not a str: {item!r:.80}")


def olive_normalize(text: str) -> str:
    """Olive's normalization of one text (lowercase, ``[^\\w\\s]`` to spaces, whitespace collapsed, stripped)."""
    return _WHITESPACE.sub(" ", _NON_WORD.sub(" ", text.lower())).strip()


def _collapse_spaces(data: bytes) -> bytes:
    """One space for every run of spaces, and none beside a separator or at either end.

    ``data`` went through :data:`_ASCII_TABLE`, so its only bytes at or below 32 are the separator (0)
    and the space. Two numpy masks replace a loop of ``bytes.replace`` calls (each a full copy).
    """
    a = np.frombuffer(data, np.uint8)
    if a.size == 0:
        return data
    # 1. drop every space followed by a space, a separator or the end: each run keeps its last space
    drop = np.empty(a.shape, bool)
    np.logical_and(a[:-1] == _SPACE, a[1:] <= _SPACE, out=drop[:-1])
    drop[-1] = a[-1] == _SPACE
    a = a[~drop]
    if a.size == 0:
        return b""
    # 2. drop the single space left at the very start or right after a separator
    starts = np.flatnonzero(np.concatenate(([True], a[:-1] == 0)))
    return np.delete(a, starts[a[starts] == _SPACE]).tobytes()


def _olive_bulk(texts: list[str]) -> list[str]:
    if not texts:
        return []
    joined = _SEP.join(texts)
    if joined.count(_SEP) != len(texts) - 1:  # the separator occurs in a text: no bulk pass
        return [olive_normalize(t) for t in texts]
    if joined.isascii():
        return _collapse_spaces(joined.encode("ascii").translate(_ASCII_TABLE)).decode("ascii").split(_SEP)
    # str.lower is per character except for the final sigma, whose context stops at the separator
    # (neither cased nor case-ignorable), so lowering the joined text equals lowering each text.
    lowered = _NON_WORD_OR_SEP.sub(" ", joined.lower())
    return [" ".join(piece.split()) for piece in lowered.split(_SEP)]


@functools.lru_cache(maxsize=1)
def _whisper_english() -> Callable[[str], str]:
    try:
        from whisper_normalizer.english import EnglishTextNormalizer
    except ImportError as exc:
        raise ImportError(
            "the 'whisper_english' and 'open_asr_leaderboard' normalizers need the whisper-normalizer "
            "package: pip install whisper-normalizer"
        ) from exc
    return EnglishTextNormalizer()


@register_transform("olive")
class OliveNormalizer(TextTransform):
    """Olive's WER normalization; a list is normalized in a few bulk passes (:func:`_olive_bulk`)."""

    def __call__(self, text: str) -> str:
        return olive_normalize(text)

    def many(self, texts: list[str]) -> list[str]:
        return _olive_bulk(texts)


@register_transform("olive_raw")
def _whitespace_collapsed(text: str) -> str:
    return " ".join(text.split())


@register_transform("none")
class Unchanged(TextTransform):
    """The text as it is."""

    def __call__(self, text: str) -> str:
        return text

    def many(self, texts: list[str]) -> list[str]:
        return texts


class WhisperEnglish(TextTransform):
    """Whisper's ``EnglishTextNormalizer`` (the whisper-normalizer package), loaded when first built."""

    def __init__(self, params: TransformParams) -> None:
        super().__init__(params)
        self._normalize = _whisper_english()

    def __call__(self, text: str) -> str:
        return self._normalize(text)


@register_transform("whisper_english")
class WhisperEnglishNormalizer(WhisperEnglish):
    pass


@register_transform("open_asr_leaderboard")
class OpenAsrLeaderboardNormalizer(WhisperEnglish):
    """The same text as ``whisper_english``; the leaderboard differs in how it counts (``wer`` only)."""


def get_normalizer(spec: TransformSpec) -> TextTransform:
    """The normalizer ``spec`` names: one of :data:`NORMALIZERS`, another registered text transform, or a list."""
    if isinstance(spec, str) and spec not in transform_registry:
        others = [name for name in transform_registry.names() if name not in NORMALIZERS]
        raise ValueError(
            f"unknown text normalizer {spec!r}; choose one of {', '.join(NORMALIZERS)}, or a registered text "
            f"transform ({', '.join(others)})"
        )
    return build_transform(spec)


def normalize_texts(
    texts: str | Iterable[str], normalizer: TransformSpec = "olive", *, what: str = "text"
) -> list[str]:
    """Every text normalized by ``normalizer``; ``what`` ("prediction", "reference") names them in errors."""
    normalize = get_normalizer(normalizer)  # unknown names fail before the texts are looked at
    items = [texts] if isinstance(texts, str) else list(texts)
    if isinstance(normalize, OliveNormalizer):
        try:
            return _olive_bulk(items)
        except TypeError:  # str.join met a non-string
            raise_non_string(items, what)
            raise
    return normalize.many(as_texts(items, what))

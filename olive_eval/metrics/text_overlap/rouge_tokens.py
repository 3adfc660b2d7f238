"""rouge-score's tokenizer, over a whole column at once: texts to integer token ids.

rouge-score (``rouge_score.tokenize``) lowercases a text, turns every run of characters outside ``[a-z0-9]`` into a
space, splits, stems tokens longer than 3 characters with nltk's Porter stemmer when asked, and keeps the tokens
that match ``^[a-z0-9]+$`` (so text in other scripts has no tokens). Here every text of a column is lowercased and
split in one pass over their UTF-8 bytes (a byte table keeps ``a-z0-9``; every byte of a non-ASCII character is
outside it), each distinct token is stemmed once, and tokens become ids of one vocabulary shared by the predictions
and the references, so that the kernels compare integers. Lowercasing is per character, so joining the texts first
changes nothing.

For rougeLsum, a text's sentences are its lines (rouge-score splits on ``"\\n"`` and drops empty lines); a line
without tokens adds nothing to the summary-level LCS, so only lines with tokens are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["Tokens", "tokenize"]

_TEXT, _LINE = b"\x00", b"\x01"  # separators: between texts, and for each newline within a text
_KEPT = b"abcdefghijklmnopqrstuvwxyz0123456789" + _TEXT + _LINE
_TABLE = bytes(b if b in _KEPT else 32 for b in range(256))  # every other byte (UTF-8 of non-ASCII too) to a space
_VALID = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Tokens:
    """Token ids of ``n`` texts: text ``i`` is ``ids[offsets[i] : offsets[i + 1]]``.

    With lines, ``lines`` are the token offsets of every non-empty line in order, and text ``i`` owns lines
    ``line_offsets[i] : line_offsets[i + 1]``.
    """

    ids: np.ndarray
    offsets: np.ndarray
    vocabulary_size: int
    lines: np.ndarray | None = None
    line_offsets: np.ndarray | None = None

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


def _joined(texts: list[str], lines: bool) -> str:
    """The texts as one string, with a separator between texts (and a line mark for each newline)."""
    text = " \x00 ".join(texts)
    if text.count("\x00") != max(len(texts) - 1, 0):  # a text holds a NUL: it is a space to rouge-score
        text = " \x00 ".join(t.replace("\x00", " ") for t in texts)
    text = text.replace("\x01", " ")  # a line mark only where a newline was
    return text.replace("\n", " \x01 ") if lines else text


def tokenize(texts: list[str], stemmer: object | None = None, lines: bool = False) -> Tokens:
    """rouge-score's tokens of every text as ids; ``stemmer`` is an nltk ``PorterStemmer`` (or None)."""
    data = _joined(texts, lines).lower().encode("utf-8", "surrogatepass").translate(_TABLE)
    words = data.split()
    vocabulary = {word: i for i, word in enumerate(dict.fromkeys(words))}
    ids = np.fromiter(map(vocabulary.__getitem__, words), np.int64, len(words))
    is_text, is_line = ids == vocabulary.get(_TEXT, -1), ids == vocabulary.get(_LINE, -1)
    tokens = ~(is_text | is_line)
    before = np.cumsum(tokens) - tokens  # tokens before each position
    offsets = np.concatenate(([0], before[is_text], [int(tokens.sum())]))
    breaks = before[is_line]
    ids, size, kept = _stemmed(ids[tokens], list(vocabulary), stemmer)
    if kept is not None:  # a stem that is not a valid token is dropped, as rouge-score drops it
        index = np.concatenate(([0], np.cumsum(kept)))
        ids, offsets, breaks = ids[kept], index[offsets], index[breaks]
    if not lines:
        return Tokens(ids, offsets, size)
    bounds = np.union1d(offsets, breaks)
    spans = np.stack([bounds[:-1], bounds[1:]], axis=1)
    spans = spans[spans[:, 1] > spans[:, 0]]
    return Tokens(ids, offsets, size, spans, np.searchsorted(spans[:, 0], offsets, side="left"))


def _stemmed(ids: np.ndarray, words: list[bytes], stemmer: object | None) -> tuple[np.ndarray, int, np.ndarray | None]:
    """Ids after stemming (tokens that stem alike share an id), their number, and which tokens stay (None: all)."""
    if stemmer is None:
        return ids, len(words), None
    stem = stemmer.stem  # type: ignore[attr-defined]
    stems = [stem(w) if len(w) > 3 else w for w in (word.decode("ascii") for word in words)]
    table = {s: i for i, s in enumerate(dict.fromkeys(stems))}
    remap = np.fromiter(map(table.__getitem__, stems), np.int64, len(stems))
    valid = np.fromiter((_VALID.fullmatch(s) is not None for s in table), bool, len(table))
    ids = remap[ids]
    kept = valid[ids]
    return ids, len(table), None if kept.all() else kept

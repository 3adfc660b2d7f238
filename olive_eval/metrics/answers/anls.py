"""ANLS (Average Normalized Levenshtein Similarity) as the DocVQA scorer computes it, one score per example.

The official DocVQA / InfographicVQA (ST-VQA) scorer, whose numbers are the published ones: the Levenshtein
distance between the normalized answers (``" ".join(s.strip().lower().split())``) divided by the longer answer
*as given*, before stripping and collapsing whitespace (the scorer's ``len(s.upper())``, which is ``len(s)`` but
for a few characters such as "ß"); NL = 0 when both are empty. So "hallo" against "  hello  " is ``1 - 1/9``,
not ``1 - 1/5``, and of two answers equal once normalized the one with more stray whitespace scores higher. An
alternative scores ``1 - NL`` when ``NL <= threshold``, else 0, and an example its best alternative. The boundary
is inclusive as in the scorer, which zeroes a question only when ``1 - NL < 0.5`` (so NL exactly 0.5 scores 0.5;
the paper's equation writes ``NL < τ``). On answers that are already normalized, 1 - NL is
``rapidfuzz.distance.Levenshtein.normalized_similarity``.

No Python string per answer: the normalized answers come from the blocks' buffers (:mod:`.blocks`), pairs equal
once normalized are not aligned, the rest go to rapidfuzz's ``cpdist`` once per block, and the raw lengths are
counted over one UTF-32 buffer per block (:func:`upper_lengths`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from itertools import chain

import numpy as np

from olive_eval.metrics.answers.blocks import Block, blocks, columns
from olive_eval.metrics.answers.references import Answers, split_alternatives

__all__ = ["anls_scores", "upper_lengths"]


def anls_scores(predictions: Sequence[str], references: object, *, threshold: float = 0.5) -> np.ndarray:
    """Per example, the best alternative's ``1 - NL`` (0 where ``NL > threshold``), as float64."""
    if not 0 <= threshold <= 1:
        raise ValueError(f"anls threshold must lie in [0, 1], got {threshold}")
    preds, refs = columns(predictions, references, "anls")
    parts, lo = [], 0
    for block in blocks(preds, refs, "anls"):
        hi = lo + block.n
        left, right = block.pairs()
        longest = np.maximum(upper_lengths(preds[lo:hi])[left], _answer_lengths(refs, lo, hi))
        nl = _distances(block, left, right) / np.maximum(longest, 1)  # both empty: the distance is 0
        parts.append(block.best(np.where(nl <= threshold, 1.0 - nl, 0.0)))
        lo = hi
    return np.concatenate(parts) if parts else np.zeros(0)


def _distances(block: Block, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Levenshtein distance between the normalized strings of every (prediction, alternative) pair."""
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    seg = block.seg
    distances = np.zeros(left.size, np.int64)  # equal normalized strings: 0
    rest = np.flatnonzero(~seg.equal(left, right))
    if rest.size:
        pick = seg.strings().__getitem__
        distances[rest] = process.cpdist(
            list(map(pick, left[rest].tolist())), list(map(pick, right[rest].tolist())), scorer=Levenshtein.distance
        )
    return distances


def _answer_lengths(refs: list | Answers, lo: int, hi: int) -> np.ndarray:
    """The scorer's lengths of the alternatives of examples ``lo .. hi - 1``, in a block's order."""
    if isinstance(refs, Answers):
        return upper_lengths(refs.texts[int(refs.offsets[lo]) : int(refs.offsets[hi])])
    part = refs[lo:hi]
    if not isinstance(part[0], str):
        return upper_lengths(list(chain.from_iterable(part)))
    if any("\\" in r for r in part):  # escapes: the answers as split_alternatives reads them
        return upper_lengths([a for r in part for a in split_alternatives(r)])
    return upper_lengths(part, cut="|")


def upper_lengths(strings: list[str], cut: str = "") -> np.ndarray:
    """``len(s.upper())`` of every string, or of every piece of each between ``cut`` characters, in order.

    Counted over the UTF-32 code points of the joined strings; ``str.upper`` maps every character on its own, so
    only a character whose upper case is longer (:func:`_longer_upper`) adds to a piece's length.
    """
    text = "\x00".join(strings)
    if text.count("\x00") != len(strings) - 1:  # a string holds NUL (or there are none): one at a time
        pieces = chain.from_iterable(s.split(cut) if cut else (s,) for s in strings)
        return np.array([len(p.upper()) for p in pieces], np.int64)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    ends = np.flatnonzero((codes == 0) | (codes == ord(cut)) if cut else codes == 0)
    ends = np.append(ends, codes.size)
    lengths = np.diff(ends, prepend=-1) - 1
    if not text.isascii():
        chars, extra = _longer_upper()
        wide = np.flatnonzero(codes > 0x7F)
        at = np.minimum(np.searchsorted(chars, codes[wide]), chars.size - 1)
        longer = chars[at] == codes[wide]
        lengths += np.bincount(np.searchsorted(ends, wide[longer]), extra[at[longer]], ends.size).astype(np.int64)
    return lengths


@functools.cache
def _longer_upper() -> tuple[np.ndarray, np.ndarray]:
    """The characters whose ``str.upper()`` is longer than one character ("ß" -> "SS"), sorted, and by how much."""
    chars = [c for c in range(0x80, 0x110000) if len(chr(c).upper()) > 1]
    return np.array(chars, np.uint32), np.array([len(chr(c).upper()) - 1 for c in chars], np.int64)

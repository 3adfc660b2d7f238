"""ROUGE kernels with rouge-score's semantics, over whole columns of token ids (:mod:`.rouge_tokens`).

Per (prediction, reference) pair, with ``o`` the overlap, ``p`` the prediction's count and ``r`` the reference's:
precision ``o / max(p, 1)``, recall ``o / max(r, 1)``, F ``2PR / (P + R)`` (0 when both are 0), in that order of
floating-point operations, so the values are rouge-score's to the last bit.

* ``rougeN``: ``o`` is the clipped n-gram overlap ``sum_g min(count_pred(g), count_ref(g))``, counted in numpy over
  integer n-gram codes (:func:`_clipped_overlap`).
* ``rougeL``: ``o`` is the LCS of the two token sequences: rapidfuzz's ``LCSseq`` in C++, each text's ids as a
  string of one character per id (the form rapidfuzz compares fastest).
* ``rougeLsum``: the summary-level LCS of ROUGE-1.5.5 as rouge-score computes it: for each reference line the union
  of the reference positions of one LCS with every prediction line, chosen by rouge-score's backtrack through the
  LCS table, then hits counted so that no token is used more often than it occurs on either side.

Several references: rouge-score's ``score_multi`` keeps, per example, the pair with the highest F (the first on
ties) and reports its precision, recall and F.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import islice, pairwise
from typing import Any

import numpy as np
from rapidfuzz.distance import LCSseq

from olive_eval.metrics.text_overlap.rouge_tokens import Tokens, tokenize

__all__ = ["PRF", "best_per_example", "lcs_overlap", "ngram_overlap", "prf", "summary_overlap"]

#: The keys of :func:`_clipped_overlap` (pair or text, n-gram code, occurrence) must fit in an int64.
_KEY_LIMIT = 2**62


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F of each pair (or example)."""

    precision: np.ndarray
    recall: np.ndarray
    fmeasure: np.ndarray

    def take(self, index: np.ndarray) -> PRF:
        return PRF(self.precision[index], self.recall[index], self.fmeasure[index])


def prf(overlap: np.ndarray, predicted: np.ndarray, reference: np.ndarray) -> PRF:
    """rouge-score's precision, recall and F from overlaps and the two sides' counts."""
    precision = overlap / np.maximum(predicted, 1)
    recall = overlap / np.maximum(reference, 1)
    total = precision + recall
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(total > 0, 2 * precision * recall / total, 0.0)
    return PRF(precision.astype(np.float64), recall.astype(np.float64), f)


def _dense(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes renumbered 0..k-1 in their order, and k."""
    distinct = np.unique(codes)
    return np.searchsorted(distinct, codes), int(distinct.size)


def _ngram_codes(tokens: Tokens, n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """One integer per n-gram of every text (equal n-grams, equal codes), the texts' offsets into them, and a bound
    on the codes: the n-gram's ids as digits in base ``vocabulary_size``, or renumbered densely when such codes
    could overflow the keys of :func:`_clipped_overlap` (a very large vocabulary)."""
    ids, lengths = tokens.ids, tokens.lengths
    offsets = np.concatenate(([0], np.cumsum(np.maximum(lengths - n + 1, 0))))
    size = max(tokens.vocabulary_size, 1)
    bound = size**n
    dense = bound * (int(lengths.max(initial=0)) + 1) * len(lengths) >= _KEY_LIMIT
    if dense:  # ids, then each longer prefix of the n-grams, renumbered 0..k-1 before the next digit
        ids, size = _dense(ids)
    codes = ids
    for j in range(1, n):
        codes = codes[:-1] * size + ids[j:]
        if dense:
            codes, bound = _dense(codes)
    ends = np.repeat(tokens.offsets[1:], lengths)[: codes.size]
    return codes[np.arange(codes.size) + n <= ends], offsets, bound  # n-grams inside one text


def _clipped_overlap(codes: np.ndarray, offsets: np.ndarray, bound: int, owner: np.ndarray) -> np.ndarray:
    """``sum_g min(count_pred(g), count_ref(g))`` of every pair, in numpy.

    Each text's codes are sorted (one sort of text-major keys); the k-th occurrence of a code in a text becomes the
    item ``code * R + k``, so that two texts share exactly ``min`` items of each code, and the pair's overlap is the
    number of its prediction's items found among its reference's (one binary search of all items).
    """
    n_texts, n_pairs = len(offsets) - 1, len(owner)
    counts = np.diff(offsets)
    text = np.repeat(np.arange(n_texts, dtype=np.int64), counts)
    keys = np.sort(text * bound + codes)
    position = np.arange(keys.size)
    first = np.maximum.accumulate(np.where(np.r_[True, keys[1:] != keys[:-1]], position, 0))
    rank = position - first
    width = int(rank.max(initial=0)) + 1
    items = (keys - text * bound) * width + rank  # sorted within each text
    span = bound * width
    first_ref = n_texts - n_pairs
    ref_items = np.arange(n_pairs, dtype=np.int64).repeat(counts[first_ref:]) * span + items[offsets[first_ref] :]
    lengths = counts[owner]
    starts = np.repeat(offsets[owner] - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    pair = np.repeat(np.arange(n_pairs, dtype=np.int64), lengths)
    pred_items = pair * span + items[starts + np.arange(lengths.sum())]
    if ref_items.size == 0:
        return np.zeros(n_pairs, np.int64)
    found = np.minimum(np.searchsorted(ref_items, pred_items), ref_items.size - 1)
    return np.bincount(pair[ref_items[found] == pred_items], minlength=n_pairs)


#: The largest code a text can hold as a character: codes at and above the surrogates move up by 0x800.
_MAX_CHAR_CODE = 0x10FFFF - 0x800


def _sequences(codes: np.ndarray, offsets: np.ndarray) -> list[str] | list[list[int]]:
    """Each text's codes as one sequence for rapidfuzz: a string of one character per code (the fastest form),
    or a list of ints when a code is too large for a character."""
    bounds = offsets.tolist()
    if codes.size and int(codes.max()) > _MAX_CHAR_CODE:
        flat = codes.tolist()
        return [flat[a:b] for a, b in pairwise(bounds)]
    points = (codes + 0x800 * (codes >= 0xD800)).astype("<u4")
    text = points.tobytes().decode("utf-32-le")
    return [text[a:b] for a, b in pairwise(bounds)]


def _pair_overlap(sequences: list[str] | list[list[int]], owner: np.ndarray) -> np.ndarray:
    """rapidfuzz's LCS length of prediction ``owner[p]`` and reference ``p`` (texts laid out as in
    :func:`ngram_overlap`)."""
    first_ref = len(sequences) - len(owner)
    similarity = LCSseq.similarity
    pairs = enumerate(owner.tolist())
    return np.fromiter((similarity(sequences[i], sequences[first_ref + p]) for p, i in pairs), np.int64, len(owner))


def ngram_overlap(tokens: Tokens, owner: np.ndarray, n: int) -> PRF:
    """rougeN of every pair ``p``: prediction ``owner[p]`` against reference ``p``.

    ``tokens`` holds the predictions' texts first, then the references' (one vocabulary), so reference ``p`` is the
    text ``n_predictions + p``.
    """
    codes, offsets, bound = _ngram_codes(tokens, n)
    counts = np.diff(offsets)
    return prf(_clipped_overlap(codes, offsets, bound, owner), counts[owner], counts[len(counts) - len(owner) :])


def lcs_overlap(tokens: Tokens, owner: np.ndarray) -> PRF:
    """rougeL of every pair (texts laid out as in :func:`ngram_overlap`)."""
    overlap = _pair_overlap(_sequences(tokens.ids, tokens.offsets), owner)
    lengths = tokens.lengths
    return prf(overlap, lengths[owner], lengths[len(lengths) - len(owner) :])


def _lcs_positions(ref: list[int], cand: list[int]) -> list[int]:
    """The reference positions of the LCS that rouge-score's backtrack picks.

    The table ``t[i][j]`` is the LCS length of ``ref[:i]`` and ``cand[:j]``. From the end: equal tokens are taken
    diagonally; otherwise the walk goes left (``j - 1``) only when that keeps a strictly longer LCS than going up.
    """
    table = [[0] * (len(cand) + 1)]
    for token in ref:  # the hot loop of rougeLsum: no index arithmetic, no max() call per cell (2x faster)
        above, row, left = table[-1], [0], 0
        append = row.append
        for other, diagonal, up in zip(cand, above, islice(above, 1, None), strict=False):  # above: one longer
            if token == other:
                left = diagonal + 1
            elif up > left:
                left = up
            append(left)
        table.append(row)
    positions, i, j = [], len(ref), len(cand)
    while i and j:
        if ref[i - 1] == cand[j - 1]:
            i, j = i - 1, j - 1
            positions.append(i)
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return positions


def _summary_hits(ref_lines: list[list[int]], cand_lines: list[list[int]]) -> int:
    """Summary-level LCS hits of one pair, each token used at most as often as it occurs on both sides."""
    left_ref = Counter(t for line in ref_lines for t in line)
    left_cand = Counter(t for line in cand_lines for t in line)
    cand_sets = [set(line) for line in cand_lines]
    hits = 0
    for ref in ref_lines:
        shared = set(ref)
        union: set[int] = set()
        for cand, cand_set in zip(cand_lines, cand_sets, strict=True):
            if not shared.isdisjoint(cand_set):
                union.update(_lcs_positions(ref, cand))
        for position in sorted(union):
            token = ref[position]
            if left_cand[token] > 0 and left_ref[token] > 0:
                hits += 1
                left_cand[token] -= 1
                left_ref[token] -= 1
    return hits


def summary_overlap(tokens: Tokens, owner: np.ndarray) -> PRF:
    """rougeLsum of every pair (texts laid out as in :func:`ngram_overlap`, ``tokens`` made with lines)."""
    assert tokens.lines is not None and tokens.line_offsets is not None
    flat = tokens.ids.tolist()
    lines = [flat[a:b] for a, b in tokens.lines.tolist()]
    by_text = [lines[a:b] for a, b in pairwise(tokens.line_offsets.tolist())]
    lengths = tokens.lengths
    first_ref = len(by_text) - len(owner)
    hits = np.fromiter(
        (_summary_hits(by_text[first_ref + p], by_text[i]) for p, i in enumerate(owner.tolist())), np.int64, len(owner)
    )
    return prf(hits, lengths[owner], lengths[first_ref:])


def best_per_example(scores: PRF, offsets: np.ndarray) -> PRF:
    """Per example (owning pairs ``offsets[i] : offsets[i + 1]``), the pair with the highest F, the first on ties."""
    n = len(offsets) - 1
    if int(offsets[-1]) == n:
        return scores
    owner = np.repeat(np.arange(n), np.diff(offsets))
    order = np.lexsort((-scores.fmeasure, owner))  # stable: equal F keeps the earlier reference first
    return scores.take(order[offsets[:-1]])


#: The ROUGE types and their pair kernels.
KERNELS = {"rouge1": 1, "rouge2": 2, "rougeL": lcs_overlap, "rougeLsum": summary_overlap}


class _LastColumn:
    """The tokens of the last column tokenized, keyed by its texts (not by object identity): the ROUGE sub-types of
    one metric score the same chunk one after another, and tokenizing it is most of their work."""

    def __init__(self) -> None:
        self._entry: tuple[tuple[Any, ...], Tokens] | None = None

    def tokens(self, texts: list[str], stemmer: object, lines: bool) -> Tokens:
        key = (tuple(texts), stemmer, lines)
        entry = self._entry
        if entry is not None and entry[0] == key:
            return entry[1]
        tokens = tokenize(texts, stemmer, lines=lines)
        self._entry = (key, tokens)
        return tokens


_LAST = _LastColumn()


def rouge(predictions: list[str], references: list[str], offsets: np.ndarray, kind: str, stemmer: object = None) -> PRF:
    """rouge-score's ``score_multi`` for every example: prediction ``i`` against references
    ``references[offsets[i] : offsets[i + 1]]`` (at least one each); ``kind`` is a key of :data:`KERNELS`."""
    owner = np.repeat(np.arange(len(predictions)), np.diff(offsets))
    tokens = _LAST.tokens(predictions + references, stemmer, lines=kind == "rougeLsum")
    kernel = KERNELS[kind]
    pairs = ngram_overlap(tokens, owner, kernel) if isinstance(kernel, int) else kernel(tokens, owner)
    return best_per_example(pairs, offsets)

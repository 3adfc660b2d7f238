"""ROUGE kernels with rouge-score's semantics, over whole columns of token ids (:mod:`.rouge_tokens`).

Per (prediction, reference) pair, with ``o`` the overlap, ``p`` the prediction's count and ``r`` the reference's:
precision ``o / max(p, 1)``, recall ``o / max(r, 1)``, F ``2PR / (P + R)`` (0 when both are 0), in that order of
floating-point operations, so the values are rouge-score's to the last bit.

* ``rougeN``: ``o`` is the clipped n-gram overlap ``sum_g min(count_pred(g), count_ref(g))``. That is the longest
  common subsequence of the two texts' n-grams once each side is sorted, which rapidfuzz's ``LCSseq`` computes in
  C++ (an n-gram is one integer code).
* ``rougeL``: ``o`` is the LCS of the two token sequences (``LCSseq`` on token ids).
* ``rougeLsum``: the summary-level LCS of ROUGE-1.5.5 as rouge-score computes it: for each reference line the union
  of the reference positions of one LCS with every prediction line, chosen by rouge-score's backtrack through the
  LCS table, then hits counted so that no token is used more often than it occurs on either side.

Several references: rouge-score's ``score_multi`` keeps, per example, the pair with the highest F (the first on
ties) and reports its precision, recall and F.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from rapidfuzz.distance import LCSseq

from olive_eval.metrics.text_overlap.rouge_tokens import Tokens, tokenize

__all__ = ["PRF", "best_per_example", "lcs_overlap", "ngram_overlap", "prf", "summary_overlap"]

#: n-gram codes stay below this, so that rapidfuzz's hash of a code (``hash(int)``) is the code itself.
_CODE_LIMIT = 2**61 - 1


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


def _ngram_codes(tokens: Tokens, n: int) -> tuple[np.ndarray, np.ndarray]:
    """One integer per n-gram of every text (equal n-grams, equal codes), and the texts' offsets into them."""
    ids, lengths = tokens.ids, tokens.lengths
    counts = np.maximum(lengths - n + 1, 0)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    if n == 1:
        return ids, offsets
    size = max(tokens.vocabulary_size, 1)
    codes = ids
    for j in range(1, n):
        if codes.size and int(codes.max()) >= _CODE_LIMIT // size:
            codes = np.unique(codes, return_inverse=True)[1].reshape(-1)
        codes = codes[:-1] * size + ids[j:]
    starts = np.arange(codes.size)
    ends = np.repeat(tokens.offsets[1:], lengths)[: codes.size]
    codes = codes[starts + n <= ends]
    if codes.size and int(codes.max()) >= _CODE_LIMIT:
        codes = np.unique(codes, return_inverse=True)[1].reshape(-1)
    return codes, offsets


def _segments(values: np.ndarray, offsets: np.ndarray, sort: bool) -> list[list[int]]:
    flat, bounds = values.tolist(), offsets.tolist()
    if sort:
        return [sorted(flat[a:b]) for a, b in pairwise(bounds)]
    return [flat[a:b] for a, b in pairwise(bounds)]


def ngram_overlap(tokens: Tokens, owner: np.ndarray, n: int) -> PRF:
    """rougeN of every pair: prediction ``owner[p]`` against reference text ``len(owner_examples) + p``.

    ``tokens`` holds the predictions first, then the references (one vocabulary), so reference ``p`` of the flat
    reference list is text ``n_predictions + p``.
    """
    codes, offsets = _ngram_codes(tokens, n)
    grams = _segments(codes, offsets, sort=True)
    counts = np.diff(offsets)
    first_ref = len(grams) - len(owner)
    similarity = LCSseq.similarity
    overlap = np.fromiter(
        (similarity(grams[i], grams[first_ref + p]) for p, i in enumerate(owner.tolist())), np.int64, len(owner)
    )
    return prf(overlap, counts[owner], counts[first_ref:])


def lcs_overlap(tokens: Tokens, owner: np.ndarray) -> PRF:
    """rougeL of every pair (texts laid out as in :func:`ngram_overlap`)."""
    texts = _segments(tokens.ids, tokens.offsets, sort=False)
    lengths = tokens.lengths
    first_ref = len(texts) - len(owner)
    similarity = LCSseq.similarity
    overlap = np.fromiter(
        (similarity(texts[i], texts[first_ref + p]) for p, i in enumerate(owner.tolist())), np.int64, len(owner)
    )
    return prf(overlap, lengths[owner], lengths[first_ref:])


def _lcs_positions(ref: list[int], cand: list[int]) -> list[int]:
    """The reference positions of the LCS that rouge-score's backtrack picks.

    The table ``t[i][j]`` is the LCS length of ``ref[:i]`` and ``cand[:j]``. From the end: equal tokens are taken
    diagonally; otherwise the walk goes left (``j - 1``) only when that keeps a strictly longer LCS than going up.
    """
    table = [[0] * (len(cand) + 1)]
    for token in ref:
        above, row, left = table[-1], [0], 0
        for j, other in enumerate(cand):
            left = above[j] + 1 if token == other else max(above[j + 1], left)
            row.append(left)
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


def rouge(predictions: list[str], references: list[str], offsets: np.ndarray, kind: str, stemmer: object = None) -> PRF:
    """rouge-score's ``score_multi`` for every example: prediction ``i`` against references
    ``references[offsets[i] : offsets[i + 1]]`` (at least one each); ``kind`` is a key of :data:`KERNELS`."""

    owner = np.repeat(np.arange(len(predictions)), np.diff(offsets))
    tokens = tokenize(predictions + references, stemmer, lines=kind == "rougeLsum")
    kernel = KERNELS[kind]
    pairs = ngram_overlap(tokens, owner, kernel) if isinstance(kernel, int) else kernel(tokens, owner)
    return best_per_example(pairs, offsets)

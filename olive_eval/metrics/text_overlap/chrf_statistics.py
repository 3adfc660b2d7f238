"""chrF's and chrF++'s sufficient statistics per sentence, and chrF from their sum, as sacrebleu defines them.

A sentence's row holds three counts per order, character n-grams (n = 1..``char_order``) first, then word n-grams
(n = 1..``word_order``; 2 is chrF++): the hypothesis's n-grams (0 when the reference has none of that order), the
reference's, and the matches (each hypothesis n-gram clipped to the reference's count). Characters are those of the
text without its whitespace (``whitespace: true`` keeps it); words are the whitespace-separated words with one
punctuation mark split off the end, or else the start, of a word longer than one character (the chrF++ script's
rule). With several references, a sentence keeps the row of the reference with the best chrF (the first of equals).

chrF of a row is the F-beta of the precision and recall averaged over the orders that have n-grams on both sides
(``eps_smoothing``: the F-beta of each order with a tiny epsilon for a missing side, averaged over all orders, as
chrF++.py does). The arithmetic follows sacrebleu's order of operations, so values equal its own to the last bit.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ChrfScorer", "chrf_of", "words_of"]

#: The chrF++ script's punctuation: ASCII's.
PUNCTUATION = frozenset(string.punctuation)
#: What stands for a precision or recall with nothing to divide by, under ``eps_smoothing``.
EPSILON = 1e-16


def words_of(text: str) -> list[str]:
    """The text's words, one punctuation mark split off the end (else the start) of a word of 2+ characters."""
    words: list[str] = []
    for word in text.split():
        if len(word) > 1 and word[-1] in PUNCTUATION:
            words += [word[:-1], word[-1]]
        elif len(word) > 1 and word[0] in PUNCTUATION:
            words += [word[0], word[1:]]
        else:
            words.append(word)
    return words


def chrf_of(row: Sequence[float], beta: int = 2, eps_smoothing: bool = False) -> float:
    """chrF (0-100) of a row of ``[hypothesis, reference, matches]`` counts per order."""
    factor = beta**2
    smoothed, precision_sum, recall_sum, orders = 0.0, 0.0, 0.0, 0
    for k in range(0, len(row), 3):
        hyp, ref, matches = row[k : k + 3]
        precision = matches / hyp if hyp > 0 else EPSILON
        recall = matches / ref if ref > 0 else EPSILON
        denominator = factor * precision + recall
        smoothed += (1 + factor) * precision * recall / denominator if denominator > 0 else EPSILON
        if hyp > 0 and ref > 0:
            precision_sum += precision
            recall_sum += recall
            orders += 1
    if eps_smoothing:
        return 100 * smoothed / (len(row) // 3)
    if orders == 0:
        return 0.0
    precision, recall = precision_sum / orders, recall_sum / orders
    if not precision + recall:
        return 0.0
    score = (1 + factor) * precision * recall
    score /= factor * precision + recall
    return 100 * score


@dataclass(frozen=True)
class ChrfScorer:
    """Rows and scores of one chrF configuration."""

    char_order: int = 6
    word_order: int = 0
    beta: int = 2
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False

    def ngrams(self, text: str) -> list[Counter[Any]]:
        """The text's character n-gram counts per order, then its word n-gram counts per order."""
        text = text.lower() if self.lowercase else text
        chars = text if self.whitespace else "".join(text.split())
        counts: list[Counter[Any]] = [
            Counter([chars[i : i + n] for i in range(len(chars) - n + 1)]) for n in range(1, self.char_order + 1)
        ]
        if self.word_order:
            words = words_of(text)
            counts += [
                Counter(zip(*(words[k:] for k in range(n)), strict=False)) for n in range(1, self.word_order + 1)
            ]
        return counts

    def sentence_row(self, hypothesis: str, references: Sequence[str]) -> list[int]:
        """The row against the reference with the best chrF (the first of equals)."""
        hyp = self.ngrams(hypothesis)
        best: list[int] = []
        best_score = -1.0
        for reference in references:
            row: list[int] = []
            for mine, theirs in zip(hyp, self.ngrams(reference), strict=True):
                matches = sum(min(count, theirs[gram]) for gram, count in mine.items() if gram in theirs)
                row += [sum(mine.values()) if theirs else 0, sum(theirs.values()), matches]
            score = chrf_of(row, self.beta, self.eps_smoothing)
            if score > best_score:
                best, best_score = row, score
        return best

    def rows(self, hypotheses: list[str], references: list[list[str]]) -> list[list[int]]:
        return [self.sentence_row(h, refs) for h, refs in zip(hypotheses, references, strict=True)]

    def score(self, totals: Sequence[float]) -> tuple[float, str]:
        value = chrf_of(totals, self.beta, self.eps_smoothing)
        return value, f"chrF{self.beta}{'+' * self.word_order} = {value:.2f}"

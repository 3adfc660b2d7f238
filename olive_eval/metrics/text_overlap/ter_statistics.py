"""TER's sufficient statistics per sentence, and TER from their sum, as sacrebleu defines them.

A sentence's row is ``[edits, reference length]``: the fewest edits (:func:`ter_edits`) to any of its references
and the references' mean length in words. Words are those of sacrebleu's Tercom tokenizer (its normalization,
punctuation and case options) of the text without its trailing whitespace. TER of summed rows is edits over length
(0-100); with no reference words it is 100 when there are edits and 0 when there are none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from olive_eval.metrics.text_overlap.ter_shifts import ter_edits

__all__ = ["TerScorer", "ter_of"]


def ter_of(row: Sequence[float]) -> float:
    """TER (0-100) of a row of summed ``[edits, reference length]``."""
    edits, length = row[0], row[1]
    if length > 0:
        return 100 * (edits / length)
    return 100 * (1.0 if edits > 0 else 0.0)


@dataclass(frozen=True)
class TerScorer:
    """Rows and scores of one TER configuration; ``tokenizer`` is sacrebleu's Tercom tokenizer with its options."""

    tokenizer: Callable[[str], str]

    def words(self, text: str) -> list[str]:
        return self.tokenizer(text.rstrip()).split()

    def sentence_row(self, hypothesis: str, references: Sequence[str]) -> list[float]:
        words = self.words(hypothesis)
        targets = [self.words(r) for r in references]
        edits = min(ter_edits(words, target) for target in targets)
        return [float(edits), sum(len(t) for t in targets) / len(targets)]

    def rows(self, hypotheses: list[str], references: list[list[str]]) -> list[list[float]]:
        return [self.sentence_row(h, refs) for h, refs in zip(hypotheses, references, strict=True)]

    def score(self, totals: Sequence[float]) -> tuple[float, str]:
        value = ter_of(totals)
        return value, f"TER = {value:.2f}"

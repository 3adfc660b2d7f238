"""Valor's BLEU as the accuracy sub-type ``nltk_bleu``: nltk's sentence BLEU on Valor's tokens, in [0, 1].

Valor (valor-lite's text-generation ``BLEU``) tokenizes the prediction and each reference with the regular
expression ``\\w+|\\$[\\d]+|[^\\s\\.]+`` (words, ``$`` amounts, other runs of non-space characters; periods
dropped), scores them with ``nltk.translate.bleu_score.sentence_bleu`` with ``bleu_weights`` (default
``[0.25] * 4``, BLEU-4) and no smoothing, and reports a score below 1e-9 as 0. nltk's rules, computed here:

* modified precision of order ``n``: hypothesis n-gram counts clipped by their largest count in any reference,
  over ``max(1, hypothesis n-grams)``;
* no unigram match gives 0; an order without a match enters the geometric mean as the smallest positive float
  (nltk's ``method0``), so a positive weight on it drives the score to 0, a zero weight ignores it;
* brevity penalty against the reference length closest to the hypothesis length (the shorter on ties):
  1 when the hypothesis is longer, else ``exp(1 - r / h)``;
* score ``BP * exp(fsum(w_n * log p_n))``.

With non-negative weights the score lies in [0, 1], as Valor's documentation says; negative weights are refused.
The value is the mean over examples of their scores (each example's score is in the instances file).
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from typing import Any, ClassVar

import numpy as np
from pydantic import Field, field_validator

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.text_overlap.references import pair_up, per_example
from olive_eval.strict_model import StrictModel

__all__ = ["NltkBleu", "NltkBleuConfig", "valor_bleu", "valor_tokens"]

_VALOR_TOKEN = re.compile(r"\w+|\$[\d]+|[^\s\.]+")
#: Valor reports scores below this as 0.
VALOR_FLOOR = 1e-9


def valor_tokens(text: str) -> list[str]:
    """Valor's tokens of a text (its nltk ``RegexpTokenizer`` pattern)."""
    return _VALOR_TOKEN.findall(text)


def ngram_counts(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    """Counts of the n-grams of ``tokens``."""
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def clipped_matches(hypothesis: list[str], references: list[list[str]], n: int) -> tuple[int, int]:
    """(clipped n-gram matches, ``max(1, hypothesis n-grams)``): nltk's modified precision as a fraction."""
    counts = ngram_counts(hypothesis, n)
    best: Counter[tuple[str, ...]] = Counter()
    for reference in references:
        best |= ngram_counts(reference, n)  # the largest count of each n-gram in any reference
    matches = sum(min(count, best[gram]) for gram, count in counts.items())
    return matches, max(1, sum(counts.values()))


def sentence_bleu(hypothesis: list[str], references: list[list[str]], weights: list[float]) -> float:
    """nltk's ``sentence_bleu`` with ``weights`` and no smoothing, on tokens."""
    fractions = [clipped_matches(hypothesis, references, n) for n in range(1, len(weights) + 1)]
    if fractions[0][0] == 0:
        return 0.0
    h = len(hypothesis)
    r = min((len(ref) for ref in references), key=lambda length: (abs(length - h), length))
    penalty = 1.0 if h > r else math.exp(1 - r / h)
    logs = (w * math.log(m / d if m else sys.float_info.min) for w, (m, d) in zip(weights, fractions, strict=True))
    return penalty * math.exp(math.fsum(logs))


def valor_bleu(prediction: str, references: list[str], weights: list[float]) -> float:
    """Valor's BLEU of one prediction: nltk's sentence BLEU on Valor's tokens, below 1e-9 reported as 0."""
    score = sentence_bleu(valor_tokens(prediction), [valor_tokens(r) for r in references], weights)
    return score if score >= VALOR_FLOOR else 0.0


class NltkBleuConfig(StrictModel):
    """metric_config of nltk_bleu."""

    bleu_weights: list[float] = Field(
        default_factory=lambda: [0.25, 0.25, 0.25, 0.25],
        description="Weight of each n-gram order from 1 (Valor's bleu_weights); [0.25]*4 is BLEU-4",
    )

    @field_validator("bleu_weights")
    @classmethod
    def _usable(cls, value: list[float]) -> list[float]:
        if not value:
            raise ValueError("bleu_weights needs at least one weight")
        if any(not math.isfinite(w) or w < 0 for w in value):
            raise ValueError(f"bleu_weights must be finite and non-negative, got {value}")
        return value


@register_metric
class NltkBleu(Metric):
    """Each example's Valor BLEU (nltk's sentence BLEU, Valor's tokens), averaged."""

    name = "nltk_bleu"
    higher_is_better = True
    kind = Kind.INSTANCE
    reads = ("prediction", "references")
    Config: ClassVar[type[StrictModel]] = NltkBleuConfig

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0  # examples numbered across batches in errors

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        preds, answers = pair_up(predictions, references, self.name, start=self._seen)
        self._seen += len(preds)
        weights = self.config.bleu_weights  # type: ignore[attr-defined]
        refs = per_example(answers)
        return np.array([valor_bleu(p, r, weights) for p, r in zip(preds, refs, strict=True)], dtype=np.float64)

    def reduce(self, statistics: np.ndarray) -> Score:
        if np.asarray(statistics).size == 0:
            return Score(float("nan"), undefined="no predictions to score")
        return super().reduce(statistics)

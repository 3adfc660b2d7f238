"""BLEU's sufficient statistics per sentence, and BLEU from their sum, as sacrebleu defines them.

A sentence's row is ``[hypothesis length, reference length, matches_1..N, totals_1..N]``: the hypothesis's
n-grams (n = 1..N, N = ``max_ngram_order``) counted, each clipped to the most times any one reference holds it
(the matches), and the reference length closest to the hypothesis's (the shorter of two as close). Words are the
whitespace-separated tokens of sacrebleu's tokenizer (13a by default) after optional lowercasing, the text's
trailing whitespace dropped first. Rows add up over a corpus; BLEU of the sum is the brevity penalty times the
geometric mean of the n-gram precisions, with sacrebleu's smoothing (Chen & Cherry 2014: ``floor``, ``add-k``,
``exp`` = NIST's halving, ``none``) and optional effective order (orders past the last with n-grams left out).

The arithmetic follows sacrebleu's order of operations, so that values are equal to its own to the last bit (the
tests compare them with ``==``).

Where the optional C extension (``_bleu_rows.c``) is built, the rows of a whole batch come from one call: 13a
tokenization (sacrebleu's passes, replayed character by character), words interned to ids per example and the
n-grams counted and clipped in hash tables, with the GIL released; any other tokenizer runs in Python (sacrebleu's
own) and the C call splits and counts. ``use_compiled=False`` keeps the Python rows below (the tests hold the two
equal, and both equal to sacrebleu's statistics).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

try:
    from olive_eval.metrics.text_overlap import _bleu_rows as _compiled
except ImportError:  # installed without a C compiler: the Python rows
    _compiled = None

__all__ = ["BleuScorer", "bleu_of", "compiled_available", "ngram_counts"]

logger = logging.getLogger(__name__)

#: The smoothing value of ``floor`` and ``add-k`` when none is given (Chen & Cherry's).
SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
#: What sacrebleu takes as log(0), so that a zero precision makes BLEU (almost exactly) zero.
LOG_ZERO = -9999999999
#: Lines ending in `` .`` from which a corpus is said to look tokenized already (sacrebleu's warning).
TOKENIZED_LINES = 100


def compiled_available() -> bool:
    """Whether the C extension ``_bleu_rows`` was built (else every row is counted in Python)."""
    return _compiled is not None


def is_13a(tokenizer: Callable[[str], str]) -> bool:
    """Whether ``tokenizer`` is sacrebleu's own 13a (the one the C extension replays; a subclass is not)."""
    kind = type(tokenizer)
    return kind.__name__ == "Tokenizer13a" and kind.__module__ == "sacrebleu.tokenizers.tokenizer_13a"


def ngram_counts(tokens: list[str], max_order: int) -> Counter[tuple[str, ...]]:
    """Every n-gram of ``tokens`` for n = 1..``max_order``, counted (an n-gram is a tuple of n words)."""
    counts: Counter[tuple[str, ...]] = Counter()
    for n in range(1, max_order + 1):
        counts.update(zip(*(tokens[k:] for k in range(n)), strict=False))
    return counts


def sentence_row(hypothesis: list[str], references: Sequence[list[str]], max_order: int) -> list[int]:
    """One sentence's row: lengths, clipped matches and totals per order (see the module docstring)."""
    most: Counter[tuple[str, ...]] = Counter()
    for reference in references:
        most |= ngram_counts(reference, max_order)  # the most times any one reference holds each n-gram
    size = len(hypothesis)
    closest = min((len(r) for r in references), key=lambda length: (abs(size - length), length))
    matches, totals = [0] * max_order, [0] * max_order
    for ngram, count in ngram_counts(hypothesis, max_order).items():
        totals[len(ngram) - 1] += count
        if ngram in most:
            matches[len(ngram) - 1] += min(count, most[ngram])
    return [size, closest, *matches, *totals]


@dataclass(frozen=True)
class BleuScore:
    """BLEU of summed rows, with what sacrebleu prints beside it."""

    value: float
    precisions: list[float]
    brevity_penalty: float
    hypothesis_length: int
    reference_length: int

    def text(self) -> str:
        """``BLEU = 29.44 82.4/42.9/27.3/12.5 (BP = 0.889 ratio = 0.895 hyp_len = 17 ref_len = 19)``."""
        ratio = self.hypothesis_length / self.reference_length if self.reference_length else 0
        shown = "/".join(f"{p:.1f}" for p in self.precisions)
        return (
            f"BLEU = {self.value:.2f} {shown} (BP = {self.brevity_penalty:.3f} ratio = {ratio:.3f} "
            f"hyp_len = {self.hypothesis_length:d} ref_len = {self.reference_length:d})"
        )


def bleu_of(
    row: Sequence[float],
    max_order: int = 4,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
) -> BleuScore:
    """BLEU (0-100) of a row of summed sentence statistics."""
    hyp_len, ref_len = int(row[0]), int(row[1])
    matches, totals = list(row[2 : 2 + max_order]), list(row[2 + max_order : 2 + 2 * max_order])
    value = SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else smooth_value
    penalty = 1.0
    if hyp_len < ref_len:
        penalty = math.exp(1 - ref_len / hyp_len) if hyp_len > 0 else 0.0
    precisions = [0.0] * max_order
    if not any(matches):
        return BleuScore(0.0, precisions, penalty, hyp_len, ref_len)
    halvings, orders = 1.0, max_order
    for n in range(max_order):
        if smooth_method == "add-k" and n > 0:
            matches[n] += value
            totals[n] += value
        if totals[n] == 0:
            break
        if effective_order:
            orders = n + 1
        if matches[n] != 0:
            precisions[n] = 100.0 * matches[n] / totals[n]
        elif smooth_method == "exp":
            halvings *= 2
            precisions[n] = 100.0 / (halvings * totals[n])
        elif smooth_method == "floor":
            precisions[n] = 100.0 * value / totals[n]  # type: ignore[operator]
    logs = sum([math.log(p) if p != 0.0 else LOG_ZERO for p in precisions[:orders]])
    return BleuScore(penalty * math.exp(logs / orders), precisions, penalty, hyp_len, ref_len)


@dataclass(frozen=True)
class BleuScorer:
    """Rows and scores of one BLEU configuration; ``tokenizer`` is the sacrebleu tokenizer it names."""

    tokenizer: Callable[[str], str]
    lowercase: bool = False
    max_order: int = 4
    smooth_method: str = "exp"
    smooth_value: float | None = None
    effective_order: bool = False
    force: bool = False
    use_compiled: bool = True

    def words(self, text: str) -> list[str]:
        return self.tokenizer((text.lower() if self.lowercase else text).rstrip()).split()

    def rows(self, hypotheses: list[str], references: list[list[str]]) -> list[list[int]] | np.ndarray:
        if not self.force and sum(h.endswith(" .") for h in hypotheses) >= TOKENIZED_LINES:
            logger.warning(
                "%d or more predictions end in a tokenized period (' .'): BLEU expects detokenized text (set "
                "force: true in metric_config if it is)",
                TOKENIZED_LINES,
            )
        if self.use_compiled and _compiled is not None:
            rows = self._compiled_rows(hypotheses, references)
            if rows is not None:
                return rows
        return [
            sentence_row(self.words(h), [self.words(r) for r in refs], self.max_order)
            for h, refs in zip(hypotheses, references, strict=True)
        ]

    def _compiled_rows(self, hypotheses: list[str], references: list[list[str]]) -> np.ndarray | None:
        """The C rows, or None where the input needs the Python path (which raises the error that names it)."""
        hyps, refs = list(hypotheses), list(references)
        native = is_13a(self.tokenizer)
        try:
            if self.lowercase:
                hyps = [h.lower() for h in hyps]
                refs = [[r.lower() for r in rs] for rs in refs]
            if not native:  # sacrebleu's tokenizer here; the C call splits and counts
                hyps = [self.tokenizer(h.rstrip()) for h in hyps]
                refs = [[self.tokenizer(r.rstrip()) for r in rs] for rs in refs]
        except (AttributeError, TypeError):  # not a str
            return None
        raw = _compiled.rows(hyps, refs, self.max_order, native)  # type: ignore[union-attr]
        return None if raw is None else np.frombuffer(raw, np.int64).reshape(len(hyps), 2 + 2 * self.max_order)

    def score(self, totals: Sequence[float]) -> tuple[float, str]:
        score = bleu_of(totals, self.max_order, self.smooth_method, self.smooth_value, self.effective_order)
        return score.value, score.text()

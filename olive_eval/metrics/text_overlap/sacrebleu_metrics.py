"""sacrebleu's metrics as accuracy sub-types: ``bleu`` (corpus), ``sentence_bleu``, ``chrf`` (chrF, chrF++) and ``ter``,
and ``normalized_sacrebleu`` (Unitxt's: corpus BLEU / 100, effective order by default; Unitxt rounds it to two
decimals, olive-eval does not).

Values are sacrebleu's, on its 0-100 scale, with its defaults (BLEU: the ``13a`` tokenizer, ``exp`` smoothing;
``sentence_bleu``: effective order, as ``sacrebleu.sentence_bleu``) and every option of its metric classes in
``metric_config``. References are a string or a list of strings per example; an example is scored against the
references it has (sacrebleu's reference streams padded with ``None``).

``bleu``, ``chrf`` and ``ter`` are corpus metrics, map/reduce here: every sentence's sufficient statistics are
extracted once (n-gram matches and totals and lengths; character and word n-gram counts; edits and reference
length) and the corpus value is the score of their sum. A bootstrap resample sums the resampled sentences'
statistics, so each resample's value is the exact corpus score of that resample, with no text scored twice.
``sentence_bleu`` is an instance metric: each example's sentence BLEU, averaged.

The statistics and the scores are olive-eval's own (:mod:`~olive_eval.metrics.text_overlap.bleu_statistics`,
:mod:`~olive_eval.metrics.text_overlap.chrf_statistics`, :mod:`~olive_eval.metrics.text_overlap.ter_statistics`):
sacrebleu exposes sentence statistics only through internal methods. sacrebleu itself is an optional extra
(``pip install 'olive-eval[text]'``) used through its public API alone: its metric classes check the options, their
``tokenizer`` tokenizes (13a, intl, zh, ja-mecab... and Tercom's) and ``get_signature()`` writes the signature;
without it these sub-types are a config error when the run is planned. The tests check every value against
sacrebleu's ``corpus_score`` and ``sentence_score``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, Protocol

import numpy as np
from pydantic import Field, model_validator

from olive_eval.errors import MissingDependencyError
from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.text_overlap.bleu_statistics import BleuScorer
from olive_eval.metrics.text_overlap.chrf_statistics import ChrfScorer
from olive_eval.metrics.text_overlap.references import pair_up, per_example
from olive_eval.metrics.text_overlap.ter_statistics import TerScorer
from olive_eval.strict_model import StrictModel

__all__ = [
    "Bleu",
    "BleuConfig",
    "Chrf",
    "ChrfConfig",
    "NormalizedSacrebleu",
    "NormalizedSacrebleuConfig",
    "SentenceBleu",
    "Ter",
    "TerConfig",
]

EXTRA = "text"


class SentenceScorer(Protocol):
    """One metric's statistics (a row per sentence, rows add up) and its score of summed rows."""

    def rows(self, hypotheses: list[str], references: list[list[str]]) -> list[list[Any]] | np.ndarray: ...

    def score(self, totals: Sequence[float]) -> tuple[float, str]:
        """(value, the line sacrebleu prints for it)."""
        ...


class _SacrebleuConfig(StrictModel):
    """Options of a sacrebleu metric class; building it checks them when the run is planned."""

    #: The sacrebleu class the options are for.
    metric_class: ClassVar[str]

    def build(self) -> Any:
        """sacrebleu's metric object with these options (its tokenizer and signature are used, never its scores)."""
        import sacrebleu

        return getattr(sacrebleu, self.metric_class)(**self.model_dump())

    def scorer(self) -> SentenceScorer:
        """olive-eval's statistics and scores for these options."""
        raise NotImplementedError

    @model_validator(mode="after")
    def _buildable(self) -> _SacrebleuConfig:
        if importlib.util.find_spec("sacrebleu") is None:
            raise ValueError(str(MissingDependencyError("sacrebleu", f"sacrebleu's {self.metric_class}", EXTRA)))
        try:
            self.build()
        except KeyError as exc:  # an unknown tokenizer
            raise ValueError(f"sacrebleu has no tokenizer {exc}") from None
        except (AssertionError, ImportError, RuntimeError, ValueError) as exc:
            raise ValueError(f"sacrebleu's {self.metric_class} refuses these options: {exc}") from None
        return self


class BleuConfig(_SacrebleuConfig):
    metric_class: ClassVar[str] = "BLEU"

    tokenize: str | None = Field(
        None,
        description="sacrebleu's tokenizer: 13a (the default), none, intl, zh, char, ja-mecab, ko-mecab, flores101",
    )
    smooth_method: Literal["none", "floor", "add-k", "exp"] = "exp"
    smooth_value: float | None = Field(None, description="For floor (default 0.1) and add-k (default 1)")
    lowercase: bool = False
    max_ngram_order: int = Field(4, ge=1)
    effective_order: bool = Field(False, description="Leave out n-gram orders without a match (sentence-level)")
    trg_lang: str = Field("", description="Target language: picks zh, ja-mecab or ko-mecab when tokenize is unset")
    force: bool = Field(False, description="Do not warn about text that looks tokenized already")

    def scorer(self) -> SentenceScorer:
        options = self.model_dump(exclude={"tokenize", "trg_lang", "max_ngram_order"})
        return BleuScorer(self.build().tokenizer, max_order=self.max_ngram_order, **options)


class SentenceBleuConfig(BleuConfig):
    effective_order: bool = Field(True, description="sacrebleu.sentence_bleu's default")


class NormalizedSacrebleuConfig(BleuConfig):
    effective_order: bool = Field(True, description="Unitxt's normalized_sacrebleu default")


class ChrfConfig(_SacrebleuConfig):
    metric_class: ClassVar[str] = "CHRF"

    char_order: int = Field(6, ge=1)
    word_order: int = Field(0, ge=0, description="2 gives chrF++")
    beta: int = Field(2, ge=1)
    lowercase: bool = False
    whitespace: bool = Field(False, description="Count whitespace as characters")
    eps_smoothing: bool = Field(False, description="chrF++.py's epsilon smoothing instead of effective order")

    def scorer(self) -> SentenceScorer:
        return ChrfScorer(**self.model_dump())


class TerConfig(_SacrebleuConfig):
    metric_class: ClassVar[str] = "TER"

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False

    def scorer(self) -> SentenceScorer:
        return TerScorer(self.build().tokenizer)


class _Sacrebleu(Metric):
    """Sentence statistics, one row per example; examples are numbered across batches in errors."""

    reads = ("prediction", "references")
    requires: ClassVar[tuple[str, ...]] = ("sacrebleu",)
    extra = EXTRA
    #: The statistics' type: integer counts (BLEU, chrF) or floats (TER's average reference length).
    dtype: ClassVar[type] = np.int64

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0
        self._references: int | None = None  # references per example for the signature; -1: it varies

    def scorer(self) -> SentenceScorer:
        """The configured statistics and scores (cheap to build; not kept, so the metric's state stays plain)."""
        return self.config.scorer()  # type: ignore[attr-defined,no-any-return]

    def sentence_statistics(self, predictions: Any, references: Any) -> np.ndarray:
        preds, answers = pair_up(predictions, references, self.name, start=self._seen)
        self._seen += len(preds)
        if not preds:
            return np.empty((0, 0), self.dtype)
        refs = per_example(answers)
        counts = {len(r) for r in refs}
        seen = counts.pop() if len(counts) == 1 else -1
        self._references = seen if self._references in (None, seen) else -1
        return np.asarray(self.scorer().rows(preds, refs), dtype=self.dtype)

    def scores_of(self, totals: np.ndarray) -> list[tuple[float, str]]:
        """(value, sacrebleu's line for it) of each row of summed statistics."""
        scorer = self.scorer()
        return [scorer.score(row) for row in np.asarray(totals).tolist()]

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        parts = [p for p in parts if p.size]
        return np.concatenate(parts, axis=0) if parts else np.empty((0, 0), self.dtype)


class _Corpus(_Sacrebleu):
    """A corpus score from the sum of the sentence statistics."""

    kind = Kind.MAP_REDUCE

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        return self.sentence_statistics(predictions, references)

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        rows = np.asarray(totals)
        return np.array([value for value, _ in self.scores_of(rows.reshape(len(rows), -1))], dtype=np.float64)

    def reduce(self, statistics: np.ndarray) -> Score:
        rows = np.asarray(statistics, dtype=self.dtype)
        if rows.size == 0:
            return Score(float("nan"), undefined="no predictions to score")
        totals = np.cumsum(rows, axis=0)[-1]  # in order, as sacrebleu sums (floats: the same rounding)
        value, line = self.scorer().score(totals.tolist())
        return Score(float(value), details={"signature": self.signature(), "score": line})

    def signature(self) -> str:
        """sacrebleu's signature of these options and the references seen (``nrefs:var`` when it varied)."""
        metric = self.config.build()  # type: ignore[attr-defined]
        metric.num_refs = self._references  # the public attribute its signature reads, set by its corpus_score
        return str(metric.get_signature())


@register_metric
class Bleu(_Corpus):
    """Corpus BLEU (``sacrebleu.corpus_bleu``)."""

    name = "bleu"
    higher_is_better = True
    Config: ClassVar[type[StrictModel]] = BleuConfig


@register_metric
class NormalizedSacrebleu(Bleu):
    """Unitxt's ``normalized_sacrebleu``: corpus BLEU / 100, effective order on by default.

    Capped at 1: sacrebleu's ``exp(mean of logs)`` can exceed 100 by a rounding unit (100.00000000000004 for an
    exact match of three words), and the 0-1 scale promises at most 1.
    """

    name = "normalized_sacrebleu"
    Config: ClassVar[type[StrictModel]] = NormalizedSacrebleuConfig

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        return np.minimum(super().finalize_totals(totals) / 100.0, 1.0)

    def reduce(self, statistics: np.ndarray) -> Score:
        score = super().reduce(statistics)
        score.value = min(score.value / 100.0, 1.0)
        return score


@register_metric
class Chrf(_Corpus):
    """Corpus chrF (``sacrebleu.corpus_chrf``); ``word_order: 2`` is chrF++."""

    name = "chrf"
    higher_is_better = True
    Config: ClassVar[type[StrictModel]] = ChrfConfig


@register_metric
class Ter(_Corpus):
    """Corpus TER (``sacrebleu.corpus_ter``): edits over the reference length, lower is better."""

    name = "ter"
    higher_is_better = False
    dtype = np.float64
    Config: ClassVar[type[StrictModel]] = TerConfig


@register_metric
class SentenceBleu(_Sacrebleu):
    """Each example's ``sacrebleu.sentence_bleu``, averaged."""

    name = "sentence_bleu"
    higher_is_better = True
    kind = Kind.INSTANCE
    Config: ClassVar[type[StrictModel]] = SentenceBleuConfig

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        rows = self.sentence_statistics(predictions, references)
        return np.array([value for value, _ in self.scores_of(rows)], dtype=np.float64)

    def reduce(self, statistics: np.ndarray) -> Score:
        if np.asarray(statistics).size == 0:
            return Score(float("nan"), undefined="no predictions to score")
        return super().reduce(statistics)

"""sacrebleu's metrics as accuracy sub-types: ``bleu`` (corpus), ``sentence_bleu``, ``chrf`` (chrF, chrF++) and ``ter``.

Values are sacrebleu's own, on its 0-100 scale, with its defaults (BLEU: the ``13a`` tokenizer, ``exp`` smoothing;
``sentence_bleu``: effective order, as ``sacrebleu.sentence_bleu``) and every option of its metric classes in
``metric_config``. References are a string or a list of strings per example; several become sacrebleu's reference
streams, padded with ``None`` where an example has fewer (sacrebleu scores each example against the references it
has).

``bleu``, ``chrf`` and ``ter`` are corpus metrics, map/reduce here: sacrebleu extracts every sentence's sufficient
statistics once (n-gram matches and totals and lengths; character and word n-gram counts; edits and reference
length), and the corpus value is sacrebleu's score of their sum. A bootstrap resample sums the resampled sentences'
statistics, so each resample's value is the exact corpus score of that resample, with no text scored twice.
``sentence_bleu`` is an instance metric: each example's sentence BLEU, averaged.

sacrebleu is an optional extra (``pip install 'olive-eval[text]'``); without it these sub-types are a config error
when the run is planned. sacrebleu exposes sentence statistics only through its metric objects' internal methods
(``_extract_corpus_statistics``, ``_compute_score_from_stats``, stable since sacrebleu 2.0); the tests check the
values against ``corpus_score`` and ``sentence_bleu``.
"""

from __future__ import annotations

import importlib.util
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from olive_eval.errors import MissingDependencyError
from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.text_overlap.references import pair_up, reference_streams
from olive_eval.strict_model import StrictModel

__all__ = ["Bleu", "BleuConfig", "Chrf", "ChrfConfig", "SentenceBleu", "Ter", "TerConfig"]

EXTRA = "text"


class _SacrebleuConfig(StrictModel):
    """Options passed to a sacrebleu metric class; building it checks them when the run is planned."""

    #: The sacrebleu class the options are for.
    metric_class: ClassVar[str]

    def build(self) -> Any:
        import sacrebleu

        return getattr(sacrebleu, self.metric_class)(**self.model_dump())

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


class SentenceBleuConfig(BleuConfig):
    effective_order: bool = Field(True, description="sacrebleu.sentence_bleu's default")


class ChrfConfig(_SacrebleuConfig):
    metric_class: ClassVar[str] = "CHRF"

    char_order: int = Field(6, ge=1)
    word_order: int = Field(0, ge=0, description="2 gives chrF++")
    beta: int = Field(2, ge=1)
    lowercase: bool = False
    whitespace: bool = Field(False, description="Count whitespace as characters")
    eps_smoothing: bool = Field(False, description="chrF++.py's epsilon smoothing instead of effective order")


class TerConfig(_SacrebleuConfig):
    metric_class: ClassVar[str] = "TER"

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False


class _Sacrebleu(Metric):
    """Sentence statistics from sacrebleu, one row per example; examples are numbered across batches in errors."""

    reads = ("prediction", "references")
    requires: ClassVar[tuple[str, ...]] = ("sacrebleu",)
    extra = EXTRA
    #: The statistics' type: integer counts (BLEU, chrF) or floats (TER's average reference length).
    dtype: ClassVar[type] = np.int64

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0
        self._references: int | None = None  # references per example for the signature; -1: it varies

    def scorer(self) -> Any:
        """The configured sacrebleu metric object (cheap to build; not kept, so the metric's state stays plain)."""
        return self.config.build()  # type: ignore[attr-defined]

    def sentence_statistics(self, predictions: Any, references: Any) -> np.ndarray:
        preds, answers = pair_up(predictions, references, self.name, start=self._seen)
        self._seen += len(preds)
        if not preds:
            return np.empty((0, 0), self.dtype)
        scorer = self.scorer()
        rows = scorer._extract_corpus_statistics(preds, reference_streams(answers))
        if self._references is None or self._references == scorer.num_refs:
            self._references = scorer.num_refs
        else:
            self._references = -1
        return np.asarray(rows, dtype=self.dtype)

    def scores_of(self, totals: np.ndarray) -> list[Any]:
        """sacrebleu's score objects, one per row of summed statistics."""
        scorer = self.scorer()
        return [scorer._compute_score_from_stats(row) for row in np.asarray(totals).tolist()]

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
        return np.array([score.score for score in self.scores_of(rows.reshape(len(rows), -1))], dtype=np.float64)

    def reduce(self, statistics: np.ndarray) -> Score:
        rows = np.asarray(statistics, dtype=self.dtype)
        if rows.size == 0:
            return Score(float("nan"), undefined="no predictions to score")
        totals = np.cumsum(rows, axis=0)[-1]  # in order, as sacrebleu sums (floats: the same rounding)
        scorer = self.scorer()
        score = scorer._compute_score_from_stats(totals.tolist())
        scorer.num_refs = self._references  # what sacrebleu's signature reads, known once references were seen
        details = {"signature": str(scorer.get_signature()), "score": str(score)}
        return Score(float(score.score), details=details)


@register_metric
class Bleu(_Corpus):
    """Corpus BLEU (``sacrebleu.corpus_bleu``)."""

    name = "bleu"
    higher_is_better = True
    Config: ClassVar[type[StrictModel]] = BleuConfig


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
        return np.array([score.score for score in self.scores_of(rows)], dtype=np.float64)

    def reduce(self, statistics: np.ndarray) -> Score:
        if np.asarray(statistics).size == 0:
            return Score(float("nan"), undefined="no predictions to score")
        return super().reduce(statistics)

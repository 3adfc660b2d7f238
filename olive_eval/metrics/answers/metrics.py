"""The answer metrics as accuracy sub-types: exact_match, relaxed_accuracy, word_sort_ratio, anls, vqa_accuracy.

Each is an instance metric over the post-processed ``prediction`` (a string per example) and the data config's
``references`` (per example a list of acceptable answers, or one string of ``|``-joined answers with ``\\|`` for
a literal ``|``; see :mod:`.references`), so a value comes with per-example scores: bootstrap intervals and
paired goals work as for any instance metric. One example may also be given bare, as Olive's tests give it:
``compute_metric("exact_match", "answer", "answer")`` (:func:`.references.single_example`). The kernels are in
:mod:`.kernels`; this module adapts configs.

Which of Olive's vision tasks (the data config's ``pre_process_data_config.task``) a metric suits is the task's
declaration (``metrics`` of :mod:`olive_eval.tasks.vision`), checked with Olive's messages.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from olive_eval.metrics.answers import kernels
from olive_eval.metrics.answers.references import (
    Answers,
    check_lengths,
    check_predictions,
    single_example,
    to_answers,
)
from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel
from olive_eval.transforms import TransformSpec, build_transform

__all__ = ["ANLS", "AnswerMetric", "ExactMatch", "ExactMatchConfig", "RelaxedAccuracy", "VqaAccuracy", "WordSortRatio"]


class AnswerConfig(StrictModel):
    """metric_config keys every answer metric takes."""

    normalizer: TransformSpec | None = Field(
        None,
        description="A registered text transform (or a list of them, applied in order) run on the prediction and on "
        "every reference answer before the metric's own matching, e.g. 'remove_punctuation' or "
        "{'type': 'regex', 'pattern': '...'}",
    )

    @field_validator("normalizer")
    @classmethod
    def _known(cls, value: TransformSpec | None) -> TransformSpec | None:
        if value is not None:
            build_transform(value)
        return value


class AnswerMetric(Metric):
    """A per-example answer score, the best over each example's reference answers; the value is their mean.

    Examples are numbered across batches in errors (the pass streams batches in order, and each scorer has its
    own metric object), so a bad prediction is named by its place in the data, not in its batch.
    """

    higher_is_better = True
    kind = Kind.INSTANCE
    reads = ("prediction", "references")
    transient = ("_normalize",)  # built from the config's normalizer; the result cache keeps data only

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0
        normalizer = getattr(self.config, "normalizer", None)
        self._normalize = build_transform(normalizer) if normalizer is not None else None

    def scores(self, predictions: list[str], answers: Answers) -> np.ndarray:
        """One score per example (the kernel, configured)."""
        raise NotImplementedError

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        """Scores of a batch of examples, or of one example given as a bare prediction string."""
        predictions, references = single_example(predictions, references)
        start = self._seen
        preds = check_predictions(predictions, start=start)
        answers = to_answers(references, start=start)
        check_lengths(len(preds), len(answers), self.name)
        if self._normalize is not None:
            preds, answers = self._normalize.many(preds), Answers(answers.offsets, self._normalize.many(answers.texts))
        scores = self.scores(preds, answers)
        self._seen += len(preds)
        return scores

    def reduce(self, statistics: np.ndarray) -> Score:
        if np.asarray(statistics).size == 0:
            return Score(float("nan"), undefined="no predictions to score (Olive reports 0.0 for an empty list)")
        return super().reduce(statistics)


class ExactMatchConfig(AnswerConfig):
    normalizer: TransformSpec | None = Field(
        None,
        description="Unset: Olive's normalization (case folded, whitespace stripped and collapsed). 'none': the "
        "strings compared exactly as they are (Unitxt's Accuracy). Any other registered text transform (or a "
        "list of them) runs on the prediction and every reference answer before Olive's normalization",
    )


def _verbatim(normalizer: TransformSpec | None) -> bool:
    """Whether a normalizer spec is the transform ``none`` alone: exact_match then compares strings as they are."""
    return normalizer == "none" or normalizer == {"type": "none"}


@register_metric
class ExactMatch(AnswerMetric):
    """Olive's exact match: ``" ".join(s.strip().lower().split())`` equal to any reference answer.

    With ``normalizer: "none"`` the strings must be equal as they are, as Unitxt's ``Accuracy`` compares them: a
    user who names no normalization gets none, not Olive's case and whitespace folding.
    """

    name = "exact_match"
    Config: ClassVar[type[StrictModel]] = ExactMatchConfig
    example_range = (0.0, 1.0)

    def scores(self, predictions: list[str], answers: Answers) -> np.ndarray:
        normalize = not _verbatim(self.config.normalizer)  # type: ignore[attr-defined]
        return kernels.exact_match_scores(predictions, answers, normalize=normalize)


class RelaxedConfig(AnswerConfig):
    tolerance: float = Field(0.05, ge=0, description="Relative tolerance for numbers (ChartQA's 5%).")
    rule: Literal["olive", "pix2struct", "mistral"] = Field(
        "olive",
        description="olive: Olive's parse ('%' and ',' deleted); pix2struct: '%' scales by 1/100 and a zero "
        "target needs the same string; mistral: lm-evaluation-harness's ChartQA rule",
    )


@register_metric
class RelaxedAccuracy(AnswerMetric):
    """ChartQA's relaxed accuracy: a number within ``tolerance`` (relative) of a reference, else exact text."""

    name = "relaxed_accuracy"
    Config: ClassVar[type[StrictModel]] = RelaxedConfig

    def scores(self, predictions: list[str], answers: Answers) -> np.ndarray:
        c: RelaxedConfig = self.config  # type: ignore[assignment]
        return kernels.relaxed_accuracy_scores(predictions, answers, tolerance=c.tolerance, rule=c.rule)


class WordSortConfig(AnswerConfig):
    method: Literal["olive", "token_sort_ratio"] = Field(
        "olive",
        description="olive: Olive's multiset word overlap over the longer word count; token_sort_ratio: "
        "rapidfuzz.fuzz.token_sort_ratio / 100",
    )
    processor: TransformSpec | None = Field(
        None,
        description="token_sort_ratio only: 'default' is rapidfuzz.utils.default_process (lowercase, "
        "non-alphanumerics to spaces; fuzzywuzzy's behaviour, used when unset), 'none' compares the strings as "
        "they are (rapidfuzz 3's own default), or any registered text transform (or a list of them)",
    )

    @model_validator(mode="after")
    def _processor_needs_token_sort(self) -> WordSortConfig:
        if self.processor is not None and self.method != "token_sort_ratio":
            raise ValueError("processor applies to method 'token_sort_ratio' only")
        if self.processor is not None:
            kernels.processor_transform(self.processor)  # an unknown transform fails here
        return self


@register_metric
class WordSortRatio(AnswerMetric):
    """Olive's word overlap (default), or rapidfuzz's token_sort_ratio / 100."""

    name = "word_sort_ratio"
    Config: ClassVar[type[StrictModel]] = WordSortConfig
    requires: ClassVar[tuple[str, ...]] = ("rapidfuzz",)

    def scores(self, predictions: list[str], answers: Answers) -> np.ndarray:
        c: WordSortConfig = self.config  # type: ignore[assignment]
        return kernels.word_sort_ratio_scores(predictions, answers, method=c.method, processor=c.processor or "default")


class AnlsConfig(AnswerConfig):
    threshold: float = Field(
        0.5, ge=0, le=1, description="A normalized Levenshtein distance above this scores 0 (DocVQA's 0.5)."
    )


@register_metric
class ANLS(AnswerMetric):
    """DocVQA's Average Normalized Levenshtein Similarity, the best over the reference answers."""

    name = "anls"
    Config: ClassVar[type[StrictModel]] = AnlsConfig
    requires: ClassVar[tuple[str, ...]] = ("rapidfuzz",)

    def scores(self, predictions: list[str], answers: Answers) -> np.ndarray:
        return kernels.anls_scores(predictions, answers, threshold=self.config.threshold)  # type: ignore[attr-defined]


@register_metric
class VqaAccuracy(AnswerMetric):
    """VQA v2 consensus accuracy over the human answers (the references), with the official normalization."""

    name = "vqa_accuracy"
    Config: ClassVar[type[StrictModel]] = AnswerConfig

    def scores(self, predictions: list[str], answers: Answers) -> np.ndarray:
        return kernels.vqa_accuracy_scores(predictions, answers)

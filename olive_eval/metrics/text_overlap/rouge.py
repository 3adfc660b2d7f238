"""ROUGE as accuracy sub-types: ``rouge1``, ``rouge2``, ``rougeL`` and ``rougeLsum``, rouge-score's values.

Each is an instance metric over the post-processed ``prediction`` (a string per example) and ``references`` (a
string, or a list of strings: the best reference by F counts, as rouge-score's ``score_multi``). The value is the
plain mean of the examples' scores, so it is deterministic; rouge-score's ``BootstrapAggregator`` (and Hugging Face
``evaluate``'s ``rouge`` with its default ``use_aggregator=True``) reports the median of unseeded bootstrap means
instead. Intervals and paired goals resample the per-example scores, seeded.

metric_config: ``score`` (``fmeasure``, the default; ``precision`` or ``recall`` of the reference chosen by F) and
``use_stemmer`` (nltk's Porter stemmer on tokens longer than 3 characters, as rouge-score; needs ``nltk``, which
``olive-eval[text]`` installs). The kernels are in :mod:`.rouge_kernels`; rouge-score itself is not needed.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from olive_eval.errors import MissingDependencyError
from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.text_overlap.references import pair_up
from olive_eval.metrics.text_overlap.rouge_kernels import rouge
from olive_eval.strict_model import StrictModel

__all__ = ["Rouge1", "Rouge2", "RougeConfig", "RougeL", "RougeLsum"]

EXTRA = "text"


def _stemmer_missing() -> bool:
    return importlib.util.find_spec("nltk") is None


@cache
def _porter() -> Any:
    """rouge-score's stemmer: nltk's Porter stemmer in its default (NLTK_EXTENSIONS) mode."""
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


class RougeConfig(StrictModel):
    """metric_config of the ROUGE sub-types."""

    use_stemmer: bool = Field(
        False, description="Porter-stem tokens longer than 3 characters (nltk's, as rouge-score); needs nltk"
    )
    score: Literal["fmeasure", "precision", "recall"] = Field(
        "fmeasure", description="Which score of the reference with the best F is averaged"
    )

    @model_validator(mode="after")
    def _stemmer_installed(self) -> RougeConfig:
        if self.use_stemmer and _stemmer_missing():
            raise ValueError(str(MissingDependencyError("nltk", "use_stemmer", EXTRA)))
        return self


class _Rouge(Metric):
    """One ROUGE type; examples are numbered across batches in errors."""

    higher_is_better = True
    kind = Kind.INSTANCE
    reads = ("prediction", "references")
    Config: ClassVar[type[StrictModel]] = RougeConfig
    extra = EXTRA
    rouge_type: ClassVar[str]

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0

    @classmethod
    def from_config(cls, metric_config: dict[str, Any] | None, aggregation: str | None = None) -> Metric:
        if (metric_config or {}).get("use_stemmer") and _stemmer_missing():
            raise MissingDependencyError("nltk", f"metric '{cls.name}' with use_stemmer", EXTRA)
        return super().from_config(metric_config, aggregation)

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        preds, answers = pair_up(predictions, references, self.name, start=self._seen)
        self._seen += len(preds)
        if not preds:
            return np.empty(0)
        scores = rouge(
            preds, answers.texts, answers.offsets, self.rouge_type, _porter() if self.config.use_stemmer else None
        )  # type: ignore[attr-defined]
        return getattr(scores, self.config.score)  # type: ignore[attr-defined]

    def reduce(self, statistics: np.ndarray) -> Score:
        if np.asarray(statistics).size == 0:
            return Score(float("nan"), undefined="no predictions to score")
        return super().reduce(statistics)


@register_metric
class Rouge1(_Rouge):
    """Unigram overlap."""

    name = "rouge1"
    rouge_type = "rouge1"


@register_metric
class Rouge2(_Rouge):
    """Bigram overlap."""

    name = "rouge2"
    rouge_type = "rouge2"


@register_metric
class RougeL(_Rouge):
    """Longest common subsequence of the whole texts."""

    name = "rougeL"
    rouge_type = "rougeL"


@register_metric
class RougeLsum(_Rouge):
    """Summary-level LCS over the texts' lines (``"\\n"`` separates sentences, as rouge-score)."""

    name = "rougeLsum"
    rouge_type = "rougeLsum"

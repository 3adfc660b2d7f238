"""ROUGE as accuracy sub-types: ``rouge1``, ``rouge2``, ``rougeL`` and ``rougeLsum``, rouge-score's values.

Each is an instance metric over the post-processed ``prediction`` (a string per example) and ``references`` (a
string, or a list of strings: the best reference by F counts, as rouge-score's ``score_multi``). The value is the
plain mean of the examples' scores, so it is deterministic; rouge-score's ``BootstrapAggregator`` (and Hugging Face
``evaluate``'s ``rouge`` with its default ``use_aggregator=True``) reports the median of unseeded bootstrap means
instead. Intervals and paired goals resample the per-example scores, seeded.

metric_config: ``score`` (``fmeasure``, the default; ``precision`` or ``recall`` of the reference chosen by F) and
``use_stemmer`` (nltk's Porter stemmer on tokens longer than 3 characters, as rouge-score; needs ``nltk``, which
``olive-eval[text]`` installs). The kernels are in :mod:`.rouge_kernels`; rouge-score itself is not needed.

rougeLsum's sentences are a text's lines by default (rouge-score's default). ``sentence_split: "unitxt"`` splits
sentences first as Unitxt's ``Rouge`` does (``"\n".join(sent_tokenize(text.strip()))``: sentences, and the lines
within them); ``"split_summaries"`` as rouge-score's ``split_summaries=True`` (sentences only: a newline inside one
is a space). The splitter (:mod:`.sentences`) is nltk's punkt where it runs, else rules; the value's details name
the one that ran.
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
from olive_eval.metrics.text_overlap.sentences import Splitter, sentence_splitter
from olive_eval.strict_model import StrictModel

__all__ = ["Rouge1", "Rouge2", "RougeConfig", "RougeL", "RougeLsum", "RougeLsumConfig"]

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
    example_range = (0.0, 1.0)  # each example's F-measure
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

    def texts(self, texts: list[str]) -> list[str]:
        """The texts as the kernel reads them (rougeLsum may lay their sentences out as lines first)."""
        return texts

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        preds, answers = pair_up(predictions, references, self.name, start=self._seen)
        self._seen += len(preds)
        if not preds:
            return np.empty(0)
        stemmer = _porter() if self.config.use_stemmer else None  # type: ignore[attr-defined]
        scores = rouge(self.texts(preds), self.texts(answers.texts), answers.offsets, self.rouge_type, stemmer)
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


class RougeLsumConfig(RougeConfig):
    """metric_config of rougeLsum: the ROUGE keys, and how a text is cut into sentences."""

    sentence_split: Literal["newline", "unitxt", "split_summaries"] = Field(
        "newline",
        description="newline: a text's lines are its sentences (rouge-score's default); unitxt: sentences split "
        "by punkt, then lines, as Unitxt's Rouge; split_summaries: sentences split by punkt only, as rouge-score's "
        "split_summaries=True",
    )
    sentence_splitter: Literal["auto", "punkt", "rules"] = Field(
        "auto",
        description="With a sentence split: punkt is nltk's sent_tokenize (needs nltk and its punkt_tab data), "
        "rules olive-eval's rule-based splitter, auto punkt where it runs and rules elsewhere",
    )

    @model_validator(mode="after")
    def _splitter_needs_a_split(self) -> RougeLsumConfig:
        if self.sentence_splitter != "auto" and self.sentence_split == "newline":
            raise ValueError("sentence_splitter applies to sentence_split 'unitxt' or 'split_summaries'")
        return self


@register_metric
class RougeLsum(_Rouge):
    """Summary-level LCS over the texts' sentences: their lines (``"\\n"``, as rouge-score), or split by punkt."""

    name = "rougeLsum"
    rouge_type = "rougeLsum"
    Config: ClassVar[type[StrictModel]] = RougeLsumConfig
    transient = ("_split",)

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        c: RougeLsumConfig = self.config  # type: ignore[assignment]
        self.splitter: str | None = None
        self._split: Splitter | None = None
        if c.sentence_split != "newline":
            self.splitter, self._split = sentence_splitter(c.sentence_splitter)

    def texts(self, texts: list[str]) -> list[str]:
        split, mode = self._split, self.config.sentence_split  # type: ignore[attr-defined]
        if split is None:
            return texts
        if mode == "unitxt":
            return ["\n".join(split(text.strip())) for text in texts]
        return ["\n".join(sentence.replace("\n", " ") for sentence in split(text)) for text in texts]

    def reduce(self, statistics: np.ndarray) -> Score:
        score = super().reduce(statistics)
        if self.splitter is not None:
            how = {"sentence_split": self.config.sentence_split, "sentence_splitter": self.splitter}  # type: ignore[attr-defined]
            score.extra.update(how)
            score.details = how  # results.json says which splitter ran
        return score

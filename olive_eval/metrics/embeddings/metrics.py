"""``embedding_similarity`` and ``bert_score_precision`` / ``_recall`` / ``_f1``: Unitxt's embedding-based scores.

* ``embedding_similarity`` (instance, mean): the cosine between the sentence-transformers embeddings of the
  prediction and of its reference, the best (highest) over an example's references. Equal to
  ``sentence_transformers.util.cos_sim`` of ``model.encode`` on the same model.
* ``bert_score_*`` (per-example P, R and F1, the mean over examples): BERTScore with idf off, the token states of
  layer ``num_layers`` (bert-score's ``num_layers``; the model's last layer by default) of a transformers model.
  With several references each of P, R and F1 is its own maximum over them, as ``bert_score.score`` does with
  lists of references (so P and R may come from different references). The three share one computation per
  batch (``shared_key``); their statistics are ``(P, R, F1, 1)`` rows so intervals resample examples.

Models come from a local folder (``metric_config.model_path``), are checked when the config is read, loaded on
first use, once per metric object, on ``metric_config.device`` (``cpu`` by default). Nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import Field, ValidationInfo, field_validator, model_validator

from olive_eval.errors import MissingDependencyError
from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.embeddings.kernels import cosine_rows, greedy_match
from olive_eval.metrics.embeddings.loading import (
    BertEncoder,
    config_layers,
    folder_problem,
    load_sentence_transformer,
)
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.text_overlap.references import pair_up
from olive_eval.strict_model import LaxPath, StrictModel

__all__ = ["BertScoreConfig", "BertScoreF1", "BertScorePrecision", "BertScoreRecall", "EmbeddingSimilarity"]

EXTRA = "embeddings"


class _ModelConfig(StrictModel):
    model_path: LaxPath | None = Field(None, description="Local model folder (nothing is downloaded)")
    device: str = Field("cpu", description="torch device the model runs on")
    batch_size: int = Field(32, ge=1, description="Texts encoded per forward pass")
    _kind: ClassVar[str]
    _markers: ClassVar[tuple[str, ...]]

    @model_validator(mode="after")
    def _folder_is_a_model(self) -> _ModelConfig:
        problem = folder_problem(self.model_path, self._kind, self._markers)
        if problem is not None:
            raise ValueError(problem)
        return self


class EmbeddingSimilarityConfig(_ModelConfig):
    """metric_config of ``embedding_similarity``."""

    _kind = "sentence-transformers"
    _markers = ("modules.json", "config.json")


class BertScoreConfig(_ModelConfig):
    """metric_config of the ``bert_score_*`` sub-types (idf weighting is off, bert-score's default)."""

    num_layers: int | None = Field(None, description="Layer whose token states are matched (default: the last)")
    _kind = "transformers"
    _markers = ("config.json",)

    @field_validator("num_layers")
    @classmethod
    def _within_the_model(cls, value: int | None, info: ValidationInfo) -> int | None:
        """0 or more, and no more than the model's layers when its config.json says how many (checked with the
        config, not after the model loads and fails the pass)."""
        if value is not None and value < 0:
            raise ValueError(f"num_layers must be 0 or more, got {value}")
        folder = info.data.get("model_path")
        depth = config_layers(folder)
        if value is not None and depth is not None and value > depth:
            raise ValueError(
                f"num_layers {value} is more than the {depth} layers of the model in {folder} (its config.json); "
                f"give 0 to {depth}"
            )
        return value


def _texts(metric: Metric, predictions: Any, references: Any, start: int) -> tuple[list[str], Any]:
    if references is None:
        raise ValueError(
            f"{metric.name} needs references: give the data config a label_col holding a reference text "
            "(or a list of them) per example"
        )
    return pair_up(predictions, references, metric.name, start=start)


class _EmbeddingMetric(Metric):
    """Checks the package and the folder at config time; keeps its loaded model."""

    higher_is_better = True
    reads = ("prediction", "references")
    extra = EXTRA
    package: ClassVar[str]
    transient = ("_model",)  # loaded again on first use, never cached

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0
        self._model: Any = None

    @classmethod
    def check_requirements(cls) -> None:
        if importlib.util.find_spec(cls.package) is None:
            raise MissingDependencyError(cls.package.replace("_", "-"), f"metric '{cls.name}'", EXTRA)

    @property
    def folder(self) -> str:
        return str(Path(self.config.model_path).resolve())  # type: ignore[attr-defined]


@register_metric
class EmbeddingSimilarity(_EmbeddingMetric):
    """Cosine of sentence embeddings, prediction against its best reference."""

    name = "embedding_similarity"
    kind = Kind.INSTANCE
    Config: ClassVar[type[StrictModel]] = EmbeddingSimilarityConfig
    package = "sentence_transformers"

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        preds, answers = _texts(self, predictions, references, self._seen)
        self._seen += len(preds)
        if not preds:
            return np.empty(0)
        if self._model is None:
            self._model = load_sentence_transformer(self.folder, self.config.device)  # type: ignore[attr-defined]
        texts = list(dict.fromkeys([*preds, *answers.texts]))  # each distinct text encoded once
        where = {t: i for i, t in enumerate(texts)}
        vectors = self._model.encode(
            texts,
            batch_size=self.config.batch_size,  # type: ignore[attr-defined]
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        pred_rows = np.array([where[p] for p in preds])[answers.owner()]
        ref_rows = np.array([where[r] for r in answers.texts])
        return answers.best(cosine_rows(vectors[pred_rows], vectors[ref_rows]))

    def reduce(self, statistics: np.ndarray) -> Score:
        if np.asarray(statistics).size == 0:
            return Score(float("nan"), undefined="no predictions to score")
        return super().reduce(statistics)


class _BertScore(_EmbeddingMetric):
    """One of P, R, F1; rows ``(P, R, F1, 1)`` per example, summed and divided by the count."""

    kind = Kind.MAP_REDUCE
    Config: ClassVar[type[StrictModel]] = BertScoreConfig
    package = "transformers"
    column: ClassVar[int]

    def shared_key(self) -> Any:
        c = self.config
        return ("bert_score", self.folder, c.num_layers, c.device, c.batch_size)  # type: ignore[attr-defined]

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        preds, answers = _texts(self, predictions, references, self._seen)
        self._seen += len(preds)
        if not preds:
            return np.zeros((0, 4))
        if self._model is None:
            self._model = BertEncoder(self.folder, self.config.num_layers, self.config.device)  # type: ignore[attr-defined]
        texts = list(dict.fromkeys([*preds, *answers.texts]))
        where = {t: i for i, t in enumerate(texts)}
        encoded = self._model.encode(texts, self.config.batch_size)  # type: ignore[attr-defined]
        owner = answers.owner()
        pairs = np.array(
            [
                greedy_match(*encoded[where[preds[owner[k]]]], *encoded[where[ref]])
                for k, ref in enumerate(answers.texts)
            ]
        ).reshape(-1, 3)
        best = np.stack([answers.best(pairs[:, j]) for j in range(3)], axis=1)
        return np.concatenate([best, np.ones((len(preds), 1))], axis=1)

    def adopt(self, producer: Metric) -> None:
        """Statistics another sub-type computed: it loaded the model, which tells the layer used."""
        if self._model is None:
            self._model = getattr(producer, "_model", None)

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, 4))

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        t = np.asarray(totals, np.float64).reshape(-1, 4)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(t[:, 3] > 0, t[:, self.column] / t[:, 3], np.nan)

    def instance_scores(self, statistics: np.ndarray) -> np.ndarray:
        return np.asarray(statistics, np.float64).reshape(-1, 4)[:, self.column]

    def reduce(self, statistics: np.ndarray) -> Score:
        rows = np.asarray(statistics, np.float64).reshape(-1, 4)
        if not len(rows):
            return Score(float("nan"), undefined="no predictions to score")
        extra = {"num_layers": self._model.num_layers} if self._model is not None else {}
        return Score(float(self.finalize_totals(rows.sum(axis=0))[0]), extra=extra)


@register_metric
class BertScorePrecision(_BertScore):
    """Weighted mean over prediction tokens of their best cosine with a reference token."""

    name = "bert_score_precision"
    column = 0


@register_metric
class BertScoreRecall(_BertScore):
    """Weighted mean over reference tokens of their best cosine with a prediction token."""

    name = "bert_score_recall"
    column = 1


@register_metric
class BertScoreF1(_BertScore):
    """Harmonic mean of the pair's precision and recall."""

    name = "bert_score_f1"
    column = 2

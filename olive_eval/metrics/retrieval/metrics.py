"""``ndcg``, ``mrr``, ``recall_at_k``, ``precision_at_k`` and ``map_at_k``: ranking quality per query.

Each reads ``prediction`` (per query, a score per candidate, or a dict doc id -> score) and ``references`` (a
relevance grade per candidate in the same order, or a dict doc id -> grade); see :mod:`.inputs`. Each query gets
its own score (instance metrics, the mean over queries by default), so intervals and paired goals resample
queries. Values equal ranx's and trec_eval's (``ndcg_cut``, ``recip_rank``, ``P``, ``recall``, ``map_cut``) under
the conventions of :mod:`.kernels`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.retrieval import kernels as K
from olive_eval.metrics.retrieval.inputs import Rankings, rankings
from olive_eval.strict_model import StrictModel

__all__ = ["AtKConfig", "MrrConfig", "NdcgConfig"]

_LEVEL = "Smallest grade that counts as relevant (trec_eval's relevance_level, ranx's rel_lvl)"


class NdcgConfig(StrictModel):
    """metric_config of ``ndcg``."""

    k: int | None = Field(None, ge=1, description="Candidates ranked (nDCG@k); null: the whole list")
    gain: Literal["linear", "exponential"] = Field(
        "linear", description="A grade's gain: the grade (trec_eval, ranx's ndcg) or 2**grade - 1 (ndcg_burges)"
    )


class MrrConfig(StrictModel):
    """metric_config of ``mrr``."""

    k: int | None = Field(None, ge=1, description="Candidates searched for the first relevant; null: all")
    relevance_level: float = Field(1, gt=0, description=_LEVEL)


class AtKConfig(StrictModel):
    """metric_config of ``recall_at_k``, ``precision_at_k`` and ``map_at_k``."""

    k: int = Field(ge=1, description="Candidates ranked (the cutoff)")
    relevance_level: float = Field(1, gt=0, description=_LEVEL)


class _Ranking(Metric):
    """One score per query from its :class:`Rankings`; errors number queries across the batches of a pass."""

    higher_is_better = True
    kind = Kind.INSTANCE
    reads = ("prediction", "references")

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0  # queries of the earlier batches, to number queries in errors

    def compute(self, *fields: Any) -> Score:
        """The whole set: queries numbered from 0."""
        self._seen = 0
        return super().compute(*fields)

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        ranked = rankings(predictions, references, self.name, start=self._seen)
        self._seen += len(ranked)
        return self.per_query(ranked)

    def per_query(self, ranked: Rankings) -> np.ndarray:
        raise NotImplementedError

    def reduce(self, statistics: np.ndarray) -> Score:
        if np.asarray(statistics).size == 0:
            return Score(float("nan"), undefined="no queries to score")
        return super().reduce(statistics)


@register_metric
class Ndcg(_Ranking):
    """Normalized discounted cumulative gain of each query's ranking (at ``k``)."""

    name = "ndcg"
    Config: ClassVar[type[StrictModel]] = NdcgConfig

    def per_query(self, ranked: Rankings) -> np.ndarray:
        c: NdcgConfig = self.config  # type: ignore[assignment]
        return K.ndcg(ranked.scores, ranked.grades, ranked.judged, c.k, c.gain)


@register_metric
class Mrr(_Ranking):
    """Reciprocal rank of each query's first relevant candidate (within ``k``); its mean is the MRR."""

    name = "mrr"
    Config: ClassVar[type[StrictModel]] = MrrConfig

    def per_query(self, ranked: Rankings) -> np.ndarray:
        c: MrrConfig = self.config  # type: ignore[assignment]
        return K.reciprocal_rank(ranked.scores, ranked.grades, c.k, c.relevance_level)


@register_metric
class RecallAtK(_Ranking):
    """Share of each query's relevant documents ranked in its top ``k``."""

    name = "recall_at_k"
    Config: ClassVar[type[StrictModel]] = AtKConfig

    def per_query(self, ranked: Rankings) -> np.ndarray:
        c: AtKConfig = self.config  # type: ignore[assignment]
        return K.recall_at_k(ranked.scores, ranked.grades, ranked.judged, c.k, c.relevance_level)


@register_metric
class PrecisionAtK(_Ranking):
    """Share of each query's top ``k`` that is relevant."""

    name = "precision_at_k"
    Config: ClassVar[type[StrictModel]] = AtKConfig

    def per_query(self, ranked: Rankings) -> np.ndarray:
        c: AtKConfig = self.config  # type: ignore[assignment]
        return K.precision_at_k(ranked.scores, ranked.grades, c.k, c.relevance_level)


@register_metric
class MapAtK(_Ranking):
    """Average precision of each query's top ``k``; its mean is MAP@k."""

    name = "map_at_k"
    Config: ClassVar[type[StrictModel]] = AtKConfig

    def per_query(self, ranked: Rankings) -> np.ndarray:
        c: AtKConfig = self.config  # type: ignore[assignment]
        return K.average_precision_at_k(ranked.scores, ranked.grades, ranked.judged, c.k, c.relevance_level)

"""Violation-matching sub-types: ``{std,ha}_{tp,fp,fn,precision,recall,f1,match_score}``.

Each reads ``prediction`` (a checker's list of violation dicts per document), ``references`` (the ground truth's)
and ``text`` (the document; spans are checked against it). Per document, the statistics are the additive row
``tp, fp, fn, score_sum`` of one matching (:func:`.kernels.match`); the sub-types of one preset and metric_config
share it (:meth:`~Metric.shared_key`: matched once per batch), and intervals and paired goals resample documents.

* ``precision = tp / (tp + fp)``, ``recall = tp / (tp + fn)``, ``f1 = 2 tp / (2 tp + fp + fn)``;
* ``match_score = score_sum / tp``: the mean weighted score of the matched pairs;
* ``tp``, ``fp``, ``fn``: the counts over the set (an instance score: the document's count).

A zero denominator makes the value undefined (NaN, with the reason), unless ``zero_division`` gives a value.

Presets (the seed's): ``std_`` weighs text 0.5 and rule 0.5; ``ha_`` text 0.3, rule 0.3, category 0.1,
explanation 0.2, correction 0.1. Both: thresholds overlap > 0, rule similarity > 0.01, score > 0.5.
``weights`` in metric_config replace the preset's whole set (parts left out weigh 0) and must sum to 1: weights
that do not are rejected, never normalized, since the match threshold is on the weighted sum's scale.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.violations.endpoint_embeddings import endpoint_encoder
from olive_eval.metrics.violations.inputs import flatten
from olive_eval.metrics.violations.kernels import PARTS, Matching, PairSimilarity, Thresholds, match
from olive_eval.metrics.violations.similarity import (
    SCORERS,
    embedding_similarity,
    fuzz_similarity,
    jaccard_similarity,
    local_encoder,
    model_folder_problem,
)
from olive_eval.strict_model import LaxPath, StrictModel

__all__ = ["PRESETS", "ViolationConfig", "match_violations"]

#: The seed's weights per preset, in :data:`PARTS` order.
PRESETS: dict[str, dict[str, float]] = {
    "std": {"text": 0.5, "rule": 0.5},
    "ha": {"text": 0.3, "rule": 0.3, "category": 0.1, "explanation": 0.2, "correction": 0.1},
}

#: Output -> (what it is, higher is better).
OUTPUTS: dict[str, tuple[str, bool]] = {
    "tp": ("matched predictions (true positives)", True),
    "fp": ("predictions matched to no ground truth (false positives)", False),
    "fn": ("ground truths matched by no prediction (false negatives)", False),
    "precision": ("tp / (tp + fp)", True),
    "recall": ("tp / (tp + fn)", True),
    "f1": ("2 tp / (2 tp + fp + fn)", True),
    "match_score": ("mean weighted score of the matched pairs", True),
}


class ViolationConfig(StrictModel):
    """metric_config of the violation sub-types (sub-types of one preset should share it)."""

    weights: dict[str, float] | None = Field(
        None, description=f"Weights of {', '.join(PARTS)}; parts left out weigh 0; must sum to 1. Default: the preset's"
    )
    overlap_threshold: float = Field(0.0, description="A match needs span IoU above this; in [0, 1]")
    rule_threshold: float = Field(0.01, description="A match needs rule similarity above this; in [0, 1]")
    match_threshold: float = Field(0.5, description="A match needs a weighted score above this; in [0, 1]")
    similarity: Literal["rapidfuzz", "jaccard", "embedding"] = Field(
        "rapidfuzz",
        description="Of rules, explanations, corrections: rapidfuzz.fuzz scorer / 100, IoU of the word sets "
        "(jaccard), or embedding cosine",
    )
    scorer: str = Field("ratio", description=f"rapidfuzz.fuzz scorer: {', '.join(SCORERS)}")
    lowercase: bool = Field(
        False, description="rapidfuzz: compare after rapidfuzz.utils.default_process; jaccard: lowercase the words"
    )
    embedding_model: LaxPath | None = Field(None, description="embedding: a local sentence-transformers model folder")
    embedding_endpoint: str | None = Field(
        None, description="embedding: an OpenAI-compatible endpoint's base URL (POST <url>/embeddings), in its place"
    )
    endpoint_model: str = Field("text-embedding-ada-002", description="embedding_endpoint: the model to ask")
    api_key_env: str | None = Field(
        None, description="embedding_endpoint: the environment variable holding its key (the key is never in a config)"
    )
    zero_division: float | None = Field(None, description="The value of a 0/0 ratio: 0, 1, or None: undefined (NaN)")

    @field_validator("overlap_threshold", "rule_threshold", "match_threshold")
    @classmethod
    def _in_unit_range(cls, value: float) -> float:
        """IoU, similarities and weighted scores lie in [0, 1]: a threshold outside it lets anything match
        (below 0: pairs with nothing in common) or nothing (above 1), which is a config mistake, not a choice."""
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"must be between 0 and 1, got {value:g}")
        return value

    @field_validator("zero_division")
    @classmethod
    def _zero_or_one(cls, value: float | None) -> float | None:
        """The value given to a 0/0 precision, recall, F1 or match score: a ratio's value, so 0 or 1 (None: NaN)."""
        if value is not None and value not in (0.0, 1.0):
            raise ValueError(f"must be 0, 1 or null, got {value:g}")
        return value

    @model_validator(mode="after")
    def _check(self) -> ViolationConfig:
        if self.weights is not None:
            weights_vector(self.weights)
        if self.scorer not in SCORERS:
            raise ValueError(f"scorer {self.scorer!r} is not one of {', '.join(SCORERS)}")
        if self.similarity == "embedding":
            if (self.embedding_model is None) == (self.embedding_endpoint is None):
                raise ValueError(
                    "similarity 'embedding' needs one of embedding_model (a local sentence-transformers folder) "
                    "and embedding_endpoint (an OpenAI-compatible endpoint's URL)"
                )
            if self.embedding_model is not None and (problem := model_folder_problem(self.embedding_model)):
                raise ValueError(problem)
        elif self.embedding_model is not None or self.embedding_endpoint is not None:
            raise ValueError("embedding_model and embedding_endpoint apply to similarity 'embedding'")
        return self

    def thresholds(self) -> Thresholds:
        return Thresholds(self.overlap_threshold, self.rule_threshold, self.match_threshold)

    def pair_similarity(self) -> PairSimilarity:
        if self.similarity == "embedding" and self.embedding_endpoint is not None:
            return embedding_similarity(
                endpoint_encoder(self.embedding_endpoint, self.endpoint_model, self.api_key_env)
            )
        if self.similarity == "embedding":
            assert self.embedding_model is not None
            return embedding_similarity(local_encoder(self.embedding_model))
        if self.similarity == "jaccard":
            return jaccard_similarity(self.lowercase)
        return fuzz_similarity(self.scorer, self.lowercase)


def similarity_name(config: ViolationConfig) -> str:
    """The similarity as results.json's details name it."""
    if config.similarity == "embedding" and config.embedding_endpoint is not None:
        return f"embedding:{config.embedding_endpoint}#{config.endpoint_model}"
    if config.similarity == "embedding":
        return f"embedding:{config.embedding_model}"
    if config.similarity == "jaccard":
        return "jaccard:lowercase" if config.lowercase else "jaccard"
    return f"rapidfuzz.fuzz.{config.scorer}"


def weights_vector(weights: dict[str, float]) -> np.ndarray:
    """Weights by part name as a :data:`PARTS` vector; rejects unknown parts, negative weights, a sum other than 1."""
    unknown = sorted(set(weights) - set(PARTS))
    if unknown:
        raise ValueError(f"weights: unknown part(s) {', '.join(unknown)}; the parts are {', '.join(PARTS)}")
    vector = np.array([float(weights.get(part, 0.0)) for part in PARTS])
    if (vector < 0).any() or not np.isfinite(vector).all():
        raise ValueError(f"weights must be finite and non-negative, got {weights}")
    total = float(vector.sum())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"weights must sum to 1, got {total:g} ({weights}); they are not normalized")
    return vector


def match_violations(
    predictions: Any,
    references: Any,
    texts: Any,
    preset: str = "ha",
    start: int = 0,
    **metric_config: Any,
) -> Matching:
    """Match a batch of documents the way the ``{preset}_`` sub-types do, with the matched pairs (see
    :class:`~.kernels.Matching`); ``start`` numbers the examples in errors."""
    config = ViolationConfig.model_validate(metric_config)
    return _match(config, preset, predictions, references, texts, start)


def _match(config: ViolationConfig, preset: str, predictions: Any, references: Any, texts: Any, start: int) -> Matching:
    weights = weights_vector(config.weights if config.weights is not None else PRESETS[preset])
    needed = [part for part, w in zip(PARTS, weights, strict=True) if w != 0]
    texts = list(texts)
    pred = flatten(list(predictions), texts, "prediction", needed, start)
    truth = flatten(list(references), texts, "reference", needed, start)
    return match(pred, truth, weights, config.thresholds(), config.pair_similarity())


def matched_pairs(matching: Matching) -> list[list[dict[str, Any]]]:
    """Per document, its matched pairs in the greedy's order: prediction and ground-truth indices, the weighted
    score and each part's similarity (None for a part of weight 0)."""
    out: list[list[dict[str, Any]]] = [[] for _ in range(len(matching.counts))]
    for doc, pred, truth, score, parts in zip(
        matching.doc.tolist(), matching.pred.tolist(), matching.truth.tolist(), matching.score.tolist(),
        matching.parts.tolist(), strict=True,
    ):  # fmt: skip
        pair = {"prediction": pred, "truth": truth, "score": score}
        pair |= {part: None if v != v else v for part, v in zip(PARTS, parts, strict=True)}
        out[doc].append(pair)
    return out


def _ratio(num: np.ndarray, den: np.ndarray, zero_division: float | None) -> np.ndarray:
    fill = np.nan if zero_division is None else zero_division
    return np.divide(num, den, out=np.full(len(num), fill, dtype=np.float64), where=den != 0)


class _ViolationMetric(Metric):
    """One output of one preset, from the shared per-document ``tp, fp, fn, score_sum`` rows."""

    kind = Kind.MAP_REDUCE
    reads = ("prediction", "references", "text")
    Config: ClassVar[type[StrictModel]] = ViolationConfig
    preset: ClassVar[str]
    output: ClassVar[str]
    transient = ("_matching",)

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0  # documents of the earlier batches of a pass, to number examples in errors
        self._matching: Matching | None = None  # the last batch's, until its pairs are written

    @property
    def _config(self) -> ViolationConfig:
        return self.config  # type: ignore[return-value]

    def shared_key(self) -> Any:
        return ("violations", self.preset, self._config.model_dump_json())

    def statistics(self, predictions: Any, references: Any, texts: Any) -> np.ndarray:
        matching = _match(self._config, self.preset, predictions, references, texts, self._seen)
        self._seen += len(matching.counts)
        self._matching = matching
        return matching.counts

    def instance_details(self, write: bool) -> dict[str, list[Any]] | None:
        """Each document's matched pairs (``{preset}_matches``), for the instance files."""
        matching, self._matching = self._matching, None
        return {f"{self.preset}_matches": matched_pairs(matching)} if write and matching is not None else None

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, 4))

    def compute(self, predictions: Any, references: Any, texts: Any) -> Score:
        """The whole set: examples numbered from 0."""
        self._seen = 0
        return self.reduce(self.statistics(predictions, references, texts))

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        t = np.asarray(totals, dtype=np.float64).reshape(-1, 4)
        tp, fp, fn, score_sum = t.T
        zd = self._config.zero_division
        if self.output in ("tp", "fp", "fn"):
            return t[:, ("tp", "fp", "fn").index(self.output)].copy()
        if self.output == "precision":
            return _ratio(tp, tp + fp, zd)
        if self.output == "recall":
            return _ratio(tp, tp + fn, zd)
        if self.output == "f1":
            return _ratio(2 * tp, 2 * tp + fp + fn, zd)
        return _ratio(score_sum, tp, zd)

    def reduce(self, statistics: np.ndarray) -> Score:
        totals = np.asarray(statistics, dtype=np.float64).reshape(-1, 4).sum(axis=0)
        value = float(self.finalize_totals(totals[None])[0])
        c = self._config
        details = {
            "tp": int(totals[0]),
            "fp": int(totals[1]),
            "fn": int(totals[2]),
            "weights": dict(zip(PARTS, weights_vector(c.weights or PRESETS[self.preset]).tolist(), strict=True)),
            "thresholds": {"overlap": c.overlap_threshold, "rule": c.rule_threshold, "match": c.match_threshold},
            "similarity": similarity_name(c),
        }
        undefined = None
        if np.isnan(value):
            undefined = {
                "precision": "there are no predicted violations",
                "recall": "there are no ground-truth violations",
                "f1": "there are neither predicted nor ground-truth violations",
                "match_score": "no prediction matched",
            }[self.output]
        return Score(value, undefined=undefined, details=details)


def _make(preset: str, output: str) -> type[Metric]:
    doc, better = OUTPUTS[output]
    name = f"{preset}_{output}"
    attrs = {
        "name": name,
        "preset": preset,
        "output": output,
        "higher_is_better": better,
        "__doc__": f"{preset}: {doc}",
    }
    cls = type(f"Violations_{name}", (_ViolationMetric,), attrs)
    cls.__module__ = __name__
    return register_metric(cls)


#: The metric class registered for each ``<preset>_<output>`` name (one per preset and output).
PRESET_OUTPUT_METRICS: dict[str, type[Metric]] = {
    f"{preset}_{output}": _make(preset, output) for preset in PRESETS for output in OUTPUTS
}

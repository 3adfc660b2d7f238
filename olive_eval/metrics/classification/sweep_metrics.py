"""Classification metrics over the class scores of the whole set: the rest of the classification family.

``roc_auc`` and ``average_precision`` (one-vs-rest per class, macro mean over the classes that have a
value; scikit-learn's definitions, see :mod:`~olive_eval.metrics.classification.curves`; ``roc_auc`` with
``convention: valor`` is valor-lite's mean over every class, 0.0 where undefined), and the
structured sub-types ``confusion_matrix``, ``pr_curve``, ``detailed_pr_curve`` and
``threshold_metrics`` (Valor's precision, recall, F1 and accuracy per label at each score threshold).
Structured sub-types have no scalar value: their result is ``details``, and they cannot be ranked.

They read ``prediction``: class scores ``[N, C]`` (use the ``softmax`` post-process on logits) and
``references``: integer labels ``[N]`` in ``[0, C)`` (``-1``: no reference label). ``[N]`` scores of a
binary model are the positive class's: ``roc_auc`` and ``average_precision`` score that class alone
(scikit-learn's binary ``roc_auc_score`` and ``average_precision_score``), computed on the scores as given;
the sub-types decided at thresholds see them as ``[1 - s, s]``. Class names (``class_names``) name the
per-class values and the matrix rows. No examples: every sub-type is undefined.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.classification.curves import (
    average_precision,
    binary_curve,
    curve_average_precision,
    curve_roc_auc,
    macro_average,
    roc_auc,
)
from olive_eval.metrics.classification.inputs import check_labels, column
from olive_eval.metrics.classification.leave_one_out import (
    loo_average_precision,
    loo_roc_auc,
    per_class_leave_one_out,
)
from olive_eval.metrics.classification.pr_curves import DEFAULT_THRESHOLDS, detailed_pr_curve, pr_curve
from olive_eval.metrics.classification.threshold_confusion import threshold_confusion_matrix
from olive_eval.metrics.classification.thresholds import NO_LABEL, threshold_metrics
from olive_eval.metrics.confusion import class_names_or_indices
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel

__all__ = [
    "AveragePrecision",
    "ConfusionMatrix",
    "DetailedPRCurve",
    "PRCurve",
    "RocAuc",
    "RocAucConfig",
    "ThresholdMetrics",
]

STRUCTURED = "a structured value (see details), not a number"
NO_EXAMPLES = "no examples to score"


#: Leave-one-out kernels of the binary case, by name.
LOO_KERNELS = {"roc_auc": loo_roc_auc, "average_precision": loo_average_precision}


def _columns(predictions: Any, references: Any) -> tuple[np.ndarray, np.ndarray]:
    s, y = column(predictions, "predictions"), column(references, "references", labels=True)
    return s, y.reshape(-1) if y.ndim == 2 and y.shape[1] == 1 else y


def _is_binary(scores: np.ndarray) -> bool:
    return scores.ndim == 1 or (scores.ndim == 2 and scores.shape[1] == 1)


def class_scores(predictions: Any, references: Any) -> tuple[np.ndarray, np.ndarray]:
    """``[N, C]`` float scores and ``[N]`` labels; ``[N]`` binary scores become two columns ``[1 - s, s]``."""
    s, y = _columns(predictions, references)
    if _is_binary(s):
        s = s.reshape(-1).astype(np.float64)
        s = np.stack([1.0 - s, s], axis=1)
    return s, y


class SweepConfig(StrictModel):
    """metric_config of roc_auc and average_precision."""

    class_names: list[str] | None = Field(None, description="One name per score column.")


class RocAucConfig(SweepConfig):
    """metric_config of roc_auc."""

    convention: Literal["sklearn", "valor"] = Field(
        "sklearn",
        description="sklearn: a class without positives or negatives is left out of the mean; valor: valor-lite's "
        "mROCAUC, such a class (and one whose scores are all 0) counts as 0.0",
    )


class ThresholdConfig(SweepConfig):
    """metric_config of the sub-types decided at score thresholds."""

    score_thresholds: list[float] = Field(
        default_factory=lambda: DEFAULT_THRESHOLDS.tolist(), description="A label is predicted at score >= t."
    )
    hardmax: bool = Field(False, description="Only each example's highest-scoring label can be predicted.")

    @field_validator("score_thresholds")
    @classmethod
    def _check(cls, value: list[float]) -> list[float]:
        if not value or any(not 0.0 <= v <= 1.0 for v in value):
            raise ValueError(f"score_thresholds must be a non-empty list of values in [0, 1], got {value}")
        return value


class ConfusionConfig(SweepConfig):
    score_threshold: float = Field(0.0, ge=0.0, le=1.0, description="A label is predicted at score >= this.")
    hardmax: bool = Field(True, description="Only each example's highest-scoring label can be predicted.")


class ValorThresholdConfig(ThresholdConfig):
    """Valor's defaults for its classification metrics: one threshold at 0, hardmax on."""

    score_thresholds: list[float] = Field(default_factory=lambda: [0.0], description="A label qualifies at score >= t.")
    hardmax: bool = Field(True, description="Only each example's highest-scoring label can qualify.")


class DetailedConfig(ThresholdConfig):
    pr_curve_max_examples: int = Field(1, ge=0, le=1000, description="Example indices kept per kind of error.")


def _names(config: Any, num_classes: int) -> list[str]:
    return class_names_or_indices(config.class_names, num_classes)


class _PerClassMean(Metric):
    higher_is_better = True
    kind = Kind.GLOBAL
    gives_instance_values = True
    #: The leave-one-out kernel of :data:`LOO_KERNELS` giving per-example contributions; None: none.
    loo_kernel: str | None = None
    reads = ("prediction", "references")
    Config: ClassVar[type[StrictModel]] = SweepConfig

    def per_class(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def binary(self, scores: np.ndarray, positive: np.ndarray) -> float:
        """The positive class's value from its ``[N]`` scores."""
        raise NotImplementedError

    def extra(self) -> dict[str, Any]:
        return {}

    def by_columns(self) -> bool:
        """Whether ``[N]`` binary scores are scored as two columns ``[1 - s, s]`` rather than the positive class."""
        return False

    def compute(self, predictions: Any, references: Any) -> Score:
        return self.compute_with_instances(predictions, references, per_example=False)[0]

    def compute_with_instances(
        self, predictions: Any, references: Any, per_example: bool = True
    ) -> tuple[Score, np.ndarray | None]:
        """``per_example``: each example's contribution, the value minus the value without it (see
        :mod:`~olive_eval.metrics.classification.leave_one_out`); None for ``convention: valor``."""
        s, y = class_scores(predictions, references) if self.by_columns() else _columns(predictions, references)
        if len(s) == len(y) == 0:
            return Score(float("nan"), undefined=NO_EXAMPLES), np.empty(0)
        loo = None
        if _is_binary(s):  # the positive class alone, on its own scores: 1 - s would round tiny scores to ties
            s = s.reshape(-1)
            if len(s) != len(y):
                raise ValueError(f"labels must have shape [{len(s)}] to match the scores, got {list(y.shape)}")
            y = check_labels(y, 2, "references", why="binary scores [N] are the scores of class 1", allow=NO_LABEL)
            values, names = np.array([self.binary(s, y == 1)]), _names(self.config, 2)[1:]
            if per_example and self.loo_kernel is not None:
                loo = LOO_KERNELS[self.loo_kernel](s, y == 1)
        else:
            values = self.per_class(s, y)
            names = _names(self.config, len(values))
            if per_example and self.loo_kernel is not None:
                loo = per_class_leave_one_out(s, y, self.loo_kernel)
        value = macro_average(values)
        undefined = None
        if np.isnan(value):
            undefined = f"no class has {self.needs} among the references"
        score = Score(
            value,
            per_class=[float(v) for v in values],
            undefined=undefined,
            extra=self.extra(),
            details={"per_class": {n: (None if np.isnan(v) else float(v)) for n, v in zip(names, values, strict=True)}},
        )
        return score, None if loo is None else value - loo


@register_metric
class RocAuc(_PerClassMean):
    """One-vs-rest ROC AUC per class (ties collapsed, trapezoid) and its macro mean: scikit-learn's
    ``roc_auc_score(multi_class="ovr", average="macro")``; a class without positives or negatives is left out.

    ``convention: valor`` is valor-lite's ``ROCAUC`` and ``mROCAUC``: every class counts in the mean, 0.0 where
    it has no positives or negatives or all its scores are 0, and ``[N]`` binary scores are the two labels of
    ``[1 - s, s]``, as a valor-lite user passes them."""

    name = "roc_auc"
    needs = "both positives and negatives"
    Config: ClassVar[type[StrictModel]] = RocAucConfig

    @property
    def _valor(self) -> bool:
        return self.config.convention == "valor"  # type: ignore[attr-defined]

    @property
    def loo_kernel(self) -> str | None:  # type: ignore[override]
        """valor-lite's convention (undefined classes as 0.0, binary as two columns) has no leave-one-out form here."""
        return None if self._valor else "roc_auc"

    def by_columns(self) -> bool:
        return self._valor

    def extra(self) -> dict[str, Any]:
        return {"convention": self.config.convention}  # type: ignore[attr-defined]

    def per_class(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        return roc_auc(scores, labels, convention=self.config.convention)  # type: ignore[attr-defined]

    def binary(self, scores: np.ndarray, positive: np.ndarray) -> float:
        return curve_roc_auc(binary_curve(scores, positive))


@register_metric
class AveragePrecision(_PerClassMean):
    """One-vs-rest average precision per class (step-wise sum) and its macro mean over classes with positives."""

    name = "average_precision"
    needs = "positives"
    loo_kernel = "average_precision"

    def per_class(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        return average_precision(scores, labels)

    def binary(self, scores: np.ndarray, positive: np.ndarray) -> float:
        return curve_average_precision(binary_curve(scores, positive))


class _Structured(Metric):
    higher_is_better = True
    kind = Kind.GLOBAL
    reads = ("prediction", "references")
    scalar = False

    def details(self, scores: np.ndarray, labels: np.ndarray) -> Any:
        raise NotImplementedError

    def compute(self, predictions: Any, references: Any) -> Score:
        s, y = class_scores(predictions, references)
        if len(s) == len(y) == 0:
            return Score(float("nan"), undefined=NO_EXAMPLES)
        return Score(float("nan"), undefined=STRUCTURED, details=self.details(s, y))


@register_metric
class ConfusionMatrix(_Structured):
    """Rows: reference class, columns: predicted class, with the class names (Valor's form); with ``hardmax``
    it is scikit-learn's ``confusion_matrix(labels, argmax(scores))``. Unmatched references predicted nothing."""

    name = "confusion_matrix"
    Config: ClassVar[type[StrictModel]] = ConfusionConfig

    def details(self, scores: np.ndarray, labels: np.ndarray) -> Any:
        c = self.config
        matrix = threshold_confusion_matrix(scores, labels, score_thresholds=[c.score_threshold], hardmax=c.hardmax)
        return matrix.to_dict(_names(c, scores.shape[1]))[0]


@register_metric
class PRCurve(_Structured):
    """tp, fp, fn, tn, precision, recall and F1 per label at each score threshold (one-vs-rest)."""

    name = "pr_curve"
    Config: ClassVar[type[StrictModel]] = ThresholdConfig

    def details(self, scores: np.ndarray, labels: np.ndarray) -> Any:
        c = self.config
        curve = pr_curve(scores, labels, thresholds=c.score_thresholds, hardmax=c.hardmax)
        return curve.to_dict(_names(c, scores.shape[1]))


@register_metric
class DetailedPRCurve(_Structured):
    """:class:`PRCurve` with false positives split into misclassifications and hallucinations, false negatives
    into misclassifications and no predictions, each with up to ``pr_curve_max_examples`` example indices."""

    name = "detailed_pr_curve"
    Config: ClassVar[type[StrictModel]] = DetailedConfig

    def details(self, scores: np.ndarray, labels: np.ndarray) -> Any:
        c = self.config
        curve = detailed_pr_curve(
            scores, labels, thresholds=c.score_thresholds, hardmax=c.hardmax, max_examples=c.pr_curve_max_examples
        )
        return curve.to_dict(_names(c, scores.shape[1]))


@register_metric
class ThresholdMetrics(_Structured):
    """Valor's counts, precision, recall, F1 per label and accuracy at each score threshold."""

    name = "threshold_metrics"
    Config: ClassVar[type[StrictModel]] = ValorThresholdConfig

    def details(self, scores: np.ndarray, labels: np.ndarray) -> Any:
        c = self.config
        result = threshold_metrics(scores, labels, score_thresholds=c.score_thresholds, hardmax=c.hardmax)
        return result.to_dict(_names(c, scores.shape[1]))

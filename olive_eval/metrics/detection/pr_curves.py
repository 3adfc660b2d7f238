"""Valor's detection precision-recall curves: structured sub-types beside the scalar mAP keys.

* ``detection_pr_curve`` -- Valor's ``PrecisionRecallCurve`` for detection as its docs (seed 004) define it:
  per label and score threshold (default 0.05, 0.10, ..., 0.95) the ``tp``, ``fp``, ``fn``, ``precision``,
  ``recall`` and ``f1_score`` at one IoU threshold, ``pr_curve_iou_threshold`` (default 0.5). A prediction
  counts at threshold ``s`` when its score is ``>= s``; it is a true positive when valor's matching credits it
  (:func:`.valor.match_valor`), otherwise a false positive, also when its label is on no ground truth of its
  image. ``fn`` is the label's ground truths less its true positives. These are valor-lite 0.39's
  ``Counts``, ``Precision``, ``Recall`` and ``F1`` at ``iou_thresholds=[pr_curve_iou_threshold]``.
* ``detection_interpolated_pr_curve`` -- valor-lite 0.39's own ``PrecisionRecallCurve``: per label, 101
  precisions at recall 0, 0.01, ..., 1 (the best precision at that recall or above, as AP interpolates it) and
  the best score reaching each point.

Labels are every category with a ground truth or a prediction, as valor lists them; undefined ratios are 0.
The curves pool the whole set (ranking crosses images), so they are global sub-types with no bootstrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.classification.thresholds import threshold_keys
from olive_eval.metrics.detection.inputs import DetectionSet
from olive_eval.metrics.detection.labels import names_of
from olive_eval.metrics.detection.metrics import DetectionConfig, detection_set
from olive_eval.metrics.detection.valor import EPSILON, average_precision, label_counts, match_valor, ranking
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel

__all__ = ["DEFAULT_SCORE_THRESHOLDS", "DetectionCurveConfig", "DetectionPRCurve", "detection_pr_curve"]

DEFAULT_SCORE_THRESHOLDS = [k / 100 for k in range(5, 100, 5)]  # 0.05 ... 0.95 as Valor writes them
STRUCTURED = "a structured value (see details), not a number"


@dataclass(frozen=True)
class DetectionPRCurve:
    """Per label ``[L, S]`` counts at each score threshold, and the 101-point interpolated curve ``[L, 101, 2]``."""

    labels: np.ndarray  # [L] category ids, ascending
    thresholds: np.ndarray  # [S]
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    interpolated: np.ndarray  # [L, 101, (precision, score)]

    @property
    def precision(self) -> np.ndarray:
        return np.divide(self.tp, self.tp + self.fp, out=np.zeros(self.tp.shape), where=(self.tp + self.fp) > 0)

    @property
    def recall(self) -> np.ndarray:
        n_gt = self.tp + self.fn
        return np.divide(self.tp, n_gt, out=np.zeros(self.tp.shape), where=n_gt > 0)

    @property
    def f1(self) -> np.ndarray:
        p, r = self.precision, self.recall
        return np.divide(2 * p * r, p + r, out=np.zeros(p.shape), where=(p + r) > EPSILON)

    def to_dict(self, names: Sequence[str]) -> dict[str, dict[str, dict[str, float | int]]]:
        """``{label: {threshold: {tp, fp, fn, precision, recall, f1_score}}}`` (threshold keys ``"0.05"``...)."""
        keys = threshold_keys(self.thresholds)
        counts = {"tp": self.tp, "fp": self.fp, "fn": self.fn}
        ratios = {"precision": self.precision, "recall": self.recall, "f1_score": self.f1}
        return {
            name: {
                key: {
                    **{k: int(v[li, si]) for k, v in counts.items()},
                    **{k: float(v[li, si]) for k, v in ratios.items()},
                }
                for si, key in enumerate(keys)
            }
            for li, name in enumerate(names)
        }

    def interpolated_dict(self, names: Sequence[str]) -> dict[str, dict[str, list[float]]]:
        """``{label: {"precisions": [101], "scores": [101]}}`` as valor-lite's ``PrecisionRecallCurve`` value."""
        return {
            name: {"precisions": self.interpolated[li, :, 0].tolist(), "scores": self.interpolated[li, :, 1].tolist()}
            for li, name in enumerate(names)
        }


def detection_pr_curve(
    data: DetectionSet,
    *,
    iou_type: str = "bbox",
    iou_threshold: float = 0.5,
    score_thresholds: Sequence[float] = DEFAULT_SCORE_THRESHOLDS,
) -> DetectionPRCurve:
    """Valor's matching at one IoU threshold, counted per label at each score threshold."""
    thresholds = np.asarray(score_thresholds, np.float64).reshape(-1)
    m = match_valor(data, iou_type=iou_type, iou_thresholds=[iou_threshold], score_thresholds=thresholds)
    cats = np.unique(np.concatenate([data.gt_category, data.dt_category]))
    label_of = np.full(len(data.category_ids), -1, np.int64)
    label_of[cats] = np.arange(len(cats))
    n_lab = len(cats)
    d_lab = label_of[data.dt_category]
    n_gt = np.bincount(label_of[data.gt_category], minlength=n_lab)
    tp, fp = label_counts(m.tp, m.scores, d_lab, thresholds, n_lab)  # [1, S, L]
    by_image = np.argsort(data.dt_image, kind="stable")
    ranked = by_image[ranking(m.scores[by_image], m.rank_iou[by_image])]
    _, curve = average_precision(m.tp, ranked, d_lab, m.scores, n_gt, n_lab)  # [1, L, 101, 2]
    return DetectionPRCurve(data.category_ids[cats], thresholds, tp[0].T, fp[0].T, (n_gt - tp[0]).T, curve[0])


class DetectionCurveConfig(DetectionConfig):
    """A detection config for Valor's curves: one IoU threshold, the score thresholds of the points."""

    convention: Literal["valor"] = Field("valor", description="the curves are Valor's (its matching)")
    pr_curve_iou_threshold: float = Field(0.5, ge=0.0, le=1.0, description="IoU a true positive reaches")

    @model_validator(mode="after")
    def _one_iou(self) -> DetectionCurveConfig:
        if self.iou_thresholds is not None:
            raise ValueError("the PR curves take one IoU threshold: set pr_curve_iou_threshold, not iou_thresholds")
        return self

    def thresholds(self) -> list[float]:
        return self.score_thresholds if self.score_thresholds is not None else DEFAULT_SCORE_THRESHOLDS


class _DetectionCurve(Metric):
    higher_is_better = True
    kind = Kind.GLOBAL
    reads = ("prediction", "references")
    scalar = False
    Config: ClassVar[type[StrictModel]] = DetectionCurveConfig

    @property
    def _config(self) -> DetectionCurveConfig:
        return self.config  # type: ignore[return-value]

    def details(self, curve: DetectionPRCurve, names: list[str]) -> Any:
        raise NotImplementedError

    def compute(self, predictions: Any, references: Any) -> Score:
        c = self._config
        data = detection_set(c.model_copy(update={"score_thresholds": c.thresholds()}), predictions, references, 0)
        if not len(data.image_ids):
            return Score(
                float("nan"), undefined="there are no images to score (the predictions and references are empty)"
            )
        curve = detection_pr_curve(
            data, iou_type=c.iou_type, iou_threshold=c.pr_curve_iou_threshold, score_thresholds=c.thresholds()
        )
        names = [names_of(data, int(i)) or c.name_of(int(i)) for i in curve.labels]
        unknown = [int(i) for i, n in zip(curve.labels, names, strict=True) if not n]
        if unknown:
            raise ValueError(f"category id(s) {unknown[:5]} not in class_names")
        return Score(float("nan"), undefined=STRUCTURED, details=self.details(curve, names))


@register_metric
class DetectionPRCurveMetric(_DetectionCurve):
    """tp, fp, fn, precision, recall and F1 per label at each score threshold, at ``pr_curve_iou_threshold``."""

    name = "detection_pr_curve"

    def details(self, curve: DetectionPRCurve, names: list[str]) -> Any:
        return curve.to_dict(names)


@register_metric
class DetectionInterpolatedPRCurve(_DetectionCurve):
    """valor-lite's 101-point interpolated precision (and best score) per label at ``pr_curve_iou_threshold``."""

    name = "detection_interpolated_pr_curve"

    def details(self, curve: DetectionPRCurve, names: list[str]) -> Any:
        return curve.interpolated_dict(names)

"""Valor's detailed detection precision-recall curve: each error's kind, with example images and boxes.

``detection_detailed_pr_curve`` gives, per label and score threshold, the true positives, the false positives
split into *misclassifications* (matched to a ground truth of another label) and *hallucinations* (matched to
none), and the false negatives split into *misclassifications* (matched to a prediction of another label) and
*missed detections*, each with up to ``pr_curve_max_examples`` examples (image id, annotation index within the
image, boxes). The counts are valor-lite 0.39's ``ConfusionMatrixWithExamples`` read per label: ``tp`` its
diagonal, the misclassifications its off-diagonal column and row, the rest its unmatched predictions and
ground truths.

That matrix matches differently from the plain curves (:mod:`.pr_curves`): every overlapping pair of an
image, of any labels, is ranked by score, then IoU (descending), then ground truth, then prediction (input
order), and paired greedily **once**, before any threshold; a threshold then only drops pairs whose IoU or
score falls short, leaving both of their annotations unmatched (a ground truth is not re-matched to another
prediction). Predictions with score <= 1e-9 never count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.classification.thresholds import threshold_keys
from olive_eval.metrics.detection.inputs import DetectionSet
from olive_eval.metrics.detection.labels import names_of
from olive_eval.metrics.detection.masks import mask_iou_pairs
from olive_eval.metrics.detection.matching import group_pairs
from olive_eval.metrics.detection.metrics import detection_set
from olive_eval.metrics.detection.polygons import polygon_iou_pairs
from olive_eval.metrics.detection.pr_curves import STRUCTURED, DetectionCurveConfig
from olive_eval.metrics.detection.valor import EPSILON, same_key, valor_box_iou_pairs
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel

__all__ = ["DETAILED_GROUPS", "DetailedDetectionCurve", "DetectionDetailedCurveConfig", "detailed_detection_curve"]

# Valor's grouping of the five kinds: outcome -> {observation name: kind}
DETAILED_GROUPS = {
    "tp": {"all": "tp"},
    "fp": {"misclassifications": "fp_misclassification", "hallucinations": "fp_hallucination"},
    "fn": {"misclassifications": "fn_misclassification", "missed_detections": "fn_missed_detection"},
}


def greedy_partners(data: DetectionSet, iou_type: str) -> tuple[np.ndarray, np.ndarray]:
    """Each prediction's ground truth in valor's one greedy pairing (-1: none) and their IoU."""
    data.require(iou_type)
    p_det, p_gt, _ = group_pairs(data.dt_image, data.gt_image)
    if iou_type == "bbox":
        iou = valor_box_iou_pairs(data.dt_boxes, data.gt_boxes, p_det, p_gt)
    elif iou_type == "polygon":
        iou = polygon_iou_pairs(data.dt_polygons, p_det, data.gt_polygons, p_gt)
    else:
        iou = mask_iou_pairs(data.dt_masks, p_det, data.gt_masks, p_gt, np.zeros(len(p_det), bool))
    keep = (iou >= EPSILON) & same_key(data, p_det, p_gt)  # misclassification: the right key, a wrong value
    p_det, p_gt, iou = p_det[keep], p_gt[keep], iou[keep]
    order = np.lexsort((p_det, p_gt, -iou, -data.dt_scores[p_det]))
    partner = np.full(len(data.dt_image), -1, np.int64)
    partner_iou = np.zeros(len(data.dt_image), np.float64)
    gt_taken = np.zeros(len(data.gt_image), bool)
    for d, g, v in zip(p_det[order].tolist(), p_gt[order].tolist(), iou[order].tolist(), strict=True):
        if partner[d] < 0 and not gt_taken[g]:  # sequential by nature: each pick removes later candidates
            partner[d], partner_iou[d], gt_taken[g] = g, v, True
    return partner, partner_iou


def index_within_image(image: np.ndarray) -> np.ndarray:
    """Each annotation's position among those of its image (input order)."""
    order = np.argsort(image, kind="stable")
    sorted_image = image[order]
    starts = np.searchsorted(sorted_image, sorted_image, side="left")
    out = np.empty(len(image), np.int64)
    out[order] = np.arange(len(image)) - starts
    return out


@dataclass(frozen=True)
class DetailedDetectionCurve:
    """``counts[kind]`` ``[L, S]``; ``examples[kind][l][s]`` the first (prediction, ground truth) index pairs of
    that kind (-1 where absent), in image then annotation order."""

    labels: np.ndarray  # [L] category ids
    thresholds: np.ndarray  # [S]
    counts: dict[str, np.ndarray]
    examples: dict[str, list[list[np.ndarray]]]


def detailed_detection_curve(
    data: DetectionSet,
    *,
    iou_type: str = "bbox",
    iou_threshold: float = 0.5,
    score_thresholds: Sequence[float] = (0.5,),
    max_examples: int = 1,
) -> DetailedDetectionCurve:
    """Valor's greedy pairing, filtered at each score threshold and counted per label and kind of outcome."""
    thresholds = np.asarray(score_thresholds, np.float64).reshape(-1)
    partner, partner_iou = greedy_partners(data, iou_type)
    cats = np.unique(np.concatenate([data.gt_category, data.dt_category]))
    label_of = np.full(len(data.category_ids), -1, np.int64)
    label_of[cats] = np.arange(len(cats))
    d_lab, g_lab = label_of[data.dt_category], label_of[data.gt_category]
    n_det, n_gt = len(d_lab), len(g_lab)
    dets, gts = np.arange(n_det), np.arange(n_gt)
    partner_label = np.where(partner >= 0, g_lab[np.maximum(partner, 0)] if n_gt else -1, -1)
    same = (partner >= 0) & (partner_label == d_lab)
    paired = (partner >= 0) & (partner_iou >= iou_threshold) & (partner_iou > EPSILON)
    scored = data.dt_scores > EPSILON
    det_order = np.lexsort((dets, data.dt_image))
    gt_order = np.lexsort((gts, data.gt_image))
    kinds = [k for group in DETAILED_GROUPS.values() for k in group.values()]
    counts = {k: np.zeros((len(cats), len(thresholds)), np.int64) for k in kinds}
    examples: dict[str, list[list[np.ndarray]]] = {k: [[] for _ in cats] for k in kinds}
    for si, s in enumerate(thresholds):
        counted = scored & (data.dt_scores >= s)
        live = paired & counted
        gt_partner = np.full(n_gt, -1, np.int64)
        gt_partner[partner[live]] = dets[live]
        gt_live_same = gt_partner >= 0
        gt_live_same[gt_live_same] = same[gt_partner[gt_live_same]]
        members = {  # kind: (is a prediction kind, mask over its side)
            "tp": (True, live & same),
            "fp_misclassification": (True, live & ~same),
            "fp_hallucination": (True, counted & ~live),
            "fn_misclassification": (False, (gt_partner >= 0) & ~gt_live_same),
            "fn_missed_detection": (False, gt_partner < 0),
        }
        for kind, (on_dets, mask) in members.items():
            order, lab = (det_order, d_lab) if on_dets else (gt_order, g_lab)
            chosen = order[mask[order]]
            counts[kind][:, si] = np.bincount(lab[chosen], minlength=len(cats))
            for li in range(len(cats)):
                first = chosen[lab[chosen] == li][:max_examples]
                pairs = (
                    np.stack([first, np.where(live[first], partner[first], -1)], axis=1)
                    if on_dets
                    else np.stack([gt_partner[first], first], axis=1)
                )
                examples[kind][li].append(pairs)
    return DetailedDetectionCurve(data.category_ids[cats], thresholds, counts, examples)


class DetectionDetailedCurveConfig(DetectionCurveConfig):
    """The PR curves' config and how many examples each kind of outcome keeps."""

    pr_curve_max_examples: int = Field(1, ge=0, le=1000, description="Examples kept per label, threshold and kind.")


def box_in_format(box: np.ndarray, box_format: str) -> list[float]:
    """An internal xywh box as the user wrote boxes."""
    x, y, w, h = (float(v) for v in box)
    return [x, y, x + w, y + h] if box_format == "xyxy" else [x, y, w, h]


@register_metric
class DetectionDetailedPRCurve(Metric):
    """Per label and score threshold: tp, fp by misclassification or hallucination, fn by misclassification or
    missed detection, each with example images and boxes, at ``pr_curve_iou_threshold``."""

    name = "detection_detailed_pr_curve"
    higher_is_better = True
    kind = Kind.GLOBAL
    reads = ("prediction", "references")
    scalar = False
    Config: ClassVar[type[StrictModel]] = DetectionDetailedCurveConfig

    def compute(self, predictions: Any, references: Any) -> Score:
        c: DetectionDetailedCurveConfig = self.config  # type: ignore[assignment]
        thresholds = c.thresholds()
        data = detection_set(c.model_copy(update={"score_thresholds": thresholds}), predictions, references, 0)
        if not len(data.image_ids):
            return Score(
                float("nan"), undefined="there are no images to score (the predictions and references are empty)"
            )
        curve = detailed_detection_curve(
            data,
            iou_type=c.iou_type,
            iou_threshold=c.pr_curve_iou_threshold,
            score_thresholds=thresholds,
            max_examples=c.pr_curve_max_examples,
        )
        names = [names_of(data, int(i)) or c.name_of(int(i)) for i in curve.labels]
        unknown = [int(i) for i, n in zip(curve.labels, names, strict=True) if not n]
        if unknown:
            raise ValueError(f"category id(s) {unknown[:5]} not in class_names")
        return Score(float("nan"), undefined=STRUCTURED, details=self.to_dict(curve, data, names))

    def to_dict(self, curve: DetailedDetectionCurve, data: DetectionSet, names: list[str]) -> dict[str, Any]:
        """``{label: {threshold: {"tp"|"fp"|"fn": {"total", "observations": {name: {"count", "examples"}}}}}}``."""
        box_format = self.config.box_format  # type: ignore[attr-defined]
        dt_index, gt_index = index_within_image(data.dt_image), index_within_image(data.gt_image)

        def example(det: int, gt: int) -> dict[str, Any]:
            image = data.dt_image[det] if det >= 0 else data.gt_image[gt]
            out: dict[str, Any] = {"image_id": int(data.image_ids[image])}
            if det >= 0:
                out["prediction"] = int(dt_index[det])
                if data.dt_boxes is not None:
                    out["prediction_box"] = box_in_format(data.dt_boxes[det], box_format)
            if gt >= 0:
                out["ground_truth"] = int(gt_index[gt])
                if data.gt_boxes is not None:
                    out["ground_truth_box"] = box_in_format(data.gt_boxes[gt], box_format)
            return out

        result: dict[str, Any] = {}
        for li, name in enumerate(names):
            result[name] = {}
            for si, key in enumerate(threshold_keys(curve.thresholds)):
                entry: dict[str, Any] = {}
                for outcome, group in DETAILED_GROUPS.items():
                    obs = {
                        label: {
                            "count": int(curve.counts[kind][li, si]),
                            "examples": [example(int(d), int(g)) for d, g in curve.examples[kind][li][si]],
                        }
                        for label, kind in group.items()
                    }
                    entry[outcome] = {"total": sum(o["count"] for o in obs.values()), "observations": obs}
                result[name][key] = entry
        return result

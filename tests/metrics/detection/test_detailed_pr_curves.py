"""detection_detailed_pr_curve against valor-lite's compute_confusion_matrix_with_examples on the same scenes."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError
from shapely.geometry import Polygon as ShapelyPolygon
from valor_lite.object_detection import Bitmask, BoundingBox, Detection, Loader, Polygon

from olive_eval.metrics.detection.detailed_pr_curves import (
    DetectionDetailedCurveConfig,
    DetectionDetailedPRCurve,
    index_within_image,
)
from olive_eval.metrics.detection.pr_curves import DEFAULT_SCORE_THRESHOLDS

from .scenes import random_mask_scene
from .test_polygon_holes import holed_scene
from .test_valor import xywh_scene

KINDS = {
    ("tp", "all"): "tp",
    ("fp", "misclassifications"): "fp_mis",
    ("fp", "hallucinations"): "fp_hal",
    ("fn", "misclassifications"): "fn_mis",
    ("fn", "missed_detections"): "fn_miss",
}


def valor_lite_detailed(
    preds, refs, iou: float, scores: list[float], masks: bool = False, polygons: bool = False
) -> dict:
    """valor-lite's confusion matrix with examples read per label: {(label, threshold, kind): set of examples},
    an example being (image, ground-truth index or None, prediction index or None)."""

    def ann(uid: str, label: int, geo, score: float | None = None):
        extra = {"scores": [float(score)]} if score is not None else {}
        if polygons:
            return Polygon(uid=uid, shape=ShapelyPolygon(geo[0], geo[1:]), labels=[str(int(label))], **extra)
        if masks:
            return Bitmask(uid=uid, mask=np.asarray(geo, bool), labels=[str(int(label))], **extra)
        x, y, w, h = (float(v) for v in geo)
        return BoundingBox(uid=uid, xmin=x, xmax=x + w, ymin=y, ymax=y + h, labels=[str(int(label))], **extra)

    key = "polygons" if polygons else "masks" if masks else "boxes"
    detections = []
    for i, (p, r) in enumerate(zip(preds, refs, strict=True)):
        gts = [ann(f"{j}", lab, geo) for j, (lab, geo) in enumerate(zip(r["labels"], r[key], strict=True))]
        pds = [
            ann(f"{j}", lab, geo, s)
            for j, (lab, geo, s) in enumerate(zip(p["labels"], p[key], p["scores"], strict=True))
        ]
        detections.append(Detection(uid=str(i), groundtruths=gts, predictions=pds))
    loader = Loader.in_memory()
    (loader.add_polygons if polygons else loader.add_bitmasks if masks else loader.add_bounding_boxes)(detections)
    metrics = loader.finalize().compute_confusion_matrix_with_examples(iou_thresholds=[iou], score_thresholds=scores)
    out: dict = {}

    def add(label, s, kind, ex):
        gt, pd = ex.get("ground_truth_id"), ex.get("prediction_id")
        item = (int(ex["datum_id"]), None if gt is None else int(gt), None if pd is None else int(pd))
        out.setdefault((label, s, kind), set()).add(item)

    for m in metrics:
        d = m.to_dict()
        s, v = d["parameters"]["score_threshold"], d["value"]
        for g, row in v["confusion_matrix"].items():
            for p, cell in row.items():
                for ex in cell["examples"]:
                    if g == p:
                        add(g, s, "tp", ex)
                    else:
                        add(p, s, "fp_mis", ex)
                        add(g, s, "fn_mis", ex)
        for lab, cell in v["unmatched_predictions"].items():
            for ex in cell["examples"]:
                add(lab, s, "fp_hal", ex)
        for lab, cell in v["unmatched_ground_truths"].items():
            for ex in cell["examples"]:
                add(lab, s, "fn_miss", ex)
    return out


def detailed(preds, refs, **config):
    cfg = DetectionDetailedCurveConfig(box_format="xywh", pr_curve_max_examples=1000, **config)
    return DetectionDetailedPRCurve(cfg).compute(preds, refs).details


def ours_keyed(out: dict, scores: list[float]) -> dict:
    keyed: dict = {}
    for label, by_threshold in out.items():
        for s in scores:
            cell = by_threshold[repr(float(s))]
            for (outcome, name), kind in KINDS.items():
                obs = cell[outcome]["observations"][name]
                items = {(e["image_id"], e.get("ground_truth"), e.get("prediction")) for e in obs["examples"]}
                assert obs["count"] == len(items)
                if items:
                    keyed[(label, s, kind)] = items
    return keyed


def mismatches(
    preds, refs, iou: float, scores: list[float], masks: bool = False, polygons: bool = False, **config
) -> tuple[int, int]:
    """(cells checked, cells that differ): every (label, threshold, kind) example set, either side."""
    ours = ours_keyed(detailed(preds, refs, pr_curve_iou_threshold=iou, score_thresholds=scores, **config), scores)
    ref = valor_lite_detailed(preds, refs, iou, scores, masks=masks, polygons=polygons)
    keys = set(ours) | set(ref)
    return len(keys), sum(ours.get(k) != ref.get(k) for k in keys)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("iou", [0.5, 0.3, 0.75])
def test_random_scenes_equal_valor_lite(seed: int, iou: float) -> None:
    """Scores on one decimal (many ties); every example of every kind, label and threshold must agree."""
    preds, refs = xywh_scene(seed, n_images=20)
    checked, bad = mismatches(preds, refs, iou, DEFAULT_SCORE_THRESHOLDS)
    assert bad == 0 and checked > 200


def test_masks_equal_valor_lite() -> None:
    preds, refs = random_mask_scene(3, n_images=8)
    checked, bad = mismatches(preds, refs, 0.5, [0.1, 0.5, 0.9], masks=True, iou_type="segm")
    assert bad == 0 and checked > 10


def test_polygons_with_holes_equal_valor_lite() -> None:
    preds, refs = holed_scene(2)
    as_rings = [{**d, "polygons": [p if isinstance(p, list) else [p] for p in d["polygons"]]} for d in preds + refs]
    preds, refs = as_rings[: len(preds)], as_rings[len(preds) :]
    checked, bad = mismatches(preds, refs, 0.5, [0.1, 0.5, 0.9], polygons=True, iou_type="polygon")
    assert bad == 0 and checked > 10


def _image(pred_boxes, pred_labels, scores, gt_boxes, gt_labels):
    return (
        {"boxes": np.array(pred_boxes, float).reshape(-1, 4), "scores": np.array(scores, float), "labels": pred_labels},
        {"boxes": np.array(gt_boxes, float).reshape(-1, 4), "labels": gt_labels},
    )


def _counts(cell: dict) -> dict:
    return {f"{o}_{n}": v["count"] for o in ("tp", "fp", "fn") for n, v in cell[o]["observations"].items()}


def test_pairing_precedes_thresholds() -> None:
    """The higher-scored box (IoU 0.6) takes the ground truth before thresholds; at IoU 0.75 the ground truth
    is missed and the exact box (score 0.4) is a hallucination, not a true positive (valor-lite agrees)."""
    p, r = _image([[0, 0, 10, 6], [0, 0, 10, 10]], [1, 1], [0.9, 0.4], [[0, 0, 10, 10]], [1])
    at_75 = detailed([p], [r], pr_curve_iou_threshold=0.75, score_thresholds=[0.3])["1"]["0.3"]
    assert _counts(at_75) == {
        "tp_all": 0,
        "fp_misclassifications": 0,
        "fp_hallucinations": 2,
        "fn_misclassifications": 0,
        "fn_missed_detections": 1,
    }
    at_50 = detailed([p], [r], score_thresholds=[0.3])["1"]["0.3"]
    assert at_50["tp"]["total"] == 1 and at_50["fp"]["total"] == 1 and at_50["fn"]["total"] == 0
    assert mismatches([p], [r], 0.75, [0.3]) == (2, 0)
    assert mismatches([p], [r], 0.5, [0.3, 0.5, 0.95]) == (4, 0)  # tp, hallucination; tp; missed


def test_misclassification_examples_and_box_format() -> None:
    """A dog box on a cat: a misclassification on both sides, its example naming the image and both boxes."""
    images = [
        _image([], [], [], [[0, 0, 10, 10]], [1]),
        _image([[0, 0, 10, 10], [50, 50, 5, 5]], [2, 2], [0.8, 0.7], [[1, 0, 10, 10]], [1]),
    ]
    preds, refs = [i[0] for i in images], [i[1] for i in images]
    out = detailed(preds, refs, score_thresholds=[0.5])
    fn = out["1"]["0.5"]["fn"]["observations"]
    assert fn["misclassifications"]["examples"] == [
        {
            "image_id": 1,
            "prediction": 0,
            "prediction_box": [0.0, 0.0, 10.0, 10.0],
            "ground_truth": 0,
            "ground_truth_box": [1.0, 0.0, 10.0, 10.0],
        }
    ]
    assert fn["missed_detections"]["examples"] == [
        {"image_id": 0, "ground_truth": 0, "ground_truth_box": [0.0, 0.0, 10.0, 10.0]}
    ]
    fp = out["2"]["0.5"]["fp"]["observations"]
    assert fp["misclassifications"]["count"] == 1 and fp["hallucinations"]["count"] == 1
    assert fp["hallucinations"]["examples"] == [
        {"image_id": 1, "prediction": 1, "prediction_box": [50.0, 50.0, 5.0, 5.0]}
    ]
    as_xyxy = [{**p, "boxes": p["boxes"] + np.c_[0 * p["boxes"][:, :2], p["boxes"][:, :2]]} for p in preds]
    refs_xyxy = [{**r, "boxes": r["boxes"] + np.c_[0 * r["boxes"][:, :2], r["boxes"][:, :2]]} for r in refs]
    cfg = DetectionDetailedCurveConfig(box_format="xyxy", score_thresholds=[0.5])
    xyxy = DetectionDetailedPRCurve(cfg).compute(as_xyxy, refs_xyxy).details
    hal = xyxy["2"]["0.5"]["fp"]["observations"]["hallucinations"]["examples"]
    assert hal == [{"image_id": 1, "prediction": 1, "prediction_box": [50.0, 50.0, 55.0, 55.0]}]
    assert mismatches(preds, refs, 0.5, [0.5, 0.75, 0.85]) == (4 + 3 + 1, 0)  # cells with examples at 0.5, 0.75, 0.85


def test_max_examples_takes_effect() -> None:
    preds, refs = xywh_scene(1, n_images=20)
    counts_seen = set()
    for k in (0, 1, 3):
        cfg = DetectionDetailedCurveConfig(box_format="xywh", pr_curve_max_examples=k)
        out = DetectionDetailedPRCurve(cfg).compute(preds, refs).details
        for by_threshold in out.values():
            for cell in by_threshold.values():
                for group in cell.values():
                    for obs in group["observations"].values():
                        assert len(obs["examples"]) == min(k, obs["count"])
                        counts_seen.add(obs["count"])
    assert max(counts_seen) > 3


def test_zero_scores_and_ties_equal_valor_lite() -> None:
    """A zero score never counts (its ground truth is missed, it is no false positive); tied scores and
    labels with predictions only or ground truth only."""
    images = [
        _image([[0, 0, 10, 10]], [1], [0.0], [[0, 0, 10, 10]], [1]),
        _image([[0, 0, 10, 10], [0, 0, 10, 10]], [1, 2], [0.5, 0.5], [[0, 0, 10, 10], [0, 0, 10, 10]], [2, 1]),
        _image([[50, 50, 10, 10]], [3], [0.6], [], []),
        _image([], [], [], [[5, 5, 4, 4]], [4]),
    ]
    preds, refs = [i[0] for i in images], [i[1] for i in images]
    checked, bad = mismatches(preds, refs, 0.5, [0.05, 0.5, 0.55, 0.95])
    assert bad == 0 and checked >= 10
    first = detailed(preds[:1], refs[:1], score_thresholds=[0.05])["1"]["0.05"]
    assert first["fn"]["observations"]["missed_detections"]["count"] == 1 and first["fp"]["total"] == 0


def test_index_within_image() -> None:
    assert index_within_image(np.array([2, 0, 2, 1, 0, 2])).tolist() == [0, 0, 1, 0, 1, 2]
    assert index_within_image(np.zeros(0, np.int64)).tolist() == []


def test_empty_set_and_structured() -> None:
    score = DetectionDetailedPRCurve(DetectionDetailedCurveConfig()).compute([], [])
    assert np.isnan(score.value) and "no images" in score.undefined and score.details is None
    p, r = _image([[0, 0, 10, 10]], [1], [0.9], [[0, 0, 10, 10]], [1])
    cfg = DetectionDetailedCurveConfig(class_names=["bg", "cat"], score_thresholds=[0.5])
    score = DetectionDetailedPRCurve(cfg).compute([p], [r])
    assert np.isnan(score.value) and "structured" in score.undefined and list(score.details) == ["cat"]
    assert not DetectionDetailedPRCurve.scalar
    with pytest.raises(ValueError, match=r"category id\(s\) \[1\] not in class_names"):
        DetectionDetailedPRCurve(DetectionDetailedCurveConfig(class_names=["bg"])).compute([p], [r])


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"pr_curve_max_examples": -1}, "greater than or equal to 0"),
        ({"iou_thresholds": [0.5]}, "set pr_curve_iou_threshold, not iou_thresholds"),
        ({"pr_curve_iou_threshold": -0.1}, "greater than or equal to 0"),
    ],
)
def test_bad_config(config: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        DetectionDetailedCurveConfig(**config)


def test_bad_score_is_one_line_error() -> None:
    p, r = _image([[0, 0, 10, 10]], [1], [float("nan")], [[0, 0, 10, 10]], [1])
    with pytest.raises(ValueError, match="image 0") as err:
        DetectionDetailedPRCurve(DetectionDetailedCurveConfig()).compute([p], [r])
    assert "\n" not in str(err.value)

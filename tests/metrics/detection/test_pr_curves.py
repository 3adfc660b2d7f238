"""detection_pr_curve and detection_interpolated_pr_curve against valor-lite's evaluator on the same scenes."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError
from valor_lite.object_detection import MetricType

from olive_eval.metrics.detection.pr_curves import (
    DEFAULT_SCORE_THRESHOLDS,
    DetectionCurveConfig,
    DetectionInterpolatedPRCurve,
    DetectionPRCurveMetric,
)

from .scenes import random_mask_scene
from .test_valor import valor_lite, xywh_scene

TOL = 1e-12
COUNT_TYPES = {MetricType.Counts: None, MetricType.Precision: "precision", MetricType.Recall: "recall"}


def curves(preds, refs, **config):
    cfg = DetectionCurveConfig(box_format="xywh", **config)
    counts = DetectionPRCurveMetric(cfg).compute(preds, refs)
    interpolated = DetectionInterpolatedPRCurve(cfg).compute(preds, refs)
    return counts.details, interpolated.details


def mismatches(preds, refs, iou: float, scores: list[float], masks: bool = False, **config) -> tuple[int, int]:
    """(cells checked, cells that differ) between our two curves and valor-lite's Counts/P/R/F1 and PR curve."""
    ours, interp = curves(preds, refs, pr_curve_iou_threshold=iou, score_thresholds=scores, **config)
    ref = valor_lite(preds, refs, [iou], scores, masks=masks)
    checked = bad = 0
    names = {"f1_score": MetricType.F1, "precision": MetricType.Precision, "recall": MetricType.Recall}
    for (kind, params), value in ref.items():
        p = dict(params)
        if kind == MetricType.PrecisionRecallCurve:
            got = interp[p["label"]]
            checked += 1
            bad += not (
                np.allclose(got["precisions"], value["precisions"], rtol=0, atol=TOL)
                and np.allclose(got["scores"], value["scores"], rtol=0, atol=TOL)
            )
            continue
        if kind not in (MetricType.Counts, *names.values()):
            continue
        cell = ours[p["label"]][repr(float(p["score_threshold"]))]
        checked += 1
        if kind == MetricType.Counts:
            bad += any(cell[k] != value[k] for k in ("tp", "fp", "fn"))
        else:
            key = next(k for k, v in names.items() if v == kind)
            bad += abs(cell[key] - value) > TOL
    assert set(ours) == set(interp) == {dict(k[1])["label"] for k in ref if k[0] == MetricType.Counts}
    return checked, bad


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("iou", [0.5, 0.3, 0.75])
def test_random_scenes_equal_valor_lite(seed: int, iou: float) -> None:
    """Scores on one decimal: many ties, broken as valor breaks them."""
    preds, refs = xywh_scene(seed, n_images=20)
    checked, bad = mismatches(preds, refs, iou, DEFAULT_SCORE_THRESHOLDS)
    assert bad == 0 and checked > 4 * 4 * len(DEFAULT_SCORE_THRESHOLDS)


def test_masks_equal_valor_lite() -> None:
    preds, refs = random_mask_scene(3, n_images=8)
    cfg = DetectionCurveConfig(iou_type="segm", score_thresholds=[0.1, 0.5, 0.9])
    ours = DetectionPRCurveMetric(cfg).compute(preds, refs).details
    ref = valor_lite(preds, refs, [0.5], [0.1, 0.5, 0.9], masks=True)
    for (kind, params), value in ref.items():
        p = dict(params)
        if kind == MetricType.Counts:
            assert {k: ours[p["label"]][repr(p["score_threshold"])][k] for k in value} == value


def test_default_thresholds_are_valors() -> None:
    preds, refs = xywh_scene(0, n_images=3)
    out, _ = curves(preds, refs)
    assert list(next(iter(out.values()))) == [f"{k / 100:g}" for k in range(5, 100, 5)]


def _image(pred_boxes, pred_labels, scores, gt_boxes, gt_labels):
    return (
        {"boxes": np.array(pred_boxes, float).reshape(-1, 4), "scores": np.array(scores, float), "labels": pred_labels},
        {"boxes": np.array(gt_boxes, float).reshape(-1, 4), "labels": gt_labels},
    )


def test_iou_threshold_takes_effect() -> None:
    """A box with IoU 0.6 is a true positive at 0.5 and a false positive (and a miss) at 0.75."""
    p, r = _image([[0, 0, 10, 6]], [1], [0.9], [[0, 0, 10, 10]], [1])
    at_50, _ = curves([p], [r], score_thresholds=[0.5])
    at_75, _ = curves([p], [r], score_thresholds=[0.5], pr_curve_iou_threshold=0.75)
    assert at_50["1"]["0.5"] == {"tp": 1, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1_score": 1.0}
    assert at_75["1"]["0.5"] == {"tp": 0, "fp": 1, "fn": 1, "precision": 0.0, "recall": 0.0, "f1_score": 0.0}
    assert mismatches([p], [r], 0.75, [0.5]) == (4 + 1, 0)


def test_edge_cases_equal_valor_lite() -> None:
    """No detections on an image, a label with predictions only, a label with ground truth only, tied scores."""
    images = [
        _image([], [], [], [[0, 0, 10, 10]], [1]),  # missed
        _image([[50, 50, 10, 10]], [2], [0.6], [], []),  # label 2: no ground truth anywhere
        _image([[0, 0, 10, 10], [0, 0, 10, 9]], [1, 1], [0.5, 0.5], [[0, 0, 10, 10]], [1]),  # a score tie
        _image([], [], [], [[5, 5, 4, 4]], [3]),  # label 3: ground truth only
    ]
    preds, refs = [i[0] for i in images], [i[1] for i in images]
    checked, bad = mismatches(preds, refs, 0.5, [0.05, 0.5, 0.55, 0.95])
    assert (checked, bad) == (3 * 4 * 4 + 3, 0)
    out, _ = curves(preds, refs, score_thresholds=[0.5])
    assert out["2"]["0.5"] == {"tp": 0, "fp": 1, "fn": 0, "precision": 0.0, "recall": 0.0, "f1_score": 0.0}
    assert out["1"]["0.5"]["tp"] == 1 and out["1"]["0.5"]["fp"] == 1 and out["1"]["0.5"]["fn"] == 1
    assert out["3"]["0.5"]["fn"] == 1


def test_no_detections_at_all() -> None:
    p, r = _image([], [], [], [[0, 0, 10, 10]], [4])
    out, interp = curves([p], [r], score_thresholds=[0.5])
    assert out == {"4": {"0.5": {"tp": 0, "fp": 0, "fn": 1, "precision": 0.0, "recall": 0.0, "f1_score": 0.0}}}
    assert interp["4"]["precisions"] == [0.0] * 101
    assert mismatches([p], [r], 0.5, [0.5]) == (4 + 1, 0)


def test_empty_set_is_undefined() -> None:
    score = DetectionPRCurveMetric(DetectionCurveConfig()).compute([], [])
    assert np.isnan(score.value) and "no images" in score.undefined and score.details is None


def test_structured_and_class_names() -> None:
    p, r = _image([[0, 0, 10, 10]], [1], [0.9], [[0, 0, 10, 10]], [1])
    score = DetectionPRCurveMetric(DetectionCurveConfig(class_names=["bg", "cat"])).compute([p], [r])
    assert np.isnan(score.value) and "structured" in score.undefined and list(score.details) == ["cat"]
    assert not DetectionPRCurveMetric.scalar
    with pytest.raises(ValueError, match=r"category id\(s\) \[1\] not in class_names"):
        DetectionPRCurveMetric(DetectionCurveConfig(class_names=["bg"])).compute([p], [r])


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"iou_thresholds": [0.5]}, "set pr_curve_iou_threshold, not iou_thresholds"),
        ({"pr_curve_iou_threshold": 1.5}, "less than or equal to 1"),
        ({"score_thresholds": [1.2]}, r"score_thresholds must be a non-empty list of values in \[0, 1\]"),
        ({"convention": "coco"}, "Input should be 'valor'"),
    ],
)
def test_bad_config(config: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        DetectionCurveConfig(**config)


def test_bad_score_is_one_line_error() -> None:
    p, r = _image([[0, 0, 10, 10]], [1], [1.5], [[0, 0, 10, 10]], [1])
    with pytest.raises(ValueError, match="detection 0") as err:
        DetectionPRCurveMetric(DetectionCurveConfig()).compute([p], [r])
    assert "\n" not in str(err.value)

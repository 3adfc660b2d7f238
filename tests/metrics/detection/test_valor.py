"""convention="valor" against valor-lite itself (every metric of compute_precision_recall) and Valor's vectors."""

from __future__ import annotations

import numpy as np
import pytest
from valor_lite.object_detection import Bitmask, BoundingBox, Detection, Loader, MetricType

from olive_eval.metrics.detection.coco import evaluate_coco
from olive_eval.metrics.detection.inputs import from_per_image

from .scenes import random_mask_scene, random_scene, to_xywh
from .tm_example import TM_PREDS, TM_REFS
from .valor_whole_set import evaluate_valor

TOL = 1e-12


def valor_lite(preds, refs, iou_thresholds, score_thresholds, masks: bool = False) -> dict:
    """valor-lite's metrics on the same scene (xywh boxes given as x, x + w), keyed by (type, parameters)."""

    def ann(uid: str, label: int, geo, score: float | None = None):
        extra = {"scores": [float(score)]} if score is not None else {}
        labels = [str(int(label))]
        if masks:
            return Bitmask(uid=uid, mask=np.asarray(geo, bool), labels=labels, **extra)
        x, y, w, h = (float(v) for v in geo)
        return BoundingBox(uid=uid, xmin=x, xmax=x + w, ymin=y, ymax=y + h, labels=labels, **extra)

    detections = []
    key = "masks" if masks else "boxes"
    for i, (p, r) in enumerate(zip(preds, refs, strict=True)):
        gts = [ann(f"g{i}_{j}", lab, geo) for j, (lab, geo) in enumerate(zip(r["labels"], r[key], strict=True))]
        pds = [
            ann(f"p{i}_{j}", lab, geo, s)
            for j, (lab, geo, s) in enumerate(zip(p["labels"], p[key], p["scores"], strict=True))
        ]
        detections.append(Detection(uid=str(i), groundtruths=gts, predictions=pds))
    loader = Loader.in_memory()
    (loader.add_bitmasks if masks else loader.add_bounding_boxes)(detections)
    metrics = loader.finalize().compute_precision_recall(
        iou_thresholds=list(iou_thresholds), score_thresholds=list(score_thresholds)
    )
    out = {}
    for kind, items in metrics.items():
        for m in items:
            d = m.to_dict()
            params = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in d["parameters"].items()))
            out[(kind, params)] = d["value"]
    return out


def ours_keyed(result, iou_thresholds, score_thresholds) -> dict:
    """Our ValorResult in valor-lite's (type, parameters) keys."""
    ious, scores = tuple(iou_thresholds), tuple(score_thresholds)
    labels = [str(int(v)) for v in result.labels]
    out = {}

    def put(kind, value, **params):
        out[(kind, tuple(sorted(params.items())))] = value

    for ti, t in enumerate(ious):
        put(MetricType.mAP, result.map[ti], iou_threshold=t)
        for li, lab in enumerate(labels):
            put(MetricType.AP, result.ap[ti, li], iou_threshold=t, label=lab)
            curve = {
                "precisions": result.pr_curve[ti, li, :, 0].tolist(),
                "scores": result.pr_curve[ti, li, :, 1].tolist(),
            }
            put(MetricType.PrecisionRecallCurve, curve, iou_threshold=t, label=lab)
            for si, s in enumerate(scores):
                cell = {"iou_threshold": t, "score_threshold": s, "label": lab}
                counts = {"tp": int(result.tp[ti, si, li]), "fp": int(result.fp[ti, si, li])}
                put(MetricType.Counts, counts | {"fn": int(result.fn[ti, si, li])}, **cell)
                put(MetricType.Precision, result.precision[ti, si, li], **cell)
                put(MetricType.Recall, result.recall[ti, si, li], **cell)
                put(MetricType.F1, result.f1[ti, si, li], **cell)
    put(MetricType.mAPAveragedOverIOUs, result.map_averaged_over_ious, iou_thresholds=ious)
    put(MetricType.mARAveragedOverScores, result.mar_averaged_over_scores, iou_thresholds=ious, score_thresholds=scores)
    for li, lab in enumerate(labels):
        put(MetricType.APAveragedOverIOUs, result.ap_averaged_over_ious[li], iou_thresholds=ious, label=lab)
        put(
            MetricType.ARAveragedOverScores,
            result.ar_averaged_over_scores[li],
            iou_thresholds=ious,
            score_thresholds=scores,
            label=lab,
        )
    for si, s in enumerate(scores):
        put(MetricType.mAR, result.mar[si], iou_thresholds=ious, score_threshold=s)
        for li, lab in enumerate(labels):
            put(MetricType.AR, result.ar[si, li], iou_thresholds=ious, score_threshold=s, label=lab)
    return out


def assert_same(ours: dict, ref: dict) -> None:
    assert set(ours) == set(ref)
    for key, expected in ref.items():
        got = ours[key]
        if isinstance(expected, dict):
            assert set(got) == set(expected), key
            for k in expected:
                np.testing.assert_allclose(got[k], expected[k], rtol=0, atol=TOL, err_msg=str(key))
        else:
            assert got == pytest.approx(expected, rel=0, abs=TOL), key


def xywh_scene(seed: int, **kw):
    preds, refs = random_scene(seed, crowd_rate=0.0, **kw)
    return (
        [{**p, "boxes": to_xywh(p["boxes"])} for p in preds],
        [{"boxes": to_xywh(r["boxes"]), "labels": r["labels"]} for r in refs],
    )


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_scenes_match_valor_lite(seed: int) -> None:
    preds, refs = xywh_scene(seed, n_images=25)
    ious, scores = [0.1, 0.5, 0.75], [0.0, 0.35, 0.7]
    result = evaluate_valor(
        from_per_image(preds, refs, box_format="xywh"), iou_thresholds=ious, score_thresholds=scores
    )
    assert_same(ours_keyed(result, ious, scores), valor_lite(preds, refs, ious, scores))
    assert (result.ap > 0).any() and (result.ap < 1).any()


def test_bitmasks_match_valor_lite() -> None:
    preds, refs = random_mask_scene(5, n_images=8)
    ious, scores = [0.5, 0.75], [0.0, 0.5]
    data = from_per_image(preds, refs, iou_type="segm")
    result = evaluate_valor(data, iou_type="segm", iou_thresholds=ious, score_thresholds=scores)
    assert_same(ours_keyed(result, ious, scores), valor_lite(preds, refs, ious, scores, masks=True))


def test_torchmetrics_example_published_vectors() -> None:
    """Valor's test_ap_using_torch_metrics_example, and COCO's different mAP on the same data."""
    preds = [{**p, "boxes": to_xywh(p["boxes"])} for p in TM_PREDS]
    refs = [{**r, "boxes": to_xywh(r["boxes"])} for r in TM_REFS]
    data = from_per_image(preds, refs, box_format="xywh")
    result = evaluate_valor(data, iou_thresholds=[0.5, 0.75], score_thresholds=[0.5])
    assert_same(ours_keyed(result, [0.5, 0.75], [0.5]), valor_lite(preds, refs, [0.5, 0.75], [0.5]))
    assert result.labels.tolist() == [0, 1, 2, 3, 4, 49]
    ap_50 = [1.0, 1.0, 0.504950495049505, 0.0, 1.0, 0.7909790979097909]
    ap_75 = [0.7227722772277229, 1.0, 0.504950495049505, 0.0, 1.0, 0.5756718528995757]
    np.testing.assert_allclose(result.ap, [ap_50, ap_75], rtol=0, atol=TOL)
    np.testing.assert_allclose(result.map, [0.715988265493216, 0.6338991041961339], rtol=0, atol=TOL)
    # COCO leaves label 3 (predictions only) out of its mean: 0.859 against Valor's 0.716 over all six labels
    coco = evaluate_coco(data)
    assert coco.summary["map_50"] == pytest.approx(0.859, abs=5e-4)
    per_class_50 = coco.precision[0, :, :, 0, -1].mean(axis=0)  # AP@0.5 per class, -1 for label 3
    assert per_class_50[3] == -1
    assert coco.summary["map_50"] == pytest.approx(np.mean(np.delete(per_class_50, 3)), abs=TOL)
    assert result.map[0] == pytest.approx(np.mean(result.ap[0]), abs=TOL) and result.ap[0, 3] == 0


def _boxes(rows):  # Valor's fixtures give (xmin, xmax, ymin, ymax)
    return np.array([[x1, y1, x2 - x1, y2 - y1] for x1, x2, y1, y2 in rows], np.float64).reshape(-1, 4)


def _image(gt_rows, gt_labels, pd_rows, pd_labels, scores):
    return (
        {"boxes": _boxes(pd_rows), "scores": np.array(scores, np.float64), "labels": np.array(pd_labels)},
        {"boxes": _boxes(gt_rows), "labels": np.array(gt_labels)},
    )


BOX, FAR = (10, 20, 10, 20), (100, 110, 100, 200)
VALOR_CASES = {  # name: (images, IoU thresholds, expected AP per label id)
    "first_class": (
        [_image([(10, 60, 10, 40)], [1], [(10, 60, 10, 40)], [1], [0.3]), _image([(15, 70, 0, 20)], [1], [], [], [])],
        [0.1, 0.6],
        {1: [0.504950495049505, 0.504950495049505]},
    ),
    "tp_deassignment": (
        [
            _image(
                [(10, 20, 10, 20), (10, 15, 20, 25)],
                [1, 1],
                [(10, 20, 10, 20), (10, 20, 12, 22), (10, 20, 12, 22), (101, 102, 101, 102)],
                [1, 1, 1, 1],
                [0.78, 0.96, 0.96, 0.87],
            )
        ],
        [0.5],
        {1: [0.504950495049505]},
    ),
    "false_negatives_baseline": ([_image([BOX], [1], [BOX, FAR], [1, 1], [0.8, 0.7])], [0.5], {1: [1.0]}),
    "false_negatives_single": ([_image([BOX], [1], [BOX, FAR], [1, 1], [0.8, 0.9])], [0.5], {1: [0.5]}),
    "empty_image_low_fp": (
        [_image([BOX], [1], [BOX], [1], [0.8]), _image([], [], [BOX], [1], [0.7])],
        [0.5],
        {1: [1.0]},
    ),
    "empty_image_high_fp": (
        [_image([BOX], [1], [BOX], [1], [0.8]), _image([], [], [BOX], [1], [0.9])],
        [0.5],
        {1: [0.5]},
    ),
    "other_class_low_fp": (
        [_image([BOX], [1], [BOX], [1], [0.8]), _image([BOX], [2], [BOX], [1], [0.7])],
        [0.5],
        {1: [1.0], 2: [0.0]},
    ),
    "other_class_high_fp": (
        [_image([BOX], [1], [BOX], [1], [0.8]), _image([BOX], [2], [BOX], [1], [0.9])],
        [0.5],
        {1: [0.5], 2: [0.0]},
    ),
    "ranked_pair_ordering": (
        [
            _image(
                [(2, 10, 2, 10)] * 3,
                [1, 2, 3],
                [(2, 10, 2, 10), (2, 10, 2, 10), (0, 1, 0, 1), (0, 1, 0, 1)],
                [1, 2, 3, 4],
                [0.3, 0.93, 0.92, 0.94],
            )
        ],
        [0.5, 0.75],
        {1: [1.0, 1.0], 2: [1.0, 1.0], 3: [0.0, 0.0], 4: [0.0, 0.0]},
    ),
}


@pytest.mark.parametrize("name", sorted(VALOR_CASES))
def test_valor_published_vectors(name: str) -> None:
    images, ious, expected = VALOR_CASES[name]
    preds, refs = [p for p, _ in images], [r for _, r in images]
    result = evaluate_valor(from_per_image(preds, refs, box_format="xywh"), iou_thresholds=ious, score_thresholds=[0.5])
    assert_same(ours_keyed(result, ious, [0.5]), valor_lite(preds, refs, ious, [0.5]))
    assert result.labels.tolist() == sorted(expected)
    np.testing.assert_allclose(result.ap.T, [expected[k] for k in sorted(expected)], rtol=0, atol=TOL)
    if name == "ranked_pair_ordering":
        np.testing.assert_allclose(result.map, [0.5, 0.5], rtol=0, atol=TOL)


def test_score_thresholds_refuse_scores_outside_unit_interval() -> None:
    preds, refs = xywh_scene(1, n_images=6)
    k = next(i for i, p in enumerate(preds) if len(p["scores"]))
    preds[k]["scores"] = preds[k]["scores"] + 1.5
    data = from_per_image(preds, refs, box_format="xywh")
    with pytest.raises(ValueError, match=rf"detection \d+ \(image {k}\) has score .* outside \[0, 1\]"):
        evaluate_valor(data, score_thresholds=[0.5])
    with pytest.raises(ValueError, match=rf"image {k}, detection 0 has score 1.\d+ outside \[0, 1\]"):
        from_per_image(preds, refs, box_format="xywh", score_thresholds=[0.5])
    evaluate_coco(data)  # no score threshold: COCO only orders by score


def test_equal_iou_ties_go_to_the_first_ground_truth() -> None:
    """A prediction equally close to two ground truths is tied to the first; it never falls back later."""
    preds, refs = zip(
        _image([(0, 10, 0, 10), (4, 14, 0, 10)], [1, 1], [(2, 12, 0, 10), (0, 10, 0, 10)], [1, 1], [0.9, 0.6]),
        _image([BOX], [1], [BOX, BOX], [1, 1], [0.5, 0.5]),  # equal scores and IoUs: input order decides
        strict=True,
    )
    ious, scores = [0.5, 0.75], [0.0, 0.55]
    result = evaluate_valor(
        from_per_image(preds, refs, box_format="xywh"), iou_thresholds=ious, score_thresholds=scores
    )
    assert_same(ours_keyed(result, ious, scores), valor_lite(list(preds), list(refs), ious, scores))
    assert result.tp[0, 0].tolist() == [2] and result.fp[0, 0].tolist() == [2]

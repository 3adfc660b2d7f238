"""convention="coco" against pycocotools' COCOeval itself (precision/recall arrays and summary, to 1e-12)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from olive_eval.metrics.detection.boxes import box_iou_pairs
from olive_eval.metrics.detection.coco import evaluate_coco
from olive_eval.metrics.detection.inputs import from_coco, from_per_image
from olive_eval.metrics.detection.masks import decode_counts, to_rles

from .scenes import (
    encode,
    mask_scene_to_coco,
    random_mask_scene,
    random_scene,
    run_pycocotools,
    scene_to_coco,
    to_xywh,
    uncompressed,
)
from .tm_example import TM_PREDS, TM_REFS

TOL = 1e-12
# torchmetrics' MeanAveragePrecision keys in the order of COCOeval.stats
STATS_KEYS = (
    "map",
    "map_50",
    "map_75",
    "map_small",
    "map_medium",
    "map_large",
    "mar_1",
    "mar_10",
    "mar_100",
    "mar_small",
    "mar_medium",
    "mar_large",
)


def assert_matches(result, ev, summary: bool = True) -> None:
    """Raw arrays within 1e-12 of COCOeval's, and every summary value equal to COCOeval.stats (-1 -> NaN)."""
    assert result.precision.shape == ev.eval["precision"].shape
    assert result.recall.shape == ev.eval["recall"].shape
    np.testing.assert_allclose(result.precision, ev.eval["precision"], rtol=0, atol=TOL)
    np.testing.assert_allclose(result.recall, ev.eval["recall"], rtol=0, atol=TOL)
    assert result.category_ids.tolist() == list(ev.params.catIds)
    if summary:
        for key, ref in zip(STATS_KEYS, ev.stats, strict=True):
            ours = result.summary[key]
            if ref == -1:
                assert math.isnan(ours) and key in result.undefined, key
            else:
                assert ours == pytest.approx(ref, rel=0, abs=TOL), key


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_random_scenes_match_pycocotools(seed: int) -> None:
    preds, refs = random_scene(seed)
    gt, dets = scene_to_coco(preds, refs)
    result = evaluate_coco(from_per_image(preds, refs, box_format="xyxy"))
    assert_matches(result, run_pycocotools(gt, dets))
    assert (result.precision == -1).any() and (result.precision > 0).any()  # the scene exercises both


def test_xywh_and_xyxy_inputs_agree_with_pycocotools() -> None:
    preds, refs = random_scene(7)
    gt, dets = scene_to_coco(preds, refs)
    ev = run_pycocotools(gt, dets)
    as_xywh = (
        [{**p, "boxes": to_xywh(p["boxes"])} for p in preds],
        [{**r, "boxes": to_xywh(r["boxes"])} for r in refs],
    )
    for box_format, (p, r) in (("xyxy", (preds, refs)), ("xywh", as_xywh)):
        assert_matches(evaluate_coco(from_per_image(p, r, box_format=box_format)), ev)


def test_coco_json_input_matches_pycocotools() -> None:
    """Unsorted sparse ids, shuffled results, listed categories without annotations, annotation id 0."""
    preds, refs = random_scene(11, n_images=25)
    gt, dets = scene_to_coco(preds, refs)
    rng = np.random.default_rng(0)
    new_ids = {i: int(v) for i, v in enumerate(rng.choice(10_000, len(gt["images"]), replace=False))}
    for im in gt["images"]:
        im["id"] = new_ids[im["id"]]
    gt["images"] = [gt["images"][i] for i in rng.permutation(len(gt["images"]))]
    for a in gt["annotations"]:
        a["image_id"] = new_ids[a["image_id"]]
        a["category_id"] = a["category_id"] * 3 + 1
    matched_first = next(a for a in gt["annotations"] if a["iscrowd"] == 0)
    matched_first["id"] = 0  # pycocotools stores matches by annotation id: a match to id 0 reads as none
    dets.append({**{k: matched_first[k] for k in ("image_id", "category_id", "bbox")}, "score": 1.0})
    gt["categories"] = [{"id": c["id"] * 3 + 1, "name": c["name"]} for c in gt["categories"]] + [
        {"id": 99, "name": "x"}
    ]
    for d in dets[:-1]:
        d["image_id"] = new_ids[d["image_id"]]
        d["category_id"] = d["category_id"] * 3 + 1
    dets = [dets[i] for i in rng.permutation(len(dets))]
    result = evaluate_coco(from_coco(gt, dets))
    ev = run_pycocotools(gt, dets)
    assert_matches(result, ev)
    assert "map_per_class[99]" in result.undefined


@pytest.mark.parametrize("max_dets", [[1, 3, 7], [2], [1, 10, 100, 300]])
def test_max_dets_other_than_100(max_dets: list[int]) -> None:
    preds, refs = random_scene(3, max_gt=8, extra_dets=12)
    gt, dets = scene_to_coco(preds, refs)
    ev = run_pycocotools(gt, dets, max_dets=max_dets)
    result = evaluate_coco(from_per_image(preds, refs), max_dets=max_dets)
    assert_matches(result, ev, summary=False)
    for mi, m in enumerate(ev.params.maxDets):
        valid = ev.eval["recall"][:, :, 0, mi]
        assert result.summary[f"mar_{m}"] == pytest.approx(np.mean(valid[valid > -1]), abs=TOL)


def test_custom_iou_thresholds_including_one() -> None:
    """An IoU threshold of 1.0 is applied as 1 - 1e-10 (exact duplicates still match)."""
    preds, refs = random_scene(5)
    refs[0] = {"boxes": np.array([[0.0, 0, 10, 10], [20, 20, 30, 35]]), "labels": np.array([0, 1])}
    preds[0] = {"boxes": refs[0]["boxes"].copy(), "scores": np.array([0.5, 0.5]), "labels": np.array([0, 1])}
    gt, dets = scene_to_coco(preds, refs)
    thresholds = [0.3, 0.5, 1.0]
    ev = run_pycocotools(gt, dets, iou_thresholds=thresholds)
    result = evaluate_coco(from_per_image(preds, refs), iou_thresholds=thresholds)
    assert_matches(result, ev)
    assert "map_75" in result.undefined  # 0.75 is not a threshold: pycocotools' summary says -1 too
    assert (result.recall[2] > 0).any()


def test_edge_cases_match_pycocotools() -> None:
    """Ties in score and IoU, crowd regions, empty images, a category with predictions only."""
    box = np.array([[10.0, 10, 50, 50]])
    refs = [
        {"boxes": np.array([[10.0, 10, 50, 50], [10, 10, 50, 50]]), "labels": np.array([1, 1])},  # equal GTs
        {"boxes": np.array([[0.0, 0, 100, 100]]), "labels": np.array([1]), "iscrowd": np.array([1])},
        {"boxes": np.zeros((0, 4)), "labels": np.zeros(0, np.int64)},  # nothing at all
        {"boxes": np.array([[5.0, 5, 25, 25], [30, 30, 60, 60]]), "labels": np.array([1, 2])},
        {"boxes": np.zeros((0, 4)), "labels": np.zeros(0, np.int64)},  # predictions only
        {"boxes": np.array([[0.0, 0, 10, 10], [4, 0, 14, 10]]), "labels": np.array([1, 1])},
        {"boxes": np.array([[0.0, 0, 32, 32], [100, 100, 196, 196]]), "labels": np.array([2, 2])},  # 32², 96²
    ]
    preds = [
        {"boxes": np.repeat(box, 3, 0), "scores": np.array([0.9, 0.9, 0.9]), "labels": np.array([1, 1, 1])},
        {  # several detections inside one crowd region: all ignored, none a false positive
            "boxes": np.array([[10.0, 10, 40, 40], [50, 50, 90, 90], [0, 0, 100, 100]]),
            "scores": np.array([0.8, 0.7, 0.8]),
            "labels": np.array([1, 1, 1]),
        },
        {"boxes": np.zeros((0, 4)), "scores": np.zeros(0), "labels": np.zeros(0, np.int64)},
        {"boxes": np.array([[5.0, 5, 25, 25], [30, 30, 60, 60]]), "scores": np.array([0.9, 0.9]), "labels": [7, 2]},
        {"boxes": np.array([[1.0, 1, 9, 9]]), "scores": np.array([0.9]), "labels": np.array([7])},
        {  # equal IoU (2/3) with both ground truths: the later one is taken, so the next detection matches too
            "boxes": np.array([[2.0, 0, 12, 10], [0, 0, 10, 10]]),
            "scores": np.array([0.95, 0.6]),
            "labels": np.array([1, 1]),
        },
        {  # areas exactly on the range bounds belong to both neighbouring ranges
            "boxes": np.array([[0.0, 0, 32, 32], [100, 100, 196, 196], [1, 1, 33, 33], [300, 0, 332, 32]]),
            "scores": np.array([0.7, 0.7, 0.8, 0.75]),
            "labels": np.array([2, 2, 2, 2]),
        },
    ]
    gt, dets = scene_to_coco(preds, refs)
    result = evaluate_coco(from_per_image(preds, refs))
    assert_matches(result, run_pycocotools(gt, dets))
    assert result.category_ids.tolist() == [1, 2, 7]
    assert (result.precision[:, :, 2] == -1).all() and math.isnan(result.summary["map_per_class"][2])
    assert "no ground truth" in result.undefined["map_per_class[7]"]


def test_no_detections_and_no_ground_truth() -> None:
    preds, refs = random_scene(9, n_images=10)
    empty_preds = [{"boxes": np.zeros((0, 4)), "scores": np.zeros(0), "labels": np.zeros(0, np.int64)} for _ in preds]
    gt, dets = scene_to_coco(empty_preds, refs)
    assert_matches(evaluate_coco(from_per_image(empty_preds, refs)), run_pycocotools(gt, dets))

    empty_refs = [{"boxes": np.zeros((0, 4)), "labels": np.zeros(0, np.int64)} for _ in refs]
    gt, dets = scene_to_coco(preds, empty_refs)
    result = evaluate_coco(from_per_image(preds, empty_refs))
    assert_matches(result, run_pycocotools(gt, dets))
    assert all(math.isnan(result.summary[k]) for k in STATS_KEYS) and set(STATS_KEYS) <= set(result.undefined)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_segm_masks_match_pycocotools(seed: int) -> None:
    preds, refs = random_mask_scene(seed)
    gt, dets = mask_scene_to_coco(preds, refs)
    ev = run_pycocotools(gt, dets, iou_type="segm")
    dense = evaluate_coco(from_per_image(preds, refs, iou_type="segm"), iou_type="segm")
    assert_matches(dense, ev)
    as_rle = (
        [{**p, "masks": [encode(m) for m in p["masks"]]} for p in preds],  # compressed strings
        [{**r, "masks": [uncompressed(m) for m in r["masks"]]} for r in refs],  # run-length lists
    )
    assert_matches(evaluate_coco(from_per_image(*as_rle, iou_type="segm"), iou_type="segm"), ev)
    assert_matches(evaluate_coco(from_coco(gt, dets, iou_type="segm"), iou_type="segm"), ev)


def test_torchmetrics_example_published_values() -> None:
    """pycocotools' numbers on torchmetrics' reference example (peer study section 3), and pycocotools itself."""
    result = evaluate_coco(from_per_image(TM_PREDS, TM_REFS, box_format="xyxy"))
    assert_matches(result, run_pycocotools(*scene_to_coco(TM_PREDS, TM_REFS)))
    published = {"map": 0.637, "map_50": 0.859, "map_75": 0.761, "map_small": 0.622, "map_medium": 0.800}
    published |= {"map_large": 0.635, "mar_1": 0.432, "mar_10": 0.652, "mar_100": 0.652}
    for key, value in published.items():
        assert result.summary[key] == pytest.approx(value, abs=5e-4), key
    assert result.summary["classes"].tolist() == [0, 1, 2, 3, 4, 49]
    # published per class: [0.725, 0.800, 0.454, -1, 0.650, 0.556]; for class 49 pycocotools 2.0.11 and
    # faster-coco-eval both give 0.55469 today, so class 49 is checked against pycocotools run per class
    # (as torchmetrics does: catIds=[k]), the others against both
    per_class = [0.725, 0.800, 0.454, float("nan"), 0.650]
    np.testing.assert_allclose(result.summary["map_per_class"][:5], per_class, atol=5e-4)
    gt, dets = scene_to_coco(TM_PREDS, TM_REFS)
    for k, cid in enumerate(result.summary["classes"].tolist()):
        ev = run_pycocotools(gt, dets, cat_ids=[cid])
        expected = float("nan") if ev.stats[0] == -1 else ev.stats[0]
        np.testing.assert_allclose(result.summary["map_per_class"][k], expected, rtol=0, atol=TOL)
        expected = float("nan") if ev.stats[8] == -1 else ev.stats[8]
        np.testing.assert_allclose(result.summary["mar_100_per_class"][k], expected, rtol=0, atol=TOL)


def box_iou(dt: np.ndarray, gt: np.ndarray, gt_crowd: np.ndarray) -> np.ndarray:
    """Dense IoU matrix ``[D, G]`` from the pairwise kernel (pycocotools' ``mask.iou`` for boxes, transposed)."""
    d, g = len(dt), len(gt)
    di, gi = np.repeat(np.arange(d), g), np.tile(np.arange(g), d)
    return box_iou_pairs(dt[di], gt[gi], np.asarray(gt_crowd, bool)[gi]).reshape(d, g)


def test_box_iou_is_pycocotools_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    dt = np.concatenate([rng.integers(0, 20, (40, 2)), rng.integers(0, 15, (40, 2))], 1) * 0.7
    gt = np.concatenate([rng.integers(0, 20, (30, 2)), rng.integers(0, 15, (30, 2))], 1) * 0.7
    crowd = rng.random(30) < 0.3
    ours = box_iou(dt, gt, crowd)
    ref = mask_utils.iou(dt.tolist(), gt.tolist(), crowd.astype(np.uint8).tolist())
    assert np.array_equal(ours, ref)


def test_rle_decoding_agrees_with_pycocotools() -> None:
    _, refs = random_mask_scene(4)
    for r in refs:
        for m in r["masks"]:
            rle = encode(m)
            counts = decode_counts(rle["counts"])
            assert counts.sum() == m.size
            decoded = mask_utils.decode({"size": rle["size"], "counts": rle["counts"].encode()})
            ours = to_rles([{"size": rle["size"], "counts": counts.tolist()}])
            assert np.array_equal(ours.counts, to_rles(decoded[None]).counts)
            assert int(ours.area()[0]) == int(mask_utils.area(mask_utils.encode(np.asfortranarray(m))))

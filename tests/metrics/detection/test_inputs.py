"""Bad detection input: one clear ValueError each, naming what is wrong and where."""

from __future__ import annotations

import json

import numpy as np
import pytest

from olive_eval.metrics.detection.coco import evaluate_coco
from olive_eval.metrics.detection.inputs import from_coco, from_per_image
from olive_eval.metrics.detection.labels import category_indices

from .scenes import encode, random_scene, run_pycocotools, scene_to_coco


def two_images() -> tuple[list[dict], list[dict]]:
    preds = [
        {"boxes": np.array([[0.0, 0, 10, 10]]), "scores": np.array([0.9]), "labels": np.array([1])},
        {"boxes": np.array([[0.0, 0, 10, 10], [5, 5, 20, 20]]), "scores": np.array([0.5, 0.4]), "labels": [1, 2]},
    ]
    refs = [
        {"boxes": np.array([[0.0, 0, 10, 10]]), "labels": np.array([1])},
        {"boxes": np.array([[1.0, 1, 11, 11]]), "labels": np.array([2])},
    ]
    return preds, refs


def coco_pair() -> tuple[dict, list[dict]]:
    return scene_to_coco(*two_images())


def test_x2_smaller_than_x1_names_the_image_and_box() -> None:
    preds, refs = two_images()
    preds[1]["boxes"] = np.array([[0.0, 0, 10, 10], [20, 5, 5, 20]])
    with pytest.raises(ValueError, match=r"image 1 predictions, box 1 has x2 < x1 \(x1=20, x2=5\)"):
        from_per_image(preds, refs)
    preds, refs = two_images()
    refs[0]["boxes"] = np.array([[0.0, 12, 10, 10]])
    with pytest.raises(ValueError, match=r"image 0 references, box 0 has y2 < y1 \(y1=12, y2=10\)"):
        from_per_image(preds, refs)
    gt, dets = coco_pair()
    dets[2]["bbox"] = [5.0, 5.0, -3.0, 4.0]
    with pytest.raises(ValueError, match=r"image 1, detection 2 has a negative width -3 \(x2 < x1\)"):
        from_coco(gt, dets)
    gt, dets = coco_pair()
    gt["annotations"][1]["bbox"] = [1.0, 1.0, 2.0, -1.0]
    with pytest.raises(ValueError, match=r"image 1, ground-truth annotation 1 \(id 2\) has a negative height"):
        from_coco(gt, dets)


def test_detections_on_images_the_ground_truth_does_not_have() -> None:
    gt, dets = coco_pair()
    dets += [{**dets[0], "image_id": 17}, {**dets[0], "image_id": 42}, {**dets[0], "image_id": 17}]
    with pytest.raises(ValueError, match=r"detections: 2 image id\(s\) not in the ground truth: 17, 42"):
        from_coco(gt, dets)
    with pytest.raises(AssertionError):  # pycocotools refuses them too, without saying which
        run_pycocotools(gt, dets)


def test_unknown_category_id() -> None:
    gt, dets = coco_pair()
    dets.append({**dets[0], "category_id": 5})
    with pytest.raises(ValueError, match=r"detections: 1 category id\(s\) not in the ground truth: 5"):
        from_coco(gt, dets)
    gt, dets = coco_pair()
    gt["annotations"][0]["category_id"] = 9
    with pytest.raises(ValueError, match=r"ground truth: 1 category id\(s\) not in the ground truth: 9"):
        from_coco(gt, dets)


def test_scores_outside_unit_interval_only_fail_with_a_threshold() -> None:
    preds, refs = random_scene(2, n_images=8)
    k = next(i for i, p in enumerate(preds) if len(p["scores"]))
    preds[k]["scores"] = preds[k]["scores"] * 4 - 2  # logits-like
    with pytest.raises(ValueError, match=rf"image {k}, detection 0 has score -?\d.* outside \[0, 1\].*thresholds"):
        from_per_image(preds, refs, score_thresholds=0.5)
    gt, dets = scene_to_coco(preds, refs)
    with pytest.raises(ValueError, match=r"image \d+, detection \d+ has score .* outside \[0, 1\]"):
        from_coco(gt, dets, score_thresholds=[0.3, 0.5])
    # without a threshold a score only orders detections, as in pycocotools
    ev = run_pycocotools(gt, dets)
    np.testing.assert_allclose(evaluate_coco(from_per_image(preds, refs)).precision, ev.eval["precision"], atol=1e-12)


def test_nan_scores() -> None:
    preds, refs = two_images()
    preds[1]["scores"] = np.array([0.5, np.nan])
    with pytest.raises(ValueError, match=r"image 1, detection 1 has a NaN score"):
        from_per_image(preds, refs)
    gt, dets = coco_pair()
    dets[1]["score"] = float("nan")
    with pytest.raises(ValueError, match=r"image 1, detection 1 has a NaN score"):
        from_coco(gt, dets)


def test_masks_of_a_different_size_than_the_image() -> None:
    ref_masks = np.zeros((1, 8, 10), np.uint8)
    ref_masks[0, 2:5, 3:7] = 1
    good = np.zeros((1, 8, 10), np.uint8)
    preds = [{"masks": np.zeros((1, 8, 9), np.uint8), "scores": [0.5], "labels": [0]}]
    refs = [{"masks": ref_masks, "labels": [0]}]
    with pytest.raises(ValueError, match=r"image 0 predictions, mask 0 has size 8x9 .* but its image is 8x10"):
        from_per_image(preds, refs, iou_type="segm")
    from_per_image([{**preds[0], "masks": good}], refs, iou_type="segm")  # the same size is fine

    gt = {
        "images": [{"id": 3, "height": 8, "width": 10}],
        "annotations": [
            {"id": 1, "image_id": 3, "category_id": 1, "segmentation": encode(ref_masks[0]), "area": 12, "iscrowd": 0}
        ],
        "categories": [{"id": 1}],
    }
    dets = [{"image_id": 3, "category_id": 1, "segmentation": encode(np.zeros((9, 10), np.uint8)), "score": 0.3}]
    with pytest.raises(ValueError, match=r"image 3, detection 0: mask size 9x10 .* differs from its image's 8x10"):
        from_coco(gt, dets, iou_type="segm")
    dets[0]["segmentation"] = {"size": [8, 10], "counts": [5, 3]}
    with pytest.raises(ValueError, match=r"RLE counts sum to 8, not height x width = 80"):
        from_coco(gt, dets, iou_type="segm")
    gt["annotations"][0]["segmentation"] = [[0, 0, 5, 0, 5, 5], [0, 0, 5, 0]]
    with pytest.raises(ValueError, match=r"^image 3, ground-truth annotation 0, polygon 1: .*at least 3 distinct"):
        from_coco(gt, [], iou_type="segm")


def test_inconsistent_lengths_and_missing_keys() -> None:
    preds, refs = two_images()
    with pytest.raises(ValueError, match=r"2 prediction dicts but 1 reference dicts"):
        from_per_image(preds, refs[:1])
    preds[0]["scores"] = np.array([0.9, 0.8])
    with pytest.raises(ValueError, match=r"image 0 predictions: 1 boxes, 2 scores and 1 labels"):
        from_per_image(preds, refs)
    preds, refs = two_images()
    del refs[1]["labels"]
    with pytest.raises(ValueError, match=r"image 1 references: missing key\(s\) \['labels'\]"):
        from_per_image(preds, refs)
    with pytest.raises(ValueError, match=r"box_format must be one of"):
        from_per_image(*two_images(), box_format="cxcywh")
    with pytest.raises(ValueError, match=r"iou_type 'segm' needs masks"):
        evaluate_coco(from_per_image(*two_images()), iou_type="segm")


def test_coco_files_are_read_like_the_parsed_json(tmp_path) -> None:
    preds, refs = random_scene(6, n_images=6)
    gt, dets = scene_to_coco(preds, refs)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dets.json").write_text(json.dumps(dets))
    from_files = evaluate_coco(from_coco(tmp_path / "gt.json", str(tmp_path / "dets.json")))
    ev = run_pycocotools(gt, dets)
    np.testing.assert_allclose(from_files.precision, ev.eval["precision"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(from_files.recall, ev.eval["recall"], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"detection 1 has no 'score'"):
        from_coco(gt, [dets[0], {k: v for k, v in dets[1].items() if k != "score"}])


@pytest.mark.parametrize(
    ("gt", "dt"),
    [
        ([3, 1, 1, 90], [90, 7, 3]),  # class ids: the lookup table
        ([-5, 0, 2], [-5, -1]),  # negative ids
        ([], [4, 4]),  # one side empty
        ([], []),
        ([2**62, 5], [1, 2**62 + 7]),  # wide ids (text labels' hashes): the sort
        ([0], [9000]),  # a range much wider than the labels
    ],
)
def test_category_indices_are_unique_and_searchsorted(gt: list[int], dt: list[int]) -> None:
    g, d = np.array(gt, np.int64), np.array(dt, np.int64)
    categories, g_idx, d_idx = category_indices(g, d)
    expected = np.unique(np.concatenate([g, d]))
    assert categories.dtype == np.int64 and np.array_equal(categories, expected)
    for got, labels in ((g_idx, g), (d_idx, d)):
        assert got.dtype == np.int64 and np.array_equal(got, np.searchsorted(expected, labels))

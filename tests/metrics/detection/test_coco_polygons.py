"""COCO files whose ``segmentation`` is polygons (several parts per object) or RLE: = pycocotools COCOeval
``iouType="segm"`` on random polygon scenes, through the COCO-file path."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from shapely.geometry import Polygon as ShapelyPolygon
from shapely.ops import unary_union

import olive_eval
from olive_eval.metrics.detection.coco import evaluate_coco
from olive_eval.metrics.detection.inputs import from_coco

from .scenes import encode, run_pycocotools, uncompressed
from .test_coco import assert_matches
from .test_polygons import star
from .test_rasterize import pycoco, skyline


def polygon_coco_scene(seed: int, sloped: bool, n_images: int = 14) -> tuple[dict, list[dict]]:
    """Ground truths of 1-3 polygon parts (axis-parallel on a 0.5 grid, or sloped stars), some crowd RLE;
    detections are RLE masks of jittered ground truths (pycocotools' own rasterization) and strays."""
    rng = np.random.default_rng(seed)
    images, anns, dets = [], [], []
    for i in range(n_images):
        h, w = int(rng.integers(30, 60)), int(rng.integers(30, 60))
        images.append({"id": 10 + i, "height": h, "width": w})
        for _ in range(int(rng.integers(0, 5))):
            n_parts = int(rng.integers(1, 4))
            if sloped:
                parts = [
                    star(rng, rng.random() < 0.5, rng.uniform(0, 45, 2), rng.uniform(2, 12)) for _ in range(n_parts)
                ]
            else:
                parts = [skyline(rng, 0.5 if rng.random() < 0.5 else 1.0) for _ in range(n_parts)]
            crowd = rng.random() < 0.15
            category = int(rng.integers(1, 4))
            ann = {"id": len(anns) + 1, "image_id": 10 + i, "category_id": category, "iscrowd": int(crowd)}
            if crowd:  # crowd regions are RLE in COCO files
                ann["segmentation"] = uncompressed(pycoco(parts, h, w).astype(np.uint8))
                ann["area"] = float(pycoco(parts, h, w).sum())
            else:
                ann["segmentation"] = [p.ravel().tolist() for p in parts]
                ann["area"] = float(unary_union([ShapelyPolygon(p) for p in parts]).area)  # as COCO files carry it
            anns.append(ann)
            for _ in range(int(rng.integers(0, 3))):
                shift = rng.integers(-2, 3, 2) * (rng.random() < 0.7)
                mask = pycoco([p + shift for p in parts], h, w).astype(np.uint8)
                label = category if rng.random() < 0.85 else int(rng.integers(1, 4))
                dets.append({"image_id": 10 + i, "category_id": label, "segmentation": encode(mask),
                             "score": float(np.round(rng.random(), 1))})  # fmt: skip
        for _ in range(int(rng.integers(0, 3))):
            mask = pycoco([skyline(rng, 1.0)], h, w).astype(np.uint8)
            dets.append({"image_id": 10 + i, "category_id": int(rng.integers(1, 4)), "segmentation": encode(mask),
                         "score": float(np.round(rng.random(), 1))})  # fmt: skip
    dets = [d for d in dets if np.any(d["segmentation"]["counts"] != "")]
    gt = {"images": images, "annotations": anns, "categories": [{"id": c} for c in (1, 2, 3)]}
    return gt, dets


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_axis_parallel_polygon_files_equal_cocoeval_segm(seed: int) -> None:
    gt, dets = polygon_coco_scene(seed, sloped=False)
    assert sum(len(a["segmentation"]) > 1 for a in gt["annotations"] if isinstance(a["segmentation"], list)) > 3
    ev = run_pycocotools(gt, dets, iou_type="segm")
    result = evaluate_coco(from_coco(gt, dets, iou_type="segm"), iou_type="segm")
    assert_matches(result, ev)
    assert (result.precision > 0).any() and (result.precision < 1).any()


@pytest.mark.parametrize("seed", [3, 4])
def test_sloped_polygon_files_equal_cocoeval_on_the_same_pixels(seed: int) -> None:
    """Sloped edges: pycocotools' rasterization differs near the boundary, so COCOeval is run on our pixels
    (the polygons as RLE) for equality, and on its own polygons to bound the difference."""
    gt, dets = polygon_coco_scene(seed, sloped=True)
    ours = from_coco(gt, dets, iou_type="segm")
    result = evaluate_coco(ours, iou_type="segm")
    as_rle = json.loads(json.dumps(gt))
    sizes = {im["id"]: (im["height"], im["width"]) for im in gt["images"]}
    for k, ann in enumerate(as_rle["annotations"]):
        if isinstance(ann["segmentation"], list):
            h, w = sizes[ann["image_id"]]
            start, stop = ours.gt_masks.offsets[k], ours.gt_masks.offsets[k + 1]
            counts = ours.gt_masks.counts[start:stop].tolist()
            ann["segmentation"] = {"size": [h, w], "counts": counts}
    assert_matches(result, run_pycocotools(as_rle, dets, iou_type="segm"))
    own = run_pycocotools(gt, dets, iou_type="segm")
    gap = abs(result.summary["map"] - own.stats[0])
    print(f"map: ours {result.summary['map']:.6f}, COCOeval on its own rasterization {own.stats[0]:.6f}")
    assert gap < 0.02


def test_polygon_files_through_compute_metric(tmp_path) -> None:
    gt, dets = polygon_coco_scene(0, sloped=False)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dets))
    got = olive_eval.compute_metric("map_50", str(tmp_path / "dt.json"), str(tmp_path / "gt.json"), iou_type="segm")
    ev = run_pycocotools(gt, dets, iou_type="segm")
    assert got.value == pytest.approx(ev.stats[1], abs=1e-12) and not math.isnan(got.value)


@pytest.mark.parametrize("segmentation, message", [
    ([[0, 0, 5, 0, 5]], "polygon 0: a COCO polygon must be an even number of finite coordinates, got 5"),
    ([[0, 0, 5, 0, 5, 5], [1, 1, 2, 2, 1, 1]], "polygon 1: a polygon ring needs at least 3 distinct points, got 2"),
    ([], "an empty polygon list"),
    ([["a", "b", 1, 2, 3, 4]], "polygon 0: a COCO polygon must be a flat list"),
])  # fmt: skip
def test_bad_coco_polygons_name_the_annotation(segmentation: list, message: str) -> None:
    gt = {
        "images": [{"id": 7, "height": 9, "width": 9}],
        "annotations": [{"id": 1, "image_id": 7, "category_id": 1, "segmentation": segmentation, "area": 1.0}],
        "categories": [{"id": 1}],
    }
    with pytest.raises(ValueError, match=f"^image 7, ground-truth annotation 0(, |: ){message}"):
        from_coco(gt, [], iou_type="segm")


def test_polygons_need_the_image_size() -> None:
    gt = {
        "images": [{"id": 7}],
        "annotations": [{"id": 1, "image_id": 7, "category_id": 1, "segmentation": [[0, 0, 4, 0, 4, 4]]}],
        "categories": [{"id": 1}],
    }
    with pytest.raises(ValueError, match=r"^image 7, ground-truth annotation 0: polygons need the image's 'height'"):
        from_coco(gt, [], iou_type="segm")
    gt["images"][0].update(height=5, width=6)
    data = from_coco(gt, [], iou_type="segm")
    # the 6 centres strictly below the diagonal; the 4 on it are out (the interior is on its higher-x side)
    assert data.gt_masks.area().tolist() == [6] and data.gt_area.tolist() == [6.0]

"""iou_type="segm" with polygons (holes included) in per-image dicts, rasterized at the image's ``size``:
= pycocotools COCOeval and valor-lite's Bitmask metrics on the masks shapely draws at the pixel centres."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

import olive_eval
from olive_eval.metrics.detection.coco import evaluate_coco
from olive_eval.metrics.detection.inputs import from_per_image
from olive_eval.metrics.detection.valor import match_valor

from .scenes import mask_scene_to_coco, run_pycocotools
from .test_coco import assert_matches
from .test_polygon_holes import holed_scene, to_shapely
from .test_valor import assert_same, ours_keyed, valor_lite
from .valor_whole_set import evaluate_valor

SIZE = (47, 52)  # height, width: the scenes' shapes reach past both edges


def with_size_and_masks(preds: list[dict], refs: list[dict]) -> tuple[list, list, list, list]:
    """The scene with ``size`` added, and the same scene as dense masks drawn by shapely."""
    yy, xx = np.mgrid[0 : SIZE[0], 0 : SIZE[1]] + 0.5

    def masks(polys: list) -> np.ndarray:
        drawn = [shapely.contains_xy(to_shapely(p), xx, yy) for p in polys]
        return np.array(drawn, np.uint8).reshape(-1, *SIZE)

    p_poly = [{**p, "size": list(SIZE)} for p in preds]
    r_poly = [{**r, "size": list(SIZE)} for r in refs]
    p_mask = [{"masks": masks(p["polygons"]), "scores": p["scores"], "labels": p["labels"]} for p in preds]
    r_mask = [
        {"masks": masks(r["polygons"]), "labels": r["labels"], "iscrowd": np.zeros(len(r["labels"]))} for r in refs
    ]
    return p_poly, r_poly, p_mask, r_mask


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_segm_polygons_equal_cocoeval_on_shapely_masks(seed: int) -> None:
    p_poly, r_poly, p_mask, r_mask = with_size_and_masks(*holed_scene(seed))
    ev = run_pycocotools(*mask_scene_to_coco(p_mask, r_mask), iou_type="segm")
    result = evaluate_coco(from_per_image(p_poly, r_poly, iou_type="segm"), iou_type="segm")
    assert_matches(result, ev)
    assert (result.precision > 0).any() and (result.precision < 1).any()


@pytest.mark.parametrize("seed", [3, 4])
def test_segm_polygons_equal_valor_lite_bitmasks(seed: int) -> None:
    p_poly, r_poly, p_mask, r_mask = with_size_and_masks(*holed_scene(seed))
    ious, scores = [0.3, 0.5, 0.75], [0.25, 0.5]
    result = evaluate_valor(from_per_image(p_poly, r_poly, iou_type="segm"), iou_type="segm", iou_thresholds=ious,
                            score_thresholds=scores)  # fmt: skip
    assert_same(ours_keyed(result, ious, scores), valor_lite(p_mask, r_mask, ious, scores, masks=True))
    # rasterized, not exact: the IoUs differ from the polygons' exact ones
    rasterized = match_valor(from_per_image(p_poly, r_poly, iou_type="segm"), iou_type="segm").rank_iou
    exact = match_valor(from_per_image(p_poly, r_poly, iou_type="polygon"), iou_type="polygon").rank_iou
    assert not np.allclose(rasterized, exact) and np.abs(rasterized - exact).max() < 0.2


def test_segm_polygons_through_compute_metric_and_errors() -> None:
    p_poly, r_poly, p_mask, r_mask = with_size_and_masks(*holed_scene(5))
    got = olive_eval.compute_metric("map", p_poly, r_poly, iou_type="segm")
    assert got.value == pytest.approx(olive_eval.compute_metric("map", p_mask, r_mask, iou_type="segm").value, abs=0)
    no_size = [{k: v for k, v in r.items() if k != "size"} for r in r_poly]
    with pytest.raises(ValueError, match=r"^image 0 references: polygons for iou_type 'segm' need 'size'"):
        from_per_image(p_poly, no_size, iou_type="segm")
    bad = [{**r_poly[0], "size": [10.5, 3]}, *r_poly[1:]]
    with pytest.raises(ValueError, match=r"^image 0 references: 'size' must be \[height, width\]"):
        from_per_image(p_poly, bad, iou_type="segm")

"""iou_type="polygon": exact polygon IoU against shapely and valor-lite (its Polygon annotations), kernel and mAP."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from shapely.geometry import Polygon as ShapelyPolygon
from valor_lite.object_detection import Detection, Loader, MetricType, Polygon
from valor_lite.object_detection.computation import compute_polygon_iou

import olive_eval
from olive_eval.metrics.detection.inputs import from_coco, from_per_image
from olive_eval.metrics.detection.metrics import DetectionConfig
from olive_eval.metrics.detection.polygons import as_ring, polygon_iou
from olive_eval.metrics.detection.valor import match_valor

from .test_valor import assert_same, ours_keyed
from .valor_whole_set import evaluate_valor

TOL = 1e-9


def star(rng: np.random.Generator, convex: bool, center: np.ndarray, radius: float) -> np.ndarray:
    """A simple ring around a centre: random angles on a circle (convex), or random radii at angles whose
    gaps stay under pi (concave, star-shaped from the centre, so never crossing itself)."""
    n = int(rng.integers(3 if convex else 4, 12))
    if convex:
        angles = np.sort(rng.uniform(0, 2 * np.pi, n))
        radii = np.full(n, radius)
    else:
        angles = (np.arange(n) + rng.uniform(0, 0.9, n)) * (2 * np.pi / n)
        radii = rng.uniform(0.3 * radius, radius, n)
    return np.c_[center[0] + radii * np.cos(angles), center[1] + radii * np.sin(angles)]


def pair_cases(seed: int, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random convex and concave pairs plus degenerate ones: equal, shared edges on a grid, shifted, disjoint."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        a = star(rng, k % 2 == 0, rng.uniform(0, 10, 2), rng.uniform(1, 6))
        b = star(rng, k % 3 == 0, rng.uniform(0, 10, 2), rng.uniform(1, 6))
        if k % 7 == 0:
            b = a.copy()
        elif k % 11 == 0:
            a, b = np.round(a), np.round(b)
        elif k % 13 == 0:
            a = np.round(a)
            b = a + np.array([float(rng.integers(0, 3)), 0.0])
        elif k % 17 == 0:
            b = a + 100.0
        out.append((a, b))
    return out


def shapely_iou(a: np.ndarray, b: np.ndarray) -> float:
    sa, sb = ShapelyPolygon(a), ShapelyPolygon(b)
    return float(shapely.area(shapely.intersection(sa, sb)) / shapely.area(shapely.union(sa, sb)))


def test_iou_equals_shapely_and_valor_lite_on_random_polygons() -> None:
    checks = mismatches = 0
    pairs, refs = [], []
    for a, b in pair_cases(0, 1500):
        try:
            ra, rb = as_ring(a), as_ring(b)
        except ValueError:  # rounding can collapse or fold a ring; shapely agrees it is invalid
            assert not (ShapelyPolygon(a).is_valid and ShapelyPolygon(b).is_valid and ShapelyPolygon(a).area > 0)
            continue
        got, ref = polygon_iou(ra, rb), shapely_iou(a, b)
        checks += 1
        mismatches += abs(got - ref) > TOL
        pairs.append([ShapelyPolygon(a), ShapelyPolygon(b)])
        refs.append(got)
    assert checks > 1300 and mismatches == 0, f"{mismatches} of {checks}"
    np.testing.assert_allclose(compute_polygon_iou(np.array(pairs, dtype=object)), refs, rtol=0, atol=TOL)
    assert 0 < np.mean(np.array(refs) == 0) < 0.9 and np.mean(np.array(refs) == 1) > 0.05


def test_edge_cases_equal_shapely() -> None:
    square = np.array([[0, 0], [4, 0], [4, 4], [0, 4]], float)
    cases = [
        (square, square),  # identical
        (square, square + np.array([4, 0])),  # touching along an edge: 0
        (square, square + np.array([4, 4])),  # touching at a corner: 0
        (square, square + np.array([2, 0])),  # overlapping along collinear edges
        (square, square * 0.5 + 1),  # one inside the other
        (square, np.array([[0, 0], [4, 0], [2, 2]], float)),  # shares an edge from inside
        (np.array([[0, 0], [6, 0], [6, 6], [3, 2], [0, 6]], float), square + np.array([1, 3])),  # concave notch
    ]
    for a, b in cases:
        assert polygon_iou(as_ring(a), as_ring(b)) == pytest.approx(shapely_iou(a, b), abs=TOL)


def test_orientation_closing_vertex_and_repeats_do_not_matter() -> None:
    rng = np.random.default_rng(3)
    a = star(rng, False, np.zeros(2), 5.0)
    b = a * 0.7 + 1.0
    base = polygon_iou(as_ring(a), as_ring(b))
    assert base == pytest.approx(shapely_iou(a, b), abs=TOL)
    closed = np.vstack([a[::-1], a[-1:]])
    repeated = np.repeat(b, 2, axis=0)
    assert polygon_iou(as_ring(closed), as_ring(repeated)) == pytest.approx(base, abs=1e-12)
    assert 0 < base < 1


@pytest.mark.parametrize("message, ring", [
    ("crosses itself", [[0, 0], [4, 4], [4, 0], [0, 2]]),
    ("at least 3", [[0, 0], [1, 1], [0, 0]]),
    ("zero area", [[0, 0], [1, 1], [2, 2]]),
    ("finite", [[0, 0], [1, np.nan], [1, 1]]),
    ("list of \\[x, y\\]", [0, 0, 1, 0, 1, 1]),
])  # fmt: skip
def test_bad_polygons_fail_with_one_line(message: str, ring: list) -> None:
    refs = [{"labels": [1], "polygons": [ring]}]
    preds = [{"labels": [], "scores": [], "polygons": []}]
    with pytest.raises(ValueError, match=f"image 0 reference polygon 0: .*{message}"):
        from_per_image(preds, refs, iou_type="polygon")


def polygon_scene(seed: int, n_images: int = 25) -> tuple[list[dict], list[dict]]:
    """Per-image dicts of random polygons; predictions are jittered copies of ground truths plus strays."""
    rng = np.random.default_rng(seed)
    preds, refs = [], []
    for _ in range(n_images):
        n_gt = int(rng.integers(0, 5))
        gts = [star(rng, rng.random() < 0.5, rng.uniform(0, 40, 2), rng.uniform(2, 8)) for _ in range(n_gt)]
        g_labels = rng.integers(0, 3, n_gt)
        pds, p_labels = [], []
        for g, lab in zip(gts, g_labels, strict=True):
            for _ in range(int(rng.integers(0, 3))):
                pds.append(g + rng.normal(0, 1.5, 2) * (rng.random() < 0.8))
                p_labels.append(lab if rng.random() < 0.85 else int(rng.integers(0, 4)))
        for _ in range(int(rng.integers(0, 3))):
            pds.append(star(rng, False, rng.uniform(0, 40, 2), rng.uniform(2, 8)))
            p_labels.append(int(rng.integers(0, 4)))
        scores = np.round(rng.uniform(0, 1, len(pds)), 1)
        refs.append({"labels": g_labels, "polygons": gts})
        preds.append({"labels": np.array(p_labels, np.int64), "scores": scores, "polygons": pds})
    return preds, refs


def valor_lite_polygons(preds: list[dict], refs: list[dict], ious: list[float], scores: list[float]) -> dict:
    detections = []
    for i, (p, r) in enumerate(zip(preds, refs, strict=True)):
        gts = [
            Polygon(
                uid=f"g{i}_{j}", shape=g if isinstance(g, ShapelyPolygon) else ShapelyPolygon(g), labels=[str(int(lab))]
            )
            for j, (g, lab) in enumerate(zip(r["polygons"], r["labels"], strict=True))
        ]
        pds = [
            Polygon(
                uid=f"p{i}_{j}",
                shape=g if isinstance(g, ShapelyPolygon) else ShapelyPolygon(g),
                labels=[str(int(lab))],
                scores=[float(s)],
            )
            for j, (g, lab, s) in enumerate(zip(p["polygons"], p["labels"], p["scores"], strict=True))
        ]
        detections.append(Detection(uid=str(i), groundtruths=gts, predictions=pds))
    loader = Loader.in_memory()
    loader.add_polygons(detections)
    metrics = loader.finalize().compute_precision_recall(iou_thresholds=ious, score_thresholds=scores)
    out = {}
    for kind, items in metrics.items():
        for m in items:
            d = m.to_dict()
            params = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in d["parameters"].items()))
            out[(kind, params)] = d["value"]
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_polygon_map_equals_valor_lite(seed: int) -> None:
    preds, refs = polygon_scene(seed)
    ious, scores = [0.3, 0.5, 0.75], [0.25, 0.5]
    data = from_per_image(preds, refs, iou_type="polygon")
    result = evaluate_valor(data, iou_type="polygon", iou_thresholds=ious, score_thresholds=scores)
    assert_same(ours_keyed(result, ious, scores), valor_lite_polygons(preds, refs, ious, scores))
    assert (result.ap > 0).any() and (result.ap < 1).any()
    # the option takes effect: the polygons' bounding boxes give other matches
    boxes = [
        {**d, "boxes": np.array([[*g.min(0), *g.max(0)] for g in d["polygons"]]).reshape(-1, 4)} for d in preds + refs
    ]
    by_box = evaluate_valor(from_per_image(boxes[: len(preds)], boxes[len(preds) :]), iou_thresholds=ious)
    assert not np.allclose(by_box.ap, result.ap)


def test_polygon_needs_valor_and_per_image_input() -> None:
    with pytest.raises(ValueError, match=r"polygon.*valor"):
        DetectionConfig(iou_type="polygon")
    assert DetectionConfig(iou_type="polygon", convention="valor").iou_type == "polygon"
    with pytest.raises(ValueError, match="COCO JSON input takes iou_type 'bbox' or 'segm'"):
        from_coco({"images": [], "annotations": [], "categories": []}, [], iou_type="polygon")
    box_data = from_per_image(
        [{"labels": [1], "scores": [0.9], "boxes": [[0, 0, 1, 1]]}], [{"labels": [1], "boxes": [[0, 0, 1, 1]]}]
    )
    with pytest.raises(ValueError, match="needs polygons on both sides"):
        match_valor(box_data, iou_type="polygon")


def test_compute_metric_with_polygon_config_equals_valor_lite() -> None:
    preds, refs = polygon_scene(4)
    got = olive_eval.compute_metric("map_50", preds, refs, convention="valor", iou_type="polygon")
    ref = valor_lite_polygons(preds, refs, [0.5], [0.5])
    expected = next(v for (kind, params), v in ref.items() if kind == MetricType.mAP)
    assert got.value == pytest.approx(expected, abs=1e-12)

"""Polygons with holes (an exterior ring and interior rings): exact IoU = shapely's, mAP = valor-lite's."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from shapely.geometry import Polygon as ShapelyPolygon

from olive_eval.metrics.detection.inputs import from_per_image
from olive_eval.metrics.detection.polygons import as_polygon, polygon_iou

from .test_polygons import shapely_iou, star, valor_lite_polygons
from .test_valor import assert_same, ours_keyed
from .valor_whole_set import evaluate_valor

TOL = 1e-9


def holed(rng: np.random.Generator, center: np.ndarray, radius: float, n_holes: int) -> list[np.ndarray]:
    """A star-shaped exterior (vertex radii >= 0.7 r, at least 8 vertices, so it holds the disk of radius
    0.5 r) with up to two holes of radius <= 0.18 r centred 0.25 r either side of the centre."""
    n = int(rng.integers(8, 14))
    angles = (np.arange(n) + rng.uniform(0, 0.9, n)) * (2 * np.pi / n)
    radii = rng.uniform(0.7 * radius, radius, n)
    rings = [np.c_[center[0] + radii * np.cos(angles), center[1] + radii * np.sin(angles)]]
    direction = rng.normal(size=2)
    direction /= np.linalg.norm(direction)
    for k in range(n_holes):
        c = center + (1 if k == 0 else -1) * 0.25 * radius * direction
        rings.append(star(rng, rng.random() < 0.5, c, rng.uniform(0.05, 0.18) * radius))
    return rings


def to_shapely(rings: list[np.ndarray]) -> ShapelyPolygon:
    return ShapelyPolygon(rings[0], rings[1:])


def hole_pairs(seed: int, n: int) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:
    """Random pairs with 0-2 holes each, overlapping often; some equal, some one shape in the other's hole."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        a = holed(rng, rng.uniform(0, 8, 2), rng.uniform(3, 8), int(rng.integers(0, 3)))
        if k % 9 == 0:
            b = [r.copy() for r in a]
        elif k % 10 == 0 and len(a) > 1:  # b inside a's first hole: no overlap
            b = [a[1] * 0.5 + 0.5 * a[1].mean(0)]
        else:
            b = holed(rng, rng.uniform(0, 8, 2), rng.uniform(3, 8), int(rng.integers(0, 3)))
        out.append((a, b))
    return out


def test_holes_iou_equals_shapely_on_random_polygons() -> None:
    checks = 0
    values = []
    for a, b in hole_pairs(0, 800):
        sa, sb = to_shapely(a), to_shapely(b)
        assert sa.is_valid and sb.is_valid
        got = polygon_iou(as_polygon(a), as_polygon(b))
        assert got == pytest.approx(shapely_iou_shapes(sa, sb), abs=TOL)
        assert as_polygon(a).area == pytest.approx(sa.area, abs=TOL)
        checks += 1
        values.append(got)
    values = np.array(values)
    assert checks == 800 and (values == 0).any() and (values == 1).any() and ((values > 0) & (values < 1)).mean() > 0.5


def shapely_iou_shapes(sa: ShapelyPolygon, sb: ShapelyPolygon) -> float:
    return float(shapely.area(shapely.intersection(sa, sb)) / shapely.area(shapely.union(sa, sb)))


def test_holes_on_the_grid_with_shared_edges_equal_shapely() -> None:
    square = np.array([[0, 0], [6, 0], [6, 6], [0, 6]], float)
    hole = np.array([[2, 2], [4, 2], [4, 4], [2, 4]], float)
    frame = [square, hole]
    cases = [
        (frame, [hole]),  # the shape filling the hole: touching along the hole's edges only, IoU 0
        (frame, [square]),  # the same exterior without the hole
        (frame, frame),  # identical
        (frame, [square + 1, hole + 1]),  # shifted by one cell
        (frame, [square + np.array([2.0, 0.0]), hole + np.array([2.0, 0.0])]),  # the holes share an edge
        (frame, [hole * 2 - 2]),  # a square from (2, 2) to (6, 6): a corner of the frame
        (
            frame,
            [
                square,
                hole[::-1],
            ],
        ),  # a hole given counter-clockwise
        ([square[::-1], hole], [np.array([[1, 1], [5, 1], [5, 5], [1, 5]], float), hole]),
    ]
    for a, b in cases:
        got = polygon_iou(as_polygon(a), as_polygon(b))
        assert got == pytest.approx(shapely_iou_shapes(to_shapely(a), to_shapely(b)), abs=TOL), (a, b)
    assert polygon_iou(as_polygon(frame), as_polygon([hole])) == 0.0
    # a ring alone and a list holding only that ring are the same polygon
    assert polygon_iou(as_polygon(square), as_polygon([square])) == 1.0
    assert polygon_iou(as_polygon(square), hole) == pytest.approx(shapely_iou(square, hole), abs=TOL)


@pytest.mark.parametrize("message, rings", [
    ("hole 0: a polygon ring needs at least 3", [[[0, 0], [9, 0], [9, 9]], [[1, 1], [2, 1], [1, 1]]]),
    ("hole 0: lies outside the exterior", [[[0, 0], [4, 0], [4, 4], [0, 4]], [[5, 5], [6, 5], [6, 6]]]),
    ("hole 0: touches or crosses the exterior", [[[0, 0], [4, 0], [4, 4], [0, 4]], [[0, 0], [2, 1], [1, 2]]]),
    ("hole 1: lies inside hole 0 or holds it", [
        [[0, 0], [9, 0], [9, 9], [0, 9]], [[1, 1], [8, 1], [8, 8], [1, 8]], [[3, 3], [5, 3], [5, 5]],
    ]),
    ("hole 1: touches or crosses hole 0", [
        [[0, 0], [9, 0], [9, 9], [0, 9]], [[1, 1], [4, 1], [4, 4], [1, 4]], [[4, 4], [6, 4], [6, 6]],
    ]),
    ("hole 0: polygon ring crosses itself", [[[0, 0], [9, 0], [9, 9], [0, 9]], [[1, 1], [3, 3], [3, 1], [1, 2]]]),
    ("a polygon needs an exterior ring", []),
])  # fmt: skip
def test_bad_holes_fail_with_one_line_naming_the_polygon(message: str, rings: list) -> None:
    refs = [{"labels": [1], "polygons": [rings]}]
    preds = [{"labels": [], "scores": [], "polygons": []}]
    with pytest.raises(ValueError, match=f"^image 0 reference polygon 0(, |: ){message}") as err:
        from_per_image(preds, refs, iou_type="polygon")
    assert "\n" not in str(err.value)


def holed_scene(seed: int, n_images: int = 20) -> tuple[list[dict], list[dict]]:
    """Per-image dicts whose ground truths have 0-2 holes; predictions are jittered copies and strays."""
    rng = np.random.default_rng(seed)
    preds, refs = [], []
    for _ in range(n_images):
        n_gt = int(rng.integers(0, 4))
        gts = [holed(rng, rng.uniform(0, 40, 2), rng.uniform(4, 10), int(rng.integers(0, 3))) for _ in range(n_gt)]
        g_labels = rng.integers(0, 3, n_gt)
        pds, p_labels = [], []
        for g, lab in zip(gts, g_labels, strict=True):
            for _ in range(int(rng.integers(0, 3))):
                shift = rng.normal(0, 1.5, 2) * (rng.random() < 0.8)
                pds.append([r + shift for r in (g if rng.random() < 0.7 else g[:1])])
                p_labels.append(lab if rng.random() < 0.85 else int(rng.integers(0, 4)))
        for _ in range(int(rng.integers(0, 3))):
            pds.append(holed(rng, rng.uniform(0, 40, 2), rng.uniform(4, 10), int(rng.integers(0, 3))))
            p_labels.append(int(rng.integers(0, 4)))
        refs.append({"labels": g_labels, "polygons": gts})
        preds.append({"labels": np.array(p_labels, np.int64), "scores": np.round(rng.uniform(0, 1, len(pds)), 1),
                      "polygons": pds})  # fmt: skip
    return preds, refs


@pytest.mark.parametrize("seed", [0, 1])
def test_holed_polygon_map_equals_valor_lite(seed: int) -> None:
    preds, refs = holed_scene(seed)
    ious, scores = [0.3, 0.5, 0.75], [0.25, 0.5]
    data = from_per_image(preds, refs, iou_type="polygon")
    result = evaluate_valor(data, iou_type="polygon", iou_thresholds=ious, score_thresholds=scores)
    as_shapely = [{**d, "polygons": [to_shapely(p) for p in d["polygons"]]} for d in preds + refs]
    assert_same(
        ours_keyed(result, ious, scores),
        valor_lite_polygons(as_shapely[: len(preds)], as_shapely[len(preds) :], ious, scores),
    )
    assert (result.ap > 0).any() and (result.ap < 1).any()
    # the holes take effect: the same scene without them scores otherwise
    filled = [{**d, "polygons": [p[0] for p in d["polygons"]]} for d in preds + refs]
    no_holes = evaluate_valor(from_per_image(filled[: len(preds)], filled[len(preds) :], iou_type="polygon"),
                              iou_type="polygon", iou_thresholds=ious, score_thresholds=scores)  # fmt: skip
    assert not np.allclose(no_holes.ap, result.ap)

"""Polygon rasterization (pixel centres inside, even-odd): = shapely's contains_xy at the centres on random
polygons with holes; = pycocotools' frPyObjects/decode on axis-parallel polygons, boundary pixels included;
within 0.2 px of the boundary of pycocotools' on sloped edges (its 1/5-pixel grid), where the two differ."""

from __future__ import annotations

import numpy as np
import shapely
from pycocotools import mask as mask_utils
from shapely.geometry import Polygon as ShapelyPolygon

from olive_eval.metrics.detection.polygons import as_polygon
from olive_eval.metrics.detection.rasterize import rasterize, rasterize_union

from .test_polygon_holes import holed, to_shapely
from .test_polygons import star

H, W = 37, 45


def centres(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:height, 0:width]
    return xx + 0.5, yy + 0.5


def pycoco(parts: list[np.ndarray], height: int, width: int) -> np.ndarray:
    rles = mask_utils.frPyObjects([np.asarray(p, np.float64).ravel().tolist() for p in parts], height, width)
    return mask_utils.decode(mask_utils.merge(rles)).astype(bool)


def skyline(rng: np.random.Generator, step: float) -> np.ndarray:
    """A random axis-parallel simple polygon on a grid of ``step``: columns of random heights on a base."""
    k = int(rng.integers(1, 6))
    xs = np.sort(rng.choice(np.arange(0, 40), k + 1, replace=False)) * step + rng.integers(-2, 3) * step
    base = float(rng.integers(-2, 30)) * step
    tops = base + rng.integers(1, 25, k) * step
    pts = [(xs[0], base), (xs[-1], base)]
    for i in range(k - 1, -1, -1):
        pts += [(xs[i + 1], tops[i]), (xs[i], tops[i])]
    return np.array(pts, np.float64)


def test_rasterize_equals_shapely_at_pixel_centres_on_random_polygons_with_holes() -> None:
    rng = np.random.default_rng(0)
    cx, cy = centres(H, W)
    filled = []
    for k in range(300):
        rings = holed(rng, rng.uniform(-5, 50, 2), rng.uniform(2, 20), int(rng.integers(0, 3)))
        if k % 3 == 0:
            rings = [star(rng, False, rng.uniform(-5, 50, 2), rng.uniform(2, 20))]
        got = rasterize(as_polygon(rings), H, W)
        np.testing.assert_array_equal(got, shapely.contains_xy(to_shapely(rings), cx, cy), err_msg=str(k))
        filled.append(got.mean())
    filled = np.array(filled)  # some fully inside, some clipped by the image, some outside it
    assert (filled == 0).any() and (filled > 0.05).any()


def test_rasterize_equals_pycocotools_on_axis_parallel_polygons_boundary_pixels_included() -> None:
    rng = np.random.default_rng(1)
    cx, cy = centres(H, W)
    on_boundary = 0
    for k in range(300):
        ring = skyline(rng, 1.0 if k % 2 else 0.5)  # half-integer vertices put pixel centres on edges
        got = rasterize(as_polygon(ring), H, W)
        np.testing.assert_array_equal(got, pycoco([ring], H, W), err_msg=str(ring.tolist()))
        touching = shapely.intersects_xy(ShapelyPolygon(ring).boundary, cx, cy)
        on_boundary += int(touching.sum())
        # off the boundary it is shapely's rule too
        inside = shapely.contains_xy(ShapelyPolygon(ring), cx, cy)
        np.testing.assert_array_equal(got[~touching], inside[~touching])
    assert on_boundary > 1000  # the boundary rule was exercised


def test_rasterize_differs_from_pycocotools_only_near_sloped_edges() -> None:
    rng = np.random.default_rng(2)
    cx, cy = centres(H, W)
    differ = total = 0
    for _ in range(300):
        ring = star(rng, rng.random() < 0.5, rng.uniform(0, 45, 2), rng.uniform(2, 15))
        got = rasterize(as_polygon(ring), H, W)
        ref = pycoco([ring], H, W)
        bad = got != ref
        if bad.any():
            dist = shapely.distance(ShapelyPolygon(ring).boundary, shapely.points(cx[bad], cy[bad]))
            assert dist.max() < 0.2, dist.max()
        differ += int(bad.sum())
        total += got.size
    print(f"pixels where pycocotools differs: {differ} of {total}")
    assert 0 < differ < 0.002 * total


def test_union_of_parts_equals_pycocotools_merge() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        parts = [skyline(rng, 1.0) for _ in range(int(rng.integers(2, 4)))]  # parts may overlap
        got = rasterize_union([as_polygon(p) for p in parts], H, W)
        np.testing.assert_array_equal(got, pycoco(parts, H, W))


def test_rasterize_edge_cases() -> None:
    square = as_polygon([[0, 0], [3, 0], [3, 2], [0, 2]])
    assert rasterize(square, 0, 5).shape == (0, 5)
    np.testing.assert_array_equal(rasterize(square, 3, 4), [[1, 1, 1, 0], [1, 1, 1, 0], [0, 0, 0, 0]])
    assert not rasterize(as_polygon([[10, 10], [12, 10], [12, 12]]), 5, 5).any()  # outside the image
    assert rasterize(as_polygon([[-5, -5], [50, -5], [50, 50], [-5, 50]]), 4, 6).all()  # covers it
    # a thin sliver between pixel centres covers no pixel, as for shapely
    assert not rasterize(as_polygon([[0, 0.6], [9, 0.6], [9, 0.9], [0, 0.9]]), 3, 9).any()

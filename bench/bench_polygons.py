"""Polygon IoU benchmark: olive-eval's numpy kernel (``iou_type: "polygon"``) against valor-lite's own
``compute_polygon_iou`` (shapely intersection and union), same pairs, same run.

Pairs are seeded random convex and concave rings of 4-11 points around nearby centres, most overlapping.
Both sides get their inputs prepared outside the timing (our counter-clockwise rings; valor-lite's shapely
polygons). The values must agree to 1e-9 (the script asserts it). Figures are the best of ``--repeat``.

Run: ``python bench/bench_polygons.py`` (seconds), ``--pairs N`` to change the size.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import best_of
from shapely.geometry import Polygon as ShapelyPolygon
from valor_lite.object_detection.computation import compute_polygon_iou

from olive_eval.metrics.detection.polygons import as_ring, polygon_iou_pairs

SEED = 20261128


def ring(rng: np.random.Generator) -> np.ndarray:
    n = int(rng.integers(4, 12))
    angles = (np.arange(n) + rng.uniform(0, 0.9, n)) * (2 * np.pi / n)
    radii = rng.uniform(1.0, 5.0, n) if rng.random() < 0.5 else np.full(n, 4.0)
    center = rng.uniform(0, 6, 2)
    return np.c_[center[0] + radii * np.cos(angles), center[1] + radii * np.sin(angles)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    raw = [(ring(rng), ring(rng)) for _ in range(args.pairs)]
    ours_dt = [as_ring(a) for a, _ in raw]
    ours_gt = [as_ring(b) for _, b in raw]
    index = np.arange(args.pairs)
    shapes = np.array([[ShapelyPolygon(a), ShapelyPolygon(b)] for a, b in raw], dtype=object)
    times, results = best_of(
        {
            "valor-lite (shapely)": lambda: compute_polygon_iou(shapes),
            "ours (numpy)": lambda: polygon_iou_pairs(ours_dt, index, ours_gt, index),
        },
        args.repeat,
    )
    np.testing.assert_allclose(results["ours (numpy)"], results["valor-lite (shapely)"], rtol=0, atol=1e-9)
    for name, t in times.items():
        print(f"{name:22s} {t * 1e3:9.1f} ms  ({args.pairs} pairs)")
    print(f"ours / valor-lite: {times['ours (numpy)'] / times['valor-lite (shapely)']:.2f}")


if __name__ == "__main__":
    main()

"""Polygon rasterization benchmark: olive-eval's pixel-centre rule (``rasterize.py``) against pycocotools'
``frPyObjects`` + ``decode`` and shapely's ``contains_xy`` at the pixel centres, same polygons, same run.

Polygons are seeded random axis-parallel "skylines" on a half-pixel grid (where pycocotools and the centre
rule agree pixel for pixel, boundary pixels included) in a 480x640 image; each side rasterizes every polygon
to a dense mask. The masks must be equal (the script asserts it). Figures are the best of ``--repeat``.

Run: ``python bench/bench_rasterize.py`` (seconds), ``--polygons N`` to change the size.
"""

from __future__ import annotations

import argparse

import numpy as np
import shapely
from _timing import best_of
from pycocotools import mask as mask_utils
from shapely.geometry import Polygon as ShapelyPolygon

from olive_eval.metrics.detection.polygons import as_polygon
from olive_eval.metrics.detection.rasterize import rasterize

SEED = 20261201
H, W = 480, 640


def skyline(rng: np.random.Generator) -> np.ndarray:
    k = int(rng.integers(2, 12))
    xs = np.sort(rng.choice(np.arange(0, 1200), k + 1, replace=False)) * 0.5
    base = float(rng.integers(0, 600)) * 0.5
    tops = base + rng.integers(2, 400, k) * 0.5
    pts = [(xs[0], base), (xs[-1], base)]
    for i in range(k - 1, -1, -1):
        pts += [(xs[i + 1], tops[i]), (xs[i], tops[i])]
    return np.array(pts, np.float64)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--polygons", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    rings = [skyline(rng) for _ in range(args.polygons)]
    ours_in = [as_polygon(r) for r in rings]
    coco_in = [[r.ravel().tolist()] for r in rings]
    shapely_in = [ShapelyPolygon(r) for r in rings]
    yy, xx = np.mgrid[0:H, 0:W] + 0.5

    def coco() -> list[np.ndarray]:
        return [mask_utils.decode(mask_utils.merge(mask_utils.frPyObjects(p, H, W))).astype(bool) for p in coco_in]

    times, results = best_of(
        {
            "pycocotools": coco,
            "shapely contains_xy": lambda: [shapely.contains_xy(p, xx, yy) for p in shapely_in],
            "ours (numpy)": lambda: [rasterize(p, H, W) for p in ours_in],
        },
        args.repeat,
    )
    for a, b in zip(results["ours (numpy)"], results["pycocotools"], strict=True):
        np.testing.assert_array_equal(a, b)
    for name, t in times.items():
        print(f"{name:22s} {t * 1e3:9.1f} ms  ({args.polygons} polygons, {H}x{W})")
    print(f"ours / pycocotools: {times['ours (numpy)'] / times['pycocotools']:.2f}")
    print(f"ours / shapely: {times['ours (numpy)'] / times['shapely contains_xy']:.2f}")


if __name__ == "__main__":
    main()

"""The geometry of COCO annotations and results: ``bbox`` and ``segmentation`` (RLE or polygons).

A COCO ``segmentation`` is RLE (``{"size", "counts"}``, compressed or not; crowd regions use it) or a
list of polygons ``[[x1, y1, x2, y2, ...], ...]``: the parts of one object, which may overlap and are
united, as pycocotools' ``annToRLE`` merges them. Polygons are rasterized at the image's ``height`` and
``width`` by :mod:`.rasterize`'s pixel-centre rule (pycocotools' own rasterization differs on a few pixels
within 0.15 px of a sloped edge; it agrees on axis-parallel ones). A part needs at least 3 distinct points
and may cross itself (even-odd, as COCO's own data sometimes does). pycocotools cannot load polygon
*results* (``loadRes`` takes RLE); olive-eval reads them the same way as ground-truth polygons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from olive_eval.metrics.detection.boxes import check_boxes
from olive_eval.metrics.detection.masks import RLEs, encode_dense, from_runs, mask_runs
from olive_eval.metrics.detection.polygons import Shape
from olive_eval.metrics.detection.rasterize import rasterize_union


def coco_boxes(items: Sequence[Mapping[str, Any]], img: np.ndarray, image_ids: np.ndarray, what: str) -> np.ndarray:
    """``[n, 4]`` xywh boxes of the items; ValueError naming the first item without a valid ``bbox``."""
    if any("bbox" not in a for a in items):
        i = next(i for i, a in enumerate(items) if "bbox" not in a)
        raise ValueError(f"{what} {i} (image {int(image_ids[img[i]])}) has no 'bbox'")
    try:
        boxes = np.array([a["bbox"] for a in items], np.float64).reshape(-1, 4) if items else np.zeros((0, 4))
    except ValueError as exc:
        raise ValueError(f"every {what} 'bbox' must be [x, y, w, h]: {exc}") from None
    bad = ~np.isfinite(boxes).all(axis=1) | (boxes[:, 2] < 0) | (boxes[:, 3] < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        ident = items[i].get("id")
        label = f"image {int(image_ids[img[i]])}, {what} {i}" + (f" (id {ident})" if ident is not None else "")
        check_boxes(boxes[i : i + 1], name=lambda _: label)
    return boxes


def polygon_parts(seg: list, name: str) -> list[Shape]:
    """The parts of a COCO polygon segmentation as shapes for rasterization (self-crossing allowed)."""
    parts = []
    for k, flat in enumerate(seg):
        where = f"{name}, polygon {k}"
        try:
            xy = np.asarray(flat, np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: a COCO polygon must be a flat list [x1, y1, x2, y2, ...]") from None
        if len(xy) % 2 or not np.isfinite(xy).all():
            raise ValueError(f"{where}: a COCO polygon must be an even number of finite coordinates, got {len(xy)}")
        ring = xy.reshape(-1, 2)
        ring = ring[(ring != np.roll(ring, -1, axis=0)).any(1)] if len(ring) > 1 else ring
        if len(ring) < 3:
            raise ValueError(f"{where}: a polygon ring needs at least 3 distinct points, got {len(ring)}")
        parts.append(Shape.of([ring]))
    if not parts:
        raise ValueError(f"{name}: an empty polygon list (give at least one polygon, or RLE)")
    return parts


def coco_masks(
    items: Sequence[Mapping[str, Any]],
    img: np.ndarray,
    image_ids: np.ndarray,
    sizes: dict[int, tuple[int, int]],
    what: str,
) -> RLEs:
    """The items' ``segmentation`` (RLE or polygons) as :class:`RLEs`; errors name image and item."""
    runs = []
    for i, a in enumerate(items):
        image_id = int(image_ids[img[i]])
        name = f"image {image_id}, {what} {i}"
        seg = a.get("segmentation")
        if seg is None:
            raise ValueError(f"{name} has no 'segmentation'")
        if isinstance(seg, list):
            if image_id not in sizes:
                raise ValueError(f"{name}: polygons need the image's 'height' and 'width' in the ground truth")
            h, w = sizes[image_id]
            runs.append((encode_dense(rasterize_union(polygon_parts(seg, name), h, w)), h, w))
            continue
        counts, h, w = mask_runs(seg, name)
        if image_id in sizes and (h, w) != sizes[image_id]:
            ih, iw = sizes[image_id]
            raise ValueError(f"{name}: mask size {h}x{w} (height x width) differs from its image's {ih}x{iw}")
        runs.append((counts, h, w))
    return from_runs(runs)

"""Polygons to pixel masks: a pixel is in when its centre is inside the polygon (even-odd over every ring).

Pixel ``(row r, column c)`` covers ``[c, c + 1) x [r, r + 1)`` in polygon coordinates, so its centre is
``(c + 0.5, r + 0.5)``. The centre is inside when a ray towards ``-x`` crosses the rings an odd number of
times, an edge crossing the row ``y`` when ``min(y0, y1) < y <= max(y0, y1)`` and counting when it crosses at
``x < c + 0.5``. Holes are rings like any other, so they come out. A centre exactly on an edge is thus in
when the interior lies on the edge's lower-``x`` side (on a horizontal edge: its lower-``y`` side): the
pixels of ``[x0, x1] x [y0, y1]`` are those with ``x0 < c + 0.5 <= x1`` and ``y0 < r + 0.5 <= y1``, as
pycocotools' ``frPyObjects`` gives for axis-parallel edges.

Against the references: away from the boundary this is shapely's ``contains_xy`` at the pixel centres.
pycocotools rounds the vertices to a 1/5-pixel grid and walks each edge on that grid, so on sloped edges
it can differ for a pixel whose centre lies within about 0.15 px of the edge (a few pixels in a thousand);
olive-eval keeps the exact centre rule.

Work is per crossing: each edge lists the rows it crosses, each crossing toggles the pixels right of it,
and a running parity along each row fills the mask, within the polygon's bounding box
(``O(crossings + box area)``, and the ``H * W`` of the zeroed mask).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from olive_eval.metrics.detection.polygons import Shape, as_polygon


def rasterize(shape: Shape, height: int, width: int) -> np.ndarray:
    """``bool [height, width]``: the pixels whose centre is inside ``shape`` (see the module's rule)."""
    if height <= 0 or width <= 0:
        return np.zeros((max(height, 0), max(width, 0)), bool)
    a, d = shape.starts, shape.deltas
    b = a + d
    y_lo, y_hi = np.minimum(a[:, 1], b[:, 1]), np.maximum(a[:, 1], b[:, 1])
    # rows r with y_lo < r + 0.5 <= y_hi
    first = np.maximum(np.floor(y_lo - 0.5) + 1, 0).astype(np.int64)
    last = np.minimum(np.floor(y_hi - 0.5), height - 1).astype(np.int64)
    n = np.maximum(last - first + 1, 0)
    edge = np.repeat(np.arange(len(a)), n)
    row = first[edge] + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    y = row + 0.5
    x_at = a[edge, 0] + (y - a[edge, 1]) * d[edge, 0] / d[edge, 1]
    # the crossing counts for the columns with x_at < c + 0.5, i.e. c >= floor(x_at - 0.5) + 1
    col = np.clip(np.floor(x_at - 0.5) + 1, 0, width).astype(np.int64)
    out = np.zeros((height, width), bool)
    if not len(row):
        return out
    # only the polygon's bounding box of rows and columns is filled (objects are small beside their image)
    r0, r1, c0 = int(row.min()), int(row.max()) + 1, int(col.min())
    c1 = min(int(col.max()) + 1, width)
    span = c1 - c0 + 1
    toggles = np.bincount((row - r0) * span + (col - c0), minlength=(r1 - r0) * span).reshape(r1 - r0, span)
    parity = np.bitwise_xor.accumulate((toggles[:, : c1 - c0] & 1).astype(np.uint8), axis=1)
    out[r0:r1, c0:c1] = parity.astype(bool)
    return out


def rasterize_union(shapes: Sequence[Shape], height: int, width: int) -> np.ndarray:
    """The union of several shapes' masks (COCO's several polygons of one object, which may overlap)."""
    out = np.zeros((height, width), bool)
    for shape in shapes:
        out |= rasterize(shape, height, width)
    return out


def image_size(size: object, where: str) -> tuple[int, int]:
    """``(height, width)`` from ``[height, width]``; ValueError naming ``where`` otherwise."""
    try:
        h, w = (int(v) for v in size)  # type: ignore[attr-defined]
        ok = [h, w] == [float(v) for v in size] and h >= 0 and w >= 0  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{where}: 'size' must be [height, width], two non-negative integers, got {size!r}")
    return h, w


def polygon_masks(polygons: Sequence[object], size: object, *, where: str) -> list[np.ndarray]:
    """Each polygon (a ring, or ``[exterior, hole, ...]``) as a ``bool [height, width]`` mask; errors name
    ``"{where} polygon {j}"``."""
    h, w = image_size(size, where)
    if len(polygons) == 0:
        return []
    return [rasterize(as_polygon(p, where=f"{where} polygon {j}"), h, w) for j, p in enumerate(polygons)]

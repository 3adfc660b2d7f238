"""Exact IoU of simple polygons, as valor-lite computes it (shapely's intersection and union areas).

Valor does not rasterize polygons: ``compute_polygon_iou`` takes ``area(a & b) / area(a | b)`` of the
shapes themselves, so a rasterized (pycocotools) IoU would differ by the pixel grid. This kernel gets the
same number in pure numpy from Green's theorem: the boundary of ``A & B`` is the part of A's boundary
inside B plus the part of B's boundary inside A, so its area is half the sum of ``x0*y1 - x1*y0`` over
those pieces. Edges split where they cross the other polygon's edges, and each piece is kept by its
midpoint; a piece lying on the other boundary counts once, from A, when both run the same way.

A polygon is one ring of ``[x, y]`` vertices (at least 3, no self-crossings, no holes); a repeated
closing vertex and repeated points are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def as_ring(points: object, *, where: str = "") -> np.ndarray:
    """One polygon as a counter-clockwise ``[n, 2]`` float64 ring; ValueError naming ``where`` otherwise."""
    ring = np.asarray(points, dtype=np.float64)
    if ring.ndim != 2 or ring.shape[1] != 2:
        raise ValueError(f"{where}: a polygon must be a list of [x, y] points, got shape {ring.shape}")
    if not np.isfinite(ring).all():
        raise ValueError(f"{where}: polygon coordinates must be finite")
    if len(ring) > 1:  # repeated points (and a closing vertex) add no edge
        ring = ring[(ring != np.roll(ring, -1, axis=0)).any(1)]
    if len(ring) < 3:
        raise ValueError(f"{where}: a polygon needs at least 3 distinct points, got {len(ring)}")
    if crosses_itself(ring):
        raise ValueError(f"{where}: polygon crosses itself; give a simple ring")
    area = signed_area(ring)
    if area == 0:
        raise ValueError(f"{where}: polygon has zero area")
    return ring if area > 0 else ring[::-1].copy()


def signed_area(ring: np.ndarray) -> float:
    """Shoelace area, positive for counter-clockwise rings."""
    nxt = np.roll(ring, -1, axis=0)
    return float(0.5 * np.sum(ring[:, 0] * nxt[:, 1] - nxt[:, 0] * ring[:, 1]))


def _cross(ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray) -> np.ndarray:
    return ax * by - ay * bx


def crosses_itself(ring: np.ndarray) -> bool:
    """Whether two non-adjacent edges of the ring touch or cross (shapely would call the ring invalid)."""
    n = len(ring)
    p, d = ring, np.roll(ring, -1, axis=0) - ring
    i, j = np.triu_indices(n, k=2)
    keep = ~((i == 0) & (j == n - 1))  # first and last edges are adjacent
    i, j = i[keep], j[keep]
    denom = _cross(d[i, 0], d[i, 1], d[j, 0], d[j, 1])
    qx, qy = p[j, 0] - p[i, 0], p[j, 1] - p[i, 1]
    par = denom == 0
    safe = np.where(par, 1.0, denom)
    t, u = _cross(qx, qy, d[j, 0], d[j, 1]) / safe, _cross(qx, qy, d[i, 0], d[i, 1]) / safe
    hit = ~par & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
    collinear = par & (_cross(qx, qy, d[i, 0], d[i, 1]) == 0)
    if collinear.any():  # overlapping collinear edges
        di = d[i[collinear]]
        lo = np.einsum("ij,ij->i", p[j[collinear]] - p[i[collinear]], di) / np.einsum("ij,ij->i", di, di)
        hi = np.einsum("ij,ij->i", p[j[collinear]] + d[j[collinear]] - p[i[collinear]], di) / np.einsum(
            "ij,ij->i", di, di
        )
        hit[collinear] = (np.maximum(lo, hi) >= 0) & (np.minimum(lo, hi) <= 1)
    return bool(hit.any())


def _inside(points: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """Even-odd test of each point against the ring (points on the boundary may go either way)."""
    a, b = ring, np.roll(ring, -1, axis=0)
    px, py = points[:, 0:1], points[:, 1:2]
    straddle = (a[:, 1] > py) != (b[:, 1] > py)
    dy = np.where(straddle, b[:, 1] - a[:, 1], 1.0)
    x_at = a[:, 0] + (py - a[:, 1]) * (b[:, 0] - a[:, 0]) / dy
    return (np.count_nonzero(straddle & (px < x_at), axis=1) % 2) == 1


def _on_edge(points: np.ndarray, ring: np.ndarray, tol: float) -> np.ndarray:
    """``[P, E]`` whether each point lies on each edge of the ring (within ``tol``)."""
    a, d = ring, np.roll(ring, -1, axis=0) - ring
    rel = points[:, None, :] - a[None]
    length2 = np.einsum("ij,ij->i", d, d)
    t = np.einsum("pij,ij->pi", rel, d) / length2
    off = np.abs(_cross(rel[..., 0], rel[..., 1], d[:, 0], d[:, 1])) / np.sqrt(length2)
    return (off <= tol) & (t >= -tol) & (t <= 1 + tol)


def _pieces(ring: np.ndarray, other: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split each edge of ``ring`` where ``other``'s edges cross it or its vertices touch it.

    Returns the pieces' starts, ends and the index of the edge each came from.
    """
    p, d = ring, np.roll(ring, -1, axis=0) - ring
    q, e = other, np.roll(other, -1, axis=0) - other
    denom = _cross(d[:, None, 0], d[:, None, 1], e[None, :, 0], e[None, :, 1])
    rx, ry = q[None, :, 0] - p[:, None, 0], q[None, :, 1] - p[:, None, 1]
    safe = np.where(denom == 0, 1.0, denom)
    t = _cross(rx, ry, e[None, :, 0], e[None, :, 1]) / safe
    u = _cross(rx, ry, d[:, None, 0], d[:, None, 1]) / safe
    crossing = (denom != 0) & (t > 0) & (t < 1) & (u >= 0) & (u <= 1)
    length2 = np.einsum("ij,ij->i", d, d)
    t_vertex = np.einsum("ijk,ik->ij", q[None] - p[:, None], d) / length2[:, None]  # [edges, other vertices]
    touching = _on_edge(q, ring, tol).T & (t_vertex > 0) & (t_vertex < 1)
    ends_of = np.broadcast_to(np.array([0.0, 1.0]), (len(p), 2))
    cuts = np.concatenate([ends_of, np.where(crossing, t, np.inf), np.where(touching, t_vertex, np.inf)], axis=1)
    cuts.sort(axis=1)  # every edge's cut points in order; unused slots (inf) last
    lo, hi = cuts[:, :-1], cuts[:, 1:]
    edge, slot = np.nonzero(np.isfinite(hi) & (hi > lo))
    t0, t1 = lo[edge, slot, None], hi[edge, slot, None]
    return p[edge] + t0 * d[edge], p[edge] + t1 * d[edge], edge


def intersection_area(a: np.ndarray, b: np.ndarray) -> float:
    """Area of ``a & b`` for two counter-clockwise simple rings (see the module's note)."""
    lo = np.minimum(a.min(0), b.min(0))
    hi = np.maximum(a.max(0), b.max(0))
    if (a.max(0) < b.min(0)).any() or (b.max(0) < a.min(0)).any():
        return 0.0
    tol = 1e-12 * float(np.max(hi - lo))
    total = 0.0
    for ring, other, first in ((a, b, True), (b, a, False)):
        s, t, edge = _pieces(ring, other, tol)
        mid = 0.5 * (s + t)
        on = _on_edge(mid, other, tol)  # [pieces, other edges]
        keep = _inside(mid, other) & ~on.any(1)
        if first:  # a shared stretch counts once, when both boundaries run the same way
            d = np.roll(ring, -1, axis=0)[edge] - ring[edge]
            e = np.roll(other, -1, axis=0) - other
            same_way = on & (d @ e.T > 0)
            keep |= same_way.any(1)
        total += float(np.sum(_cross(s[keep, 0], s[keep, 1], t[keep, 0], t[keep, 1])))
    return max(0.5 * total, 0.0)


def polygon_iou(a: np.ndarray, b: np.ndarray) -> float:
    """``area(a & b) / area(a | b)`` of two rings from :func:`as_ring`."""
    inter = intersection_area(a, b)
    union = signed_area(a) + signed_area(b) - inter
    return inter / union if union > 0 else 0.0


def polygon_iou_pairs(
    dt: Sequence[np.ndarray], dt_index: np.ndarray, gt: Sequence[np.ndarray], gt_index: np.ndarray
) -> np.ndarray:
    """IoU of each (prediction, ground truth) pair named by the two index arrays."""
    return np.array([polygon_iou(dt[i], gt[j]) for i, j in zip(dt_index, gt_index, strict=True)], dtype=np.float64)

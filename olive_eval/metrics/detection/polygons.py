"""Exact IoU of polygons with holes, as valor-lite computes it (shapely's intersection and union areas).

Valor does not rasterize polygons: ``compute_polygon_iou`` takes ``area(a & b) / area(a | b)`` of the
shapes themselves, so a rasterized (pycocotools) IoU would differ by the pixel grid. This kernel gets the
same number in pure numpy from Green's theorem: the boundary of ``A & B`` is the part of A's boundary
inside B plus the part of B's boundary inside A, so its area is half the sum of ``x0*y1 - x1*y0`` over
those pieces. Every ring is oriented with the interior on its left (the exterior counter-clockwise, holes
clockwise), so a hole's boundary pieces subtract by themselves. Edges split where they cross the other
polygon's edges, and each piece is kept by its midpoint (even-odd over all the other's rings); a piece
lying on the other boundary counts once, from A, when both run the same way (interiors on the same side).

A polygon is an exterior ring of ``[x, y]`` vertices (at least 3, not crossing itself) and optional hole
rings, each inside the exterior, outside the other holes, touching no other ring; a repeated closing
vertex and repeated points are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Shape:
    """A validated polygon: rings (exterior counter-clockwise, then clockwise holes) and their edges."""

    rings: tuple[np.ndarray, ...]
    starts: np.ndarray  # [E, 2] every ring's edges, concatenated
    deltas: np.ndarray  # [E, 2] end - start
    area: float  # exterior area less the holes'

    @staticmethod
    def of(rings: Sequence[np.ndarray]) -> Shape:
        """From already oriented rings (no checks)."""
        starts = np.concatenate(rings)
        deltas = np.concatenate([np.roll(r, -1, axis=0) - r for r in rings])
        return Shape(tuple(rings), starts, deltas, float(sum(signed_area(r) for r in rings)))


def as_ring(points: object, *, where: str = "") -> np.ndarray:
    """One ring as a counter-clockwise ``[n, 2]`` float64 array; ValueError naming ``where`` otherwise."""
    ring = np.asarray(points, dtype=np.float64)
    if ring.ndim != 2 or ring.shape[1] != 2:
        raise ValueError(f"{where}: a polygon ring must be a list of [x, y] points, got shape {ring.shape}")
    if not np.isfinite(ring).all():
        raise ValueError(f"{where}: polygon coordinates must be finite")
    if len(ring) > 1:  # repeated points (and a closing vertex) add no edge
        ring = ring[(ring != np.roll(ring, -1, axis=0)).any(1)]
    if len(ring) < 3:
        raise ValueError(f"{where}: a polygon ring needs at least 3 distinct points, got {len(ring)}")
    if crosses_itself(ring):
        raise ValueError(f"{where}: polygon ring crosses itself; give a simple ring")
    area = signed_area(ring)
    if area == 0:
        raise ValueError(f"{where}: polygon ring has zero area")
    return ring if area > 0 else ring[::-1].copy()


def _is_ring(obj: object) -> bool:
    """A ring is a list of points; a polygon with holes a list of rings (GeoJSON ``Polygon`` coordinates)."""
    if isinstance(obj, np.ndarray):
        return obj.ndim != 3
    if isinstance(obj, (list, tuple)) and not obj:
        return False  # no rings
    if isinstance(obj, (list, tuple)) and obj and isinstance(obj[0], (list, tuple, np.ndarray)) and len(obj[0]):
        return not isinstance(obj[0][0], (list, tuple, np.ndarray))
    return True


def as_polygon(obj: object, *, where: str = "") -> Shape:
    """A ring ``[[x, y], ...]`` or rings ``[exterior, hole, ...]`` as a :class:`Shape`; ValueError naming
    ``where`` (and the hole) when a ring is invalid or a hole is not inside the exterior or touches a ring."""
    raw = [obj] if _is_ring(obj) else list(obj)  # type: ignore[call-overload]
    if not raw:
        raise ValueError(f"{where}: a polygon needs an exterior ring, got no rings")
    rings = [as_ring(raw[0], where=where)]
    for k, hole in enumerate(raw[1:]):
        name = f"{where}, hole {k}"
        ring = as_ring(hole, where=name)[::-1].copy()  # clockwise: the interior on its left
        for j, other in enumerate(rings):
            q, e = other, np.roll(other, -1, axis=0) - other
            d = np.roll(ring, -1, axis=0) - ring
            if _segments_meet(ring[:, None], d[:, None], q[None], e[None]).any():
                what = "the exterior" if j == 0 else f"hole {j - 1}"
                raise ValueError(f"{name}: touches or crosses {what}; holes must lie strictly inside")
            inside = bool(_inside(ring[:1], q, e)[0])
            if j == 0 and not inside:
                raise ValueError(f"{name}: lies outside the exterior ring")
            if j > 0 and (inside or _inside(other[:1], ring, d)[0]):
                raise ValueError(f"{name}: lies inside hole {j - 1} or holds it; holes must not nest")
        rings.append(ring)
    return Shape.of(rings)


def signed_area(ring: np.ndarray) -> float:
    """Shoelace area, positive for counter-clockwise rings."""
    nxt = np.roll(ring, -1, axis=0)
    return float(0.5 * np.sum(ring[:, 0] * nxt[:, 1] - nxt[:, 0] * ring[:, 1]))


def _cross(ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray) -> np.ndarray:
    return ax * by - ay * bx


def _segments_meet(p: np.ndarray, d: np.ndarray, q: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Whether segments ``p + [0, 1] d`` and ``q + [0, 1] e`` touch or cross (broadcast over leading axes)."""
    p, d, q, e = np.broadcast_arrays(p, d, q, e)
    denom = _cross(d[..., 0], d[..., 1], e[..., 0], e[..., 1])
    rx, ry = q[..., 0] - p[..., 0], q[..., 1] - p[..., 1]
    par = denom == 0
    safe = np.where(par, 1.0, denom)
    t, u = _cross(rx, ry, e[..., 0], e[..., 1]) / safe, _cross(rx, ry, d[..., 0], d[..., 1]) / safe
    hit = ~par & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
    collinear = par & (_cross(rx, ry, d[..., 0], d[..., 1]) == 0)
    if collinear.any():  # overlapping collinear edges
        dc, rel = d[collinear], q[collinear] - p[collinear]
        length2 = np.einsum("ij,ij->i", dc, dc)
        lo = np.einsum("ij,ij->i", rel, dc) / length2
        hi = np.einsum("ij,ij->i", rel + e[collinear], dc) / length2
        hit[collinear] = (np.maximum(lo, hi) >= 0) & (np.minimum(lo, hi) <= 1)
    return hit


def crosses_itself(ring: np.ndarray) -> bool:
    """Whether two non-adjacent edges of the ring touch or cross (shapely would call the ring invalid)."""
    n = len(ring)
    d = np.roll(ring, -1, axis=0) - ring
    i, j = np.triu_indices(n, k=2)
    keep = ~((i == 0) & (j == n - 1))  # first and last edges are adjacent
    i, j = i[keep], j[keep]
    return bool(_segments_meet(ring[i], d[i], ring[j], d[j]).any())


def _inside(points: np.ndarray, starts: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """Even-odd test of each point against the edges (points on the boundary may go either way)."""
    a, b = starts, starts + deltas
    px, py = points[:, 0:1], points[:, 1:2]
    straddle = (a[:, 1] > py) != (b[:, 1] > py)
    dy = np.where(straddle, b[:, 1] - a[:, 1], 1.0)
    x_at = a[:, 0] + (py - a[:, 1]) * (b[:, 0] - a[:, 0]) / dy
    return (np.count_nonzero(straddle & (px < x_at), axis=1) % 2) == 1


def _on_edge(points: np.ndarray, a: np.ndarray, d: np.ndarray, tol: float) -> np.ndarray:
    """``[P, E]`` whether each point lies on each edge (within ``tol``)."""
    rel = points[:, None, :] - a[None]
    length2 = np.einsum("ij,ij->i", d, d)
    t = np.einsum("pij,ij->pi", rel, d) / length2
    off = np.abs(_cross(rel[..., 0], rel[..., 1], d[:, 0], d[:, 1])) / np.sqrt(length2)
    return (off <= tol) & (t >= -tol) & (t <= 1 + tol)


def _pieces(
    p: np.ndarray, d: np.ndarray, q: np.ndarray, e: np.ndarray, tol: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split each edge ``p + [0, 1] d`` where the edges ``q + [0, 1] e`` cross it or their starts touch it.

    Returns the pieces' starts, ends and the index of the edge each came from.
    """
    denom = _cross(d[:, None, 0], d[:, None, 1], e[None, :, 0], e[None, :, 1])
    rx, ry = q[None, :, 0] - p[:, None, 0], q[None, :, 1] - p[:, None, 1]
    safe = np.where(denom == 0, 1.0, denom)
    t = _cross(rx, ry, e[None, :, 0], e[None, :, 1]) / safe
    u = _cross(rx, ry, d[:, None, 0], d[:, None, 1]) / safe
    crossing = (denom != 0) & (t > 0) & (t < 1) & (u >= 0) & (u <= 1)
    length2 = np.einsum("ij,ij->i", d, d)
    t_vertex = np.einsum("ijk,ik->ij", q[None] - p[:, None], d) / length2[:, None]  # [edges, other vertices]
    touching = _on_edge(q, p, d, tol).T & (t_vertex > 0) & (t_vertex < 1)
    ends_of = np.broadcast_to(np.array([0.0, 1.0]), (len(p), 2))
    cuts = np.concatenate([ends_of, np.where(crossing, t, np.inf), np.where(touching, t_vertex, np.inf)], axis=1)
    cuts.sort(axis=1)  # every edge's cut points in order; unused slots (inf) last
    lo, hi = cuts[:, :-1], cuts[:, 1:]
    edge, slot = np.nonzero(np.isfinite(hi) & (hi > lo))
    t0, t1 = lo[edge, slot, None], hi[edge, slot, None]
    return p[edge] + t0 * d[edge], p[edge] + t1 * d[edge], edge


def _shape(x: Shape | np.ndarray) -> Shape:
    return x if isinstance(x, Shape) else Shape.of([x if signed_area(x) > 0 else x[::-1]])


def intersection_area(a: Shape | np.ndarray, b: Shape | np.ndarray) -> float:
    """Area of ``a & b`` for two shapes (or counter-clockwise simple rings); see the module's note."""
    a, b = _shape(a), _shape(b)
    a_lo, a_hi, b_lo, b_hi = a.starts.min(0), a.starts.max(0), b.starts.min(0), b.starts.max(0)
    if (a_hi < b_lo).any() or (b_hi < a_lo).any():
        return 0.0
    tol = 1e-12 * float(np.max(np.maximum(a_hi, b_hi) - np.minimum(a_lo, b_lo)))
    total = 0.0
    for one, other, first in ((a, b, True), (b, a, False)):
        s, t, edge = _pieces(one.starts, one.deltas, other.starts, other.deltas, tol)
        mid = 0.5 * (s + t)
        on = _on_edge(mid, other.starts, other.deltas, tol)  # [pieces, other edges]
        keep = _inside(mid, other.starts, other.deltas) & ~on.any(1)
        if first:  # a shared stretch counts once, when both boundaries run the same way
            same_way = on & (one.deltas[edge] @ other.deltas.T > 0)
            keep |= same_way.any(1)
        total += float(np.sum(_cross(s[keep, 0], s[keep, 1], t[keep, 0], t[keep, 1])))
    return max(0.5 * total, 0.0)


def polygon_iou(a: Shape | np.ndarray, b: Shape | np.ndarray) -> float:
    """``area(a & b) / area(a | b)`` of two shapes from :func:`as_polygon` (or rings from :func:`as_ring`)."""
    a, b = _shape(a), _shape(b)
    inter = intersection_area(a, b)
    union = a.area + b.area - inter
    return inter / union if union > 0 else 0.0


def polygon_iou_pairs(
    dt: Sequence[Shape | np.ndarray], dt_index: np.ndarray, gt: Sequence[Shape | np.ndarray], gt_index: np.ndarray
) -> np.ndarray:
    """IoU of each (prediction, ground truth) pair named by the two index arrays."""
    return np.array([polygon_iou(dt[i], gt[j]) for i, j in zip(dt_index, gt_index, strict=True)], dtype=np.float64)

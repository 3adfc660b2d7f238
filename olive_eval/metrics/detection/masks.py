"""Instance masks as run-length encodings (COCO's column-major RLE), and mask IoU with crowd semantics.

Masks arrive as dense ``[H, W]`` arrays, COCO RLE dicts with compressed ``counts`` (a string) or
uncompressed ``counts`` (a list of run lengths). All become one :class:`RLEs` set of run lengths, so a
mask costs its number of runs rather than its pixels. The intersection of two masks is computed from
their foreground intervals alone (``F_a(x)`` = foreground pixels of ``a`` before position ``x``, summed
over the intervals of ``b``), for all pairs at once; counts are integers, so IoUs equal pycocotools'
``mask.iou`` bit for bit: ``inter / union`` (or ``inter / area_dt`` for a crowd ground truth), 0 when
the masks do not intersect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RLEs:
    """``n`` masks: run lengths of all masks concatenated (background run first), with per-mask offsets."""

    counts: np.ndarray  # int64 [sum of runs]
    offsets: np.ndarray  # int64 [n + 1]
    heights: np.ndarray  # int64 [n]
    widths: np.ndarray  # int64 [n]

    def __len__(self) -> int:
        return len(self.heights)

    def area(self) -> np.ndarray:
        """Foreground pixels per mask (int64)."""
        fg = np.where(self._local() % 2 == 1, self.counts, 0)
        return np.bincount(self._owner(), weights=fg, minlength=len(self)).astype(np.int64)

    def _local(self) -> np.ndarray:
        """Index of each run within its mask (odd = foreground)."""
        return np.arange(len(self.counts)) - np.repeat(self.offsets[:-1], np.diff(self.offsets))

    def _owner(self) -> np.ndarray:
        return np.repeat(np.arange(len(self)), np.diff(self.offsets))

    @staticmethod
    def concat(parts: Sequence[RLEs]) -> RLEs:
        if not parts:
            return empty_rles()
        counts = np.concatenate([p.counts for p in parts])
        sizes = np.concatenate([np.diff(p.offsets) for p in parts])
        return RLEs(
            counts,
            np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            np.concatenate([p.heights for p in parts]).astype(np.int64),
            np.concatenate([p.widths for p in parts]).astype(np.int64),
        )


def empty_rles() -> RLEs:
    z = np.zeros(0, np.int64)
    return RLEs(z, np.zeros(1, np.int64), z, z)


def decode_counts(counts: str | bytes) -> np.ndarray:
    """Run lengths of a COCO compressed RLE string (LEB128-like 5-bit groups, delta-coded from run 3 on)."""
    raw = counts.encode("ascii") if isinstance(counts, str) else bytes(counts)
    c = np.frombuffer(raw, np.uint8).astype(np.int64) - 48
    if c.size == 0:
        return np.zeros(0, np.int64)
    if (c < 0).any() or (c > 63).any():
        raise ValueError("compressed RLE counts contain characters outside the COCO alphabet")
    more = (c & 0x20) != 0
    if more[-1]:
        raise ValueError("compressed RLE counts end inside a number")
    ends = np.flatnonzero(~more)
    starts = np.concatenate([[0], ends[:-1] + 1])
    token = np.repeat(np.arange(len(ends)), ends - starts + 1)
    k = np.arange(len(c)) - starts[token]
    x = np.add.reduceat((c & 0x1F) << (5 * k), starts)
    negative = (c[ends] & 0x10) != 0
    x = x - np.where(negative, np.left_shift(1, 5 * (ends - starts + 1)), 0)
    out = x.copy()
    out[1::2] = np.cumsum(x[1::2])
    out[2::2] = np.cumsum(x[2::2])
    return out


def encode_dense(mask: np.ndarray) -> np.ndarray:
    """Run lengths of a dense ``[H, W]`` mask in column-major order, background run first."""
    flat = np.asarray(mask).astype(bool).ravel(order="F")
    if flat.size == 0:
        return np.zeros(1, np.int64)
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    runs = np.diff(np.concatenate([[0], change, [flat.size]]))
    return np.concatenate([[0], runs]) if flat[0] else runs


def mask_runs(mask: object, name: str) -> tuple[np.ndarray, int, int]:
    """Run lengths, height and width of one mask (dense ``[H, W]`` or a COCO RLE dict); ``name`` is for errors."""
    if isinstance(mask, dict):
        if "size" not in mask or "counts" not in mask:
            raise ValueError(f"{name}: an RLE mask needs 'size' and 'counts'")
        h, w = (int(v) for v in mask["size"])
        cnt = mask["counts"]
        counts = decode_counts(cnt) if isinstance(cnt, str | bytes) else np.asarray(cnt, np.int64).reshape(-1)
        if (counts < 0).any() or int(counts.sum()) != h * w:
            raise ValueError(f"{name}: RLE counts sum to {int(counts.sum())}, not height x width = {h * w}")
        return counts, h, w
    arr = np.asarray(mask)
    if arr.ndim != 2:
        raise ValueError(f"{name}: a dense mask must have shape [H, W], got {list(arr.shape)}")
    return encode_dense(arr), int(arr.shape[0]), int(arr.shape[1])


def from_runs(runs: Sequence[tuple[np.ndarray, int, int]]) -> RLEs:
    """:class:`RLEs` from ``(run lengths, height, width)`` triples."""
    if not runs:
        return empty_rles()
    sizes = np.array([len(r[0]) for r in runs], np.int64)
    return RLEs(
        np.concatenate([r[0] for r in runs]).astype(np.int64),
        np.concatenate([[0], np.cumsum(sizes)]),
        np.array([r[1] for r in runs], np.int64),
        np.array([r[2] for r in runs], np.int64),
    )


def to_rles(masks: object, *, where: str = "", size: tuple[int, int] | None = None) -> RLEs:
    """Masks (a dense ``[N, H, W]`` array, or a sequence of dense masks / COCO RLE dicts) as :class:`RLEs`.

    Errors name ``"{where}, mask {i}"``. With ``size`` (``(height, width)`` of the image), every mask must
    have that size.
    """
    if isinstance(masks, dict):
        items: list = [masks]
    elif isinstance(masks, list | tuple):
        items = list(masks)
    else:
        arr = np.asarray(masks)
        if arr.size == 0:
            items = []
        elif arr.ndim != 3:
            raise ValueError(f"masks must be an [N, H, W] array or a list of masks, got shape {list(arr.shape)}")
        else:
            items = [arr[i] for i in range(arr.shape[0])]
    prefix = f"{where}, " if where else ""
    rles = from_runs([mask_runs(m, f"{prefix}mask {i}") for i, m in enumerate(items)])
    if size is not None:
        check_size(rles, size, where=where)
    return rles


def check_size(rles: RLEs, size: tuple[int, int], *, where: str = "") -> None:
    """ValueError naming the first mask whose ``(height, width)`` differs from the image's ``size``."""
    bad = (rles.heights != size[0]) | (rles.widths != size[1])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{where + ', ' if where else ''}mask {i} has size {int(rles.heights[i])}x{int(rles.widths[i])} "
            f"(height x width), but its image is {size[0]}x{size[1]}"
        )


class _Intervals:
    """Foreground intervals of a set of masks on one global axis (mask ``m`` shifted by ``base[m]``)."""

    def __init__(self, rles: RLEs) -> None:
        n = len(rles)
        owner = rles._owner()
        local = rles._local()
        end = np.cumsum(rles.counts)
        end = end - np.repeat(np.concatenate([[0], end])[rles.offsets[:-1]], np.diff(rles.offsets))
        fg = (local % 2 == 1) & (rles.counts > 0)
        self.base = np.concatenate([[0], np.cumsum(rles.heights * rles.widths + 1)])[:n]
        own = owner[fg]
        self.start = end[fg] - rles.counts[fg] + self.base[own]
        self.end = end[fg] + self.base[own]
        length = self.end - self.start
        self.count = np.bincount(own, minlength=n)
        self.first = np.concatenate([[0], np.cumsum(self.count)])[:n]
        before = np.cumsum(length) - length
        self.prefix = before - np.repeat(before[self.first[self.count > 0]], self.count[self.count > 0])

    def covered_before(self, mask: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Foreground pixels of ``mask[i]`` at global positions below ``x[i]``."""
        if len(self.start) == 0:
            return np.zeros(len(x), np.int64)
        i = np.searchsorted(self.start, x, side="right") - 1
        ok = i >= self.first[mask]
        i = np.where(ok, i, 0)
        return np.where(ok, self.prefix[i] + np.minimum(x, self.end[i]) - self.start[i], 0)


def mask_iou_pairs(dt: RLEs, dt_index: np.ndarray, gt: RLEs, gt_index: np.ndarray, gt_crowd: np.ndarray) -> np.ndarray:
    """IoU of masks ``dt[dt_index[p]]`` and ``gt[gt_index[p]]`` for every pair ``p`` (crowd: over the dt's area)."""
    n_pairs = len(dt_index)
    if n_pairs == 0:
        return np.zeros(0, np.float64)
    same = (dt.heights[dt_index] == gt.heights[gt_index]) & (dt.widths[dt_index] == gt.widths[gt_index])
    if not same.all():
        p = int(np.flatnonzero(~same)[0])
        raise ValueError(
            f"masks of different sizes cannot be compared: detection mask {int(dt_index[p])} is "
            f"{int(dt.heights[dt_index[p]])}x{int(dt.widths[dt_index[p]])}, ground-truth mask {int(gt_index[p])} is "
            f"{int(gt.heights[gt_index[p]])}x{int(gt.widths[gt_index[p]])}"
        )
    both = _Intervals(RLEs.concat([dt, gt]))
    a = np.asarray(dt_index, np.int64)
    b = np.asarray(gt_index, np.int64) + len(dt)
    # query the intervals of the mask with fewer runs against the other one
    swap = both.count[a] > both.count[b]
    query, ref = np.where(swap, b, a), np.where(swap, a, b)
    n_q = both.count[query]
    pair = np.repeat(np.arange(n_pairs), n_q)
    j = both.first[query][pair] + (np.arange(len(pair)) - np.repeat(np.cumsum(n_q) - n_q, n_q))
    r = ref[pair]
    shift = both.base[r] - both.base[query][pair]
    part = both.covered_before(r, both.end[j] + shift) - both.covered_before(r, both.start[j] + shift)
    inter = np.bincount(pair, weights=part, minlength=n_pairs)
    area = np.concatenate([dt.area(), gt.area()])
    da, ga = area[a].astype(np.float64), area[b].astype(np.float64)
    union = np.where(gt_crowd, da, da + ga - inter)
    out = np.zeros(n_pairs, np.float64)
    np.divide(inter, union, out=out, where=inter > 0)
    return out

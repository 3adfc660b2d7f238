"""COCO's greedy matching (pycocotools ``evaluateImg``) for every image, category, area range and IoU at once.

pycocotools matches one (image, category, area range, IoU threshold) group at a time: detections in
descending score order (stable, so ties keep input order), each taking, among the ground truths still
free (a crowd region is never used up), the one with the highest IoU >= ``min(t, 1 - 1e-10)``; a
ground truth inside the area range always beats an ignored one (crowd or outside the range), and among
equal IoUs the later ground truth in input order wins. That is a lexicographic maximum of
``(not ignored, IoU, position)``.

The only sequential part is "still free". Here the groups advance together: step ``s`` takes the
``s``-th detection (among those with any candidate) of every (image, category) group, and decides its
match for all area ranges and thresholds in one vectorized reduction over its candidate pairs. Pairs
below the lowest threshold are dropped first, so the work is proportional to the overlapping pairs,
times ``A * T``; the number of steps is the largest number of competing detections in one group.

For bbox, the optional C extension (``_coco_match``, see :mod:`.native`) runs the same greedy one group at a
time (IoUs included, in ``box_iou_pairs``' arithmetic): the same matches, without the candidate pairs' arrays
and the step loop's fancy indexing. The numpy form is the fallback and what segm runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from olive_eval.metrics.detection import native
from olive_eval.metrics.detection.boxes import box_iou_pairs
from olive_eval.metrics.detection.inputs import DetectionSet
from olive_eval.metrics.detection.masks import mask_iou_pairs


@dataclass(frozen=True)
class CocoMatches:
    """Kept detections (at most ``max_det`` per image and category) and their matches, sparse."""

    det: np.ndarray  # [N] index into data.dt_*, ordered by (image, category, score desc, input order)
    det_rank: np.ndarray  # [N] rank within its (image, category)
    det_category: np.ndarray  # [N]
    det_score: np.ndarray  # [N]
    det_out_of_range: np.ndarray  # [N, A] bool: detection area outside area range a
    match_det: np.ndarray  # [P] index into the kept detections
    match_area: np.ndarray  # [P] area-range index
    match_iou: np.ndarray  # [P] IoU-threshold index
    match_gt: np.ndarray  # [P] index into data.gt_*
    gt_ignore: np.ndarray  # [G, A] bool: crowd, or area outside range a
    gt_unmatchable: np.ndarray  # [G] bool (pycocotools' annotation-id-0 quirk)
    npig: np.ndarray  # [K, A] ground truths that count (not ignored) per category and area range


def group_pairs(det_keys: np.ndarray, gt_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (detection, ground truth) pairs with equal keys: detection index, ground-truth index, and the
    ground truth's position in the key-sorted (stable) order, which preserves input order within a key."""
    g_order = np.argsort(gt_keys, kind="stable")
    sorted_keys = gt_keys[g_order]
    lo = np.searchsorted(sorted_keys, det_keys, side="left")
    cnt = np.searchsorted(sorted_keys, det_keys, side="right") - lo
    pair_det = np.repeat(np.arange(len(det_keys)), cnt)
    pos = lo[pair_det] + (np.arange(len(pair_det)) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    return pair_det, g_order[pos], pos


def pair_iou(data: DetectionSet, iou_type: str, det: np.ndarray, gt: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """IoU of detection ``det[p]`` with ground truth ``gt[p]`` (crowd: over the detection's area)."""
    if iou_type == "bbox":
        return box_iou_pairs(data.dt_boxes[det], data.gt_boxes[gt], crowd)
    if iou_type == "polygon":
        raise ValueError(
            "iou_type 'polygon' is valor's exact polygon IoU; for convention 'coco' rasterize to masks (segm)"
        )
    return mask_iou_pairs(data.dt_masks, det, data.gt_masks, gt, crowd)


def _starts(keys: np.ndarray) -> np.ndarray:
    """Indices where a run of equal keys begins."""
    return np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]])) if len(keys) else np.zeros(0, np.int64)


def match_coco(
    data: DetectionSet,
    *,
    iou_type: str,
    iou_thresholds: np.ndarray,
    max_det: int,
    area_ranges: np.ndarray,
) -> CocoMatches:
    """Match detections to ground truths exactly as ``COCOeval.evaluate`` does, for all groups at once."""
    n_cat = len(data.category_ids)
    n_area = len(area_ranges)
    lo_a, hi_a = area_ranges[:, 0], area_ranges[:, 1]

    # detections: (image, category) groups, score descending, ties in input order; keep the top max_det
    d_key = data.dt_image * n_cat + data.dt_category
    order = group_order(d_key, data.dt_scores, len(data.image_ids) * n_cat)
    keys = d_key[order]
    starts = _starts(keys)
    rank = np.arange(len(keys)) - np.repeat(starts, np.diff(np.append(starts, len(keys))))
    keep = rank < max_det
    det, rank, keys = order[keep], rank[keep], keys[keep]
    det_area = data.dt_area[det]
    out_of_range = (det_area[:, None] < lo_a) | (det_area[:, None] > hi_a)

    gt_area = data.gt_area
    gt_ignore = data.gt_crowd[:, None] | (gt_area[:, None] < lo_a) | (gt_area[:, None] > hi_a)
    npig = np.stack([np.bincount(data.gt_category[~gt_ignore[:, a]], minlength=n_cat) for a in range(n_area)], 1)
    unmatchable = data.gt_unmatchable if data.gt_unmatchable is not None else np.zeros(len(gt_area), bool)

    g_key = data.gt_image * n_cat + data.gt_category
    thr = np.minimum(np.asarray(iou_thresholds, np.float64), 1 - 1e-10)
    extension = native.coco_match_extension
    greedy = _greedy_native if iou_type == "bbox" and extension is not None else _greedy_numpy
    match_det, match_area, match_iou, match_gt = greedy(data, iou_type, det, keys, g_key, thr, ~gt_ignore)

    return CocoMatches(
        det=det,
        det_rank=rank,
        det_category=data.dt_category[det],
        det_score=data.dt_scores[det],
        det_out_of_range=out_of_range,
        match_det=match_det,
        match_area=match_area,
        match_iou=match_iou,
        match_gt=match_gt,
        gt_ignore=gt_ignore,
        gt_unmatchable=unmatchable,
        npig=npig,
    )


def group_order(keys: np.ndarray, scores: np.ndarray, n_keys: int) -> np.ndarray:
    """``np.lexsort((-scores, keys))`` for integer keys in ``[0, n_keys)``: by key, then score descending, ties in
    input order. In C (a counting sort by key) where the extension is built and the keys' range is not much
    wider than their number; else numpy (a key of 16 bits is radix-sorted after a stable sort by score)."""
    extension = native.coco_match_extension
    if extension is not None and n_keys <= 8 * len(keys) + 4096:
        keys64 = np.ascontiguousarray(keys, np.int64)
        return np.frombuffer(extension.group_order(keys64, np.ascontiguousarray(scores, np.float64), n_keys), np.int64)
    if n_keys >= 2**15:
        return np.lexsort((-scores, keys))
    by_score = np.argsort(-scores, kind="stable")
    return by_score[np.argsort(keys[by_score].astype(np.int16), kind="stable")]


Matches = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # kept detection, area range, IoU threshold, gt


def _greedy_native(
    data: DetectionSet,
    iou_type: str,
    det: np.ndarray,
    keys: np.ndarray,
    g_key: np.ndarray,
    thr: np.ndarray,
    keep_gt: np.ndarray,
) -> Matches:
    """The C form (``_coco_match.greedy``, bbox only): one (image, category) group after another, each detection
    in score order against its group's ground truths, in the order :func:`_greedy_numpy` encodes."""
    first = _starts(keys)
    g_order = np.argsort(g_key, kind="stable")
    sorted_keys = g_key[g_order]
    group_keys = keys[first]
    lo = np.searchsorted(sorted_keys, group_keys, side="left")
    hi = np.searchsorted(sorted_keys, group_keys, side="right")
    out = native.coco_match_extension.greedy(  # type: ignore[union-attr]
        np.ascontiguousarray(data.dt_boxes[det], np.float64),
        np.append(first, len(keys)).astype(np.int64),
        lo.astype(np.int64),
        hi.astype(np.int64),
        np.ascontiguousarray(data.gt_boxes[g_order], np.float64),
        np.ascontiguousarray(data.gt_crowd[g_order], np.uint8),
        np.ascontiguousarray(keep_gt[g_order], np.uint8),
        np.ascontiguousarray(thr, np.float64),
        keep_gt.shape[1],
    )
    d, a, t, g = (np.frombuffer(x, np.int64) for x in out)
    return d, a, t, g_order[g]


def _greedy_numpy(
    data: DetectionSet,
    iou_type: str,
    det: np.ndarray,
    keys: np.ndarray,
    g_key: np.ndarray,
    thr: np.ndarray,
    keep_gt: np.ndarray,
) -> Matches:
    """Every group at once: step ``s`` decides the ``s``-th candidate detection of every group (module docstring)."""
    n_area, n_thr = keep_gt.shape[1], len(thr)
    # candidate pairs: same image and category, IoU at or above the lowest threshold
    p_det, p_gt, p_pos = group_pairs(keys, g_key)
    crowd = data.gt_crowd[p_gt]
    iou = pair_iou(data, iou_type, det[p_det], p_gt, crowd)
    cand = iou >= thr.min() if n_thr else np.zeros(len(iou), bool)
    p_det, p_gt, p_pos, iou = p_det[cand], p_gt[cand], p_pos[cand], iou[cand]

    # step = rank of the detection among the candidate detections of its group
    cand_det = np.unique(p_det)
    first = _starts(keys[cand_det])
    step_of = np.empty(len(det), np.int64)
    step_of[cand_det] = np.arange(len(cand_det)) - np.repeat(first, np.diff(np.append(first, len(cand_det))))
    step = step_of[p_det]
    o = np.lexsort((p_pos, iou, p_det, step))
    p_det, p_gt, iou, step = p_det[o], p_gt[o], iou[o], step[o]
    block = _starts(p_det)
    sizes = np.diff(np.append(block, len(p_det)))
    within = np.arange(len(p_det)) - np.repeat(block, sizes)  # ascending (IoU, position) inside a detection
    width = int(sizes.max()) + 1 if len(sizes) else 1
    bounds = np.searchsorted(step, np.arange((int(step.max()) + 2) if len(step) else 1))

    matched = np.zeros((len(keep_gt), n_area, n_thr), bool)
    crowd_all = data.gt_crowd
    out: list[tuple[np.ndarray, ...]] = []
    for s in range(len(bounds) - 1):
        a, b = bounds[s], bounds[s + 1]
        g = p_gt[a:b]
        eligible = ~matched[g]
        eligible |= crowd_all[g][:, None, None]
        eligible &= (iou[a:b, None] >= thr)[:, None, :]
        key = np.where(eligible, (keep_gt[g] * width)[:, :, None] + within[a:b, None, None], -1)
        heads = _starts(p_det[a:b])
        best = np.maximum.reduceat(key, heads, axis=0)
        win = eligible & (key == np.repeat(best, np.diff(np.append(heads, b - a)), axis=0))
        pi, ai, ti = np.nonzero(win)
        matched[g[pi], ai, ti] = True
        out.append((p_det[a:b][pi], ai, ti, g[pi]))

    def cat(i: int) -> np.ndarray:
        return np.concatenate([x[i] for x in out]).astype(np.int64) if out else np.zeros(0, np.int64)

    return cat(0), cat(1), cat(2), cat(3)

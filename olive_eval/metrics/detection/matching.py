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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    n_area, n_thr = len(area_ranges), len(iou_thresholds)
    lo_a, hi_a = area_ranges[:, 0], area_ranges[:, 1]

    # detections: (image, category) groups, score descending, ties in input order; keep the top max_det
    d_key = data.dt_image * n_cat + data.dt_category
    order = np.lexsort((-data.dt_scores, d_key))
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

    # candidate pairs: same image and category, IoU at or above the lowest threshold
    g_key = data.gt_image * n_cat + data.gt_category
    p_det, p_gt, p_pos = group_pairs(keys, g_key)
    crowd = data.gt_crowd[p_gt]
    iou = pair_iou(data, iou_type, det[p_det], p_gt, crowd)
    thr = np.minimum(np.asarray(iou_thresholds, np.float64), 1 - 1e-10)
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

    matched = np.zeros((len(gt_area), n_area, n_thr), bool)
    crowd_all = data.gt_crowd
    keep_gt = ~gt_ignore
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

    return CocoMatches(
        det=det,
        det_rank=rank,
        det_category=data.dt_category[det],
        det_score=data.dt_scores[det],
        det_out_of_range=out_of_range,
        match_det=cat(0),
        match_area=cat(1),
        match_iou=cat(2),
        match_gt=cat(3),
        gt_ignore=gt_ignore,
        gt_unmatchable=unmatchable,
        npig=npig,
    )

"""``convention="valor"``: valor-lite's object-detection metrics (``Evaluator.compute_precision_recall``).

Where it differs from COCO (see the peer study, section 2.2):

* no ``maxDets`` cap, no area ranges, no crowd or ignore handling (a crowd box is an ordinary box);
* every prediction is first tied to its single best ground truth of the same label (highest IoU >= 1e-9,
  the first one on equal IoUs); predictions are ranked by score, then that IoU, then input order; a
  ground truth is credited, at IoU threshold ``t``, to the first ranked prediction tied to it whose IoU
  reaches ``t``. A prediction whose best ground truth was taken does not fall back to another one;
* precision at each true positive is ``tp / rank`` within the label, recall ``tp / #gt``; recall is
  binned by ``floor(100 * recall)``, the best precision of each bin is carried right to left, and AP is
  the sum over the 101 bins / 101;
* mAP averages over **every label seen**, predictions-only labels included (their AP is 0), where COCO
  leaves labels without ground truth out; precision, recall and F1 are 0 where undefined;
* predictions with score <= 1e-9 are neither true nor false positives;
* with text labels grouped by label key (:mod:`.labels`), annotations of different keys never meet, as if
  valor-lite were run on each key's annotations alone.

Boxes are compared with valor's IoU arithmetic on ``[x1, x2, y1, y2]`` (``x2 = x + w`` of the internal
``xywh``); masks with the plain intersection over union.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from olive_eval.metrics.detection.boxes import check_scores
from olive_eval.metrics.detection.inputs import DetectionSet
from olive_eval.metrics.detection.labels import key_index
from olive_eval.metrics.detection.masks import mask_iou_pairs
from olive_eval.metrics.detection.matching import group_pairs
from olive_eval.metrics.detection.polygons import polygon_iou_pairs

EPSILON = 1e-9
N_BINS = 101


def valor_box_iou_pairs(dt: np.ndarray, gt: np.ndarray, dt_index: np.ndarray, gt_index: np.ndarray) -> np.ndarray:
    """valor-lite's ``compute_bbox_iou`` for pairs of xywh boxes: corners ``x + w``, IoU 0 when the union is
    below 1e-9. Only overlapping pairs are computed (the rest are 0, as valor's ``max(0, ...)`` gives)."""
    dx1, dy1, gx1, gy1 = dt[:, 0], dt[:, 1], gt[:, 0], gt[:, 1]
    dx2, dy2, gx2, gy2 = dx1 + dt[:, 2], dy1 + dt[:, 3], gx1 + gt[:, 2], gy1 + gt[:, 3]
    d_area, g_area = (dx2 - dx1) * (dy2 - dy1), (gx2 - gx1) * (gy2 - gy1)
    out = np.zeros(len(dt_index), np.float64)
    iw = np.minimum(gx2[gt_index], dx2[dt_index]) - np.maximum(gx1[gt_index], dx1[dt_index])
    p = np.flatnonzero(iw > 0)
    d, g = dt_index[p], gt_index[p]
    ih = np.minimum(gy2[g], dy2[d]) - np.maximum(gy1[g], dy1[d])
    keep = ih > 0
    p, d, g, inter = p[keep], d[keep], g[keep], iw[p[keep]] * ih[keep]
    union = g_area[g] + d_area[d] - inter
    out[p] = np.divide(inter, union, out=np.zeros(len(p)), where=union >= EPSILON)
    return out


def same_key(data: DetectionSet, p_det: np.ndarray, p_gt: np.ndarray) -> np.ndarray | bool:
    """Whether each (prediction, ground truth) pair has one label key: annotations of other keys never meet."""
    if not data.category_names:
        return True
    keys, _ = key_index(data.category_ids, data.category_names)
    return keys[data.dt_category[p_det]] == keys[data.gt_category[p_gt]]


def _first_of_runs(keys: np.ndarray) -> np.ndarray:
    return np.concatenate([[True], keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, bool)


@dataclass(frozen=True)
class ValorMatches:
    """Each prediction's score, the IoU that ranks it among equal scores, and whether it is a true positive
    at each IoU threshold. A prediction only competes with those of its own image, so this is per image."""

    scores: np.ndarray  # [D]
    rank_iou: np.ndarray  # [D]
    tp: np.ndarray  # [T, D] bool


def ranking(scores: np.ndarray, rank_iou: np.ndarray) -> np.ndarray:
    """valor's order: score, then IoU, descending; then input order (images in evaluation order)."""
    return np.lexsort((np.arange(len(scores)), -rank_iou, -scores))


def match_valor(
    data: DetectionSet,
    *,
    iou_type: str = "bbox",
    iou_thresholds: Sequence[float] = (0.5, 0.75),
    score_thresholds: Sequence[float] = (0.5,),
) -> ValorMatches:
    """Every prediction tied to its best ground truth, and credited where it is the first ranked one tied to it."""
    data.require(iou_type)
    ious_t = np.asarray(iou_thresholds, np.float64).reshape(-1)
    if not len(ious_t) or not len(np.asarray(score_thresholds).reshape(-1)):
        raise ValueError("valor needs at least one IoU threshold and one score threshold")
    scores = check_scores(
        data.dt_scores,
        score_thresholds=score_thresholds,
        name=lambda i: f"detection {i} (image {int(data.image_ids[data.dt_image[i]])})",
    )
    n_det = len(scores)
    g_lab, d_lab = data.gt_category, data.dt_category

    # every overlapping (prediction, ground truth) pair of an image, any labels
    p_det, p_gt, p_pos = group_pairs(data.dt_image, data.gt_image)
    if iou_type == "bbox":
        iou = valor_box_iou_pairs(data.dt_boxes, data.gt_boxes, p_det, p_gt)
    elif iou_type == "polygon":  # exact areas, as valor-lite's shapely intersection / union
        iou = polygon_iou_pairs(data.dt_polygons, p_det, data.gt_polygons, p_gt)
    else:
        iou = mask_iou_pairs(data.dt_masks, p_det, data.gt_masks, p_gt, np.zeros(len(p_det), bool))
    keep = (iou >= EPSILON) & same_key(data, p_det, p_gt)
    p_det, p_gt, p_pos, iou = p_det[keep], p_gt[keep], p_pos[keep], iou[keep]

    # each prediction's best same-label ground truth (first on ties); its ranking IoU falls back to any label
    same = g_lab[p_gt] == d_lab[p_det]
    best_gt = np.full(n_det, -1, np.int64)
    rank_iou = np.zeros(n_det, np.float64)
    np.maximum.at(rank_iou, p_det, iou)
    o = np.lexsort((p_pos[same], -iou[same], p_det[same]))
    sd, sg, si = p_det[same][o], p_gt[same][o], iou[same][o]
    head = _first_of_runs(sd)
    best_gt[sd[head]] = sg[head]
    rank_iou[sd[head]] = si[head]
    best_iou = np.where(best_gt >= 0, rank_iou, 0.0)

    # TP at threshold t: the first ranked prediction tied to a ground truth whose IoU reaches t
    by_image = np.argsort(data.dt_image, kind="stable")
    position = np.empty(n_det, np.int64)
    position[by_image[ranking(scores[by_image], rank_iou[by_image])]] = np.arange(n_det)
    cand = np.flatnonzero((best_gt >= 0) & (scores > EPSILON))
    cand = cand[np.lexsort((position[cand], best_gt[cand]))]
    tp = np.zeros((len(ious_t), n_det), bool)
    for ti, t in enumerate(ious_t):
        c = cand[best_iou[cand] >= t]
        tp[ti, c[_first_of_runs(best_gt[c])]] = True
    return ValorMatches(scores, rank_iou, tp)


def average_precision(
    tp: np.ndarray, ranked: np.ndarray, label: np.ndarray, scores: np.ndarray, n_gt: np.ndarray, n_lab: int
) -> tuple[np.ndarray, np.ndarray]:
    """AP ``[T, L]`` by floor binning of recall onto 101 points, and the binned PR curve ``[T, L, 101, 2]``."""
    n_thr = tp.shape[0]
    by_label = ranked[np.argsort(label[ranked], kind="stable")]  # ranked order within each label
    lab = label[by_label]
    starts = np.flatnonzero(_first_of_runs(lab))
    seen = np.arange(len(lab)) - np.repeat(starts, np.diff(np.append(starts, len(lab)))) + 1
    curve = np.zeros((n_thr, n_lab, N_BINS, 2))
    gts = n_gt[lab].astype(np.float64)
    for ti in range(n_thr):
        hit = tp[ti, by_label]
        running = np.cumsum(hit)
        running = running - np.repeat(running[starts] - hit[starts], np.diff(np.append(starts, len(lab))))
        running = np.where(hit, running, 0)
        precision = running / seen
        recall = np.zeros(len(lab))
        np.divide(running, gts, out=recall, where=gts > 0)
        bins = lab * N_BINS + np.floor(recall * 100).astype(np.int64)
        best_p, best_s = np.zeros(n_lab * N_BINS), np.zeros(n_lab * N_BINS)
        np.maximum.at(best_p, bins, precision)
        np.maximum.at(best_s, bins, scores[by_label])
        curve[ti, :, :, 0] = best_p.reshape(n_lab, N_BINS)
        curve[ti, :, :, 1] = best_s.reshape(n_lab, N_BINS)
    ap = np.zeros((n_thr, n_lab))
    run_p, run_s = np.zeros((n_thr, n_lab)), np.zeros((n_thr, n_lab))
    for b in range(N_BINS - 1, -1, -1):  # right to left, summed in this order as valor does
        run_p = np.maximum(curve[:, :, b, 0], run_p)
        run_s = np.maximum(curve[:, :, b, 1], run_s)
        curve[:, :, b, 0], curve[:, :, b, 1] = run_p, run_s
        ap += run_p
    return ap / 101.0, curve


def label_counts(
    tp: np.ndarray, scores: np.ndarray, label: np.ndarray, thresholds: np.ndarray, n_lab: int
) -> tuple[np.ndarray, np.ndarray]:
    """TP and FP per (IoU threshold, score threshold, label): predictions scoring at least the threshold."""
    n_thr, n_s = tp.shape[0], len(thresholds)
    scored = scores > EPSILON
    tp_c = np.zeros((n_thr, n_s, n_lab), np.int64)
    fp_c = np.zeros((n_thr, n_s, n_lab), np.int64)
    for si, s in enumerate(thresholds):
        above = scores >= s
        for ti in range(n_thr):
            tp_c[ti, si] = np.bincount(label[tp[ti] & above], minlength=n_lab)
            fp_c[ti, si] = np.bincount(label[scored & ~tp[ti] & above], minlength=n_lab)
    return tp_c, fp_c

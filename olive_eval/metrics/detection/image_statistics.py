"""What one matching keeps per image, for both conventions: the per-example statistics of detection metrics.

Matching (IoUs, the greedy assignment) is the expensive part of an evaluation and depends on one image at a
time; accumulation (precision and recall over all images, ranked by score) is what ties images together.
:func:`coco_statistics` and :func:`valor_statistics` run the matching once and keep, per image, what
accumulation reads (see :mod:`.accumulation`), with category ids rather than indices, so the batches of a
pass, which see different categories, concatenate.

* COCO -- ``dt``: the kept detections (at most the largest ``maxDet`` per image and category) in pycocotools'
  order, with ``category``, ``score``, ``rank`` and ``out_of_range`` ``[A]``; ``hit``: per (detection, area
  range, IoU threshold) that is a true positive or at least no false positive, its local ``det``, ``slice``
  (area range * T + IoU threshold), ``tp`` and ``not_fp``; ``gt``: the ground truths that count in some area range, with ``category``
  and ``counted`` ``[A]``.
* valor -- ``dt``: every prediction in input order, with ``category``, ``score``, ``rank_iou`` and ``tp``
  ``[T]``; ``gt``: every ground truth's ``category``.
"""

from __future__ import annotations

from collections.abc import Sequence

from olive_eval.metrics.detection.coco import CocoParams, outcomes
from olive_eval.metrics.detection.inputs import DetectionSet
from olive_eval.metrics.detection.matching import match_coco
from olive_eval.metrics.detection.per_image import PerImage, Table
from olive_eval.metrics.detection.valor import match_valor


def coco_statistics(data: DetectionSet, iou_type: str, params: CocoParams) -> PerImage:
    """pycocotools' ``evaluate()`` on every image, kept per image (see the module docstring)."""
    data.require(iou_type)
    m = match_coco(
        data,
        iou_type=iou_type,
        iou_thresholds=params.iou_thresholds,
        max_det=params.max_dets[-1],
        area_ranges=params.area_ranges,
    )
    o = outcomes(m, len(params.iou_thresholds))
    n_images, ids = len(data.image_ids), data.category_ids
    dt_image = data.dt_image[m.det]
    dt = Table.of(
        dt_image,
        n_images,
        {"category": ids[o.det_category], "score": o.det_score, "rank": o.det_rank, "out_of_range": o.det_out_of_range},
    )
    hit_image = dt_image[o.hit_det]
    hit_columns = {"slice": o.hit_slice, "tp": o.hit_tp, "not_fp": o.hit_not_fp}
    hit = Table.of(hit_image, n_images, {"det": o.hit_det - dt.offsets[hit_image], **hit_columns})
    counted = ~m.gt_ignore
    keep = counted.any(axis=1)
    gt = Table.of(data.gt_image[keep], n_images, {"category": ids[data.gt_category[keep]], "counted": counted[keep]})
    return PerImage(ids, {"dt": dt, "hit": hit, "gt": gt}, data.category_names)


def valor_statistics(
    data: DetectionSet, iou_type: str, iou_thresholds: Sequence[float], score_thresholds: Sequence[float]
) -> PerImage:
    """valor-lite's matching on every image, kept per image (see the module docstring)."""
    m = match_valor(data, iou_type=iou_type, iou_thresholds=iou_thresholds, score_thresholds=score_thresholds)
    n_images, ids = len(data.image_ids), data.category_ids
    dt = Table.of(
        data.dt_image,
        n_images,
        {"category": ids[data.dt_category], "score": m.scores, "rank_iou": m.rank_iou, "tp": m.tp.T},
    )
    gt = Table.of(data.gt_image, n_images, {"category": ids[data.gt_category]})
    return PerImage(ids, {"dt": dt, "gt": gt}, data.category_names)

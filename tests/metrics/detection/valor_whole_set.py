"""valor-lite's precision/recall family on a whole detection set at once: the reference the tests hold
valor's kernels (:mod:`olive_eval.metrics.detection.valor`) against; the run itself accumulates per-image
statistics (:mod:`olive_eval.metrics.detection.accumulation`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from olive_eval.metrics.detection.inputs import DetectionSet
from olive_eval.metrics.detection.valor import EPSILON, average_precision, label_counts, match_valor, ranking


@dataclass(frozen=True)
class ValorResult:
    labels: np.ndarray  # [L] category ids: every label with a ground truth or a prediction, ascending
    iou_thresholds: np.ndarray  # [T]
    score_thresholds: np.ndarray  # [S]
    ap: np.ndarray  # [T, L]
    map: np.ndarray  # [T]
    ap_averaged_over_ious: np.ndarray  # [L]
    map_averaged_over_ious: float
    ar: np.ndarray  # [S, L]: recall averaged over the IoU thresholds
    mar: np.ndarray  # [S]
    ar_averaged_over_scores: np.ndarray  # [L]
    mar_averaged_over_scores: float
    tp: np.ndarray  # [T, S, L] int64
    fp: np.ndarray  # [T, S, L]
    fn: np.ndarray  # [T, S, L]
    precision: np.ndarray  # [T, S, L]
    recall: np.ndarray  # [T, S, L]
    f1: np.ndarray  # [T, S, L]
    pr_curve: np.ndarray  # [T, L, 101, 2]: best precision and score per recall bin, carried right to left


def evaluate_valor(
    data: DetectionSet,
    *,
    iou_type: str = "bbox",
    iou_thresholds: Sequence[float] = (0.5, 0.75),
    score_thresholds: Sequence[float] = (0.5,),
) -> ValorResult:
    """valor-lite's precision/recall family (AP, mAP, AR, mAR, counts, P/R/F1, PR curves) on flat arrays."""
    m = match_valor(data, iou_type=iou_type, iou_thresholds=iou_thresholds, score_thresholds=score_thresholds)
    ious_t = np.asarray(iou_thresholds, np.float64).reshape(-1)
    scores_t = np.asarray(score_thresholds, np.float64).reshape(-1)
    cats = np.unique(np.concatenate([data.gt_category, data.dt_category]))
    label_of = np.full(len(data.category_ids), -1, np.int64)
    label_of[cats] = np.arange(len(cats))
    n_lab = len(cats)
    d_lab = label_of[data.dt_category]
    n_gt = np.bincount(label_of[data.gt_category], minlength=n_lab)
    by_image = np.argsort(data.dt_image, kind="stable")
    ranked = by_image[ranking(m.scores[by_image], m.rank_iou[by_image])]

    ap, pr_curve = average_precision(m.tp, ranked, d_lab, m.scores, n_gt, n_lab)
    tp_c, fp_c = label_counts(m.tp, m.scores, d_lab, scores_t, n_lab)
    fn_c = n_gt - tp_c
    precision, recall, f1 = (np.zeros(tp_c.shape) for _ in range(3))
    np.divide(tp_c, tp_c + fp_c, where=(tp_c + fp_c) > 0, out=precision)
    np.divide(tp_c, np.broadcast_to(n_gt, tp_c.shape), where=np.broadcast_to(n_gt > 0, tp_c.shape), out=recall)
    np.divide(2 * np.multiply(precision, recall), precision + recall, where=(precision + recall) > EPSILON, out=f1)
    ar = recall.mean(axis=0)
    mar = ar.mean(axis=-1) if n_lab else np.zeros(len(scores_t))  # no labels at all: 0, as valor's mAP
    mean_ap = ap.mean(axis=1) if n_lab else np.zeros(len(ious_t))
    return ValorResult(
        labels=data.category_ids[cats],
        iou_thresholds=ious_t,
        score_thresholds=scores_t,
        ap=ap,
        map=mean_ap,
        ap_averaged_over_ious=ap.mean(axis=0),
        map_averaged_over_ious=float(mean_ap.mean()),
        ar=ar,
        mar=mar,
        ar_averaged_over_scores=ar.mean(axis=0),
        mar_averaged_over_scores=float(mar.mean()),
        tp=tp_c,
        fp=fp_c,
        fn=fn_c,
        precision=precision,
        recall=recall,
        f1=f1,
        pr_curve=pr_curve,
    )

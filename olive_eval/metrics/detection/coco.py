"""``convention="coco"``: pycocotools ``COCOeval`` (bbox and segm), exact, from one matching per pass.

:func:`evaluate_coco` returns the raw ``precision`` ``[T, R, K, A, M]`` and ``recall`` ``[T, K, A, M]``
arrays equal to ``COCOeval.eval['precision' / 'recall']`` (-1 where a category has no ground truth in an
area range), and a summary under torchmetrics ``MeanAveragePrecision`` names. Every sub-type reads the
same result.

Accumulation, as ``COCOeval.accumulate`` defines it: per category, area range and ``maxDet``, all kept
detections in descending score order (stable: image id, then rank in the image), running TP and FP
counts over the detections that are not ignored, ``precision = tp / (tp + fp + eps)`` made non-increasing
from the right, and read at the first index whose recall reaches each recall threshold (0 past the end).
Only true positives can raise that envelope, so it is computed on them alone: the FP count before each
TP comes from one prefix count per (area range, maxDet); the envelope at the 101 read points is a
segmented ``maximum.reduceat`` over the TPs between consecutive read points followed by a running
maximum from the right over those 101 chunk maxima. Everything is a max, a count or pycocotools' own
division, so the values are bit-identical. The optional C extension (``_coco_accumulate``, see :mod:`.native`)
walks each segment's matches in score order with the same counts, divisions and maxima; this numpy form is
the fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from olive_eval.metrics.detection import native
from olive_eval.metrics.detection.inputs import DetectionSet
from olive_eval.metrics.detection.matching import CocoMatches, group_order, match_coco

AREA_RANGES = ((0.0, 1e5**2), (0.0, 32.0**2), (32.0**2, 96.0**2), (96.0**2, 1e5**2))
AREA_LABELS = ("all", "small", "medium", "large")
MAX_DETS = (1, 10, 100)


def default_iou_thresholds() -> np.ndarray:
    """0.50:0.05:0.95 as pycocotools builds it (``linspace``, so 0.5 and 0.75 compare equal)."""
    return np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)


def default_rec_thresholds() -> np.ndarray:
    return np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)


@dataclass(frozen=True)
class CocoParams:
    iou_thresholds: np.ndarray = field(default_factory=default_iou_thresholds)  # [T]
    rec_thresholds: np.ndarray = field(default_factory=default_rec_thresholds)  # [R]
    max_dets: tuple[int, ...] = MAX_DETS  # [M], ascending
    area_ranges: np.ndarray = field(default_factory=lambda: np.array(AREA_RANGES))  # [A, 2], inclusive
    area_labels: tuple[str, ...] = AREA_LABELS


def coco_params(
    iou_thresholds: Sequence[float] | None = None,
    rec_thresholds: Sequence[float] | None = None,
    max_dets: Sequence[int] = MAX_DETS,
    area_ranges: Sequence[Sequence[float]] | None = None,
    area_labels: Sequence[str] | None = None,
) -> CocoParams:
    """Validated parameters; ``max_dets`` are sorted as ``COCOeval.evaluate`` sorts them."""
    iou = default_iou_thresholds() if iou_thresholds is None else np.asarray(iou_thresholds, np.float64).reshape(-1)
    rec = default_rec_thresholds() if rec_thresholds is None else np.asarray(rec_thresholds, np.float64).reshape(-1)
    ranges = np.array(AREA_RANGES if area_ranges is None else area_ranges, np.float64).reshape(-1, 2)
    labels = tuple(AREA_LABELS if area_labels is None and area_ranges is None else (area_labels or ()))
    dets = tuple(sorted(int(m) for m in max_dets))
    if not len(iou) or ((iou < 0) | (iou > 1)).any():
        raise ValueError(f"iou_thresholds must be a non-empty list of values in [0, 1], got {iou.tolist()}")
    if not len(rec) or ((rec < 0) | (rec > 1)).any() or (np.diff(rec) < 0).any():
        raise ValueError("rec_thresholds must be a non-empty ascending list of values in [0, 1]")
    if not dets or dets[0] < 1:
        raise ValueError(f"max_dets must be positive integers, got {list(max_dets)}")
    if len(labels) != len(ranges):
        raise ValueError(f"{len(ranges)} area ranges but {len(labels)} area labels")
    return CocoParams(iou, rec, dets, ranges, labels)


@dataclass(frozen=True)
class CocoResult:
    precision: np.ndarray  # [T, R, K, A, M], -1 where undefined
    recall: np.ndarray  # [T, K, A, M], -1 where undefined
    category_ids: np.ndarray  # [K]
    params: CocoParams
    summary: dict[str, float | np.ndarray]  # torchmetrics names; NaN where pycocotools says -1
    undefined: dict[str, str]  # summary key (or "map_per_class[<id>]") -> why it is NaN


def evaluate_coco(
    data: DetectionSet,
    *,
    iou_type: str = "bbox",
    iou_thresholds: Sequence[float] | None = None,
    rec_thresholds: Sequence[float] | None = None,
    max_dets: Sequence[int] = MAX_DETS,
    area_ranges: Sequence[Sequence[float]] | None = None,
    area_labels: Sequence[str] | None = None,
) -> CocoResult:
    """``COCOeval(iouType=iou_type)`` ``evaluate()`` + ``accumulate()`` + the summary, on flat arrays."""
    data.require(iou_type)
    params = coco_params(iou_thresholds, rec_thresholds, max_dets, area_ranges, area_labels)
    matches = match_coco(
        data,
        iou_type=iou_type,
        iou_thresholds=params.iou_thresholds,
        max_det=params.max_dets[-1],
        area_ranges=params.area_ranges,
    )
    precision, recall = accumulate(outcomes(matches, len(params.iou_thresholds)), params, len(data.category_ids))
    summary, undefined = summarize(precision, recall, params, data.category_ids)
    return CocoResult(precision, recall, data.category_ids, params, summary, undefined)


def _recall_steps(npig: np.ndarray, rec_thresholds: np.ndarray) -> np.ndarray:
    """``[K, A, R]``: how many of the recalls ``j / npig`` (j = 1..npig) lie below each recall threshold."""
    out = np.zeros((*npig.shape, len(rec_thresholds)), np.int64)
    for n in np.unique(npig[npig > 0]):
        rc = np.arange(1, n + 1, dtype=np.float64) / n
        out[npig == n] = np.searchsorted(rc, rec_thresholds, side="left")
    return out


@dataclass(frozen=True)
class CocoOutcomes:
    """What accumulation reads of a matching: the kept detections, and per (detection, area range, IoU
    threshold) that counts, whether it is a true positive or at least not a false positive (a match to an
    ignored ground truth, or to pycocotools' unmatchable annotation id 0 inside the range)."""

    det_category: np.ndarray  # [N] ordered by (image, category, score desc, input order)
    det_score: np.ndarray  # [N] the scores, or anything in the same order with the same ties
    det_rank: np.ndarray  # [N] rank within its (image, category)
    det_out_of_range: np.ndarray  # [N, A] bool
    hit_det: np.ndarray  # [P] index into the detections
    hit_slice: np.ndarray  # [P] area range * T + IoU threshold
    hit_tp: np.ndarray  # [P] bool
    hit_not_fp: np.ndarray  # [P] bool
    npig: np.ndarray  # [K, A] ground truths that count, per category and area range


def outcomes(m: CocoMatches, n_thr: int) -> CocoOutcomes:
    """The matches (at ``n_thr`` IoU thresholds) as accumulation reads them (pycocotools' ``dtm`` / ``dtIg``)."""
    d, a, t, g = m.match_det, m.match_area, m.match_iou, m.match_gt
    ignored = m.gt_ignore[g, a]
    is_tp = ~ignored & ~m.gt_unmatchable[g]
    not_fp = (ignored | ~m.gt_unmatchable[g]) & ~m.det_out_of_range[d, a]
    useful = is_tp | not_fp
    return CocoOutcomes(
        det_category=m.det_category,
        det_score=m.det_score,
        det_rank=m.det_rank,
        det_out_of_range=m.det_out_of_range,
        hit_det=d[useful],
        hit_slice=(a * n_thr + t)[useful],
        hit_tp=is_tp[useful],
        hit_not_fp=not_fp[useful],
        npig=m.npig,
    )


def accumulate(m: CocoOutcomes, params: CocoParams, n_cat: int) -> tuple[np.ndarray, np.ndarray]:
    """``COCOeval.accumulate``: precision ``[T, R, K, A, M]`` and recall ``[T, K, A, M]`` from the outcomes."""
    n_thr, n_rec, n_area = len(params.iou_thresholds), len(params.rec_thresholds), len(params.area_ranges)
    n_det, n_seg = len(m.det_score), n_area * n_thr * n_cat
    eps = np.spacing(1)

    # one global order: category, then score descending; ties keep (image, rank) order as pycocotools' concat
    if native.coco_accumulate_extension is not None:
        return _accumulate_native(m, params)
    g_order = group_order(m.det_category, m.det_score, n_cat)
    g_pos = np.empty(n_det, np.int64)
    g_pos[g_order] = np.arange(n_det)
    cat_start = np.searchsorted(m.det_category[g_order], np.arange(n_cat))
    in_range_sorted = np.ascontiguousarray(~m.det_out_of_range[g_order].T)  # [A, N]
    rank_sorted = m.det_rank[g_order]

    # matches that are a TP, or matched and not an FP (they are subtracted from the in-range count), in
    # segment order: (area range, IoU threshold, category), then position; a segment is a key range
    key = m.hit_slice * n_det + g_pos[m.hit_det]  # unique: one match per (det, a, t)
    o = _argsort_unique(key, n_area * n_thr * n_det)
    key, is_tp, not_fp = key[o], m.hit_tp[o], m.hit_not_fp[o]
    seg_ids = np.arange(n_seg)
    seg_a, seg_k = seg_ids // (n_thr * n_cat), seg_ids % n_cat
    seg_lo = (seg_ids // n_cat) * n_det + cat_start[seg_k]  # the first key of each segment

    steps = _recall_steps(m.npig, params.rec_thresholds)  # [K, A, R]
    npig_seg = m.npig[seg_k, seg_a]
    precision = np.zeros((n_area, n_thr, n_cat, n_rec, len(params.max_dets)))
    recall = np.zeros((n_area, n_thr, n_cat, len(params.max_dets)))
    for mi, max_det in enumerate(params.max_dets):
        # detections before each position in its category that are in range and within maxDet
        counted = in_range_sorted & (rank_sorted < max_det)
        before = np.zeros((n_area, n_det + 1), np.int64)  # exclusive prefix counts, [A, N + 1]
        np.cumsum(counted, axis=1, out=before[:, 1:])
        before = before.ravel()
        within = n_det == 0 or int(m.det_rank.max()) < max_det
        sel = slice(None) if within else m.det_rank[m.hit_det[o]] < max_det  # views where every match counts
        s_key, s_tp, s_nf = key[sel], is_tp[sel], not_fp[sel]
        bounds = np.searchsorted(s_key, seg_lo)  # [S]: where each segment starts
        tpi = np.flatnonzero(s_tp)
        seg_start = np.searchsorted(tpi, bounds)  # where each segment's TPs start among all TPs
        n_tp = np.diff(np.append(seg_start, len(tpi)))  # [S]
        # at each TP: TPs up to it, and FPs before it = in-range detections before it in its category,
        # less the matches before it in its segment that are no FP
        cum_nf = np.zeros(len(s_key) + 1, np.int64)
        np.cumsum(s_nf, out=cum_nf[1:])
        seg = np.repeat(seg_ids, n_tp)  # each TP's segment
        at = seg_a * (n_det + 1) - (seg_ids // n_cat) * n_det  # [S]: key -> index into `before`
        base = before[seg_a * (n_det + 1) + cat_start[seg_k]] - cum_nf[bounds]  # [S]
        fp = before[at[seg] + s_key[tpi]] - cum_nf[tpi] - base[seg]
        tpf = np.arange(1.0, len(tpi) + 1.0) - seg_start.astype(np.float64)[seg]
        pr = tpf / (fp.astype(np.float64) + tpf + eps)

        read = seg_start[:, None] + np.minimum(steps[seg_k, seg_a], n_tp[:, None])  # [S, R]
        ends = np.concatenate([read, (seg_start + n_tp)[:, None]], axis=1)
        chunk = np.maximum.reduceat(np.append(pr, 0.0), ends.ravel()).reshape(n_seg, n_rec + 1)[:, :n_rec]
        chunk[np.diff(ends, axis=1) == 0] = 0.0
        q = np.maximum.accumulate(chunk[:, ::-1], axis=1)[:, ::-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            rc = n_tp / npig_seg
        precision[..., mi] = q.reshape(n_area, n_thr, n_cat, n_rec)
        recall[..., mi] = rc.reshape(n_area, n_thr, n_cat)

    absent = (m.npig == 0).T[:, None, :]  # [A, 1, K]
    precision[np.broadcast_to(absent[..., None, None], precision.shape)] = -1.0
    recall[np.broadcast_to(absent[..., None], recall.shape)] = -1.0
    return precision.transpose(1, 3, 2, 0, 4).copy(), recall.transpose(1, 2, 0, 3).copy()


def _accumulate_native(m: CocoOutcomes, params: CocoParams) -> tuple[np.ndarray, np.ndarray]:
    """The C form (``_coco_accumulate``): the same global order (a radix sort of the scores there), then each
    segment's matches walked in that order with the same counts, divisions and maxima."""
    n_thr, n_rec, n_area = len(params.iou_thresholds), len(params.rec_thresholds), len(params.area_ranges)

    def flags(x: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(x, bool).view(np.uint8)

    p, r = native.coco_accumulate_extension.accumulate(  # type: ignore[union-attr]
        np.ascontiguousarray(m.det_category, np.int64),
        np.ascontiguousarray(m.det_score, np.float64),
        np.ascontiguousarray(m.det_rank, np.int64),
        flags(m.det_out_of_range),
        np.ascontiguousarray(m.hit_det, np.int64),
        np.ascontiguousarray(m.hit_slice, np.int64),
        flags(m.hit_tp),
        flags(m.hit_not_fp),
        np.ascontiguousarray(m.npig, np.int64),
        np.ascontiguousarray(params.rec_thresholds, np.float64),
        np.asarray(params.max_dets, np.int64),
        n_thr,
        n_area,
    )
    n_cat, n_md = m.npig.shape[0], len(params.max_dets)
    precision = np.frombuffer(p, np.float64).reshape(n_thr, n_rec, n_cat, n_area, n_md)
    return precision, np.frombuffer(r, np.float64).reshape(n_thr, n_cat, n_area, n_md)


def _argsort_unique(keys: np.ndarray, bound: int) -> np.ndarray:
    """``argsort`` of distinct integer keys in ``[0, bound)``: a scatter into ``bound`` slots where that is
    cheaper than a sort (many matches per detection, as in a bootstrap's pooled resamples)."""
    if bound > 8 * len(keys):
        return np.argsort(keys)
    slots = np.full(bound, -1, np.int64)
    slots[keys] = np.arange(len(keys))
    return slots[slots >= 0]


# ------------------------------------------------------------------------------------------------ summary
def _mean_valid(values: np.ndarray) -> float:
    """pycocotools ``_summarize``: the mean over entries > -1, or NaN (pycocotools' -1) if there are none."""
    valid = values[values > -1]
    return float(np.mean(valid)) if valid.size else float("nan")


def summarize(
    precision: np.ndarray, recall: np.ndarray, params: CocoParams, category_ids: np.ndarray
) -> tuple[dict[str, float | np.ndarray], dict[str, str]]:
    """torchmetrics ``MeanAveragePrecision`` keys from the raw arrays, and the reason for every NaN.

    As ``COCOeval.summarize``: AP keys use the largest ``maxDet`` (pycocotools hard-codes 100 for ``map``;
    the two agree with the default ``[1, 10, 100]``), ``mar_<m>`` one key per ``maxDet``.
    """
    summary: dict[str, float | np.ndarray] = {}
    undefined: dict[str, str] = {}
    labels = list(params.area_labels)
    m_last = len(params.max_dets) - 1
    a_all = labels.index("all") if "all" in labels else None

    def put(key: str, values: np.ndarray | None, missing: str, empty: str) -> None:
        if values is None:
            summary[key], undefined[key] = float("nan"), missing
            return
        summary[key] = _mean_valid(values)
        if np.isnan(summary[key]):
            undefined[key] = empty

    def ap(iou: float | None = None, area: str = "all") -> tuple[np.ndarray | None, str]:
        if area not in labels:
            return None, f"area range {area!r} is not among the area labels {labels}"
        s = precision[..., labels.index(area), m_last]
        if iou is not None:
            at = np.where(iou == params.iou_thresholds)[0]
            if not at.size:
                return None, f"IoU threshold {iou} is not among iou_thresholds"
            s = s[at]
        return s, ""

    none_gt = "no category has ground truth {}(pycocotools reports -1)"
    for key, iou, area in (
        ("map", None, "all"),
        ("map_50", 0.5, "all"),
        ("map_75", 0.75, "all"),
        ("map_small", None, "small"),
        ("map_medium", None, "medium"),
        ("map_large", None, "large"),
    ):
        values, why = ap(iou, area)
        put(key, values, why, none_gt.format("" if area == "all" else f"in area range {area!r} "))
    for mi, max_det in enumerate(params.max_dets):
        values = recall[:, :, a_all, mi] if a_all is not None else None
        put(f"mar_{max_det}", values, "area range 'all' is not among the area labels", none_gt.format(""))
    for area in ("small", "medium", "large"):
        values = recall[:, :, labels.index(area), m_last] if area in labels else None
        why = f"area range {area!r} is not among the area labels {labels}"
        put(f"mar_{area}", values, why, none_gt.format(f"in area range {area!r} "))

    n_cat = len(category_ids)
    map_pc, mar_pc = np.full(n_cat, np.nan), np.full(n_cat, np.nan)
    if a_all is not None:
        for k, cid in enumerate(category_ids.tolist()):
            map_pc[k] = _mean_valid(precision[:, :, k, a_all, m_last])
            mar_pc[k] = _mean_valid(recall[:, k, a_all, m_last])
            if np.isnan(map_pc[k]):
                why = f"category {cid} has no ground truth (pycocotools reports -1)"
                undefined[f"map_per_class[{cid}]"] = undefined[f"mar_{params.max_dets[-1]}_per_class[{cid}]"] = why
    summary["map_per_class"] = map_pc
    summary[f"mar_{params.max_dets[-1]}_per_class"] = mar_pc
    summary["classes"] = np.asarray(category_ids, np.int64)
    return summary, undefined

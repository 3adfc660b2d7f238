"""One detection key's value from per-image statistics, for many lists of images at once (bootstrap resamples).

Each row of ``idx`` ``[B, n]`` is a list of images, repeats allowed (an image listed twice is two images,
as if it had a second id). The ``B`` lists are pooled into one evaluation in which list ``b``'s category
``k`` is the virtual category ``b * K + k``: accumulation never mixes categories, so one call of the
ordinary kernel (:func:`.coco.accumulate`, valor's :func:`.valor.average_precision`) accumulates every
list, and the key's mean runs per list. Within a list, images keep the list's order, which is the order
pycocotools and valor break score ties by. The identity list gives the ordinary evaluation.

Only the key's slice is accumulated: one area range and one ``maxDet`` for COCO. Lists are taken in
chunks so that the pooled arrays stay bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from olive_eval.metrics.detection.coco import CocoOutcomes, CocoParams, accumulate
from olive_eval.metrics.detection.per_image import PerImage, Table
from olive_eval.metrics.detection.valor import average_precision, label_counts, ranking

#: Elements of the largest arrays one chunk of pooled lists may build (about 16 MB of float64 each).
_BUDGET = 1 << 21
_AP_IOUS = {"map_50": 0.5, "map_75": 0.75}
_AREAS = ("small", "medium", "large")
Chunk = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class CocoKey:
    """The slice of ``COCOeval``'s arrays a key averages: precision or recall, one area range and maxDet."""

    recall: bool
    area: str = "all"
    iou: float | None = None  # one IoU threshold (map_50, map_75); None: all of them
    max_det: int | None = None  # None: the largest


@dataclass(frozen=True)
class ValorKey:
    recall: bool
    iou_index: int | None = None  # one IoU threshold (map_50, map_75); None: the mean over them


def coco_key(name: str, params: CocoParams) -> CocoKey | str:
    """The key's slice, or why ``params`` have none."""
    if name in _AP_IOUS and not (params.iou_thresholds == _AP_IOUS[name]).any():
        return f"IoU threshold {_AP_IOUS[name]} is not among iou_thresholds {params.iou_thresholds.tolist()}"
    if name in ("map", *_AP_IOUS):
        return CocoKey(False, iou=_AP_IOUS.get(name))
    if name.startswith(("map_", "mar_")) and name[4:] in _AREAS:
        return CocoKey(name.startswith("mar"), area=name[4:])
    if name == "mar":
        return CocoKey(True)
    if name.startswith("mar_") and name[4:].isdigit() and int(name[4:]) in params.max_dets:
        return CocoKey(True, max_det=int(name[4:]))
    return f"max_dets {list(params.max_dets)} has no {name[4:]} ('mar' is the recall at the largest)"


def valor_key(name: str, iou_thresholds: np.ndarray) -> ValorKey | str:
    """The key's slice, or why valor has none."""
    if name == "map":
        return ValorKey(False)
    if name == "mar":
        return ValorKey(True)
    if name in _AP_IOUS:
        at = np.flatnonzero(iou_thresholds == _AP_IOUS[name])
        at = at if at.size else np.flatnonzero(np.isclose(iou_thresholds, _AP_IOUS[name], rtol=0, atol=1e-12))
        if at.size:
            return ValorKey(False, int(at[0]))
        return f"IoU threshold {_AP_IOUS[name]} is not among iou_thresholds {iou_thresholds.tolist()}"
    if name.startswith("map_") or name[4:] in _AREAS:
        return f"convention 'valor' has no area ranges, so no '{name}' (use convention 'coco')"
    return f"convention 'valor' has no maxDets cap, so no '{name}'; 'mar' is valor's mAR"


def _virtual(table: Table, n_cat: int, per_list: int) -> np.ndarray:
    """Each row's category index ``k`` as ``list * K + k``."""
    return table["k"] + table.image_of_rows() // per_list * n_cat


def _k(table: Table, category_ids: np.ndarray) -> np.ndarray:
    return np.searchsorted(category_ids, table["category"])


def _chunked(idx: np.ndarray, per_list: int, run: Chunk) -> tuple[np.ndarray, np.ndarray]:
    """``run`` on chunks of the lists, each chunk within the budget (``per_list`` elements per list)."""
    values, per_class = [], []
    step = max(1, _BUDGET // max(per_list, 1))
    for start in range(0, len(idx), step):
        v, c = run(idx[start : start + step])
        values.append(v)
        per_class.append(c)
    return np.concatenate(values), np.concatenate(per_class)


def _mean_valid(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pycocotools' mean over entries > -1 of ``v`` ``[..., B, K]``: per list ``[B]`` and per class ``[B, K]``."""
    valid = v > -1
    total, count = np.where(valid, v, 0.0).sum(axis=0), valid.sum(axis=0)
    per_class = np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)
    n = count.sum(axis=1)
    return np.divide(total.sum(axis=1), n, out=np.full(len(n), np.nan), where=n > 0), per_class


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Scores replaced by their rank among the distinct scores: the same order and ties, in 16 bits where they
    fit, which numpy sorts by radix (accumulation sorts every pooled chunk by score)."""
    distinct, rank = np.unique(scores, return_inverse=True)
    return rank.astype(np.int16 if len(distinct) < 2**15 else np.int64)


def _area_view(stats: PerImage, params: CocoParams, a: int, ranked: bool) -> PerImage:
    """The statistics of area range ``a`` alone, with category indices: what every pooled list gathers.
    ``ranked``: scores as :func:`_ranks` (for many lists; one list is sorted once, so the raw scores do)."""
    dt, hit, gt = stats.tables["dt"], stats.tables["hit"], stats.tables["gt"]
    n_thr = len(params.iou_thresholds)
    on, counted = hit["slice"] // n_thr == a, gt["counted"][:, a]
    score = _ranks(dt["score"]) if ranked else dt["score"]
    dt_columns = {"score": score, "rank": dt["rank"], "out_of_range": dt["out_of_range"][:, a : a + 1]}
    tables = {
        "dt": Table(dt.offsets, {"k": _k(dt, stats.category_ids), **dt_columns}),
        "hit": hit.where(
            on, {"det": hit["det"], "slice": hit["slice"] % n_thr, "tp": hit["tp"], "not_fp": hit["not_fp"]}
        ),
        "gt": gt.where(counted, {"k": _k(gt, stats.category_ids)}),
    }
    return PerImage(stats.category_ids, tables)


def coco_values(stats: PerImage, params: CocoParams, key: CocoKey, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The key's value on each list of images ``[B]`` (NaN where pycocotools reports -1), and per class ``[B, K]``."""
    a = params.area_labels.index(key.area)
    max_det = params.max_dets[-1] if key.max_det is None else key.max_det
    one = replace(params, area_ranges=params.area_ranges[a : a + 1], area_labels=(key.area,), max_dets=(max_det,))
    n_cat = len(stats.category_ids)
    view = _area_view(stats, params, a, ranked=len(idx) > 1)

    def run(lists: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n_lists, per_list = lists.shape
        whole = n_lists == 1 and per_list == len(view) and (lists[0] == np.arange(per_list)).all()
        pool = view if whole else view[lists.ravel()]  # the identity list: the view itself, not a copy
        dt, hit, gt = pool.tables["dt"], pool.tables["hit"], pool.tables["gt"]
        outcomes = CocoOutcomes(
            det_category=_virtual(dt, n_cat, per_list),
            det_score=dt["score"],
            det_rank=dt["rank"],
            det_out_of_range=dt["out_of_range"],
            hit_det=dt.absolute(hit["det"], hit.image_of_rows()),
            hit_slice=hit["slice"],
            hit_tp=hit["tp"],
            hit_not_fp=hit["not_fp"],
            npig=np.bincount(_virtual(gt, n_cat, per_list), minlength=n_lists * n_cat)[:, None],
        )
        precision, recall = accumulate(outcomes, one, n_lists * n_cat)  # [T, R, B*K, 1, 1], [T, B*K, 1, 1]
        v = recall[..., 0, 0] if key.recall else precision[..., 0, 0]
        if key.iou is not None:
            v = v[params.iou_thresholds == key.iou]
        return _mean_valid(v.reshape(-1, n_lists, n_cat))

    rows = sum(int(t.offsets[-1]) for t in view.tables.values()) * idx.shape[1] // max(len(stats), 1)
    cells = len(params.iou_thresholds) * (len(params.rec_thresholds) + 1) * n_cat
    return _chunked(idx, 4 * max(rows, cells), run)


def valor_values(
    stats: PerImage, key: ValorKey, iou_thresholds: np.ndarray, score_thresholds: np.ndarray, idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """valor's value on each list of images ``[B]``, and per class ``[B, K]`` (NaN for a label the list never
    names: valor averages over the labels seen, where a label with predictions only has AP 0)."""
    n_cat = len(stats.category_ids)
    dt, gt = stats.tables["dt"], stats.tables["gt"]
    view = PerImage(
        stats.category_ids,
        {
            "dt": Table(dt.offsets, {**dt.columns, "k": _k(dt, stats.category_ids)}),
            "gt": Table(gt.offsets, {"k": _k(gt, stats.category_ids)}),
        },
    )

    def run(lists: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n_lists, per_list = lists.shape
        n_lab = n_lists * n_cat
        pool = view[lists.ravel()]
        dt, gt = pool.tables["dt"], pool.tables["gt"]
        label = _virtual(dt, n_cat, per_list)
        n_gt = np.bincount(_virtual(gt, n_cat, per_list), minlength=n_lab)
        seen = ((n_gt > 0) | (np.bincount(label, minlength=n_lab) > 0)).reshape(n_lists, n_cat)
        tp, scores = np.ascontiguousarray(dt["tp"].T), dt["score"]
        if key.recall:
            tp_c, _ = label_counts(tp, scores, label, score_thresholds, n_lab)  # [T, S, L]
            recall = np.zeros(tp_c.shape)
            np.divide(tp_c, n_gt, out=recall, where=np.broadcast_to(n_gt > 0, tp_c.shape))
            per_label = recall.mean(axis=(0, 1))
        else:
            ap, _ = average_precision(tp, ranking(scores, dt["rank_iou"]), label, scores, n_gt, n_lab)  # [T, L]
            per_label = ap.mean(axis=0) if key.iou_index is None else ap[key.iou_index]
        per_class = np.where(seen, per_label.reshape(n_lists, n_cat), np.nan)
        n_seen = seen.sum(axis=1)
        total = np.where(seen, per_class, 0.0).sum(axis=1)
        return np.divide(total, n_seen, out=np.zeros(n_lists), where=n_seen > 0), per_class  # no label: 0, as valor

    rows = int(stats.tables["dt"].offsets[-1]) * idx.shape[1] // max(len(stats), 1)
    cells = len(iou_thresholds) * 2 * 101 * n_cat
    return _chunked(idx, 4 * max(rows, cells), run)

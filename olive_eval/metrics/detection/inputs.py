"""Detection inputs as flat arrays: torchmetrics-style per-image dicts, or COCO JSON (ground truth + results).

Both end in one :class:`DetectionSet`: ``G`` ground truths and ``D`` detections over ``I`` images and
``K`` categories, boxes in float64 ``xywh``, masks as :class:`~.masks.RLEs`. Array order is input order
(pycocotools breaks ties by it). Images are evaluated in ascending id order and categories in ascending
id order, as ``COCOeval`` does.

Areas follow the peers: a ground truth's ``area`` is taken when given and positive (torchmetrics' rule;
COCO files always carry it), otherwise it is the box's ``w * h`` or the mask's pixel count; a detection's
area is its box's ``w * h`` (its mask's pixel count for ``segm`` results without boxes), as
``COCO.loadRes`` computes it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from olive_eval.metrics.detection.boxes import as_xywh, check_scores
from olive_eval.metrics.detection.coco_geometry import coco_boxes, coco_masks
from olive_eval.metrics.detection.flat_boxes import flat_boxes
from olive_eval.metrics.detection.labels import Names, category_indices, parse_labels
from olive_eval.metrics.detection.masks import RLEs, check_size, to_rles
from olive_eval.metrics.detection.polygons import Shape, as_polygon
from olive_eval.metrics.detection.rasterize import polygon_masks

IouType = Literal["bbox", "segm", "polygon"]
IOU_TYPES: tuple[str, ...] = get_args(IouType)
GEOMETRY_KEYS: dict[str, str] = {"bbox": "boxes", "segm": "masks", "polygon": "polygons"}


@dataclass(frozen=True)
class DetectionSet:
    """Flat arrays of one evaluation (indices point into ``image_ids`` / ``category_ids``)."""

    image_ids: np.ndarray  # [I] int64, ascending
    category_ids: np.ndarray  # [K] int64, ascending
    gt_image: np.ndarray  # [G] int64
    gt_category: np.ndarray  # [G] int64
    gt_area: np.ndarray  # [G] float64
    gt_crowd: np.ndarray  # [G] bool
    dt_image: np.ndarray  # [D] int64
    dt_category: np.ndarray  # [D] int64
    dt_scores: np.ndarray  # [D] float64
    dt_area: np.ndarray  # [D] float64
    gt_boxes: np.ndarray | None = None  # [G, 4] float64 xywh
    dt_boxes: np.ndarray | None = None  # [D, 4] float64 xywh
    gt_masks: RLEs | None = None
    dt_masks: RLEs | None = None
    gt_polygons: tuple[Shape, ...] | None = None  # [G] exterior and holes, oriented
    dt_polygons: tuple[Shape, ...] | None = None  # [D]
    # pycocotools stores a match as the ground truth's annotation id, so a match to id 0 reads as "no match"
    gt_unmatchable: np.ndarray | None = None  # [G] bool
    category_names: Names = field(default_factory=dict)  # text labels: id -> (key, value); empty for integers

    def require(self, iou_type: str) -> None:
        if iou_type not in IOU_TYPES:
            raise ValueError(f"iou_type must be one of {IOU_TYPES}, got {iou_type!r}")
        have = {
            "bbox": (self.gt_boxes, self.dt_boxes),
            "segm": (self.gt_masks, self.dt_masks),
            "polygon": (self.gt_polygons, self.dt_polygons),
        }[iou_type]
        if any(x is None for x in have):
            raise ValueError(f"iou_type {iou_type!r} needs {GEOMETRY_KEYS[iou_type]} on both sides")


def _ints(values: object, what: str) -> np.ndarray:
    arr = np.asarray(values).reshape(-1)
    if arr.size == 0:
        return np.zeros(0, np.int64)
    if arr.dtype.kind == "f" and (not np.isfinite(arr).all() or (arr != np.round(arr)).any()):
        raise ValueError(f"{what} must be integers, got {arr[:5].tolist()}")
    if arr.dtype.kind not in "iuf" and arr.dtype != bool:
        raise ValueError(f"{what} must be integers, got {arr.dtype}")
    return arr.astype(np.int64)


def _index_of(ids: np.ndarray, known: np.ndarray, what: str, where: str) -> np.ndarray:
    """Positions of ``ids`` in the sorted ``known``; ValueError listing a few unknown ids."""
    pos = np.searchsorted(known, ids)
    ok = pos < len(known)
    ok[ok] = known[pos[ok]] == ids[ok]
    if not ok.all():
        bad = np.unique(ids[~ok])
        shown = ", ".join(str(int(b)) for b in bad[:5]) + (", ..." if len(bad) > 5 else "")
        raise ValueError(f"{where}: {len(bad)} {what} id(s) not in the ground truth: {shown}")
    return pos.astype(np.int64)


# ------------------------------------------------------------------------------------------ per-image dicts
def from_per_image(
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    *,
    box_format: str = "xyxy",
    iou_type: str = "bbox",
    score_thresholds: float | Sequence[float] | None = None,
    start: int = 0,
) -> DetectionSet:
    """torchmetrics ``MeanAveragePrecision`` inputs: one dict per image, image ``i`` has id ``i``.

    ``predictions[i]``: ``boxes`` ``[n, 4]`` (or ``masks`` ``[n, H, W]`` / RLE dicts for ``segm``, or
    ``polygons`` with the image's ``size`` ``[H, W]``, rasterized; or
    ``polygons`` for ``polygon``: per object a ring ``[[x, y], ...]`` or rings ``[exterior, hole, ...]``), ``scores``, ``labels``;
    ``references[i]``: ``boxes`` (or ``masks`` / ``polygons``), ``labels``, optional ``iscrowd`` and ``area``.
    Categories are every label seen on either side (a label with predictions only evaluates to -1/undefined).
    Errors name image ``start + i`` (in a pass, ``start`` is the batch's first image).
    """
    if iou_type not in IOU_TYPES:
        raise ValueError(f"iou_type must be one of {IOU_TYPES}, got {iou_type!r}")
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} prediction dicts but {len(references)} reference dicts (one per image)")
    geo = GEOMETRY_KEYS[iou_type]
    slot = {"bbox": "b", "segm": "m", "polygon": "p"}[iou_type]
    cols: dict[str, list] = {
        k: [] for k in ("gi", "gl", "ga", "gc", "gb", "gm", "gp", "di", "dl", "ds", "da", "db", "dm", "dp")
    }
    names: Names = {}
    kinds: set[bool] = set()  # text labels seen (True), integer labels seen (False): they must not mix
    flat = None
    if iou_type == "bbox":  # every image's arrays at once (integer labels); None: the loop below reads them
        flat = flat_boxes(predictions, references, box_format=box_format, score_thresholds=score_thresholds)
        cols.update({k: [v] for k, v in (flat or {}).items()})
    pairs = zip(predictions, references, strict=True) if flat is None else ()
    for i, (pred, ref) in enumerate(pairs):
        name = start + i
        for side, item, keys in (
            ("predictions", pred, ("labels", "scores", geo)),
            ("references", ref, ("labels", geo)),
        ):
            missing = [k for k in keys if k not in item and not (k == "masks" and "polygons" in item)]
            if missing:
                raise ValueError(f"image {name} {side}: missing key(s) {missing}")
        d_labels, d_names = parse_labels(pred["labels"], f"image {name} prediction labels")
        g_labels, g_names = parse_labels(ref["labels"], f"image {name} reference labels")
        kinds |= {bool(n) for ids, n in ((g_labels, g_names), (d_labels, d_names)) if len(ids)}
        if len(kinds) > 1:
            raise ValueError(
                f"image {name}: labels are text here and integers elsewhere (or the reverse); they do not mix"
            )
        names.update(g_names | d_names)
        scores = check_scores(pred["scores"], score_thresholds=score_thresholds, where=f"image {name}")
        if iou_type == "bbox":
            d_geo = as_xywh(pred["boxes"], box_format, where=f"image {name} predictions")
            g_geo = as_xywh(ref["boxes"], box_format, where=f"image {name} references")
            d_size, g_size = len(d_geo), len(g_geo)
            g_area_geo = g_geo[:, 2] * g_geo[:, 3]
            d_area = d_geo[:, 2] * d_geo[:, 3]
        elif iou_type == "polygon":
            g_geo = [as_polygon(r, where=f"image {name} reference polygon {j}") for j, r in enumerate(ref["polygons"])]
            d_geo = [as_polygon(r, where=f"image {name} predicted polygon {j}") for j, r in enumerate(pred["polygons"])]
            d_size, g_size = len(d_geo), len(g_geo)
            g_area_geo = np.array([s.area for s in g_geo], np.float64)
            d_area = np.array([s.area for s in d_geo], np.float64)
        else:
            g_geo = _segm_masks(ref, f"image {name} references")
            d_geo = _segm_masks(pred, f"image {name} predictions")
            first = g_geo if len(g_geo) else d_geo
            if len(first):  # the image's size is that of its first mask; every other mask must agree
                size = (int(first.heights[0]), int(first.widths[0]))
                check_size(g_geo, size, where=f"image {name} references")
                check_size(d_geo, size, where=f"image {name} predictions")
            d_size, g_size = len(d_geo), len(g_geo)
            g_area_geo = g_geo.area().astype(np.float64)
            d_area = d_geo.area().astype(np.float64)
        if not len(d_labels) == len(scores) == d_size:
            raise ValueError(
                f"image {name} predictions: {d_size} {geo}, {len(scores)} scores and {len(d_labels)} labels (must be equal)"
            )
        if len(g_labels) != g_size:
            raise ValueError(f"image {name} references: {g_size} {geo} and {len(g_labels)} labels (must be equal)")
        crowd = np.asarray(ref.get("iscrowd", np.zeros(g_size)), dtype=np.float64).reshape(-1)
        area = np.asarray(ref.get("area", np.zeros(g_size)), dtype=np.float64).reshape(-1)
        if len(crowd) != g_size or len(area) != g_size:
            raise ValueError(f"image {name} references: iscrowd/area must have one value per {geo[:-1]}")
        cols["gi"].append(np.full(g_size, i, np.int64))
        cols["gl"].append(g_labels)
        cols["ga"].append(np.where(area > 0, area, g_area_geo))
        cols["gc"].append(crowd != 0)
        cols["g" + slot].append(g_geo)
        cols["di"].append(np.full(d_size, i, np.int64))
        cols["dl"].append(d_labels)
        cols["ds"].append(scores)
        cols["da"].append(d_area)
        cols["d" + slot].append(d_geo)

    def cat(key: str, dtype: type) -> np.ndarray:
        if flat is not None:  # one fresh column each
            return cols[key][0].astype(dtype, copy=False)
        return np.concatenate(cols[key]).astype(dtype) if cols[key] else np.zeros(0, dtype)

    gl, dl = cat("gl", np.int64), cat("dl", np.int64)
    categories, gt_category, dt_category = category_indices(gl, dl)
    boxes = iou_type == "bbox"
    return DetectionSet(
        image_ids=np.arange(len(references), dtype=np.int64),
        category_ids=categories,
        gt_image=cat("gi", np.int64),
        gt_category=gt_category.astype(np.int64, copy=False),
        gt_area=cat("ga", np.float64),
        gt_crowd=cat("gc", bool),
        dt_image=cat("di", np.int64),
        dt_category=dt_category.astype(np.int64, copy=False),
        dt_scores=cat("ds", np.float64),
        dt_area=cat("da", np.float64),
        gt_boxes=_boxes(cols["gb"], flat is not None) if boxes else None,
        dt_boxes=_boxes(cols["db"], flat is not None) if boxes else None,
        gt_masks=RLEs.concat(cols["gm"]) if slot == "m" else None,
        dt_masks=RLEs.concat(cols["dm"]) if slot == "m" else None,
        gt_polygons=tuple(r for rings in cols["gp"] for r in rings) if slot == "p" else None,
        dt_polygons=tuple(r for rings in cols["dp"] for r in rings) if slot == "p" else None,
        category_names=names,
    )


def _boxes(parts: list[np.ndarray], flat: bool) -> np.ndarray:
    if flat:  # flat_boxes' one fresh column
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros((0, 4))


def _segm_masks(item: Mapping[str, Any], where: str) -> RLEs:
    """``masks``, or ``polygons`` rasterized at the dict's ``size`` ``[height, width]`` (:mod:`.rasterize`)."""
    if "masks" in item:
        return to_rles(item["masks"], where=where)
    if "size" not in item:
        raise ValueError(f"{where}: polygons for iou_type 'segm' need 'size' [height, width] to rasterize at")
    return to_rles(polygon_masks(item["polygons"], item["size"], where=where), where=where)


# ---------------------------------------------------------------------------------------------- COCO JSON
def _load(obj: object) -> Any:
    if isinstance(obj, str | os.PathLike):
        with Path(obj).open(encoding="utf-8") as f:
            return json.load(f)
    return obj


def from_coco(
    ground_truth: Mapping[str, Any] | str | os.PathLike,
    detections: Sequence[Mapping[str, Any]] | str | os.PathLike,
    *,
    iou_type: str = "bbox",
    score_thresholds: float | Sequence[float] | None = None,
) -> DetectionSet:
    """A COCO ground-truth dataset and a COCO results list (parsed JSON, or paths to the files).

    Images are those listed in the ground truth, categories its ``categories``. A detection on an image or
    of a category the ground truth does not list is an error (pycocotools asserts on the first, silently
    drops the second). A ``segmentation`` is RLE or COCO polygons (:mod:`.coco_geometry`).
    """
    if iou_type not in ("bbox", "segm"):
        raise ValueError(f"COCO JSON input takes iou_type 'bbox' or 'segm', got {iou_type!r}")
    gt = _load(ground_truth)
    dets = _load(detections)
    if not isinstance(gt, Mapping) or "images" not in gt or "annotations" not in gt or "categories" not in gt:
        raise ValueError("the ground truth must be a COCO dataset with 'images', 'annotations' and 'categories'")
    if not isinstance(dets, Sequence) or isinstance(dets, str | bytes):
        raise ValueError("the detections must be a COCO results list (one dict per detection)")
    images = gt["images"]
    image_ids = np.sort(_ints(_field(images, "id", "image"), "image ids"))
    if len(np.unique(image_ids)) != len(image_ids):
        raise ValueError("the ground truth lists an image id twice")
    sizes = {int(im["id"]): (int(im["height"]), int(im["width"])) for im in images if "height" in im and "width" in im}
    category_ids = np.unique(_ints(_field(gt["categories"], "id", "category"), "category ids"))

    anns = gt["annotations"]
    g_ann_ids = _ints(_field(anns, "id", "ground-truth annotation"), "annotation ids")
    if len(np.unique(g_ann_ids)) != len(g_ann_ids):
        raise ValueError("the ground truth uses an annotation id twice (pycocotools would silently keep one)")
    g_img = _ints(_field(anns, "image_id", "ground-truth annotation"), "image ids")
    g_img = _index_of(g_img, image_ids, "image", "ground truth")
    g_cat = _ints(_field(anns, "category_id", "ground-truth annotation"), "category ids")
    g_cat = _index_of(g_cat, category_ids, "category", "ground truth")
    g_crowd = np.array([bool(a.get("iscrowd", 0)) for a in anns], bool)
    d_img = _index_of(_ints(_field(dets, "image_id", "detection"), "image ids"), image_ids, "image", "detections")
    d_cat = _ints(_field(dets, "category_id", "detection"), "category ids")
    d_cat = _index_of(d_cat, category_ids, "category", "detections")
    d_scores = check_scores(
        _field(dets, "score", "detection"),
        score_thresholds=score_thresholds,
        name=lambda i: f"image {int(image_ids[d_img[i]])}, detection {i}",
    )

    g_boxes = d_boxes = g_masks = d_masks = None
    if iou_type == "bbox" or (dets and dets[0].get("bbox")):
        d_boxes = coco_boxes(dets, d_img, image_ids, "detection")
    if iou_type == "bbox":
        g_boxes = coco_boxes(anns, g_img, image_ids, "ground-truth annotation")
        g_geo_area = g_boxes[:, 2] * g_boxes[:, 3]
    else:
        g_masks = coco_masks(anns, g_img, image_ids, sizes, "ground-truth annotation")
        d_masks = coco_masks(dets, d_img, image_ids, sizes, "detection")
        g_geo_area = g_masks.area().astype(np.float64)
    # COCO.loadRes: area of a result is w*h when the results carry boxes, else the mask's pixel count
    d_area = d_boxes[:, 2] * d_boxes[:, 3] if d_boxes is not None else d_masks.area().astype(np.float64)
    g_area = np.array([float(a.get("area", 0.0)) for a in anns], np.float64)
    if iou_type == "segm":
        d_boxes = None
    return DetectionSet(
        image_ids=image_ids,
        category_ids=category_ids,
        gt_image=g_img,
        gt_category=g_cat,
        gt_area=np.where(np.array(["area" in a for a in anns], bool), g_area, g_geo_area) if anns else g_area,
        gt_crowd=g_crowd,
        dt_image=d_img,
        dt_category=d_cat,
        dt_scores=d_scores,
        dt_area=np.asarray(d_area, np.float64),
        gt_boxes=g_boxes,
        dt_boxes=d_boxes,
        gt_masks=g_masks,
        dt_masks=d_masks,
        gt_unmatchable=g_ann_ids == 0,
    )


def _field(items: Sequence[Mapping[str, Any]], key: str, what: str) -> list[Any]:
    """``item[key]`` of every item; ValueError naming the first item without it."""
    try:
        return [item[key] for item in items]
    except (KeyError, TypeError):
        i = next(i for i, item in enumerate(items) if not isinstance(item, Mapping) or key not in item)
        raise ValueError(f"{what} {i} has no {key!r}") from None

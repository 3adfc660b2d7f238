"""Boxes: conversion to COCO's ``[x, y, w, h]``, validation, scores, and IoU with pycocotools' crowd rule.

The one internal form is ``xywh`` in float64, the form pycocotools computes on, so that IoUs (and the
greedy matching that compares them) are bit-identical to ``pycocotools.mask.iou``: the far corner is
``x + w``, the intersection ``min(x2) - max(x1)`` per axis, and the union ``(area_dt + area_gt) - inter``,
or the detection's own area when the ground truth is a crowd region.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, get_args

import numpy as np

BoxFormat = Literal["xyxy", "xywh"]
BOX_FORMATS: tuple[str, ...] = get_args(BoxFormat)


def as_xywh(boxes: object, box_format: str = "xyxy", *, where: str = "") -> np.ndarray:
    """Boxes ``[N, 4]`` in ``box_format`` as float64 ``xywh``; ValueError naming ``where`` and the box."""
    if box_format not in BOX_FORMATS:
        raise ValueError(f"box_format must be one of {BOX_FORMATS}, got {box_format!r}")
    arr = np.asarray(boxes, dtype=np.float64)
    if arr.size == 0:
        return np.zeros((0, 4), np.float64)
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise ValueError(f"{where or 'boxes'}: boxes must have shape [N, 4], got {list(arr.shape)}")
    check_boxes(arr, box_format=box_format, where=where)
    if box_format == "xyxy":
        arr = np.stack([arr[:, 0], arr[:, 1], arr[:, 2] - arr[:, 0], arr[:, 3] - arr[:, 1]], axis=1)
    return arr


def check_boxes(
    boxes: np.ndarray, *, box_format: str = "xywh", where: str = "", name: Callable[[int], str] | None = None
) -> None:
    """ValueError for the first box with a non-finite coordinate or with x2 < x1 / y2 < y1.

    ``boxes`` are in ``box_format`` (for ``xywh``, a negative width is x2 < x1). ``name(i)`` (when given)
    names box ``i`` in the message, e.g. ``"image 7, detection 3"``; otherwise it says ``"{where}, box {i}"``.
    """
    if boxes.size == 0:
        return
    finite = np.isfinite(boxes).all(axis=1)
    if box_format == "xyxy":
        bad_x, bad_y = boxes[:, 2] < boxes[:, 0], boxes[:, 3] < boxes[:, 1]
    else:
        bad_x, bad_y = boxes[:, 2] < 0, boxes[:, 3] < 0
    bad = ~finite | bad_x | bad_y
    if not bad.any():
        return
    i = int(np.flatnonzero(bad)[0])
    label = name(i) if name else f"{where + ', ' if where else ''}box {i}"
    a, b, c, d = (float(v) for v in boxes[i])
    if not finite[i]:
        problem = "has a non-finite coordinate"
    elif box_format == "xyxy":
        problem = f"has x2 < x1 (x1={a:g}, x2={c:g})" if bad_x[i] else f"has y2 < y1 (y1={b:g}, y2={d:g})"
    else:
        problem = f"has a negative width {c:g} (x2 < x1)" if bad_x[i] else f"has a negative height {d:g} (y2 < y1)"
    shape = "[x1, y1, x2, y2]" if box_format == "xyxy" else "[x, y, w, h]"
    raise ValueError(f"{label} {problem}; boxes must be {shape} ({box_format})")


def check_scores(
    scores: object,
    *,
    score_thresholds: float | Sequence[float] | None = None,
    where: str = "",
    name: Callable[[int], str] | None = None,
) -> np.ndarray:
    """Scores as float64 ``[N]``: NaN is always an error; outside [0, 1] only when a score threshold is given.

    Without a threshold, any finite (or infinite) score only orders detections, as in pycocotools; with one,
    a score outside [0, 1] would make the threshold meaningless, so it is refused. ``name(i)`` names detection
    ``i`` in the message.
    """
    arr = np.asarray(scores, dtype=np.float64).reshape(-1)
    nan = np.isnan(arr)
    if nan.any():
        i = int(np.flatnonzero(nan)[0])
        label = name(i) if name else f"{where + ', ' if where else ''}detection {i}"
        raise ValueError(f"{label} has a NaN score")
    if score_thresholds is not None and arr.size:
        out = (arr < 0.0) | (arr > 1.0)
        if out.any():
            i = int(np.flatnonzero(out)[0])
            label = name(i) if name else f"{where + ', ' if where else ''}detection {i}"
            raise ValueError(
                f"{label} has score {float(arr[i])!r} outside [0, 1], but score thresholds {score_thresholds!r} are given; "
                "pass probabilities (e.g. a sigmoid of the logits)"
            )
    return arr


def box_iou_pairs(dt: np.ndarray, gt: np.ndarray, gt_crowd: np.ndarray) -> np.ndarray:
    """IoU of detection ``dt[i]`` with ground truth ``gt[i]`` (both ``[P, 4]`` xywh), pycocotools' arithmetic.

    For a crowd ground truth the denominator is the detection's area (the part of the detection inside
    the crowd region counts), otherwise the union.
    """
    w = np.minimum(dt[:, 2] + dt[:, 0], gt[:, 2] + gt[:, 0]) - np.maximum(dt[:, 0], gt[:, 0])
    h = np.minimum(dt[:, 3] + dt[:, 1], gt[:, 3] + gt[:, 1]) - np.maximum(dt[:, 1], gt[:, 1])
    overlap = (w > 0) & (h > 0)
    inter = np.where(overlap, w * h, 0.0)
    da = dt[:, 2] * dt[:, 3]
    union = np.where(gt_crowd, da, da + gt[:, 2] * gt[:, 3] - inter)
    out = np.zeros(len(dt), np.float64)
    np.divide(inter, union, out=out, where=overlap)
    return out

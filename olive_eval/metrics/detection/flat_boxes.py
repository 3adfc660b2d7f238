"""Per-image box dicts gathered into flat columns at once, and checked on the flat arrays.

:func:`.inputs.from_per_image` checks and converts each image's arrays in turn: about twenty small numpy calls per
image, which at COCO scale (5k images) cost as much as the matching. Here each image's arrays are only read:
where every value is already an ndarray of its key's shape, one dtype per key (a model's outputs), a key at a
time (one list, one ``concatenate``, one cast); else image by image (``np.asarray``, lengths compared). The
checks (integer labels, scores, boxes, one ``iscrowd``/``area`` per box) and the ``xyxy`` conversion then run
once on the concatenation. Any problem returns None, and the per-image loop
runs instead, so every error names its image and box exactly as before. Values are the same elementwise
operations on the same numbers, so the columns are identical to the loop's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

_EMPTY_BOXES = np.zeros((0, 4), np.float64)


def _boxes(value: Any) -> np.ndarray | None:
    arr = np.asarray(value, dtype=np.float64)
    if arr.size == 0:
        return _EMPTY_BOXES
    return arr if arr.ndim == 2 and arr.shape[1] == 4 else None


def _labels(parts: list[np.ndarray]) -> np.ndarray | None:
    """int64 labels, or None where the loop's ``_ints`` would refuse an image's (non-integer, non-numeric)."""
    dtypes = {p.dtype for p in parts}
    if len(dtypes) != 1:  # an empty image's labels may have any dtype
        parts = [p for p in parts if p.size]
        dtypes = {p.dtype for p in parts}
    if any(d.kind not in "biuf" for d in dtypes):
        return None
    if not parts:
        return np.zeros(0, np.int64)
    arr = np.concatenate(parts)
    if arr.dtype.kind == "f" and (not np.isfinite(arr).all() or (arr != np.round(arr)).any()):
        return None
    return arr.astype(np.int64)


def _boxes_ok(boxes: np.ndarray, box_format: str) -> bool:
    if box_format == "xyxy":
        bad = (boxes[:, 2] < boxes[:, 0]) | (boxes[:, 3] < boxes[:, 1])
    else:
        bad = (boxes[:, 2] < 0) | (boxes[:, 3] < 0)
    return bool(np.isfinite(boxes).all()) and not bad.any()


def _per_box(ref: Mapping[str, Any], key: str, n: int) -> np.ndarray | None:
    if key not in ref:
        return np.zeros(n, np.float64)
    arr = np.asarray(ref[key], dtype=np.float64).reshape(-1)
    return arr if len(arr) == n else None


def _uniform(arrays: list[Any], shape: tuple[int, ...]) -> bool:
    """Every value an ndarray of shape ``[n, *shape]``, all of one numeric dtype: one ``concatenate`` and one cast
    then give what the per-image casts and the concatenation give."""
    if {type(a) for a in arrays} != {np.ndarray} or {a.shape[1:] for a in arrays} != {shape}:
        return False
    dtypes = {a.dtype for a in arrays}
    return len(dtypes) == 1 and next(iter(dtypes)).kind in "biuf"


def _cast(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays).astype(np.float64, copy=False)


Columns = tuple[list[np.ndarray], np.ndarray, np.ndarray, list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]


def _gathered(predictions: Sequence[Mapping[str, Any]], references: Sequence[Mapping[str, Any]]) -> Columns | None:
    """Every image's arrays read at once (a list per key), where every value is already an ndarray of the
    expected shape and one dtype per key, as a model's outputs are; else None (each image read in turn)."""
    try:
        d_lab, d_sc, d_box = ([p[key] for p in predictions] for key in ("labels", "scores", "boxes"))
        g_lab, g_box = ([r[key] for r in references] for key in ("labels", "boxes"))
        optional = [[r[key] for r in references if key in r] for key in ("iscrowd", "area")]
    except (KeyError, TypeError):
        return None
    if not all(_uniform(v, ()) for v in (d_lab, d_sc, g_lab)) or not (_uniform(d_box, (4,)) and _uniform(g_box, (4,))):
        return None
    n_dt, n_gt = list(map(len, d_lab)), list(map(len, g_lab))
    if list(map(len, d_sc)) != n_dt or list(map(len, d_box)) != n_dt or list(map(len, g_box)) != n_gt:
        return None
    extra = []
    for values in optional:
        if not values:
            extra.append(np.zeros(sum(n_gt), np.float64))
        elif len(values) == len(references) and _uniform(values, ()) and list(map(len, values)) == n_gt:
            extra.append(_cast(values))
        else:
            return None
    return d_lab, _cast(d_sc), _cast(d_box), g_lab, _cast(g_box), extra[0], extra[1]


def _read_each(predictions: Sequence[Mapping[str, Any]], references: Sequence[Mapping[str, Any]]) -> Columns | None:
    """Each image's arrays read in turn (any array-like), or None where the per-image loop must name a problem."""
    d_lab, d_sc, d_box, g_lab, g_box, g_crowd, g_area = [], [], [], [], [], [], []
    try:
        for pred, ref in zip(predictions, references, strict=True):
            labels = np.asarray(pred["labels"]).reshape(-1)
            scores = np.asarray(pred["scores"], np.float64).reshape(-1)
            boxes, ref_labels, ref_boxes = (
                _boxes(pred["boxes"]),
                np.asarray(ref["labels"]).reshape(-1),
                _boxes(ref["boxes"]),
            )
            if boxes is None or ref_boxes is None or not len(labels) == len(scores) == len(boxes):
                return None
            n_gt = len(ref_boxes)
            crowd, area = _per_box(ref, "iscrowd", n_gt), _per_box(ref, "area", n_gt)
            if len(ref_labels) != n_gt or crowd is None or area is None:
                return None
            d_lab.append(labels), d_sc.append(scores), d_box.append(boxes)
            g_lab.append(ref_labels), g_box.append(ref_boxes), g_crowd.append(crowd), g_area.append(area)
    except (KeyError, TypeError, ValueError, AttributeError):  # the loop names it
        return None
    cat = np.concatenate
    return d_lab, cat(d_sc), cat(d_box), g_lab, cat(g_box), cat(g_crowd), cat(g_area)


def flat_boxes(
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    *,
    box_format: str,
    score_thresholds: float | Sequence[float] | None,
) -> dict[str, np.ndarray] | None:
    """The columns ``gi gl ga gc gb di dl ds da db`` of :func:`.inputs.from_per_image` for ``bbox`` (image index,
    label, area, crowd, xywh box of the references, then of the predictions), or None to run the per-image loop."""
    if box_format not in ("xyxy", "xywh") or not len(references) or len(predictions) != len(references):
        return None
    columns = _gathered(predictions, references) or _read_each(predictions, references)
    if columns is None:
        return None
    d_lab, ds, db, g_lab, gb, crowd, area = columns
    dl, gl = _labels(d_lab), _labels(g_lab)
    if dl is None or gl is None or np.isnan(ds).any() or not (_boxes_ok(db, box_format) and _boxes_ok(gb, box_format)):
        return None
    if score_thresholds is not None and ((ds < 0.0) | (ds > 1.0)).any():
        return None
    if box_format == "xyxy":
        db = np.stack([db[:, 0], db[:, 1], db[:, 2] - db[:, 0], db[:, 3] - db[:, 1]], axis=1)
        gb = np.stack([gb[:, 0], gb[:, 1], gb[:, 2] - gb[:, 0], gb[:, 3] - gb[:, 1]], axis=1)
    images = np.arange(len(references), dtype=np.int64)
    return {
        "gi": np.repeat(images, list(map(len, g_lab))),
        "gl": gl,
        "ga": np.where(area > 0, area, gb[:, 2] * gb[:, 3]),
        "gc": crowd != 0,
        "gb": gb,
        "di": np.repeat(images, list(map(len, d_lab))),
        "dl": dl,
        "ds": ds,
        "da": db[:, 2] * db[:, 3],
        "db": db,
    }

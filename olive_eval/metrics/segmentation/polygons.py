"""Label maps drawn from polygons: Valor's segmentation annotations given as shapes, rasterized as Valor's
service does before scoring (valor-lite itself takes label maps).

One image is ``{"size": [height, width], "polygons": [...], "labels": [...]}``: each polygon a ring
``[[x, y], ...]`` or ``[exterior, hole, ...]``, each label an integer class or a name in ``class_names``
(text labels; label keys are not supported for segmentation). A pixel takes the label of the
polygon whose interior holds its centre (:mod:`olive_eval.metrics.detection.rasterize`'s rule), and 0 (valor's
background) where none does. Polygons of one label may overlap; a pixel claimed by two labels is an error,
since a label map has one label per pixel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from olive_eval.metrics.detection.rasterize import polygon_masks

__all__ = ["label_map"]


def _classes(labels: object, class_names: Sequence[str] | None, where: str) -> np.ndarray:
    """Integer classes, or text labels looked up in ``class_names`` (the class is the name's position)."""
    items = list(np.asarray(labels, dtype=object).reshape(-1))
    text = [isinstance(v, str) for v in items]
    if any(text):
        if not all(text):
            raise ValueError(f"{where}: polygon labels mix text and integers; give one or the other")
        if class_names is None:
            raise ValueError(f"{where}: text polygon labels need class_names to give each its class")
        index = {name: k for k, name in enumerate(class_names)}
        unknown = [v for v in items if v not in index]
        if unknown:
            raise ValueError(f"{where}: polygon label {unknown[0]!r} is not in class_names")
        return np.array([index[v] for v in items], np.int64)
    arr = np.asarray(labels).reshape(-1)
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{where}: polygon labels must be integer classes or text, got {arr[:3].tolist()}")
    return arr.astype(np.int64)


def label_map(item: Mapping[str, Any], where: str, class_names: Sequence[str] | None = None) -> np.ndarray:
    """``int64 [height, width]`` label map of one image's polygons; ValueError naming ``where`` otherwise."""
    missing = [k for k in ("size", "polygons", "labels") if k not in item]
    if missing:
        raise ValueError(f"{where}: a polygon label map needs 'size', 'polygons' and 'labels'; missing {missing}")
    labels = _classes(item["labels"], class_names, where)
    masks = polygon_masks(item["polygons"], item["size"], where=where)
    if len(labels) != len(masks):
        raise ValueError(f"{where}: {len(masks)} polygons but {len(labels)} labels (must be equal)")
    h, w = (int(v) for v in item["size"])
    out = np.zeros((h, w), np.int64)
    owner = np.full((h, w), -1, np.int64)
    for j, (mask, label) in enumerate(zip(masks, labels.astype(np.int64), strict=True)):
        clash = mask & (owner >= 0) & (out != label)
        if clash.any():
            r, c = (int(v) for v in np.argwhere(clash)[0])
            k = int(owner[r, c])
            raise ValueError(
                f"{where}: polygons {k} and {j} (labels {int(out[r, c])} and {int(label)}) both cover pixel "
                f"(row {r}, column {c}); a label map has one label per pixel"
            )
        out[mask], owner[mask] = label, j
    return out

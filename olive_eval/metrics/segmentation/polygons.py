"""Label maps drawn from polygons: Valor's segmentation annotations given as shapes, rasterized as Valor's
service does before scoring (valor-lite itself takes label maps).

One image is ``{"size": [height, width], "polygons": [...], "labels": [...]}``: each polygon a ring
``[[x, y], ...]`` or ``[exterior, hole, ...]``, each label an integer class or a name in ``class_names``
(text labels). A pixel takes the label of the
polygon whose interior holds its centre (:mod:`olive_eval.metrics.detection.rasterize`'s rule), and 0 (valor's
background) where none does. Polygons of one label may overlap; a pixel claimed by two labels is an error,
since a label map has one label per pixel.

With label keys (``label_keys``: ``{key: [values]}``), labels are ``{"key", "value"}`` objects and each key is
its own segmentation: one label map per key, drawn from that key's polygons, 0 (that key's background)
elsewhere, as valor-lite run on each key's annotations alone. The classes are 0, then every key's values in
order, so one ``[C, C]`` matrix per image, the sum of the keys' matrices, holds every key (a key's values only
ever meet its own values and background).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from olive_eval.metrics.detection.rasterize import polygon_masks

__all__ = ["key_layout", "keyed_maps", "label_map"]


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
    return _draw(masks, labels, h, w, where, range(len(masks)))


def key_layout(label_keys: Mapping[str, Sequence[str]]) -> dict[str, dict[str, int]]:
    """Classes under label keys: 0 is every key's background, then each key's values in the order given."""
    layout, nxt = {}, 1
    for key, values in label_keys.items():
        layout[key] = {v: nxt + j for j, v in enumerate(values)}
        nxt += len(values)
    return layout


def keyed_maps(item: Mapping[str, Any], where: str, layout: Mapping[str, Mapping[str, int]]) -> list[np.ndarray]:
    """One label map per label key (in ``layout``'s order): each drawn from the polygons of its key alone,
    whose labels are ``{"key", "value"}`` objects; 0 where none of the key's polygons is."""
    if not isinstance(item, Mapping):
        raise ValueError(f"{where}: label keys need polygon images ({{'size', 'polygons', 'labels'}}), not label maps")
    missing = [k for k in ("size", "polygons", "labels") if k not in item]
    if missing:
        raise ValueError(f"{where}: a polygon label map needs 'size', 'polygons' and 'labels'; missing {missing}")
    labels = list(item["labels"])
    keys, classes = [], []
    for j, label in enumerate(labels):
        ok = isinstance(label, Mapping) and set(label) == {"key", "value"}
        if not ok or label["key"] not in layout or label["value"] not in layout[label["key"]]:
            raise ValueError(f"{where}: label {j} ({label!r}) is no {{'key', 'value'}} of label_keys")
        keys.append(label["key"])
        classes.append(layout[label["key"]][label["value"]])
    masks = polygon_masks(item["polygons"], item["size"], where=where)
    if len(labels) != len(masks):
        raise ValueError(f"{where}: {len(masks)} polygons but {len(labels)} labels (must be equal)")
    h, w = (int(v) for v in item["size"])
    out = []
    for key in layout:
        mine = [j for j, k in enumerate(keys) if k == key]
        out.append(_draw([masks[j] for j in mine], np.array([classes[j] for j in mine], np.int64), h, w, where, mine))
    return out


def _draw(
    masks: Sequence[np.ndarray], labels: np.ndarray, h: int, w: int, where: str, numbers: Sequence[int]
) -> np.ndarray:
    """The label map of the masks; ``numbers`` name the polygons in errors."""
    out = np.zeros((h, w), np.int64)
    owner = np.full((h, w), -1, np.int64)
    for j, mask, label in zip(numbers, masks, labels.astype(np.int64), strict=True):
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

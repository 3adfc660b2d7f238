"""Detection sub-types under torchmetrics' ``MeanAveragePrecision`` keys, from one matching per pass.

``map``, ``map_50``, ``map_75``, ``map_small``, ``map_medium``, ``map_large``, ``mar_1``, ``mar_10``,
``mar_100``, ``mar_small``, ``mar_medium``, ``mar_large`` (and ``mar``: recall at the largest ``maxDet``
under COCO, valor's mAR under valor) each read the whole pass (``prediction``: one dict per image with
``boxes`` (or ``masks``), ``scores``, ``labels``; ``references``: ``boxes``/``masks``, ``labels``, optional
``iscrowd`` and ``area``).

The per-example statistics are per image: the matching's outcome (:mod:`.image_statistics`). Sub-types of
one metric config share them (:meth:`~Metric.shared_key`; the scorer computes them once per batch), and
each accumulates its own slice from them (:mod:`.accumulation`). A bootstrap resample re-accumulates from
the resampled images' statistics, all resamples of a chunk in one call, and never matches again.

Per-class values ride along: ``Score.per_class`` in category-id order, and ``details`` maps each class
name (``class_names``, else the id) to its value. Where pycocotools reports -1 (no ground truth for a
category and area range) the value is undefined, with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.detection.accumulation import (
    CocoKey,
    ValorKey,
    coco_key,
    coco_values,
    valor_key,
    valor_values,
)
from olive_eval.metrics.detection.boxes import BoxFormat
from olive_eval.metrics.detection.coco import CocoParams, coco_params, default_iou_thresholds
from olive_eval.metrics.detection.image_statistics import coco_statistics, valor_statistics
from olive_eval.metrics.detection.inputs import IouType
from olive_eval.metrics.detection.labels import key_index, key_means, label_name, mean_of_keys
from olive_eval.metrics.detection.per_image import PerImage
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel

__all__ = ["DetectionConfig", "compute_all"]


class DetectionConfig(StrictModel):
    """metric_config of every detection sub-type (sub-types of one metric should share it)."""

    convention: Literal["coco", "valor"] = Field(
        "coco", description="coco: pycocotools COCOeval, exactly; valor: valor-lite's floor binning and all-label mAP"
    )
    box_format: BoxFormat = "xyxy"
    iou_type: IouType = Field(
        "bbox", description="bbox: boxes; segm: masks (RLE or dense); polygon: [[x, y], ...] rings, exact IoU (valor)"
    )
    iou_thresholds: list[float] | None = Field(None, description="Default 0.50:0.05:0.95 (both conventions).")
    rec_thresholds: list[float] | None = Field(None, description="coco: default 0:0.01:1 (101 points).")
    max_dets: list[int] = Field(default_factory=lambda: [1, 10, 100], description="coco: detections kept per image.")
    score_thresholds: list[float] | None = Field(
        None,
        description="valor: the score thresholds recall is averaged over (default [0.5]); scores must be in [0, 1]",
    )
    class_names: dict[str, str] | list[str] | None = Field(
        None, description="Names of the category ids ({id: name}, or a list indexed by id); other ids are errors."
    )

    @model_validator(mode="after")
    def _check(self) -> DetectionConfig:
        if self.convention == "coco" and self.score_thresholds is not None:
            raise ValueError("score_thresholds apply to convention 'valor' (COCO ranks detections by score only)")
        if self.convention == "coco" and self.iou_type == "polygon":
            raise ValueError(
                "iou_type 'polygon' (exact polygon IoU) is valor's; for convention 'coco' give masks (segm)"
            )
        if self.convention == "valor" and self.rec_thresholds is not None:
            raise ValueError("rec_thresholds apply to convention 'coco' (valor bins recall on 101 fixed points)")
        for name, values in (("iou_thresholds", self.iou_thresholds), ("score_thresholds", self.score_thresholds)):
            if values is not None and (not values or any(not 0.0 <= v <= 1.0 for v in values)):
                raise ValueError(f"{name} must be a non-empty list of values in [0, 1], got {values}")
        if not self.max_dets or any(m < 1 for m in self.max_dets):
            raise ValueError(f"max_dets must be positive integers, got {self.max_dets}")
        return self

    def name_of(self, category_id: int) -> str:
        if self.class_names is None:
            return str(category_id)
        if isinstance(self.class_names, list):
            ok = 0 <= category_id < len(self.class_names)
            return self.class_names[category_id] if ok else ""
        return self.class_names.get(str(category_id), "")


# ------------------------------------------------------------------------------------------------ inputs
def _unwrap(value: Any) -> Any:
    """``compute_metric`` passes ``np.asarray(...)``: a 0-d array holds one object (a path, a COCO dict)."""
    if isinstance(value, np.ndarray):
        return value.item() if value.ndim == 0 else list(value)
    return value


def detection_set(config: DetectionConfig, predictions: Any, references: Any, start: int) -> Any:
    """The inputs as flat arrays; images are numbered from ``start`` in errors (a batch's first image)."""
    from olive_eval.metrics.detection.inputs import from_coco, from_per_image

    preds, refs = _unwrap(predictions), _unwrap(references)
    thresholds = config.score_thresholds if config.convention == "valor" else None
    if isinstance(refs, (str, os.PathLike)) or (isinstance(refs, Mapping) and "annotations" in refs):
        return from_coco(refs, preds, iou_type=config.iou_type, score_thresholds=thresholds)
    for side, items in (("prediction", preds), ("reference", refs)):
        bad = next((i for i, item in enumerate(items) if not isinstance(item, Mapping)), None)
        if bad is not None:
            raise ValueError(
                f"example {start + bad}: a detection {side} must be a dict of "
                f"{'boxes, scores and labels' if side == 'prediction' else 'boxes and labels'}, "
                f"got {type(items[bad]).__name__}"
            )
    return from_per_image(
        preds, refs, box_format=config.box_format, iou_type=config.iou_type, score_thresholds=thresholds, start=start
    )


# -------------------------------------------------------------------------------------------- sub-types
class _DetectionMetric(Metric):
    """One key, accumulated from the per-image statistics (see module docstring)."""

    higher_is_better = True
    kind = Kind.GLOBAL
    reads = ("prediction", "references")
    Config: ClassVar[type[StrictModel]] = DetectionConfig
    key: ClassVar[str]

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        self._seen = 0  # images of the earlier batches of a pass, to number images in errors

    @property
    def decomposes(self) -> bool:
        """Per-image statistics exist, though the value is no sum of them (it ranks detections across images)."""
        return True

    @property
    def _config(self) -> DetectionConfig:
        return self.config  # type: ignore[return-value]

    def _params(self) -> CocoParams:
        c = self._config
        return coco_params(c.iou_thresholds, c.rec_thresholds, c.max_dets)

    def _ious(self) -> np.ndarray:
        c = self._config
        return np.asarray(c.iou_thresholds if c.iou_thresholds is not None else default_iou_thresholds(), np.float64)

    def shared_key(self) -> Any:
        """Sub-types whose configs differ in class names only match the same way."""
        return ("detection", self._config.model_dump_json(exclude={"class_names"}))

    def statistics(self, predictions: Any, references: Any) -> PerImage:
        c = self._config
        data = detection_set(c, predictions, references, self._seen)
        if c.convention == "coco":
            stats = coco_statistics(data, c.iou_type, self._params())
        else:
            stats = valor_statistics(data, c.iou_type, self._ious(), c.score_thresholds or [0.5])
        self._seen += len(stats)
        return stats

    def concat_statistics(self, parts: list[PerImage]) -> PerImage:  # type: ignore[override]
        return PerImage.concat(parts) if parts else self.statistics([], [])

    def instance_scores(self, statistics: PerImage) -> None:  # type: ignore[override]
        """None: an image's own mAP is no per-image score of the set's mAP, so records carry none."""
        return None

    def compute(self, predictions: Any, references: Any) -> Score:
        """The whole set: images numbered from 0."""
        self._seen = 0
        return self.reduce(self.statistics(predictions, references))

    def _slice(self) -> CocoKey | ValorKey | str:
        c = self._config
        return coco_key(self.key, self._params()) if c.convention == "coco" else valor_key(self.key, self._ious())

    def _values(self, statistics: PerImage, key: CocoKey | ValorKey, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = self._config
        if isinstance(key, CocoKey):
            values, per_class = coco_values(statistics, self._params(), key, idx)
        else:
            thresholds = np.asarray(c.score_thresholds or [0.5], np.float64)
            values, per_class = valor_values(statistics, key, self._ious(), thresholds, idx)
        if statistics.names:  # text labels: the mean over the label keys of each key's mean
            keys, distinct = key_index(statistics.category_ids, statistics.names)
            per_key = key_means(per_class, keys, len(distinct))
            values = mean_of_keys(per_key)
            if isinstance(key, ValorKey):
                values = np.nan_to_num(values, nan=0.0)  # valor: no label seen, 0
        return values, per_class

    def reduce(self, statistics: PerImage) -> Score:  # type: ignore[override]
        c = self._config
        if c.class_names is not None and statistics.names:
            raise ValueError("class_names name integer labels; these labels are text (they name themselves)")
        if c.class_names is not None:
            unknown = [int(i) for i in statistics.category_ids if not c.name_of(int(i))]
            if unknown:
                raise ValueError(f"category id(s) {unknown[:5]} not in class_names")
        extra = {"convention": c.convention}
        key = self._slice()
        if isinstance(key, str):
            return Score(float("nan"), undefined=key, extra=extra)
        if not len(statistics):
            why = "there are no images to score (the predictions and references are empty)"
            return Score(float("nan"), undefined=why, extra=extra)
        values, per_class = self._values(statistics, key, np.arange(len(statistics))[None])
        value, per_class = float(values[0]), per_class[0]
        shown = np.ones(len(per_class), bool) if isinstance(key, CocoKey) else ~np.isnan(per_class)
        names = [self._name(statistics, int(i)) for i in statistics.category_ids[shown]]
        details: dict[str, Any] = {
            "per_class": {
                name: (None if np.isnan(v) else float(v)) for name, v in zip(names, per_class[shown], strict=True)
            }
        }
        if statistics.names:
            keys, distinct = key_index(statistics.category_ids, statistics.names)
            per_key = key_means(per_class[None], keys, len(distinct))[0]
            details["per_key"] = {
                k: (None if np.isnan(v) else float(v)) for k, v in zip(distinct, per_key, strict=True)
            }
        undefined = None
        if np.isnan(value) and isinstance(key, CocoKey):  # valor's mean over no label is 0
            area = "" if key.area == "all" else f" in area range {key.area!r}"
            undefined = f"no category has ground truth{area} (pycocotools reports -1)"
        return Score(
            value,
            per_class=[float(v) for v in per_class[shown]],
            undefined=undefined,
            extra=extra,
            details=details,
        )

    def _name(self, statistics: PerImage, category_id: int) -> str:
        if statistics.names:
            return label_name(*statistics.names[category_id])
        return self._config.name_of(category_id)

    def reduce_resamples(self, statistics: PerImage, idx: np.ndarray) -> np.ndarray:
        """The value on each resample ``idx`` ``[B, n]`` of the images, re-accumulated from their statistics."""
        key = self._slice()
        if isinstance(key, str):
            return np.full(len(idx), np.nan)
        return self._values(statistics, key, idx)[0]


KEYS: dict[str, str] = {
    "map": "mean AP over IoU 0.50:0.95 (all areas, the largest maxDet)",
    "map_50": "mean AP at IoU 0.5",
    "map_75": "mean AP at IoU 0.75",
    "map_small": "mean AP of small objects (area < 32²)",
    "map_medium": "mean AP of medium objects (32² to 96²)",
    "map_large": "mean AP of large objects (area > 96²)",
    "mar_1": "mean AR with 1 detection per image",
    "mar_10": "mean AR with 10 detections per image",
    "mar_100": "mean AR with 100 detections per image",
    "mar_small": "mean AR of small objects",
    "mar_medium": "mean AR of medium objects",
    "mar_large": "mean AR of large objects",
    "mar": "mean AR: COCO at the largest maxDet; valor averaged over IoU and score thresholds",
}


def _make(key: str, doc: str) -> type[Metric]:
    cls = type(f"Detection_{key}", (_DetectionMetric,), {"name": key, "key": key, "__doc__": doc})
    cls.__module__ = __name__
    return register_metric(cls)


DETECTION_METRICS: dict[str, type[Metric]] = {key: _make(key, doc) for key, doc in KEYS.items()}


def compute_all(
    predictions: Sequence[Mapping[str, Any]], references: Sequence[Mapping[str, Any]], **config: Any
) -> dict[str, float]:
    """Every key at once (``nan`` where undefined), as torchmetrics' ``MeanAveragePrecision().compute()``:
    one matching, then each key's accumulation."""
    metrics = {key: cls(DetectionConfig.model_validate(config)) for key, cls in DETECTION_METRICS.items()}
    stats = metrics["map"].statistics(list(predictions), list(references))
    return {key: metric.reduce(stats).value for key, metric in metrics.items()}

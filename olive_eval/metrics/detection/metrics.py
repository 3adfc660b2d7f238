"""Detection sub-types under torchmetrics' ``MeanAveragePrecision`` keys, from one evaluation per pass.

``map``, ``map_50``, ``map_75``, ``map_small``, ``map_medium``, ``map_large``, ``mar_1``, ``mar_10``,
``mar_100``, ``mar_small``, ``mar_medium``, ``mar_large`` (and ``mar``: recall at the largest ``maxDet``
under COCO, valor's mAR under valor) each read the whole pass (``prediction``: one dict per image with
``boxes`` (or ``masks``), ``scores``, ``labels``; ``references``: ``boxes``/``masks``, ``labels``, optional
``iscrowd`` and ``area``). Every sub-type of a metric config asks :func:`evaluation` for the same
predictions and gets the one evaluation computed for the first: matching and accumulation run once per
pass, however many keys are reported.

Per-class values ride along: ``Score.per_class`` in category-id order, and ``details`` maps each class
name (``class_names``, else the id) to its value. Where pycocotools reports -1 (no ground truth for a
category and area range) the value is undefined, with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import register_metric
from olive_eval.strict_model import StrictModel

__all__ = ["DetectionConfig", "DetectionOutcome", "evaluation"]


class DetectionConfig(StrictModel):
    """metric_config of every detection sub-type (sub-types of one metric should share it)."""

    convention: Literal["coco", "valor"] = Field(
        "coco", description="coco: pycocotools COCOeval, exactly; valor: valor-lite's floor binning and all-label mAP"
    )
    box_format: Literal["xyxy", "xywh"] = "xyxy"
    iou_type: Literal["bbox", "segm"] = Field("bbox", description="bbox: boxes; segm: masks (RLE or dense)")
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


@dataclass
class DetectionOutcome:
    """Every key's value, the reason where one is undefined, and its per-class values ``[K]``."""

    classes: list[str]
    values: dict[str, float] = field(default_factory=dict)
    undefined: dict[str, str] = field(default_factory=dict)
    per_class: dict[str, np.ndarray] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------ inputs
def _unwrap(value: Any) -> Any:
    """``compute_metric`` passes ``np.asarray(...)``: a 0-d array holds one object (a path, a COCO dict)."""
    if isinstance(value, np.ndarray):
        return value.item() if value.ndim == 0 else list(value)
    return value


def _dataset(config: DetectionConfig, predictions: Any, references: Any) -> Any:
    from olive_eval.metrics.detection.inputs import from_coco, from_per_image

    preds, refs = _unwrap(predictions), _unwrap(references)
    thresholds = config.score_thresholds if config.convention == "valor" else None
    if isinstance(refs, (str, os.PathLike)) or (isinstance(refs, Mapping) and "annotations" in refs):
        data = from_coco(refs, preds, iou_type=config.iou_type, score_thresholds=thresholds)
    else:
        for side, items in (("prediction", preds), ("reference", refs)):
            bad = next((i for i, item in enumerate(items) if not isinstance(item, Mapping)), None)
            if bad is not None:
                raise ValueError(
                    f"example {bad}: a detection {side} must be a dict of "
                    f"{'boxes, scores and labels' if side == 'prediction' else 'boxes and labels'}, "
                    f"got {type(items[bad]).__name__}"
                )
        data = from_per_image(
            preds, refs, box_format=config.box_format, iou_type=config.iou_type, score_thresholds=thresholds
        )
    if config.class_names is not None:
        unknown = [int(c) for c in data.category_ids if not config.name_of(int(c))]
        if unknown:
            raise ValueError(f"category id(s) {unknown[:5]} not in class_names")
    return data


# ------------------------------------------------------------------------------------------- evaluation
def _per_class_mean(values: np.ndarray, class_axis: int) -> np.ndarray:
    """pycocotools' mean over entries > -1, per class; NaN where a class has none."""
    v = np.moveaxis(values, class_axis, -1).reshape(-1, values.shape[class_axis])
    valid = v > -1
    count = valid.sum(axis=0)
    total = np.where(valid, v, 0.0).sum(axis=0)
    return np.divide(total, count, out=np.full(len(count), np.nan), where=count > 0)


def _at(thresholds: np.ndarray, iou: float) -> np.ndarray:
    hit = np.flatnonzero(thresholds == iou)
    return hit if hit.size else np.flatnonzero(np.isclose(thresholds, iou, rtol=0, atol=1e-12))


AREAS = ("small", "medium", "large")


def _coco(config: DetectionConfig, data: Any) -> DetectionOutcome:
    from olive_eval.metrics.detection.coco import evaluate_coco

    r = evaluate_coco(
        data,
        iou_type=config.iou_type,
        iou_thresholds=config.iou_thresholds,
        rec_thresholds=config.rec_thresholds,
        max_dets=config.max_dets,
    )
    p, rc, params = r.precision, r.recall, r.params  # [T, R, K, A, M], [T, K, A, M]
    out = DetectionOutcome([config.name_of(int(c)) for c in r.category_ids])
    last = len(params.max_dets) - 1
    labels = list(params.area_labels)
    for key in ("map", "map_50", "map_75", *(f"map_{a}" for a in AREAS)):
        out.values[key] = float(r.summary[key])
        area = labels.index(key[4:]) if key[4:] in labels else 0
        sel = p[..., area, last]
        if key in ("map_50", "map_75"):
            sel = sel[_at(params.iou_thresholds, 0.5 if key == "map_50" else 0.75)]
        out.per_class[key] = _per_class_mean(sel, 2) if sel.shape[0] else np.full(p.shape[2], np.nan)
    for mi, m in enumerate(params.max_dets):
        out.values[f"mar_{m}"] = float(r.summary[f"mar_{m}"])
        out.per_class[f"mar_{m}"] = _per_class_mean(rc[:, :, 0, mi], 1)
    for a in AREAS:
        out.values[f"mar_{a}"] = float(r.summary[f"mar_{a}"])
        out.per_class[f"mar_{a}"] = _per_class_mean(rc[:, :, labels.index(a), last], 1)
    largest = f"mar_{params.max_dets[-1]}"
    out.values["mar"], out.per_class["mar"] = out.values[largest], out.per_class[largest]
    out.undefined.update({k: v for k, v in r.undefined.items() if k in out.values})
    if largest in r.undefined:
        out.undefined["mar"] = r.undefined[largest]
    return out


def _valor(config: DetectionConfig, data: Any) -> DetectionOutcome:
    from olive_eval.metrics.detection.coco import default_iou_thresholds
    from olive_eval.metrics.detection.valor import evaluate_valor

    ious = np.asarray(config.iou_thresholds if config.iou_thresholds is not None else default_iou_thresholds())
    r = evaluate_valor(
        data, iou_type=config.iou_type, iou_thresholds=ious, score_thresholds=config.score_thresholds or [0.5]
    )
    out = DetectionOutcome([config.name_of(int(c)) for c in r.labels])
    out.values["map"], out.per_class["map"] = r.map_averaged_over_ious, r.ap_averaged_over_ious
    for key, iou in (("map_50", 0.5), ("map_75", 0.75)):
        hit = _at(r.iou_thresholds, iou)
        if hit.size:
            out.values[key], out.per_class[key] = float(r.map[hit[0]]), r.ap[hit[0]]
        else:
            out.undefined[key] = f"IoU threshold {iou} is not among iou_thresholds {r.iou_thresholds.tolist()}"
    out.values["mar"], out.per_class["mar"] = r.mar_averaged_over_scores, r.ar_averaged_over_scores
    return out


_MEMO: list[tuple[str, list[Any], list[int], DetectionOutcome]] = []


def _identity(items: list[Any]) -> tuple[list[Any], list[int]]:
    """The items themselves (compared with ``is``) and the ids of the arrays inside each dict."""
    inner = [id(v) for x in items if isinstance(x, Mapping) for v in x.values()]
    return items, inner


def evaluation(config: DetectionConfig, predictions: Any, references: Any) -> DetectionOutcome:
    """The evaluation of ``(predictions, references)`` under ``config``, computed once for all sub-types.

    Sub-types of one metric receive lists holding the same per-image objects; the last two evaluations are
    kept, keyed by the identity of those objects (and of the arrays inside each dict), so the second and
    later sub-types reuse the first one's work. A resample (new combination of images) is a new key. The
    memo holds the objects, so an id cannot be reused while it is kept.
    """
    preds, refs = _unwrap(predictions), _unwrap(references)
    if not isinstance(preds, list) or not isinstance(refs, list):  # COCO files or dicts: not memoised
        return _run(config, preds, refs)
    objects, inner = _identity([*preds, None, *refs])
    key = config.model_dump_json()
    for k, objs, ids, outcome in _MEMO:
        same = len(objs) == len(objects) and all(a is b for a, b in zip(objs, objects, strict=True))
        if k == key and same and ids == inner:
            return outcome
    outcome = _run(config, preds, refs)
    _MEMO[:] = [(key, objects, inner, outcome), *_MEMO[:1]]
    return outcome


def _run(config: DetectionConfig, preds: Any, refs: Any) -> DetectionOutcome:
    data = _dataset(config, preds, refs)
    return (_coco if config.convention == "coco" else _valor)(config, data)


def _no_valor(key: str) -> str:
    if key.startswith("map_") or key in ("mar_small", "mar_medium", "mar_large"):
        return f"convention 'valor' has no area ranges, so no '{key}' (use convention 'coco')"
    return f"convention 'valor' has no maxDets cap, so no '{key}'; 'mar' is valor's mAR"


# -------------------------------------------------------------------------------------------- sub-types
class _DetectionMetric(Metric):
    """One key of the shared evaluation (see module docstring)."""

    higher_is_better = True
    kind = Kind.GLOBAL
    reads = ("prediction", "references")
    Config: ClassVar[type[StrictModel]] = DetectionConfig
    key: ClassVar[str]

    def compute(self, predictions: Any, references: Any) -> Score:
        config: DetectionConfig = self.config  # type: ignore[assignment]
        outcome = evaluation(config, predictions, references)
        key = self.key
        extra = {"convention": config.convention}
        if key not in outcome.values:
            why = outcome.undefined.get(key)
            if why is None:
                why = (
                    _no_valor(key)
                    if config.convention == "valor"
                    else f"max_dets {config.max_dets} has no {key[4:]} ('mar' is the recall at the largest)"
                )
            return Score(float("nan"), undefined=why, extra=extra)
        per_class = outcome.per_class[key]
        details = {
            "per_class": {
                name: (None if np.isnan(v) else float(v)) for name, v in zip(outcome.classes, per_class, strict=True)
            }
        }
        return Score(
            outcome.values[key],
            per_class=[float(v) for v in per_class],
            undefined=outcome.undefined.get(key),
            extra=extra,
            details=details,
        )


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
    """Every key at once (``nan`` where undefined), as torchmetrics' ``MeanAveragePrecision().compute()``."""
    outcome = evaluation(DetectionConfig.model_validate(config), list(predictions), list(references))
    return {key: outcome.values.get(key, float("nan")) for key in KEYS}

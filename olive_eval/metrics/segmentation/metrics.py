"""Semantic segmentation sub-types: mean_iou, pixel_accuracy, per-class precision/recall/F1, the confusion matrix.

Each reads ``prediction`` and ``references``: one integer label map per image (``[H, W]``; use the
``argmax`` post-process with ``axis: 1`` on ``[N, C, H, W]`` logits). The per-image statistics are the
image's ``[C, C]`` pixel confusion matrix (:mod:`.kernels`), computed once per batch for every sub-type of a
metric; matrices add up, so the sub-types are map/reduce metrics with bootstrap intervals and paired goals for
free. ``num_classes`` is required; pixels whose reference is ``ignore_index`` (default 255) count nowhere.

``convention``: ``mmseg`` (the default) leaves a class out where its ratio is ``0 / 0`` (NaN, then the mean
over the rest, as mmsegmentation and torchmetrics); ``valor`` is valor-lite's (:mod:`.valor`): class 0 is
background, out of every mean, and a ratio over nothing is 0.0. The statistics are the same matrices for both.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.confusion import class_names_or_indices, confusion_dict
from olive_eval.metrics.registry import register_metric
from olive_eval.metrics.segmentation.kernels import (
    confusion_matrices,
    iou,
    mean_iou,
    mean_over_defined,
    pixel_accuracy,
    precision_recall_f1,
)
from olive_eval.metrics.segmentation.valor import valor_confusion, valor_per_class
from olive_eval.strict_model import StrictModel

__all__ = ["SegmentationConfig"]

NO_PIXELS = "no pixel counts (every reference pixel is ignored)"


class SegmentationConfig(StrictModel):
    num_classes: int = Field(ge=1, le=65536, description="Classes of the label maps (labels 0..num_classes-1).")
    ignore_index: int | None = Field(255, description="Reference label of pixels that count nowhere; null: none.")
    class_names: list[str] | None = Field(None, description="One name per class, for the per-class details.")
    convention: Literal["mmseg", "valor"] = Field(
        "mmseg",
        description="mmseg: a 0/0 ratio is undefined and left out of means; valor: valor-lite's (class 0 is "
        "background, out of the means; a 0/0 ratio is 0.0; its confusion matrix of IoUs)",
    )

    label_keys: dict[str, list[str]] | None = Field(
        None,
        description="Polygon labels grouped by key ({key: [values]}): classes are 0 (background), then each key's "
        "values; metrics per key, their mean the value",
    )

    @model_validator(mode="after")
    def _check_names(self) -> SegmentationConfig:
        if self.label_keys is not None:
            n = 1 + sum(len(v) for v in self.label_keys.values())
            if self.class_names is not None:
                raise ValueError("give label_keys or class_names, not both (label_keys name the classes)")
            if not self.label_keys or any(not v or len(set(v)) != len(v) for v in self.label_keys.values()):
                raise ValueError("label_keys must map each key to a non-empty list of distinct values")
            if self.num_classes != n:
                raise ValueError(f"label_keys name {n} classes (background and every value), not num_classes")
        if self.class_names is not None:
            class_names_or_indices(self.class_names, self.num_classes)  # ValueError on a wrong count or repeats
        if self.convention == "valor" and self.num_classes < 2:
            raise ValueError("convention 'valor' needs num_classes >= 2: class 0 is background, the rest are scored")
        return self


def _names(config: SegmentationConfig) -> list[str]:
    if config.label_keys is not None:
        return ["background"] + [f"{k}: {v}" for k, values in config.label_keys.items() for v in values]
    return class_names_or_indices(config.class_names, config.num_classes)


def _key_of_class(config: SegmentationConfig) -> np.ndarray:
    """``[C]``: each class's key index, -1 for background."""
    keys = [-1] + [k for k, values in enumerate((config.label_keys or {}).values()) for _ in values]
    return np.array(keys, np.int64)


def _named(config: SegmentationConfig, values: np.ndarray) -> dict[str, float | None]:
    names = _names(config)
    return {n: (None if np.isnan(v) else float(v)) for n, v in zip(names, values, strict=True)}


class _Segmentation(Metric):
    higher_is_better = True
    kind = Kind.MAP_REDUCE
    reads = ("prediction", "references")
    Config: ClassVar[type[StrictModel]] = SegmentationConfig

    def statistics(self, predictions: Any, references: Any) -> np.ndarray:
        c: SegmentationConfig = self.config  # type: ignore[assignment]
        return confusion_matrices(
            predictions,
            references,
            c.num_classes,
            ignore_index=c.ignore_index,
            class_names=c.class_names,
            label_keys=c.label_keys,
        )

    def shared_key(self) -> Any:
        c: SegmentationConfig = self.config  # type: ignore[assignment]
        keys = None if c.label_keys is None else tuple((k, tuple(v)) for k, v in c.label_keys.items())
        return ("segmentation_confusion", c.num_classes, c.ignore_index, tuple(c.class_names or ()), keys)

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        n = self.config.num_classes  # type: ignore[attr-defined]
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, n, n), np.int64)

    @property
    def _valor(self) -> bool:
        return self.config.convention == "valor"  # type: ignore[attr-defined]

    def per_class_part(self, totals: np.ndarray, part: str) -> np.ndarray:
        """``iou``, ``precision``, ``recall`` or ``f1`` per class ``[..., C]`` under the configured convention."""
        ignore = self.config.ignore_index  # type: ignore[attr-defined]
        if self._valor:
            return valor_per_class(totals, part, ignore_index=ignore)
        if part == "iou":
            return iou(totals, ignore_index=ignore)
        return precision_recall_f1(totals, ignore_index=ignore)[("precision", "recall", "f1").index(part)]

    def per_key(self, per_class: np.ndarray) -> np.ndarray:
        """``[..., keys]``: each label key's mean over its classes that have a value."""
        key = _key_of_class(self.config)  # type: ignore[arg-type]
        n_keys = len(self.config.label_keys)  # type: ignore[attr-defined]
        return np.stack([np.atleast_1d(mean_over_defined(per_class[..., key == k])) for k in range(n_keys)], axis=-1)

    def mean(self, per_class: np.ndarray) -> np.ndarray | float:
        """The mean over the classes with a value; with label keys, the mean of the keys' means."""
        if self.config.label_keys is None:  # type: ignore[attr-defined]
            return mean_over_defined(per_class)
        out = mean_over_defined(self.per_key(per_class))
        return float(np.asarray(out).reshape(-1)[0]) if np.ndim(per_class) == 1 else out

    def values(self, totals: np.ndarray) -> np.ndarray:
        """The metric of each summed matrix ``[B, C, C]`` -> ``[B]``."""
        raise NotImplementedError

    def per_class(self, total: np.ndarray) -> np.ndarray | None:
        return None

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        return np.atleast_1d(np.asarray(self.values(np.asarray(totals)), dtype=np.float64))

    def reduce(self, statistics: np.ndarray) -> Score:
        total = np.asarray(statistics).sum(axis=0)
        value = float(self.finalize_totals(total[None])[0])
        per_class = self.per_class(total)
        undefined = None
        if np.isnan(value):
            counted = total.sum() > 0
            undefined = "no class has a value (background and ignore_index have none)" if counted else NO_PIXELS
        extra = {"convention": self.config.convention}  # type: ignore[attr-defined]
        if per_class is None:
            return Score(value, undefined=undefined, extra=extra)
        details: dict[str, Any] = {"per_class": _named(self.config, per_class)}  # type: ignore[arg-type]
        if self.config.label_keys is not None:  # type: ignore[attr-defined]
            per_key = self.per_key(np.asarray(per_class)[None])[0]
            details["per_key"] = {
                k: (None if np.isnan(v) else float(v))
                for k, v in zip(self.config.label_keys, per_key, strict=True)  # type: ignore[attr-defined]
            }
        return Score(value, per_class=[float(v) for v in per_class], undefined=undefined, extra=extra, details=details)


@register_metric
class MeanIou(_Segmentation):
    """Mean over the classes present in the reference or the prediction of ``tp / (tp + fp + fn)``
    (``valor``: over every class but background, 0.0 for an absent one)."""

    name = "mean_iou"

    def values(self, totals: np.ndarray) -> np.ndarray:
        if self._valor or self.config.label_keys is not None:  # type: ignore[attr-defined]
            return self.mean(self.per_class_part(totals, "iou"))  # type: ignore[return-value]
        return mean_iou(totals, ignore_index=self.config.ignore_index)  # type: ignore[attr-defined,return-value]

    def per_class(self, total: np.ndarray) -> np.ndarray:
        return self.per_class_part(total, "iou")


@register_metric
class PixelAccuracy(_Segmentation):
    """Correctly labelled pixels over counted pixels."""

    name = "pixel_accuracy"

    def values(self, totals: np.ndarray) -> np.ndarray:
        return pixel_accuracy(totals)  # type: ignore[return-value]


class _PerClassRatio(_Segmentation):
    part: ClassVar[str]

    def per_class(self, total: np.ndarray) -> np.ndarray:
        return self.per_class_part(total, self.part)

    def values(self, totals: np.ndarray) -> np.ndarray:
        return self.mean(self.per_class_part(totals, self.part))  # type: ignore[return-value]  # over classes with a value


@register_metric
class SegmentationPrecision(_PerClassRatio):
    """Per-class ``tp / (tp + fp)``; the value is their mean over the classes ever predicted."""

    name = "segmentation_precision"
    part = "precision"


@register_metric
class SegmentationRecall(_PerClassRatio):
    """Per-class ``tp / (tp + fn)``; the value is their mean over the classes in the reference."""

    name = "segmentation_recall"
    part = "recall"


@register_metric
class SegmentationF1(_PerClassRatio):
    """Per-class ``2tp / (2tp + fp + fn)``; the value is their mean over the classes present on either side."""

    name = "segmentation_f1"
    part = "f1"


@register_metric
class SegmentationConfusionMatrix(_Segmentation):
    """The pixel confusion matrix ``{reference class: {predicted class: pixels}}``: a structured value."""

    name = "segmentation_confusion_matrix"
    scalar = False

    def values(self, totals: np.ndarray) -> np.ndarray:
        return np.full(len(totals), np.nan)

    def reduce(self, statistics: np.ndarray) -> Score:
        total = np.asarray(statistics).sum(axis=0)
        names = _names(self.config)  # type: ignore[arg-type]
        details = valor_confusion(total, names) if self._valor else {"confusion_matrix": confusion_dict(total, names)}
        return Score(
            float("nan"),
            undefined="a structured value (see details), not a number",
            extra={"convention": self.config.convention},  # type: ignore[attr-defined]
            details=details,
        )

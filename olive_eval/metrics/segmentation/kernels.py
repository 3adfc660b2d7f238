"""Semantic segmentation metrics from predicted and reference label maps: pure numpy, no I/O.

Every metric derives from the pixel confusion matrix (:func:`olive_eval.metrics.confusion.confusion_matrix`:
rows are the reference class, columns the predicted class). Pixels whose reference equals
``ignore_index`` count nowhere. A predicted label outside ``[0, num_classes)`` is an error, and so is a
reference label outside it that is not ``ignore_index``.

Per-example statistics: :func:`confusion_matrices` returns one ``[C, C]`` matrix per image. Matrices
add up, so a resample of images is the sum of their matrices, and every function below accepts a
stack ``[..., C, C]`` and returns one value per matrix (a bootstrap evaluates all resamples at once).

Undefined values are NaN and left out of means:

* IoU of class ``c`` = ``tp / (tp + fp + fn)``; a class absent from both the reference and the
  prediction has no IoU (``0 / 0``). mIoU is the mean over the classes that have one. This is
  mmsegmentation's rule (NaN, then ``nanmean``) and torchmetrics' (``JaccardIndex(average="macro")``
  gives such classes zero weight; ``segmentation.mean_iou`` averages over ``union > 0``); scikit-learn's
  ``jaccard_score`` reports them as ``zero_division`` instead.
* precision ``tp / (tp + fp)`` is undefined for a class never predicted, recall ``tp / (tp + fn)`` for
  a class absent from the reference, F1 ``2tp / (2tp + fp + fn)`` for a class absent from both.
* A class equal to ``ignore_index`` (when it lies in ``[0, C)``) has no reference pixels by construction:
  pass the same ``ignore_index`` to the metric functions and its values are NaN (torchmetrics'
  ``JaccardIndex`` likewise drops it from the macro mean). Its column still counts: a valid pixel
  predicted as that class is an error.
* pixel accuracy = ``trace / total`` over counted pixels; NaN when no pixel counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from olive_eval.metrics.confusion import confusion_matrix
from olive_eval.metrics.segmentation.polygons import key_layout, keyed_maps, label_map

__all__ = [
    "SegmentationScores",
    "confusion_matrices",
    "iou",
    "mean_iou",
    "mean_over_defined",
    "pixel_accuracy",
    "precision_recall_f1",
    "segmentation_scores",
]


def _images(maps: object, what: str) -> Sequence[np.ndarray]:
    """An ndarray of ndim >= 3 is a batch along axis 0; one of ndim <= 2 is a single image; a list or tuple
    holds one map per image (sizes may differ between images)."""
    if isinstance(maps, Mapping):  # one image's polygons
        return [maps]
    if isinstance(maps, np.ndarray):
        if maps.dtype == object and maps.ndim == 1:  # one polygon dict (or map) per image
            return list(maps)
        return maps if maps.ndim >= 3 else [maps]
    if isinstance(maps, (list, tuple)):
        return maps
    raise ValueError(f"{what} must be a label map, a [B, H, W] array or a list of maps, got {type(maps).__name__}")


def confusion_matrices(
    predictions: object,
    references: object,
    num_classes: int,
    *,
    ignore_index: int | None = None,
    class_names: Sequence[str] | None = None,
    label_keys: Mapping[str, Sequence[str]] | None = None,
) -> np.ndarray:
    """``int64 [B, C, C]``: the confusion matrix of each image (rows reference, columns prediction).

    ``predictions`` and ``references``: one integer map per image (``[H, W]`` or any shape), as a list or
    a ``[B, H, W]`` array; ``uint8`` maps take a faster path. An image may instead be polygons, a dict
    ``{"size", "polygons", "labels"}`` drawn as a label map (:mod:`.polygons`; text labels are looked
    up in ``class_names``). Sum over axis 0 for the dataset's matrix.
    """
    preds, refs = _images(predictions, "predictions"), _images(references, "references")
    if len(preds) != len(refs):
        raise ValueError(f"{len(preds)} predicted maps but {len(refs)} reference maps")
    out = np.empty((len(preds), num_classes, num_classes), np.int64)
    layout = key_layout(label_keys) if label_keys else None
    for i, (pred, ref) in enumerate(zip(preds, refs, strict=True)):
        if layout is not None:  # one map per key; the matrix is the sum of the keys' matrices
            refs_k = keyed_maps(ref, f"image {i} reference", layout)
            preds_k = keyed_maps(pred, f"image {i} prediction", layout)
            if refs_k[0].shape != preds_k[0].shape:
                raise ValueError(
                    f"image {i}: prediction size {list(preds_k[0].shape)}, reference {list(refs_k[0].shape)}"
                )
            pairs = zip(refs_k, preds_k, strict=True)
            out[i] = sum(confusion_matrix(r, p, num_classes, ignore_index=ignore_index) for r, p in pairs)
            continue
        pred = label_map(pred, f"image {i} prediction", class_names) if isinstance(pred, Mapping) else np.asarray(pred)
        ref = label_map(ref, f"image {i} reference", class_names) if isinstance(ref, Mapping) else np.asarray(ref)
        if pred.shape != ref.shape:
            raise ValueError(f"image {i}: predicted map has shape {list(pred.shape)}, reference {list(ref.shape)}")
        try:
            out[i] = confusion_matrix(ref, pred, num_classes, ignore_index=ignore_index)
        except ValueError as err:
            raise ValueError(f"image {i}: {err}") from None
    return out


def _parts(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = np.asarray(matrix)
    if m.ndim < 2 or m.shape[-1] != m.shape[-2]:
        raise ValueError(f"a confusion matrix must have shape [..., C, C], got {list(m.shape)}")
    tp = np.diagonal(m, axis1=-2, axis2=-1).astype(np.float64)
    return tp, m.sum(axis=-1, dtype=np.float64) - tp, m.sum(axis=-2, dtype=np.float64) - tp  # tp, fn, fp


def _ratio(num: np.ndarray, den: np.ndarray, ignore_index: int | None) -> np.ndarray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    if ignore_index is not None and 0 <= ignore_index < out.shape[-1]:
        out[..., ignore_index] = np.nan
    return out


def iou(matrix: np.ndarray, *, ignore_index: int | None = None) -> np.ndarray:
    """Per-class IoU ``[..., C]``; NaN for a class absent from reference and prediction (see module)."""
    tp, fn, fp = _parts(matrix)
    return _ratio(tp, tp + fp + fn, ignore_index)


def mean_over_defined(values: np.ndarray) -> np.ndarray | float:
    """Mean over the last axis of the values that are not NaN (NaN where none is); a float for ``[C]``."""
    defined = ~np.isnan(values)
    count = defined.sum(axis=-1)
    total = np.where(defined, values, 0.0).sum(axis=-1)
    mean = np.divide(total, count, out=np.full(np.shape(total), np.nan), where=count > 0)
    return float(mean) if mean.ndim == 0 else mean


def mean_iou(matrix: np.ndarray, *, ignore_index: int | None = None) -> np.ndarray | float:
    """Mean IoU over the classes that have one: a float for ``[C, C]``, ``[...]`` for a stack."""
    return mean_over_defined(iou(matrix, ignore_index=ignore_index))


def pixel_accuracy(matrix: np.ndarray) -> np.ndarray | float:
    """Correctly labelled pixels / counted pixels (NaN when none counts)."""
    m = np.asarray(matrix)
    tp, fn, _ = _parts(m)
    correct, total = tp.sum(axis=-1), (tp + fn).sum(axis=-1)
    acc = np.divide(correct, total, out=np.full(np.shape(total), np.nan), where=total > 0)
    return float(acc) if acc.ndim == 0 else acc


def precision_recall_f1(
    matrix: np.ndarray, *, ignore_index: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-class precision, recall and F1, each ``[..., C]`` (NaN where undefined, see module)."""
    tp, fn, fp = _parts(matrix)
    return (
        _ratio(tp, tp + fp, ignore_index),
        _ratio(tp, tp + fn, ignore_index),
        _ratio(2 * tp, 2 * tp + fp + fn, ignore_index),
    )


@dataclass(frozen=True)
class SegmentationScores:
    """Every segmentation metric of one confusion matrix; per-class arrays are ``[C]``, NaN where undefined."""

    confusion: np.ndarray
    iou: np.ndarray
    mean_iou: float
    pixel_accuracy: float
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray


def segmentation_scores(matrix: np.ndarray, *, ignore_index: int | None = None) -> SegmentationScores:
    """All metrics of a ``[C, C]`` matrix (e.g. ``confusion_matrices(...).sum(axis=0)``)."""
    m = np.asarray(matrix)
    if m.ndim != 2:
        raise ValueError(f"segmentation_scores takes one [C, C] matrix, got {list(m.shape)}")
    per_class_iou = iou(m, ignore_index=ignore_index)
    precision, recall, f1 = precision_recall_f1(m, ignore_index=ignore_index)
    return SegmentationScores(
        confusion=m,
        iou=per_class_iou,
        mean_iou=float(mean_over_defined(per_class_iou)),
        pixel_accuracy=float(pixel_accuracy(m)),
        precision=precision,
        recall=recall,
        f1=f1,
    )

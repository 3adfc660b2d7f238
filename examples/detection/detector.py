"""A classical shape detector in numpy, run as a ``PythonModel``: threshold, connected components, classify.

Each bright blob (4-connected pixels above ``threshold``) becomes one detection: its bounding box, a label
from how much of the box it fills (rectangle 1.0, disk pi/4, triangle 1/2) and a score from how close that
fill ratio is to the label's. ``load_downscaled`` runs the same detector on the image averaged over 2x2
blocks (a quarter of the pixels) and scales the boxes back: faster, coarser boxes.

The loader returns an object called with the pre-processed batch (``batch["pixels"]``: ``[B, 96, 96]``
uint8) that returns one ``{"boxes", "scores", "labels"}`` dict per image (boxes ``xyxy``), as
torchmetrics' ``MeanAveragePrecision`` takes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

PROTOTYPES = np.array([1.0, np.pi / 4, 0.5])  # fill ratio of labels 1, 2, 3
MIN_PIXELS = 6


def components(mask: np.ndarray) -> np.ndarray:
    """4-connected component labels of a boolean image (0 = background), by min-label propagation with
    pointer jumping: every foreground pixel ends with the smallest flat index of its component."""
    h, w = mask.shape
    big = h * w
    label = np.where(mask, np.arange(big).reshape(h, w), big)
    while True:
        low = label.copy()
        np.minimum(low[1:], label[:-1], out=low[1:])
        np.minimum(low[:-1], label[1:], out=low[:-1])
        np.minimum(low[:, 1:], label[:, :-1], out=low[:, 1:])
        np.minimum(low[:, :-1], label[:, 1:], out=low[:, :-1])
        low = np.where(mask, low, big)
        flat = np.append(low.ravel(), big)
        low = np.where(mask, flat[np.minimum(low, big)], big)  # jump: take the label of the label's pixel
        if np.array_equal(low, label):
            return np.where(mask, label + 1, 0)
        label = low


def detect(image: np.ndarray, threshold: float = 100.0, scale: int = 1) -> dict[str, list[Any]]:
    """Detections of one image; ``scale`` > 1 first averages ``scale x scale`` blocks."""
    img = np.asarray(image, np.float32)
    if scale > 1:
        h, w = (s // scale * scale for s in img.shape)
        img = img[:h, :w].reshape(h // scale, scale, w // scale, scale).mean(axis=(1, 3))
    lab = components(img > threshold)
    ids, inverse, counts = np.unique(lab.ravel(), return_inverse=True, return_counts=True)
    ys, xs = np.indices(lab.shape).reshape(2, -1)
    boxes, scores, labels = [], [], []
    for k, comp in enumerate(ids):
        if comp == 0 or counts[k] * scale * scale < MIN_PIXELS:
            continue
        inside = inverse == k
        x1, x2, y1, y2 = xs[inside].min(), xs[inside].max() + 1, ys[inside].min(), ys[inside].max() + 1
        fill = counts[k] / ((x2 - x1) * (y2 - y1))
        distance = np.abs(PROTOTYPES - fill)
        best = int(np.argmin(distance))
        boxes.append([float(v * scale) for v in (x1, y1, x2, y2)])
        scores.append(float(np.clip(1.0 - distance[best] / 0.3, 0.05, 1.0)))
        labels.append(best + 1)
    return {"boxes": boxes, "scores": scores, "labels": labels}


class ShapeDetector:
    def __init__(self, scale: int = 1) -> None:
        self.scale = scale

    def __call__(self, batch: dict[str, Any]) -> list[dict[str, list[Any]]]:
        return [detect(image, scale=self.scale) for image in batch["pixels"]]


def load_full(model_path: str | None) -> ShapeDetector:
    return ShapeDetector(scale=1)


def load_downscaled(model_path: str | None) -> ShapeDetector:
    return ShapeDetector(scale=2)

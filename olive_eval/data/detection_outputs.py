"""Detections from a detector's named outputs: post-process type ``detection_outputs``.

A detector exported to ONNX (or any runtime) returns its detections as tensors, not as one dict per image.
This component names which outputs hold the boxes, scores and labels, and turns a batch's outputs into
``{"boxes" (xyxy), "scores", "labels"}`` per image, as the detection metrics read them. Two layouts:

- ``batched``: ``[B, K, 4]`` boxes and ``[B, K]`` scores and labels, K detections per image, padded; an
  optional ``num_detections`` output (``[B]``) says how many rows of each image are real (TF and ONNX
  NMS-style exports, TensorRT's EfficientNMS).
- ``flat``: ``[N, 4]`` boxes and ``[N]`` scores, labels and ``batch_index`` for the whole batch (exports
  built on ONNX ``NonMaxSuppression``, e.g. ``[N, 7]`` rows ``batch, x1, y1, x2, y2, class, score``).

Every reference is an output name, or ``{"output": name, "index": i | [i, ...]}`` to take columns of the
last axis of a packed output (``[B, K, 6]`` rows ``x1, y1, x2, y2, score, class``). Boxes are converted to
xyxy, so the metric's ``box_format`` stays ``xyxy``. Detections kept per image keep the model's order
(COCO breaks ties in score by that order).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BeforeValidator, Field, model_validator

from olive_eval.data.batch import Batch, Column, Outputs
from olive_eval.data.components import ComponentParams, register_component
from olive_eval.data.postprocess import PostProcess
from olive_eval.data.prepared import PrepareContext
from olive_eval.errors import EvaluationError
from olive_eval.strict_model import StrictModel

BoxFormat = Literal["xyxy", "xywh", "cxcywh"]


class OutputRef(StrictModel):
    """Columns of one model output: ``index`` picks along its last axis (an int drops that axis)."""

    output: str
    index: int | list[int] | None = None


def _as_ref(value: Any) -> Any:
    if isinstance(value, str):
        return {"output": value}
    if not isinstance(value, (dict, OutputRef)):
        raise ValueError(f'expected an output name or {{"output": name, "index": ...}}, got {value!r}')
    return value


#: An output name, or ``{"output", "index"}``; a name is read as ``{"output": name}``.
Ref = Annotated[OutputRef, BeforeValidator(_as_ref, json_schema_input_type=str | OutputRef)]


class DetectionOutputsParams(ComponentParams):
    boxes: Ref = Field(description="The output holding the boxes: [B, K, 4] (batched) or [N, 4] (flat).")
    scores: Ref = Field(description="The output holding the scores: [B, K] (batched) or [N] (flat).")
    labels: Ref | None = Field(None, description="The output holding the class ids; none: a one-class detector.")
    layout: Literal["batched", "flat"] = Field("batched", description="batched: padded per image; flat: rows.")
    num_detections: Ref | None = Field(None, description="batched: the output giving each image's real rows [B].")
    batch_index: Ref | None = Field(None, description="flat: the output giving each row's image in the batch [N].")
    box_format: BoxFormat = Field("xyxy", description="How the model gives boxes; they are passed on as xyxy.")
    label_offset: int = Field(0, description="Added to every label (0-based class index → 1-based category id).")
    score_threshold: float | None = Field(None, description="Keep detections scoring at least this.")
    max_detections: int | None = Field(None, ge=1, description="Keep at most this many per image, best first.")

    @model_validator(mode="after")
    def _check_layout(self) -> DetectionOutputsParams:
        if self.layout == "flat" and self.batch_index is None:
            raise ValueError("layout 'flat' needs batch_index: the output giving each detection's image")
        if self.layout == "flat" and self.num_detections is not None:
            raise ValueError("num_detections applies to layout 'batched' (flat rows are all real)")
        if self.layout == "batched" and self.batch_index is not None:
            raise ValueError("batch_index applies to layout 'flat'")
        return self


def _name(ref: OutputRef) -> str:
    return ref.output


# ---------------------------------------------------------------------------------------- pure kernels
def to_xyxy(boxes: np.ndarray, box_format: BoxFormat) -> np.ndarray:
    """``[..., 4]`` boxes in ``box_format`` as float64 xyxy."""
    b = np.asarray(boxes, np.float64)
    if box_format == "xyxy":
        return b.copy()
    if box_format == "xywh":
        return np.concatenate([b[..., :2], b[..., :2] + b[..., 2:]], axis=-1)
    half = b[..., 2:] / 2.0
    return np.concatenate([b[..., :2] - half, b[..., :2] + half], axis=-1)


def keep(scores: np.ndarray, threshold: float | None, max_detections: int | None) -> np.ndarray:
    """Indices of the detections kept, in their original order: score >= threshold, then the best
    ``max_detections`` (ties in score go to the earlier row, as a stable sort gives)."""
    index = np.arange(len(scores))
    if threshold is not None:
        index = index[scores >= threshold]
    if max_detections is not None and len(index) > max_detections:
        best = np.argsort(-scores[index], kind="stable")[:max_detections]
        index = np.sort(index[best])
    return index


def rows_per_image(image_of_row: np.ndarray, n_images: int) -> list[np.ndarray]:
    """Row indices of each image, in row order."""
    order = np.argsort(image_of_row, kind="stable")
    bounds = np.searchsorted(image_of_row[order], np.arange(n_images + 1))
    return [order[bounds[i] : bounds[i + 1]] for i in range(n_images)]


# ---------------------------------------------------------------------------------------- the component
@register_component("post-process", "detection_outputs")
class DetectionOutputs(PostProcess):
    """A detector's boxes/scores/labels outputs → one ``{"boxes", "scores", "labels"}`` dict per image."""

    Params = DetectionOutputsParams

    def __init__(self, params: ComponentParams) -> None:
        super().__init__(params)
        self._last: tuple[int, list[np.ndarray]] | None = None

    # ``logits`` (the raw output metrics may read) is each image's real boxes as the model gave them.
    def raw(self, outputs: Outputs) -> Column:
        if self._last is not None and self._last[0] == id(outputs):
            return self._last[1]
        return [boxes for boxes, _, _ in self._split(outputs, None, "post-process 'detection_outputs'")]

    def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
        p: DetectionOutputsParams = self.params  # type: ignore[assignment]
        last = batch.start + batch.size - 1
        where = f"post-process 'detection_outputs' (data config '{context.data_config}', examples {batch.start}-{last})"
        images = self._split(outputs, batch.size, where)
        self._last = (id(outputs), [boxes for boxes, _, _ in images])
        predictions = []
        for i, (boxes, scores, labels) in enumerate(images):
            bad = ~(np.isfinite(scores) & np.isfinite(boxes).all(axis=1))
            if bad.any():
                raise EvaluationError(
                    f"{where}: example {batch.start + i} has a NaN or infinite score or box coordinate "
                    f"(detection {int(np.argmax(bad))})"
                )
            kept = keep(scores, p.score_threshold, p.max_detections)
            predictions.append(
                {
                    "boxes": to_xyxy(boxes[kept], p.box_format).reshape(-1, 4),
                    "scores": scores[kept],
                    "labels": labels[kept] + p.label_offset,
                }
            )
        return predictions

    # -- reading the outputs
    def _output(self, outputs: Outputs, ref: OutputRef, role: str, where: str) -> np.ndarray:
        name = _name(ref)
        if name not in outputs:
            raise EvaluationError(
                f"{where}: {role} names output '{name}', but the model has no such output; "
                f"it gives: {', '.join(map(str, outputs)) or 'nothing'}"
            )
        try:
            value = np.asarray(outputs[name])
        except ValueError:
            value = np.empty(0, dtype=object)
        if value.dtype == object or not (np.issubdtype(value.dtype, np.number) or value.dtype == bool):
            raise EvaluationError(f"{where}: output '{name}' ({role}) is not a numeric tensor")
        if ref.index is not None:
            width = value.shape[-1] if value.ndim else 0
            picks = [ref.index] if isinstance(ref.index, int) else ref.index
            if not value.ndim or any(not -width <= j < width for j in picks):
                raise EvaluationError(
                    f"{where}: {role} takes index {ref.index} of the last axis of output '{name}', "
                    f"whose shape is {list(value.shape)}"
                )
            value = value[..., ref.index]
        return value

    def _shaped(
        self, value: np.ndarray, ref: OutputRef, role: str, want: tuple[int | None, ...], where: str
    ) -> np.ndarray:
        """``value`` as an array of shape ``want`` (None: any size); a trailing axis of 1 is dropped."""
        if value.ndim == len(want) + 1 and value.shape[-1] == 1 and want[-1:] != (1,):
            value = value[..., 0]
        fits = value.ndim == len(want) and all(w is None or w == s for w, s in zip(want, value.shape, strict=True))
        if not fits:
            shape = "[" + ", ".join("?" if w is None else str(w) for w in want) + "]"
            layout = self.params.layout  # type: ignore[attr-defined]
            raise EvaluationError(
                f"{where}: output '{_name(ref)}' ({role}) has shape {list(value.shape)}; "
                f"layout '{layout}' needs {shape}"
            )
        return value

    def _integers(self, value: np.ndarray, ref: OutputRef, role: str, where: str) -> np.ndarray:
        if value.dtype.kind == "f" and (~np.isfinite(value) | (value != np.round(value))).any():
            raise EvaluationError(f"{where}: output '{_name(ref)}' ({role}) must hold integers")
        return value.astype(np.int64)

    def _split(
        self, outputs: Outputs, batch_size: int | None, where: str
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per image: its real rows' boxes (as given), scores and labels (labels before the offset)."""
        p: DetectionOutputsParams = self.params  # type: ignore[assignment]
        lead: tuple[int | None, ...] = (batch_size, None) if p.layout == "batched" else (None,)
        boxes = self._shaped(self._output(outputs, p.boxes, "boxes", where), p.boxes, "boxes", (*lead, 4), where)
        k = boxes.shape[len(lead) - 1]
        rows: tuple[int | None, ...] = (*lead[:-1], k)
        scores = self._shaped(self._output(outputs, p.scores, "scores", where), p.scores, "scores", rows, where)
        if p.labels is None:
            labels = np.zeros(scores.shape, np.int64)
        else:
            raw_labels = self._output(outputs, p.labels, "labels", where)
            labels = self._integers(
                self._shaped(raw_labels, p.labels, "labels", rows, where), p.labels, "labels", where
            )
        scores = scores.astype(np.float64)
        if p.layout == "batched":
            n = boxes.shape[0]
            counts = np.full(n, k, np.int64)
            if p.num_detections is not None:
                value = self._output(outputs, p.num_detections, "num_detections", where)
                value = self._shaped(value, p.num_detections, "num_detections", (n,), where)
                counts = self._integers(value, p.num_detections, "num_detections", where)
                if ((counts < 0) | (counts > k)).any():
                    raise EvaluationError(
                        f"{where}: output '{_name(p.num_detections)}' (num_detections) holds "
                        f"{counts.tolist()[:8]}; each must be between 0 and {k} (the detections per image)"
                    )
            images = [(boxes[i, : counts[i]], scores[i, : counts[i]], labels[i, : counts[i]]) for i in range(n)]
            return images
        assert p.batch_index is not None
        value = self._output(outputs, p.batch_index, "batch_index", where)
        image = self._integers(
            self._shaped(value, p.batch_index, "batch_index", (k,), where), p.batch_index, "batch_index", where
        )
        n = batch_size if batch_size is not None else (int(image.max()) + 1 if k else 0)
        outside = image[(image < 0) | (image >= n)]
        if outside.size:
            raise EvaluationError(
                f"{where}: output '{_name(p.batch_index)}' (batch_index) holds image {int(outside[0])}; "
                f"the batch has {n} images (0 to {n - 1})"
            )
        return [(boxes[r], scores[r], labels[r]) for r in rows_per_image(image, n)]

"""Per-image box dicts gathered flat at once (flat_boxes) give the same DetectionSet as the per-image loop, and
bad input still gets the loop's message naming its image and box."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from olive_eval.metrics.detection import flat_boxes as flat_boxes_module
from olive_eval.metrics.detection import inputs
from olive_eval.metrics.detection.inputs import from_per_image


def _images(rng: np.random.Generator, n: int, box_format: str, float_labels: bool) -> tuple[list, list]:
    preds, refs = [], []
    for i in range(n):
        n_gt, n_dt = int(rng.integers(0, 6)), int(rng.integers(0, 9))
        if i == 1:
            n_gt = n_dt = 0  # an empty image
        xy, wh = rng.random((n_gt, 2)) * 100, rng.random((n_gt, 2)) * 50
        g = np.hstack([xy, xy + wh if box_format == "xyxy" else wh])
        xy, wh = rng.random((n_dt, 2)) * 100, rng.random((n_dt, 2)) * 50
        d = np.hstack([xy, xy + wh if box_format == "xyxy" else wh])
        labels = rng.integers(1, 5, n_gt)
        ref = {"boxes": g.tolist() if i % 3 == 0 else g, "labels": labels.astype(float) if float_labels else labels}
        if i % 2:
            ref["iscrowd"] = (rng.random(n_gt) < 0.2).astype(int)
            ref["area"] = np.where(rng.random(n_gt) < 0.5, rng.random(n_gt) * 900, 0.0)
        refs.append(ref)
        preds.append({"boxes": d, "scores": rng.random(n_dt), "labels": rng.integers(1, 6, n_dt).tolist()})
    return preds, refs


def _equal(a: inputs.DetectionSet, b: inputs.DetectionSet) -> None:
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if x is None or y is None:
            assert x is y, field.name
        elif isinstance(x, dict):  # text labels' names: none for integer labels, on either path
            assert x == y, field.name
        else:
            assert x.dtype == y.dtype and x.shape == y.shape, field.name
            np.testing.assert_array_equal(x, y, err_msg=field.name)


@pytest.mark.parametrize("box_format", ["xyxy", "xywh"])
@pytest.mark.parametrize("float_labels", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_flat_gathering_equals_the_per_image_loop(box_format, float_labels, seed, monkeypatch):
    preds, refs = _images(np.random.default_rng(seed), 40, box_format, float_labels)
    flat = from_per_image(preds, refs, box_format=box_format, score_thresholds=0.5)
    monkeypatch.setattr(inputs, "flat_boxes", lambda *args, **kwargs: None)
    loop = from_per_image(preds, refs, box_format=box_format, score_thresholds=0.5)
    _equal(flat, loop)
    assert len(flat.dt_scores) == sum(len(p["scores"]) for p in preds)


@pytest.mark.parametrize(
    ("image", "change", "message"),
    [
        (3, lambda p, r: p["scores"].__setitem__(1, np.nan), "image 3, detection 1 has a NaN score"),
        (2, lambda p, r: p["boxes"].__setitem__((0, 2), -1.0), "image 2 predictions, box 0 has x2 < x1"),
        (
            4,
            lambda p, r: r.__setitem__("labels", np.array(["a"] * len(r["labels"]))),
            "image 4: labels are text here and integers elsewhere",
        ),
        (5, lambda p, r: r.__setitem__("area", [1.0] * (len(r["labels"]) + 1)), "image 5 references: iscrowd/area"),
        (6, lambda p, r: p.pop("scores"), "image 6 predictions: missing key(s) ['scores']"),
        (7, lambda p, r: p["scores"].__setitem__(0, 1.5), "image 7, detection 0 has score 1.5 outside [0, 1]"),
    ],
)
def test_bad_input_is_named_by_its_image(image, change, message):
    preds, refs = _images(np.random.default_rng(5), 10, "xyxy", False)
    for p, r in zip(preds, refs, strict=True):  # every image has a box on both sides
        if len(r["labels"]) == 0 or len(p["scores"]) == 0:
            r.update(boxes=np.array([[0.0, 0.0, 5.0, 5.0]]), labels=np.array([1]))
            r.pop("iscrowd", None), r.pop("area", None)
            p.update(boxes=np.array([[1.0, 1.0, 5.0, 5.0]]), scores=np.array([0.5]), labels=[1])
    preds[image]["scores"] = np.asarray(preds[image]["scores"], np.float64)
    preds[image]["boxes"] = np.asarray(preds[image]["boxes"], np.float64)
    change(preds[image], refs[image])
    with pytest.raises(ValueError, match=re.escape(message)):
        from_per_image(preds, refs, score_thresholds=0.5)


def _arrays(rng: np.random.Generator, n: int, boxes: type, labels: type, optional: bool) -> tuple[list, list]:
    """Per-image dicts of ndarrays only, one dtype per key (as a model returns them), empty images included."""
    preds, refs = [], []
    for i in range(n):
        n_gt, n_dt = (0, 0) if i % 7 == 1 else (int(rng.integers(0, 6)), int(rng.integers(0, 9)))
        xy, wh = rng.random((n_gt, 2)) * 100, rng.random((n_gt, 2)) * 50
        ref = {"boxes": np.hstack([xy, wh]).astype(boxes), "labels": rng.integers(1, 5, n_gt).astype(labels)}
        if optional:
            ref["iscrowd"] = rng.random(n_gt) < 0.2
            ref["area"] = np.where(rng.random(n_gt) < 0.5, rng.random(n_gt) * 900, 0.0).astype(np.float32)
        refs.append(ref)
        xy, wh = rng.random((n_dt, 2)) * 100, rng.random((n_dt, 2)) * 50
        scores = np.round(rng.random(n_dt), 2).astype(np.float32)
        preds.append({"boxes": np.hstack([xy, wh]).astype(boxes), "scores": scores, "labels": rng.integers(1, 6, n_dt).astype(labels)})  # fmt: skip
    return preds, refs


def _columns(preds: list, refs: list, monkeypatch: pytest.MonkeyPatch, reader: str) -> dict | None:
    """flat_boxes with only one way of reading the dicts: ``reader`` is the one stubbed out."""
    with monkeypatch.context() as m:
        m.setattr(flat_boxes_module, reader, lambda *args: None)
        return flat_boxes_module.flat_boxes(preds, refs, box_format="xywh", score_thresholds=None)


@pytest.mark.parametrize(("boxes", "labels"), [(np.float64, np.int64), (np.float32, np.int32), (np.float64, float)])
@pytest.mark.parametrize("optional", [False, True])
def test_arrays_read_a_key_at_a_time_equal_each_image_read_in_turn(boxes, labels, optional, monkeypatch):
    preds, refs = _arrays(np.random.default_rng(3), 60, boxes, labels, optional)
    at_once = _columns(preds, refs, monkeypatch, "_read_each")  # the per-key reading alone
    in_turn = _columns(preds, refs, monkeypatch, "_gathered")
    assert at_once is not None and in_turn is not None and at_once.keys() == in_turn.keys()
    for key, value in at_once.items():
        assert value.dtype == in_turn[key].dtype and value.shape == in_turn[key].shape, key
        np.testing.assert_array_equal(value, in_turn[key], err_msg=key)
    flat = from_per_image(preds, refs, box_format="xywh")
    monkeypatch.setattr(inputs, "flat_boxes", lambda *args, **kwargs: None)
    _equal(flat, from_per_image(preds, refs, box_format="xywh"))


@pytest.mark.parametrize(
    "change",
    [
        lambda p, r: p.__setitem__("boxes", np.zeros(0)),  # an empty image's boxes without their 4 columns
        lambda p, r: p.__setitem__("scores", p["scores"].astype(np.float64)),  # one image's dtype differs
        lambda p, r: p.__setitem__("labels", p["labels"].tolist()),  # a list
        lambda p, r: r.pop("iscrowd"),  # iscrowd on some images only
        lambda p, r: p.__setitem__("scores", p["scores"][:, None]),  # [n, 1] scores
        lambda p, r: r.__setitem__("area", r["area"].astype(np.float64)),  # an empty image's area dtype differs
    ],
)
def test_what_reading_a_key_at_a_time_leaves_to_each_image(change, monkeypatch):
    preds, refs = _arrays(np.random.default_rng(4), 20, np.float64, np.int64, True)
    change(preds[1], refs[1])  # image 1 is empty
    assert _columns(preds, refs, monkeypatch, "_read_each") is None
    flat = from_per_image(preds, refs, box_format="xywh")
    monkeypatch.setattr(inputs, "flat_boxes", lambda *args, **kwargs: None)
    _equal(flat, from_per_image(preds, refs, box_format="xywh"))


def test_bad_arrays_are_named_by_their_image():
    preds, refs = _arrays(np.random.default_rng(6), 12, np.float64, np.int64, True)
    preds[5]["scores"][0] = np.nan
    with pytest.raises(ValueError, match=re.escape("image 5, detection 0 has a NaN score")):
        from_per_image(preds, refs, box_format="xywh")

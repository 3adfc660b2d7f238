"""COCO's bbox matching in C (_coco_match.c) against its numpy form and pycocotools: identical matches and
bit-identical precision / recall arrays on random scenes and on the edges (crowds, empty images, no detections,
ties in score and IoU, a maxDets cut, every area range, an IoU threshold of 1, annotation id 0, text labels and
label keys through compute)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from olive_eval.metrics import get_metric
from olive_eval.metrics.detection import native
from olive_eval.metrics.detection.coco import coco_params, evaluate_coco
from olive_eval.metrics.detection.inputs import DetectionSet, from_coco, from_per_image
from olive_eval.metrics.detection.matching import group_order, match_coco

from .scenes import random_scene, run_pycocotools, scene_to_coco
from .test_coco import assert_matches
from .test_label_keys import keyed_scene


def test_the_c_extension_is_built() -> None:
    assert native.coco_match_extension is not None


def both(monkeypatch: pytest.MonkeyPatch, run: Callable[[], Any]) -> tuple[Any, Any]:
    """``run()`` with the C extension, then with the numpy form."""
    compiled = run()
    monkeypatch.setattr(native, "coco_match_extension", None)
    fallback = run()
    monkeypatch.undo()
    return compiled, fallback


def sorted_matches(data: DetectionSet, max_det: int = 100, iou_thresholds: Any = None) -> np.ndarray:
    """Every match as rows (detection, area range, IoU threshold, ground truth), in one canonical order."""
    params = coco_params(iou_thresholds)
    m = match_coco(
        data,
        iou_type="bbox",
        iou_thresholds=params.iou_thresholds,
        max_det=max_det,
        area_ranges=params.area_ranges,
    )
    rows = np.stack([m.det[m.match_det], m.match_area, m.match_iou, m.match_gt])
    return rows[:, np.lexsort(rows[::-1])]


def assert_same(monkeypatch: pytest.MonkeyPatch, data: DetectionSet, ev: Any, **kwargs: Any) -> None:
    """Both forms: the same matches, the same arrays bit for bit, and pycocotools' values."""
    max_det = max(kwargs.get("max_dets", [100]))
    c_rows, np_rows = both(monkeypatch, lambda: sorted_matches(data, max_det, kwargs.get("iou_thresholds")))
    assert np.array_equal(c_rows, np_rows)
    c_res, np_res = both(monkeypatch, lambda: evaluate_coco(data, **kwargs))
    assert np.array_equal(c_res.precision, np_res.precision) and np.array_equal(c_res.recall, np_res.recall)
    assert_matches(c_res, ev, summary="max_dets" not in kwargs)


@pytest.mark.parametrize("seed", range(6))
def test_random_scenes_give_the_numpy_form_and_pycocotools(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    preds, refs = random_scene(seed, n_images=40, crowd_rate=0.2, max_gt=8, extra_dets=10)
    data = from_per_image(preds, refs)
    ev = run_pycocotools(*scene_to_coco(preds, refs))
    assert_same(monkeypatch, data, ev)
    assert (ev.eval["precision"] > 0).any()


@pytest.mark.parametrize("max_dets", [[1, 3, 7], [2]])
def test_a_max_dets_cut(monkeypatch: pytest.MonkeyPatch, max_dets: list[int]) -> None:
    preds, refs = random_scene(3, max_gt=8, extra_dets=12)
    ev = run_pycocotools(*scene_to_coco(preds, refs), max_dets=max_dets)
    assert_same(monkeypatch, from_per_image(preds, refs), ev, max_dets=max_dets)


def test_iou_thresholds_up_to_one(monkeypatch: pytest.MonkeyPatch) -> None:
    preds, refs = random_scene(5)
    preds[0] = {"boxes": refs[0]["boxes"].copy(), "scores": np.full(len(refs[0]["boxes"]), 0.5), "labels": refs[0]["labels"]}  # fmt: skip
    thresholds = [0.3, 0.5, 1.0]
    ev = run_pycocotools(*scene_to_coco(preds, refs), iou_thresholds=thresholds)
    assert_same(monkeypatch, from_per_image(preds, refs), ev, iou_thresholds=thresholds)


def test_edges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal ground truths, a crowd taking several detections, an empty image, predictions only, an IoU tie,
    areas on the range bounds, and a scene with no detections at all and one with no ground truth."""
    box = np.array([[10.0, 10, 50, 50]])
    empty_ref = {"boxes": np.zeros((0, 4)), "labels": np.zeros(0, np.int64)}
    refs = [
        {"boxes": np.repeat(box, 2, 0), "labels": np.array([1, 1])},
        {
            "boxes": np.array([[0.0, 0, 100, 100], [0, 0, 100, 100]]),
            "labels": np.array([1, 1]),
            "iscrowd": np.array([1, 0]),
        },
        empty_ref,
        empty_ref,
        {"boxes": np.array([[0.0, 0, 10, 10], [4, 0, 14, 10]]), "labels": np.array([1, 1])},
        {"boxes": np.array([[0.0, 0, 32, 32], [100, 100, 196, 196]]), "labels": np.array([2, 2])},
    ]
    preds = [
        {"boxes": np.repeat(box, 3, 0), "scores": np.array([0.9, 0.9, 0.9]), "labels": np.array([1, 1, 1])},
        {
            "boxes": np.array([[10.0, 10, 40, 40], [0, 0, 100, 100], [0, 0, 100, 100]]),
            "scores": np.array([0.8, 0.7, 0.8]),
            "labels": np.array([1, 1, 1]),
        },
        {"boxes": np.zeros((0, 4)), "scores": np.zeros(0), "labels": np.zeros(0, np.int64)},
        {"boxes": np.array([[1.0, 1, 9, 9]]), "scores": np.array([0.9]), "labels": np.array([7])},
        {
            "boxes": np.array([[2.0, 0, 12, 10], [0, 0, 10, 10]]),
            "scores": np.array([0.95, 0.6]),
            "labels": np.array([1, 1]),
        },
        {
            "boxes": np.array([[0.0, 0, 32, 32], [100, 100, 196, 196], [1, 1, 33, 33]]),
            "scores": np.array([0.7, 0.7, 0.8]),
            "labels": np.array([2, 2, 2]),
        },
    ]
    assert_same(monkeypatch, from_per_image(preds, refs), run_pycocotools(*scene_to_coco(preds, refs)))
    no_dets = [{"boxes": np.zeros((0, 4)), "scores": np.zeros(0), "labels": np.zeros(0, np.int64)} for _ in refs]
    assert_same(monkeypatch, from_per_image(no_dets, refs), run_pycocotools(*scene_to_coco(no_dets, refs)))
    no_gt = [empty_ref] * len(preds)
    assert_same(monkeypatch, from_per_image(preds, no_gt), run_pycocotools(*scene_to_coco(preds, no_gt)))


def test_annotation_id_zero_from_coco_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """pycocotools reads a match to annotation id 0 as none: the flag is applied after either form's matching."""
    preds, refs = random_scene(11, n_images=20)
    gt, dets = scene_to_coco(preds, refs)
    first = next(a for a in gt["annotations"] if a["iscrowd"] == 0)
    first["id"] = 0
    dets.append({**{k: first[k] for k in ("image_id", "category_id", "bbox")}, "score": 1.0})
    assert_same(monkeypatch, from_coco(gt, dets), run_pycocotools(gt, dets))


@pytest.mark.parametrize("name", ["map", "map_50", "map_small", "mar_10", "mar_large"])
def test_text_labels_and_label_keys_through_compute(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    preds, refs, _ = keyed_scene(0)
    c_score, np_score = both(monkeypatch, lambda: get_metric(name).compute(preds, refs))
    assert c_score.value == np_score.value or (np.isnan(c_score.value) and np.isnan(np_score.value))
    assert c_score.details == np_score.details


@pytest.mark.parametrize("seed", range(4))
def test_group_order_is_lexsort(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Ties in score (in input order), -0.0 beside 0.0, keys never used, one key with many rows (the merge sort)."""
    rng = np.random.default_rng(seed)
    n = 3000
    keys = rng.integers(0, 50, n) if seed % 2 else np.sort(rng.integers(0, 3000, n))
    keys[rng.random(n) < 0.2] = 7  # one key with hundreds of rows
    scores = np.round(rng.random(n), 1 + seed % 2)
    scores[rng.random(n) < 0.05] = -0.0
    scores[rng.random(n) < 0.05] = 0.0
    expected = np.lexsort((-scores, keys))
    got = np.frombuffer(native.coco_match_extension.group_order(keys, scores, 3000), np.int64)
    assert np.array_equal(got, expected)
    for n_keys in (3000, 2**16, 10**9):  # numpy: 16-bit keys radix-sorted, wider ones lexsort; C unless too wide
        compiled, fallback = both(monkeypatch, lambda n=n_keys: group_order(keys, scores, n))
        assert np.array_equal(compiled, expected) and np.array_equal(fallback, expected)
    ranks = np.unique(scores, return_inverse=True)[1].astype(np.int16)  # accumulation's scores may be ranks
    assert np.array_equal(group_order(keys, ranks, 3000), expected)


def test_group_order_refuses_bad_keys() -> None:
    with pytest.raises(ValueError, match="group_order: a key is out of range"):
        native.coco_match_extension.group_order(np.array([0, 5]), np.zeros(2), 5)


def test_bootstrap_resamples_give_the_numpy_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many lists of images (repeats included) pooled into one accumulation: the same values from both forms,
    and the identity list is the plain evaluation."""
    preds, refs = random_scene(2, n_images=25)
    rng = np.random.default_rng(0)
    idx = np.concatenate([np.arange(25)[None], rng.integers(0, 25, (30, 25))])

    def run() -> np.ndarray:
        metric = get_metric("map")
        return metric.reduce_resamples(metric.statistics(preds, refs), idx)

    compiled, fallback = both(monkeypatch, run)
    assert np.array_equal(compiled, fallback, equal_nan=True)
    assert compiled[0] == pytest.approx(run_pycocotools(*scene_to_coco(preds, refs)).stats[0], abs=1e-12)
    assert np.unique(compiled).size > 10  # the resamples differ

"""COCO's accumulation in C (_coco_accumulate.c) against its numpy form and pycocotools: bit-identical precision
and recall arrays on random outcomes and on the edges (no detections, no ground truth for a category, crowds,
maxDets cuts, ties in score, -0.0 beside 0.0, infinite scores, every area range, custom recall thresholds), the
same summaries and bootstrap values through the metrics, and the kernel's refusals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from olive_eval.metrics import get_metric
from olive_eval.metrics.detection import native
from olive_eval.metrics.detection.coco import CocoOutcomes, accumulate, coco_params, evaluate_coco
from olive_eval.metrics.detection.inputs import from_per_image

from .scenes import random_scene, run_pycocotools, scene_to_coco
from .test_coco import assert_matches


def test_the_c_extension_is_built() -> None:
    assert native.coco_accumulate_extension is not None


def both(monkeypatch: pytest.MonkeyPatch, run: Callable[[], Any]) -> tuple[Any, Any]:
    """``run()`` with the compiled accumulation, then with the numpy form."""
    compiled = run()
    monkeypatch.setattr(native, "coco_accumulate_extension", None)
    fallback = run()
    monkeypatch.undo()
    return compiled, fallback


def random_outcomes(seed: int, n_det: int, n_cat: int, n_area: int, n_thr: int, max_rank: int) -> CocoOutcomes:
    """Outcomes as a matching leaves them, drawn at random: scores with ties (and -0.0, 0.0, inf), ranks up to
    ``max_rank``, at most one match per (detection, slice), TPs and no-FPs in every mix, categories without
    detections or without ground truth."""
    rng = np.random.default_rng(seed)
    category = np.sort(rng.integers(0, n_cat, n_det))
    score = np.round(rng.random(n_det), 1 + seed % 3)
    score[rng.random(n_det) < 0.05] = -0.0
    score[rng.random(n_det) < 0.05] = 0.0
    score[rng.random(n_det) < 0.02] = np.inf
    chosen = rng.random((n_det, n_area * n_thr)) < 0.3
    hit_det, hit_slice = np.nonzero(chosen)
    shuffle = rng.permutation(len(hit_det))  # matches in any order
    tp = rng.random(len(hit_det)) < 0.6
    npig = rng.integers(0, max(6, n_det // n_cat // 2), (n_cat, n_area))
    npig[rng.random((n_cat, n_area)) < 0.2] = 0
    npig[-1, :], npig[0, 0] = 0, 10 * n_det  # a category without ground truth, one whose recall stays low
    return CocoOutcomes(
        det_category=category,
        det_score=score,
        det_rank=rng.integers(0, max_rank, n_det),
        det_out_of_range=rng.random((n_det, n_area)) < 0.3,
        hit_det=hit_det[shuffle],
        hit_slice=hit_slice[shuffle],
        hit_tp=tp[shuffle],
        hit_not_fp=(tp | (rng.random(len(tp)) < 0.5))[shuffle],
        npig=npig,
    )


def assert_identical(monkeypatch: pytest.MonkeyPatch, m: CocoOutcomes, params: Any, n_cat: int) -> None:
    (c_prec, c_rec), (np_prec, np_rec) = both(monkeypatch, lambda: accumulate(m, params, n_cat))
    assert c_prec.shape == np_prec.shape and c_rec.shape == np_rec.shape
    assert c_prec.dtype == np.float64 and c_rec.dtype == np.float64
    assert np.array_equal(c_prec, np_prec) and np.array_equal(c_rec, np_rec)


@pytest.mark.parametrize("seed", range(8))
def test_random_outcomes_give_the_numpy_form(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    n_area, max_dets = 1 + seed % 4, [(100,), (1, 10, 100), (2, 5), (3,)][seed % 4]
    params = replace(
        coco_params(iou_thresholds=np.linspace(0.5, 0.95, 1 + seed % 10).tolist(), max_dets=max_dets),
        area_ranges=np.zeros((n_area, 2)),
        area_labels=tuple(f"a{a}" for a in range(n_area)),
    )
    n_cat = 3 + seed
    m = random_outcomes(seed, 400 + 100 * seed, n_cat, n_area, len(params.iou_thresholds), max_rank=12)
    assert_identical(monkeypatch, m, params, n_cat)
    precision, _ = accumulate(m, params, n_cat)
    assert (precision == -1).any() and (precision > 0).any() and (precision == 0).any()


@pytest.mark.parametrize("rec", [[0.0], [0.0, 0.0, 0.3, 0.3, 1.0], [0.2, 0.21, 0.5, 0.99, 1.0]])
def test_recall_thresholds(monkeypatch: pytest.MonkeyPatch, rec: list[float]) -> None:
    """Repeated thresholds, one threshold, thresholds between the recall steps j / npig."""
    params = replace(coco_params(rec_thresholds=rec), area_ranges=np.zeros((2, 2)), area_labels=("a", "b"))
    m = random_outcomes(5, 600, 4, 2, len(params.iou_thresholds), max_rank=150)
    assert_identical(monkeypatch, m, params, 4)


def test_many_detections_per_category(monkeypatch: pytest.MonkeyPatch) -> None:
    """One category with thousands of detections (every radix pass), distinct and tied scores alike."""
    params = replace(coco_params(), area_ranges=np.zeros((1, 2)), area_labels=("all",))
    m = random_outcomes(1, 20000, 2, 1, len(params.iou_thresholds), max_rank=300)
    m = replace(m, det_score=np.random.default_rng(1).normal(size=20000) * 1e3, npig=np.array([[900], [1]]))
    assert_identical(monkeypatch, m, params, 2)
    assert_identical(monkeypatch, replace(m, det_score=np.round(m.det_score, -2)), params, 2)


def test_no_detections_no_matches_no_categories(monkeypatch: pytest.MonkeyPatch) -> None:
    params = coco_params()
    n_thr, n_area = len(params.iou_thresholds), len(params.area_ranges)
    none = np.zeros(0, np.int64)
    empty = CocoOutcomes(
        det_category=none,
        det_score=np.zeros(0),
        det_rank=none,
        det_out_of_range=np.zeros((0, n_area), bool),
        hit_det=none,
        hit_slice=none,
        hit_tp=np.zeros(0, bool),
        hit_not_fp=np.zeros(0, bool),
        npig=np.array([[3, 0, 1, 2], [0, 0, 0, 0]]),
    )
    assert_identical(monkeypatch, empty, params, 2)
    precision, recall = accumulate(empty, params, 2)
    assert (precision[:, :, 0, 0] == 0).all() and (recall[:, 1] == -1).all()
    unmatched = random_outcomes(3, 300, 2, n_area, n_thr, max_rank=100)
    no_hits = replace(unmatched, hit_det=none, hit_slice=none, hit_tp=empty.hit_tp, hit_not_fp=empty.hit_not_fp)
    assert_identical(monkeypatch, no_hits, params, 2)
    assert_identical(monkeypatch, replace(empty, npig=np.zeros((0, n_area), np.int64)), params, 0)


@pytest.mark.parametrize("seed", range(4))
def test_scenes_give_the_numpy_form_and_pycocotools(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Crowds, a maxDets cut, every area range, through evaluate_coco."""
    preds, refs = random_scene(seed, n_images=30, crowd_rate=0.2, max_gt=8, extra_dets=12)
    data = from_per_image(preds, refs)
    max_dets = [[1, 10, 100], [1, 3, 7], [2], [100]][seed]
    ev = run_pycocotools(*scene_to_coco(preds, refs), max_dets=max_dets)
    c_res, np_res = both(monkeypatch, lambda: evaluate_coco(data, max_dets=max_dets))
    assert np.array_equal(c_res.precision, np_res.precision) and np.array_equal(c_res.recall, np_res.recall)
    assert_matches(c_res, ev, summary=max_dets == [1, 10, 100])


def test_ties_in_score_and_a_category_without_ground_truth(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every score tied (pycocotools keeps image order, then rank), and a label that only predictions name."""
    preds, refs = random_scene(7, n_images=20, extra_dets=6)
    for p in preds:
        p["scores"] = np.full(len(p["scores"]), 0.5)
    preds[0] = {**preds[0], "labels": np.full(len(preds[0]["labels"]), 99)}
    data = from_per_image(preds, refs)
    ev = run_pycocotools(*scene_to_coco(preds, refs))
    c_res, np_res = both(monkeypatch, lambda: evaluate_coco(data))
    assert np.array_equal(c_res.precision, np_res.precision) and np.array_equal(c_res.recall, np_res.recall)
    assert_matches(c_res, ev)
    assert (c_res.precision[:, :, list(c_res.category_ids).index(99)] == -1).all()


@pytest.mark.parametrize("name", ["map", "map_75", "map_medium", "mar_1", "mar_100", "mar_small"])
def test_bootstrap_resamples_give_the_numpy_form(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Many lists of images (repeats included) pooled into one accumulation over virtual categories."""
    preds, refs = random_scene(4, n_images=25, crowd_rate=0.1)
    idx = np.concatenate([np.arange(25)[None], np.random.default_rng(1).integers(0, 25, (40, 25))])

    def run() -> tuple[np.ndarray, Any]:
        metric = get_metric(name)
        stats = metric.statistics(preds, refs)
        return metric.reduce_resamples(stats, idx), metric.compute(preds, refs)

    (c_values, c_score), (np_values, np_score) = both(monkeypatch, run)
    assert np.array_equal(c_values, np_values, equal_nan=True)
    assert c_score.value == np_score.value or (np.isnan(c_score.value) and np.isnan(np_score.value))
    assert c_score.details == np_score.details
    assert np.unique(c_values).size > 5


def test_the_kernel_refuses_inconsistent_inputs() -> None:
    params = coco_params()
    m = random_outcomes(0, 50, 2, 4, 10, max_rank=5)
    args = [m.det_category, m.det_score, m.det_rank, m.det_out_of_range.view(np.uint8), m.hit_det, m.hit_slice]
    args += [m.hit_tp.view(np.uint8), m.hit_not_fp.view(np.uint8), m.npig, params.rec_thresholds, np.array([100])]
    kernel = native.coco_accumulate_extension.accumulate  # type: ignore[union-attr]
    kernel(*args, 10, 4)
    with pytest.raises(ValueError, match="inconsistent array lengths"):
        kernel(*args, 10, 3)
    bad = list(args)
    bad[1] = np.where(np.arange(50) == 7, np.nan, m.det_score)
    with pytest.raises(ValueError, match="a score is NaN"):
        kernel(*bad, 10, 4)
    bad = list(args)
    bad[0] = m.det_category + 5
    with pytest.raises(ValueError, match="a category is out of range"):
        kernel(*bad, 10, 4)
    bad = list(args)
    bad[5] = m.hit_slice + 40
    with pytest.raises(ValueError, match="slice is out of range"):
        kernel(*bad, 10, 4)
    with pytest.raises(TypeError, match="8-byte items"):
        kernel(*args[:2], m.det_rank.astype(np.int32), *args[3:], 10, 4)

"""Detection's per-image matching statistics: values never come from a stale memo, sub-types of a run share
one matching per batch, a bootstrap resample re-accumulates from the statistics (equal to pycocotools on the
resampled image list) instead of matching again, and no images is one clear error."""

from __future__ import annotations

import importlib
import math
import sys

import numpy as np
import pytest

import olive_eval
from olive_eval import evaluate
from olive_eval.metrics import get_metric
from olive_eval.metrics.detection.matching import match_coco
from olive_eval.metrics.detection.metrics import KEYS, compute_all
from olive_eval.metrics.resampling import ExampleStats, paired_distribution
from olive_eval.records.parquet import read_records

from .scenes import (
    mask_scene_to_coco,
    random_mask_scene,
    random_scene,
    replay_run_config,
    run_pycocotools,
    scene_to_coco,
)

TOL = 1e-12
COCO_KEYS = ("map", "map_50", "map_75", "map_small", "map_medium", "map_large")
COCO_KEYS += ("mar_1", "mar_10", "mar_100", "mar_small", "mar_medium", "mar_large")


def _box(x: float) -> dict:
    return {"boxes": np.array([[x, x, x + 10.0, x + 10.0]]), "scores": np.array([0.9]), "labels": np.array([1])}


def _count_matchings(monkeypatch) -> list[int]:
    """Every call of COCO matching, from whichever detection module calls it."""
    calls: list[int] = []

    def counted(*args, **kwargs):
        calls.append(1)
        return match_coco(*args, **kwargs)

    importlib.import_module("olive_eval.metrics.detection.coco")  # evaluate_coco matches too
    for name, module in list(sys.modules.items()):
        if name.startswith("olive_eval.metrics.detection.") and getattr(module, "match_coco", None) is match_coco:
            monkeypatch.setattr(module, "match_coco", counted)
    return calls


def _resampled(items: list, row: np.ndarray) -> list:
    return [items[i] for i in row]


# ------------------------------------------------------------------------------------------ no stale value
def test_an_in_place_edit_of_the_boxes_changes_the_value() -> None:
    preds, refs = [_box(0.0)], [{"boxes": np.array([[0.0, 0.0, 10.0, 10.0]]), "labels": np.array([1])}]
    assert olive_eval.compute_metric("map", preds, refs) == pytest.approx(1.0)
    preds[0]["boxes"][:] = [[50.0, 50.0, 60.0, 60.0]]  # same dict, same array, other boxes
    assert olive_eval.compute_metric("map", preds, refs) == 0.0
    assert olive_eval.compute_metric("map", [{k: v.copy() for k, v in p.items()} for p in preds], refs) == 0.0
    refs[0]["boxes"][:] = [[50.0, 50.0, 60.0, 60.0]]  # the references move there too
    assert olive_eval.compute_metric("map", preds, refs) == pytest.approx(1.0)
    assert compute_all(preds, refs)["map"] == pytest.approx(1.0)


def test_every_sub_type_is_recomputed_after_an_edit() -> None:
    preds, refs = random_scene(4)
    before = {key: get_metric(key).compute(preds, refs).value for key in COCO_KEYS}
    for p in preds:
        p["scores"][:] = p["scores"][::-1].copy()  # in place: other ranks, so other values
    after = {key: get_metric(key).compute(preds, refs).value for key in COCO_KEYS}
    ref = run_pycocotools(*scene_to_coco(preds, refs)).stats
    for key, value in zip(COCO_KEYS, ref, strict=True):
        assert math.isnan(after[key]) if value == -1 else after[key] == pytest.approx(value, abs=TOL), key
    assert after["map"] != before["map"]


# ------------------------------------------------------------------------------------------ shared work
def test_compute_all_matches_once(monkeypatch) -> None:
    calls = _count_matchings(monkeypatch)
    preds, refs = random_scene(11)
    values = compute_all(preds, refs)
    assert len(calls) == 1 and set(values) == set(KEYS)
    ref = run_pycocotools(*scene_to_coco(preds, refs)).stats
    assert values["map"] == pytest.approx(ref[0], abs=TOL) and values["mar"] == pytest.approx(ref[8], abs=TOL)


def test_sub_types_of_a_run_share_the_matching(tmp_path, monkeypatch) -> None:
    preds, refs = random_scene(3, n_images=25)
    calls = _count_matchings(monkeypatch)
    evaluate(replay_run_config(tmp_path / "one", {"replay": preds}, refs, [{"name": "map"}], batch_size=4))
    alone = len(calls)
    subs = [{"name": key} for key in COCO_KEYS]
    subs[0].update(priority=1, metric_config={"class_names": {str(i): f"c{i}" for i in range(5)}})  # same matching
    calls.clear()
    result = evaluate(replay_run_config(tmp_path, {"replay": preds}, refs, subs, batch_size=4))
    assert 1 <= len(calls) == alone <= 7  # at most once per batch of 4, however many sub-types read it
    ref = run_pycocotools(*scene_to_coco(preds, refs)).stats
    metrics = result.models["replay"].metrics
    for key, value in zip(COCO_KEYS, ref, strict=True):
        got = metrics[f"det-{key}"].value
        assert got is None if value == -1 else got == pytest.approx(value, abs=TOL), key
    records = list(read_records(tmp_path / "out" / "instances" / "replay" / "det.parquet"))
    assert [r["index"] for r in records] == list(range(25)) and "map" not in records[0]


def test_a_bad_box_in_a_later_batch_names_its_image(tmp_path) -> None:
    preds, refs = random_scene(5, n_images=12)
    preds[9] = {**_box(0.0), "boxes": np.array([[5.0, 0.0, 2.0, 10.0]])}
    result = evaluate(replay_run_config(tmp_path, {"replay": preds}, refs, [{"name": "map"}], batch_size=4))
    error = result.models["replay"].metrics["det-map"].error
    assert "image 9 predictions, box 0 has x2 < x1" in error and "\n" not in error


# ------------------------------------------------------------------------------------------ resamples
def _lists(n: int, seed: int, count: int = 6) -> np.ndarray:
    """Bootstrap rows with repeats, the identity, and a reversed order (score ties follow the image order)."""
    rows = np.random.default_rng(seed).integers(0, n, (count, n))
    return np.concatenate([rows, np.arange(n)[None], np.arange(n)[::-1][None], np.zeros((1, n), np.int64)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_resample_equals_pycocotools_on_the_resampled_images(seed: int) -> None:
    preds, refs = random_scene(seed, n_images=16)  # crowds, empty images, tied scores, prediction-only labels
    idx = _lists(len(preds), seed)
    stats = get_metric("map").statistics(preds, refs)
    values = {key: get_metric(key).reduce_resamples(stats, idx) for key in COCO_KEYS}
    for b, row in enumerate(idx):
        # duplicated images get distinct ids: scene_to_coco numbers the resampled list 0..n-1
        ref = run_pycocotools(*scene_to_coco(_resampled(preds, row), _resampled(refs, row))).stats
        for key, value in zip(COCO_KEYS, ref, strict=True):
            ours = values[key][b]
            assert math.isnan(ours) if value == -1 else ours == pytest.approx(value, abs=TOL), (b, key)


def test_a_resample_with_other_parameters_equals_pycocotools() -> None:
    preds, refs = random_scene(8, n_images=14, max_gt=8, extra_dets=12)
    config = {"max_dets": [1, 3, 7], "iou_thresholds": [0.3, 0.5, 0.9, 1.0]}
    idx = _lists(len(preds), 8, count=4)
    stats = get_metric("map", config).statistics(preds, refs)
    for b, row in enumerate(idx):
        ev = run_pycocotools(
            *scene_to_coco(_resampled(preds, row), _resampled(refs, row)),
            max_dets=config["max_dets"],
            iou_thresholds=config["iou_thresholds"],
        )
        precision, recall = ev.eval["precision"], ev.eval["recall"]  # [T, R, K, A, M], [T, K, A, M]
        expected = {
            "map": precision[:, :, :, 0, 2],
            "map_50": precision[1, :, :, 0, 2],
            "map_large": precision[:, :, :, 3, 2],
            "mar_1": recall[:, :, 0, 0],
            "mar": recall[:, :, 0, 2],
            "mar_small": recall[:, :, 1, 2],
        }
        for key, ref in expected.items():
            value = get_metric(key, config).reduce_resamples(stats, row[None])[0]
            valid = ref[ref > -1]
            assert math.isnan(value) if not valid.size else value == pytest.approx(valid.mean(), abs=TOL), (b, key)


def test_a_resample_of_masks_equals_pycocotools_segm() -> None:
    preds, refs = random_mask_scene(3, n_images=10)
    idx = _lists(len(preds), 3, count=3)
    metric = get_metric("map", {"iou_type": "segm"})
    values = metric.reduce_resamples(metric.statistics(preds, refs), idx)
    for b, row in enumerate(idx):
        ev = run_pycocotools(*mask_scene_to_coco(_resampled(preds, row), _resampled(refs, row)), iou_type="segm")
        assert math.isnan(values[b]) if ev.stats[0] == -1 else values[b] == pytest.approx(ev.stats[0], abs=TOL), b


@pytest.mark.parametrize("key", ["map", "map_50", "map_75", "mar"])
def test_a_valor_resample_equals_the_full_valor_evaluation(key: str) -> None:
    preds, refs = random_scene(6, n_images=15)
    for p in preds:
        p["scores"] = np.clip(p["scores"], 0.05, 1.0)  # valor ignores scores at 0
    config = {"convention": "valor", "score_thresholds": [0.25, 0.5]}
    metric = get_metric(key, config)
    idx = _lists(len(preds), 6)
    values = metric.reduce_resamples(metric.statistics(preds, refs), idx)
    for b, row in enumerate(idx):
        full = get_metric(key, config).compute(_resampled(preds, row), _resampled(refs, row)).value
        assert values[b] == pytest.approx(full, abs=TOL), b


def test_the_paired_bootstrap_reads_the_statistics_and_equals_each_resample_evaluated() -> None:
    preds, refs = random_scene(9, n_images=20)
    worse = [{**p, "scores": p["scores"][::-1].copy()} for p in preds]
    base = ExampleStats(get_metric("map"), fields=(preds, refs))
    cand = ExampleStats(get_metric("map"), fields=(worse, refs))
    theta_base, theta_cand = paired_distribution(base, cand, 30, seed=5)
    draws = np.random.default_rng(5).integers(0, 20, (30, 20))  # the draws of the bootstrap (scipy's)
    for b in (0, 7, 29):
        row = draws[b]
        assert theta_base[b] == pytest.approx(
            run_pycocotools(*scene_to_coco(_resampled(preds, row), _resampled(refs, row))).stats[0], abs=TOL
        )
        assert theta_cand[b] == pytest.approx(
            get_metric("map").compute(_resampled(worse, row), _resampled(refs, row)).value, abs=TOL
        )


def test_a_confident_goal_matches_no_more_than_a_plain_one(tmp_path, monkeypatch) -> None:
    preds, refs = random_scene(12, n_images=10)
    worse = [{**p, "scores": np.round(p["scores"] * 0.5, 2)} for p in preds]
    calls = _count_matchings(monkeypatch)
    counts = []
    for confidence in (None, 0.9):
        goal = {"type": "max-degradation", "value": 0.5, "confidence": confidence, "n_resamples": 200}
        config = replay_run_config(
            tmp_path / str(confidence), {"base": preds, "cand": worse}, refs, [{"name": "map", "goal": goal}], 5
        )
        calls.clear()
        result = evaluate(config)
        counts.append(len(calls))
    assert 2 <= counts[1] == counts[0] <= 4  # two models, at most once per batch; the 200 resamples match nothing
    outcome = result.models["cand"].metrics["det-map"].goal
    assert outcome.confidence == 0.9 and outcome.probability is not None


# ------------------------------------------------------------------------------------------ no images
@pytest.mark.parametrize("config", [{}, {"convention": "valor"}])
def test_no_images_is_one_clear_line(config) -> None:
    with pytest.raises(ValueError) as raised:
        olive_eval.compute_metric("map", [], [], **config)
    message = str(raised.value)
    assert message == "map is undefined here: there are no images to score (the predictions and references are empty)"


def test_check_metric_takes_a_metric_with_statistics_but_no_per_example_score():
    from olive_eval.testing import check_metric

    box = {"boxes": np.array([[0.0, 0.0, 10.0, 10.0]]), "labels": np.array([1])}
    predictions = [{**box, "scores": np.array([0.9])}] * 3
    result = check_metric("map", predictions, [box] * 3, global_target=1.0)
    assert (result.value, result.instance_scores) == (1.0, None)
    with pytest.raises(AssertionError, match="'map' has no per-example scores to compare"):
        check_metric("map", predictions, [box] * 3, instance_targets=[1.0, 1.0, 1.0])

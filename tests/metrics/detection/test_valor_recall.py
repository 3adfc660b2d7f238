"""Detection recall at several score thresholds, ``convention: valor``, through the registered ``mar`` sub-type
against valor-lite's own ``compute_precision_recall`` on many random scenes: ``mar`` with one score threshold is
valor-lite's ``mAR`` at it (``per_class``: ``AR`` per label), with several it is ``mARAveragedOverScores``
(``per_class``: ``ARAveragedOverScores``). A bootstrap resample of images is valor-lite on those images."""

from __future__ import annotations

import numpy as np
import pytest
from valor_lite.object_detection import MetricType

from olive_eval.metrics import get_metric
from olive_eval.metrics.resampling import ExampleStats, distribution
from olive_eval.metrics.stats import index_chunks

from .scenes import random_scene, to_xywh
from .test_valor import valor_lite

TOL = 1e-12
SEEDS = range(150)
SCORE_GRID = (0.0, 0.15, 0.35, 0.5, 0.7, 0.9)


def scene(seed: int) -> tuple[list[dict], list[dict], list[float], list[float]]:
    rng = np.random.default_rng(1000 + seed)
    preds, refs = random_scene(
        seed, n_images=int(rng.integers(3, 16)), n_labels=int(rng.integers(1, 5)), crowd_rate=0.0, score_decimals=2
    )
    preds = [{**p, "boxes": to_xywh(p["boxes"])} for p in preds]
    refs = [{"boxes": to_xywh(r["boxes"]), "labels": r["labels"]} for r in refs]
    ious = sorted(rng.choice([0.3, 0.5, 0.75, 0.9], size=int(rng.integers(1, 4)), replace=False).tolist())
    scores = sorted(rng.choice(SCORE_GRID, size=int(rng.integers(2, 5)), replace=False).tolist())
    return preds, refs, ious, scores


def by_label(ref: dict, kind: MetricType, **params: object) -> dict[str, float]:
    """valor-lite's values of one metric type, by label, at the given other parameters."""
    out = {}
    for (k, key), value in ref.items():
        p = dict(key)
        if k == kind and all(p.get(n) == (tuple(v) if isinstance(v, list) else v) for n, v in params.items()):
            out[p["label"]] = value
    return out


def one(ref: dict, kind: MetricType, **params: object) -> float:
    wanted = {n: tuple(v) if isinstance(v, list) else v for n, v in params.items()}
    (value,) = [v for (k, key), v in ref.items() if k == kind and dict(key) == wanted]
    return value


def test_mar_at_several_score_thresholds_matches_valor_lite() -> None:
    checks = {"AR, mAR at one score threshold": 0, "ARAveragedOverScores, mARAveragedOverScores": 0}
    mismatches = dict.fromkeys(checks, 0)
    for seed in SEEDS:
        preds, refs, ious, scores = scene(seed)
        ref = valor_lite(preds, refs, ious, scores)
        config = {"convention": "valor", "box_format": "xywh", "iou_thresholds": ious}
        cases = [([s], MetricType.mAR, MetricType.AR, {"score_threshold": s}) for s in scores]
        cases.append((scores, MetricType.mARAveragedOverScores, MetricType.ARAveragedOverScores, {}))
        for thresholds, mean_kind, label_kind, params in cases:
            what = "AR, mAR at one score threshold" if len(thresholds) == 1 else list(checks)[1]
            if len(thresholds) > 1:
                params = {"score_thresholds": thresholds}
            score = get_metric("mar", {**config, "score_thresholds": thresholds}).compute(preds, refs)
            expected_labels = by_label(ref, label_kind, iou_thresholds=ious, **params)
            expected_mean = one(ref, mean_kind, iou_thresholds=ious, **params)
            got = score.details["per_class"]
            assert set(got) == set(expected_labels), seed
            mismatches[what] += sum(abs(got[k] - v) > TOL for k, v in expected_labels.items())
            mismatches[what] += int(abs(score.value - expected_mean) > TOL)
            checks[what] += len(expected_labels) + 1
    print("\ndetection mar convention=valor vs valor-lite (checks, mismatches):")
    for what in checks:
        print(f"  {what}: {checks[what]}, {mismatches[what]}")
    assert mismatches == dict.fromkeys(checks, 0)
    assert min(checks.values()) > 600


def test_thresholds_change_mar() -> None:
    """The option takes effect: a higher score threshold drops detections, so recall falls."""
    preds, refs, ious, _ = scene(3)
    config = {"convention": "valor", "box_format": "xywh", "iou_thresholds": ious}
    low = get_metric("mar", {**config, "score_thresholds": [0.0]}).compute(preds, refs).value
    high = get_metric("mar", {**config, "score_thresholds": [0.9]}).compute(preds, refs).value
    both = get_metric("mar", {**config, "score_thresholds": [0.0, 0.9]}).compute(preds, refs).value
    assert low > high and both == pytest.approx((low + high) / 2, abs=TOL)


def test_bootstrap_of_mar_over_score_thresholds_is_valor_lite_on_the_resampled_images() -> None:
    preds, refs, ious, scores = scene(5)
    config = {"convention": "valor", "box_format": "xywh", "iou_thresholds": ious, "score_thresholds": scores}
    metric = get_metric("mar", config)
    sample = ExampleStats(metric, fields=(preds, refs))
    theta = distribution(sample, n_resamples=6, seed=1)
    rows = np.concatenate(list(index_chunks(len(preds), 6, 1)))
    for value, idx in zip(theta, rows, strict=True):
        # a resample lists an image twice as two images: valor-lite gets each copy under its own uid
        ref = valor_lite([preds[i] for i in idx], [refs[i] for i in idx], ious, scores)
        expected = one(ref, MetricType.mARAveragedOverScores, iou_thresholds=ious, score_thresholds=scores)
        assert value == pytest.approx(expected, abs=TOL)

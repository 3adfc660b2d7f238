"""The registered detection sub-types (torchmetrics' MeanAveragePrecision keys): compute_metric and a JSON run,
against pycocotools and Valor's published vectors, and every bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import olive_eval
from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import get_metric
from olive_eval.metrics.detection.metrics import compute_all

from .scenes import random_mask_scene, random_scene, replay_run_config, run_pycocotools, scene_to_coco, to_xywh
from .tm_example import TM_PREDS, TM_REFS

TOL = 1e-12
STATS_KEYS = ("map", "map_50", "map_75", "map_small", "map_medium", "map_large")
STATS_KEYS += ("mar_1", "mar_10", "mar_100", "mar_small", "mar_medium", "mar_large")


def expected(ev) -> dict[str, float]:
    return {k: (math.nan if v == -1 else float(v)) for k, v in zip(STATS_KEYS, ev.stats, strict=True)}


def assert_same(ours: float, ref: float, key: str) -> None:
    if math.isnan(ref):
        assert math.isnan(ours), key
    else:
        assert ours == pytest.approx(ref, rel=0, abs=TOL), key


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_key_matches_pycocotools(seed: int) -> None:
    preds, refs = random_scene(seed)
    ref = expected(run_pycocotools(*scene_to_coco(preds, refs)))
    for key in STATS_KEYS:
        score = get_metric(key).compute(preds, refs)
        assert_same(score.value, ref[key], key)
        assert (score.undefined is not None) == math.isnan(ref[key]), key
    assert compute_all(preds, refs)["mar"] == pytest.approx(ref["mar_100"], abs=TOL)


def test_compute_metric_takes_torchmetrics_dicts_in_xywh() -> None:
    preds = [{**p, "boxes": to_xywh(p["boxes"])} for p in TM_PREDS]
    refs = [{**r, "boxes": to_xywh(r["boxes"])} for r in TM_REFS]
    ev = run_pycocotools(*scene_to_coco(TM_PREDS, TM_REFS))
    value = olive_eval.compute_metric("map_50", preds, refs, box_format="xywh")
    assert value == pytest.approx(ev.stats[1], abs=TOL)
    assert value == pytest.approx(0.859, abs=5e-4)  # the published pycocotools value
    # plain lists, as JSON gives them
    as_lists = [{k: np.asarray(v).tolist() for k, v in d.items()} for d in preds]
    ref_lists = [{k: np.asarray(v).tolist() for k, v in d.items()} for d in refs]
    assert olive_eval.compute_metric("map_50", as_lists, ref_lists, box_format="xywh") == value


def test_valor_convention_reproduces_the_published_vector() -> None:
    """Valor's test_ap_using_torch_metrics_example: mAP@0.5 0.715988265493216 (COCO says 0.859)."""
    valor = olive_eval.compute_metric("map_50", TM_PREDS, TM_REFS, convention="valor")
    assert valor == pytest.approx(0.715988265493216, rel=0, abs=TOL)
    assert olive_eval.compute_metric(
        "map_75", TM_PREDS, TM_REFS, convention="valor", iou_thresholds=[0.5, 0.75]
    ) == pytest.approx(0.6338991041961339, rel=0, abs=TOL)
    small = get_metric("map_small", {"convention": "valor"}).compute(TM_PREDS, TM_REFS)
    assert math.isnan(small.value) and "no area ranges" in small.undefined


def test_per_class_values_are_pycocotools_per_category_runs() -> None:
    names = {"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "49": "fortynine"}
    score = get_metric("map", {"class_names": names}).compute(TM_PREDS, TM_REFS)
    gt, dets = scene_to_coco(TM_PREDS, TM_REFS)
    for cid, name in names.items():
        ev = run_pycocotools(gt, dets, cat_ids=[int(cid)])
        got = score.details["per_class"][name]
        if ev.stats[0] == -1:
            assert got is None  # category 3 has predictions only
        else:
            assert got == pytest.approx(ev.stats[0], abs=TOL)


def test_max_dets_other_than_100_and_the_missing_key() -> None:
    preds, refs = random_scene(5, extra_dets=12)
    ev = run_pycocotools(*scene_to_coco(preds, refs), max_dets=[1, 5, 20])
    ref = expected(ev)
    assert get_metric("mar_10", {"max_dets": [1, 5, 20]}).compute(preds, refs).undefined.startswith("max_dets")
    assert get_metric("mar", {"max_dets": [1, 5, 20]}).compute(preds, refs).value == pytest.approx(
        ref["mar_100"],
        abs=TOL,  # pycocotools' stats[8] reads the third maxDet, here 20
    )
    # pycocotools' stats[0] asks for maxDet 100 (hard-coded), -1 here; the AP at the largest maxDet, as
    # torchmetrics reports it, is the mean of COCOeval's own precision array there
    precision = ev.eval["precision"][:, :, :, 0, -1]
    assert get_metric("map", {"max_dets": [1, 5, 20]}).compute(preds, refs).value == pytest.approx(
        precision[precision > -1].mean(), abs=TOL
    )


def test_masks_match_pycocotools_segm() -> None:
    from .scenes import mask_scene_to_coco

    preds, refs = random_mask_scene(3)
    ev = run_pycocotools(*mask_scene_to_coco(preds, refs), iou_type="segm")
    assert olive_eval.compute_metric("map", preds, refs, iou_type="segm") == pytest.approx(ev.stats[0], abs=TOL)


def test_coco_json_files_through_compute_metric(tmp_path) -> None:
    preds, refs = random_scene(7)
    gt, dets = scene_to_coco(preds, refs)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dets))
    value = olive_eval.compute_metric("map_75", str(tmp_path / "dt.json"), str(tmp_path / "gt.json"))
    assert value == pytest.approx(run_pycocotools(gt, dets).stats[2], abs=TOL)


# ------------------------------------------------------------------------------------------- bad input
def _one_image(**pred):
    base = {"boxes": [[0.0, 0.0, 10.0, 10.0]], "scores": [0.9], "labels": [1]}
    return [{**base, **pred}], [{"boxes": [[0.0, 0.0, 10.0, 10.0]], "labels": [1]}]


@pytest.mark.parametrize(
    ("pred", "config", "message"),
    [
        ({"boxes": [[5.0, 0.0, 2.0, 10.0]]}, {}, r"image 0 predictions, box 0 has x2 < x1 \(x1=5, x2=2\)"),
        ({"scores": [float("nan")]}, {}, "image 0, detection 0 has a NaN score"),
        ({"scores": [1.5]}, {"convention": "valor", "score_thresholds": [0.5]}, "score 1.5 outside \\[0, 1\\]"),
        ({"labels": [7]}, {"class_names": {"1": "cat"}}, r"category id\(s\) \[7\] not in class_names"),
    ],
)
def test_bad_per_image_inputs(pred, config, message) -> None:
    preds, refs = _one_image(**pred)
    with pytest.raises(ValueError, match=message):
        olive_eval.compute_metric("map", preds, refs, **config)


def test_bad_coco_files() -> None:
    gt = {
        "images": [{"id": 1, "height": 20, "width": 20}],
        "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5], "area": 25}],
        "categories": [{"id": 1}],
    }
    wrong_image = [{"image_id": 2, "category_id": 1, "bbox": [0, 0, 5, 5], "score": 0.5}]
    with pytest.raises(ValueError, match=r"detections: 1 image id\(s\) not in the ground truth: 2"):
        olive_eval.compute_metric("map", wrong_image, gt)
    wrong_category = [{"image_id": 1, "category_id": 9, "bbox": [0, 0, 5, 5], "score": 0.5}]
    with pytest.raises(ValueError, match=r"detections: 1 category id\(s\) not in the ground truth: 9"):
        olive_eval.compute_metric("map", wrong_category, gt)


def test_masks_of_a_different_size_than_the_image() -> None:
    ref_mask = np.zeros((1, 8, 8), np.uint8)
    ref_mask[0, :4, :4] = 1
    pred_mask = np.zeros((1, 8, 9), np.uint8)
    preds = [{"masks": pred_mask, "scores": [0.5], "labels": [0]}]
    refs = [{"masks": ref_mask, "labels": [0]}]
    with pytest.raises(ValueError, match=r"image 0 predictions.*8x9.*8x8"):
        olive_eval.compute_metric("map", preds, refs, iou_type="segm")


def test_not_a_dict_names_the_example() -> None:
    with pytest.raises(ValueError, match="example 1: a detection prediction must be a dict"):
        olive_eval.compute_metric("map", [{}, [1, 2]], [{}, {}])


def test_config_errors_name_the_json_path(tmp_path) -> None:
    def run(metric_config):
        return {
            "input_model": {
                "type": "PythonModel",
                "name": "m",
                "user_script": str(tmp_path / "x.py"),
                "model_loader": "f",
            },
            "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "json", "data_files": "d.jsonl"}}],
            "metrics": [
                {"name": "det", "type": "accuracy", "sub_types": [{"name": "map", "metric_config": metric_config}]}
            ],
        }

    (tmp_path / "x.py").write_text("def f(p):\n    return None\n")
    with pytest.raises(ConfigError, match=r"metrics\[0\]\.sub_types\[0\]\.metric_config\.convention"):
        load_run_config(run({"convention": "voc"}))
    with pytest.raises(ConfigError, match="score_thresholds apply to convention 'valor'"):
        load_run_config(run({"score_thresholds": [0.5]}))


# ------------------------------------------------------------------------------------------- a JSON run
def test_a_run_reports_every_key_with_pycocotools_values(tmp_path) -> None:
    preds, refs = random_scene(3, n_images=25)
    subs = [{"name": "map", "priority": 1}] + [{"name": k} for k in STATS_KEYS[1:]]
    config = replay_run_config(tmp_path, {"replay": preds}, refs, subs)
    result = evaluate(config)
    ref = expected(run_pycocotools(*scene_to_coco(preds, refs)))
    metrics = result.models["replay"].metrics
    for key in STATS_KEYS:
        sub = metrics[f"det-{key}"]
        if math.isnan(ref[key]):
            assert sub.value is None and "pycocotools reports -1" in sub.undefined, key
        else:
            assert sub.value == pytest.approx(ref[key], abs=TOL), key
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert "per_class" in written["models"]["replay"]["metrics"]["det-map"]["details"]

"""Text labels and label keys (Valor's ``Label(key, value)``): metrics per key, their mean as the headline.

valor-lite 0.39 has no label keys (its labels are plain strings), so the reference for a key is valor-lite
(and pycocotools) run on that key's annotations alone; plain text labels are valor-lite's own labels."""

from __future__ import annotations

import numpy as np
import pytest
from valor_lite.object_detection import BoundingBox, Detection, Loader, MetricType

from olive_eval.metrics import get_metric
from olive_eval.metrics.detection.inputs import from_per_image
from olive_eval.metrics.detection.labels import label_id

from .scenes import random_scene, run_pycocotools, scene_to_coco

TOL = 1e-12
ANIMALS = ["dog", "cat", "bird", "fox", "owl"]
COLORS = ["brown", "black", "white"]


def valor_lite_text(preds: list[dict], refs: list[dict], ious: list[float], scores: list[float]) -> dict:
    """valor-lite on xyxy boxes with string labels: mAP, AP per label, mAR and AR per label."""
    detections = []
    for i, (p, r) in enumerate(zip(preds, refs, strict=True)):

        def box(uid, b, lab, s=None):
            extra = {"scores": [float(s)]} if s is not None else {}
            return BoundingBox(uid=uid, xmin=b[0], xmax=b[2], ymin=b[1], ymax=b[3], labels=[lab], **extra)

        gts = [box(f"g{i}_{j}", b, lab) for j, (b, lab) in enumerate(zip(r["boxes"], r["labels"], strict=True))]
        pds = [box(f"p{i}_{j}", b, lab, s) for j, (b, lab, s) in enumerate(zip(p["boxes"], p["labels"], p["scores"], strict=True))]  # fmt: skip
        detections.append(Detection(uid=str(i), groundtruths=gts, predictions=pds))
    loader = Loader.in_memory()
    loader.add_bounding_boxes(detections)
    metrics = loader.finalize().compute_precision_recall(iou_thresholds=ious, score_thresholds=scores)
    return {
        "map": metrics[MetricType.mAPAveragedOverIOUs][0].value,
        "ap": {m.parameters["label"]: m.value for m in metrics[MetricType.APAveragedOverIOUs]},
        "mar": metrics[MetricType.mARAveragedOverScores][0].value,
    }


def named(preds: list[dict], refs: list[dict], names: list[str]) -> tuple[list[dict], list[dict]]:
    """The scene with label ``k`` renamed ``names[k]``."""

    def rename(d: dict) -> dict:
        return {**d, "labels": [names[int(v)] for v in d["labels"]]}

    return [rename(p) for p in preds], [rename(r) for r in refs]


def keyed_scene(seed: int) -> tuple[list[dict], list[dict], dict[str, tuple[list[dict], list[dict]]]]:
    """Two keys on one set of images: ``animal`` labels the scene's boxes, ``color`` another scene's boxes
    (some the same boxes); returns the keyed dicts and, per key, the scene of that key's annotations alone."""
    parts = {"animal": named(*random_scene(seed, n_images=20), ANIMALS), "color": named(*random_scene(seed + 100, n_images=20, n_labels=2), COLORS)}  # fmt: skip
    for k in range(len(parts["color"][0])):  # half the color boxes are the animal boxes
        if k % 2 == 0 and len(parts["animal"][1][k]["boxes"]) and len(parts["color"][1][k]["boxes"]):
            n = min(len(parts["animal"][1][k]["boxes"]), len(parts["color"][1][k]["boxes"]))
            parts["color"][1][k]["boxes"][:n] = parts["animal"][1][k]["boxes"][:n]
    preds, refs = [], []
    for i in range(20):
        pd, rf = {"boxes": [], "scores": [], "labels": []}, {"boxes": [], "labels": []}
        for key, (kp, kr) in parts.items():
            pd["boxes"] += list(kp[i]["boxes"])
            pd["scores"] += list(kp[i]["scores"])
            pd["labels"] += [{"key": key, "value": v} for v in kp[i]["labels"]]
            rf["boxes"] += list(kr[i]["boxes"])
            rf["labels"] += [{"key": key, "value": v} for v in kr[i]["labels"]]
        preds.append({k: (np.array(v).reshape(-1, 4) if k == "boxes" else v) for k, v in pd.items()})
        refs.append({k: (np.array(v).reshape(-1, 4) if k == "boxes" else v) for k, v in rf.items()})
    return preds, refs, parts


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_text_labels_equal_valor_lite_string_labels(seed: int) -> None:
    preds, refs = named(*random_scene(seed), ANIMALS)
    ious, scores = [0.5, 0.75], [0.5]
    ref = valor_lite_text(preds, refs, ious, scores)
    cfg = {"convention": "valor", "iou_thresholds": ious, "score_thresholds": scores}
    got = get_metric("map", cfg).compute(preds, refs)
    assert got.value == pytest.approx(ref["map"], abs=TOL)
    assert got.details["per_class"] == pytest.approx(ref["ap"], abs=TOL) and set(got.details["per_class"]) <= set(
        ANIMALS
    )
    assert get_metric("mar", cfg).compute(preds, refs).value == pytest.approx(ref["mar"], abs=TOL)
    # the same numbers as the integer labels (one implicit key), under both conventions
    int_preds, int_refs = random_scene(seed)
    assert got.value == pytest.approx(get_metric("map", cfg).compute(int_preds, int_refs).value, abs=TOL)
    coco = get_metric("map").compute(preds, refs).value
    assert coco == pytest.approx(get_metric("map").compute(int_preds, int_refs).value, abs=TOL)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_label_keys_are_evaluated_per_key_and_averaged(seed: int) -> None:
    preds, refs, parts = keyed_scene(seed)
    ious, scores = [0.5, 0.75], [0.5]
    cfg = {"convention": "valor", "iou_thresholds": ious, "score_thresholds": scores}
    got = get_metric("map", cfg).compute(preds, refs)
    per_key = {key: valor_lite_text(*part, ious, scores) for key, part in parts.items()}
    assert got.details["per_key"] == pytest.approx({k: v["map"] for k, v in per_key.items()}, abs=TOL)
    assert got.value == pytest.approx(np.mean([v["map"] for v in per_key.values()]), abs=TOL)
    expected = {f"{k}: {label}": ap for k, v in per_key.items() for label, ap in v["ap"].items()}
    assert got.details["per_class"] == pytest.approx(expected, abs=TOL)
    mar = get_metric("mar", cfg).compute(preds, refs)
    assert mar.details["per_key"] == pytest.approx({k: v["mar"] for k, v in per_key.items()}, abs=TOL)
    # keys take effect: the same strings as one key's labels meet across keys and average over every label
    flat = [{**d, "labels": [f"{lab['key']}: {lab['value']}" for lab in d["labels"]]} for d in preds + refs]
    one_key = get_metric("map", cfg).compute(flat[: len(preds)], flat[len(preds) :])
    assert one_key.value != pytest.approx(got.value, abs=1e-6)
    # the COCO convention: pycocotools on each key's annotations alone
    coco = get_metric("map").compute(preds, refs)
    for key, (kp, kr) in parts.items():
        names = ANIMALS if key == "animal" else COLORS
        ints = [[{**d, "labels": np.array([names.index(v) for v in d["labels"]], np.int64)} for d in side] for side in (kp, kr)]  # fmt: skip
        ev = run_pycocotools(*scene_to_coco(ints[0], [{**r, "iscrowd": np.zeros(len(r["labels"])), "area": np.zeros(len(r["labels"]))} for r in ints[1]]))  # fmt: skip
        assert coco.details["per_key"][key] == pytest.approx(ev.stats[0], abs=TOL)
    assert coco.value == pytest.approx(np.mean(list(coco.details["per_key"].values())), abs=TOL)


def test_bootstrap_resamples_under_label_keys() -> None:
    preds, refs, _ = keyed_scene(3)
    metric = get_metric("map", {"convention": "valor"})
    stats = metric.statistics(preds, refs)
    whole = metric.reduce(stats).value
    assert metric.reduce_resamples(stats, np.arange(len(stats))[None])[0] == pytest.approx(whole, abs=TOL)
    idx = np.random.default_rng(0).integers(0, len(stats), (4, len(stats)))
    for row, value in zip(idx, metric.reduce_resamples(stats, idx), strict=True):
        sub = [preds[i] for i in row], [refs[i] for i in row]
        assert value == pytest.approx(get_metric("map", {"convention": "valor"}).compute(*sub).value, abs=TOL)


def test_misclassification_is_the_right_key_with_a_wrong_value() -> None:
    """Seed 004's example: a dog, a cat predicted over it (a misclassification), and a color predicted over it
    (another key: a hallucination of that key, no misclassification of the dog)."""
    box = [[10.0, 10.0, 50.0, 50.0]]
    refs = [{"boxes": box, "labels": [{"key": "animal", "value": "dog"}]}]
    preds = [{"boxes": box * 2, "scores": [0.9, 0.95],
              "labels": [{"key": "animal", "value": "cat"}, {"key": "color", "value": "brown"}]}]  # fmt: skip
    cfg = {"score_thresholds": [0.5], "pr_curve_max_examples": 1}
    curve = get_metric("detection_detailed_pr_curve", cfg).compute(preds, refs).details
    dog, cat, brown = curve["animal: dog"]["0.5"], curve["animal: cat"]["0.5"], curve["color: brown"]["0.5"]
    assert dog["fn"]["observations"]["misclassifications"]["count"] == 1
    assert cat["fp"]["observations"]["misclassifications"]["count"] == 1
    assert brown["fp"]["observations"]["hallucinations"]["count"] == 1
    assert brown["fp"]["observations"]["misclassifications"]["count"] == 0
    pr = get_metric("detection_pr_curve", {"score_thresholds": [0.5]}).compute(preds, refs).details
    assert pr["animal: dog"]["0.5"]["fn"] == 1 and pr["color: brown"]["0.5"]["fp"] == 1


@pytest.mark.parametrize("labels, message", [
    ([{"value": "dog"}], r"^image 0 reference labels: label 0 must be \{'key': str, 'value': str\}, got \{'value': 'dog'\}"),
    ([{"key": "animal", "value": 3}], r"^image 0 reference labels: label 0 must be \{'key': str, 'value': str\}"),
    (["dog", 1], r"^image 0 reference labels: label 1 \(1\) is no text, but others are; integers and text do not mix"),
])  # fmt: skip
def test_bad_labels_are_one_line_errors(labels: list, message: str) -> None:
    refs = [{"boxes": [[0, 0, 1, 1]] * len(labels), "labels": labels}]
    preds = [{"boxes": np.zeros((0, 4)), "scores": [], "labels": []}]
    with pytest.raises(ValueError, match=message):
        from_per_image(preds, refs)


def test_integers_and_text_do_not_mix_across_images_or_batches() -> None:
    refs = [{"boxes": [[0, 0, 1, 1]], "labels": ["dog"]}, {"boxes": [[0, 0, 1, 1]], "labels": [2]}]
    preds = [{"boxes": np.zeros((0, 4)), "scores": [], "labels": []}] * 2
    with pytest.raises(ValueError, match=r"^image 1: labels are text here and integers elsewhere"):
        from_per_image(preds, refs)
    metric = get_metric("map")
    parts = [metric.statistics(preds[:1], refs[:1]), metric.statistics(preds[1:], refs[1:])]
    with pytest.raises(ValueError, match=r"the batches of the pass: some labels are text and others integers"):
        metric.concat_statistics(parts)
    with pytest.raises(ValueError, match=r"class_names name integer labels; these labels are text"):
        get_metric("map", {"class_names": ["a"]}).compute(preds[:1], refs[:1])


def test_text_ids_are_stable_and_batches_agree() -> None:
    assert label_id("animal", "dog") == label_id("animal", "dog") != label_id("", "dog")
    preds, refs, _ = keyed_scene(4)
    metric = get_metric("map", {"convention": "valor"})
    whole = metric.compute(preds, refs).value
    metric = get_metric("map", {"convention": "valor"})
    batches = [metric.statistics(preds[i : i + 7], refs[i : i + 7]) for i in range(0, len(preds), 7)]
    assert metric.reduce(metric.concat_statistics(batches)).value == pytest.approx(whole, abs=TOL)

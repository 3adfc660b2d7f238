"""Semantic segmentation from polygons (Valor's segmentation annotations as shapes): each image's polygons drawn
as a label map by the pixel-centre rule; = valor-lite and scikit-learn on the maps shapely draws at the centres."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from sklearn.metrics import jaccard_score
from valor_lite.semantic_segmentation import Loader, MetricType, Segmentation

import olive_eval
from olive_eval.metrics.segmentation.kernels import confusion_matrices
from tests.metrics.detection.test_polygon_holes import holed, to_shapely

pytestmark = pytest.mark.filterwarnings("ignore")  # scikit-learn warns on undefined per-class values
TOL = 1e-12


def valor_lite(preds: list[np.ndarray], refs: list[np.ndarray], c: int) -> dict:
    """valor-lite's mIOU, accuracy and IOU per label 1..c-1 on the label maps."""
    names = [str(k) for k in range(1, c)]
    loader = Loader.in_memory()
    loader.add_data(
        [
            Segmentation(uid=str(i), groundtruths=r, predictions=p, labels=names)
            for i, (p, r) in enumerate(zip(preds, refs, strict=True))
        ]
    )
    metrics = loader.finalize().compute_precision_recall_iou()
    by_label = {m.parameters["label"]: m.value for m in metrics[MetricType.IOU]}
    return {
        "mIOU": metrics[MetricType.mIOU][0].value,
        "accuracy": metrics[MetricType.Accuracy][0].value,
        MetricType.IOU: np.array([by_label[n] for n in names]),
    }


def polygon_images(seed: int, n_images: int = 6, c: int = 4) -> tuple[list[dict], list[dict], list, list]:
    """Images cut into 20x20 cells, each holding at most one polygon (holes included) per side, labels 1..c-1;
    returns the polygon dicts and shapely's label maps (centres strictly inside)."""
    rng = np.random.default_rng(seed)
    preds, refs, pred_maps, ref_maps = [], [], [], []
    for _ in range(n_images):
        rows, cols = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        h, w = 20 * rows + int(rng.integers(0, 5)), 20 * cols + int(rng.integers(0, 5))
        yy, xx = np.mgrid[0:h, 0:w] + 0.5
        for out, maps in ((refs, ref_maps), (preds, pred_maps)):
            polys, labels = [], []
            label_map = np.zeros((h, w), np.int64)
            for r in range(rows):
                for col in range(cols):
                    if rng.random() < 0.2:
                        continue
                    centre = np.array([20 * col + 10, 20 * r + 10]) + rng.uniform(-1.5, 1.5, 2)
                    rings = holed(rng, centre, rng.uniform(4, 8.5), int(rng.integers(0, 3)))
                    label = int(rng.integers(1, c))
                    polys.append(rings)
                    labels.append(label)
                    label_map[shapely.contains_xy(to_shapely(rings), xx, yy)] = label
            out.append({"size": [h, w], "polygons": polys, "labels": labels})
            maps.append(label_map)
    return preds, refs, pred_maps, ref_maps


@pytest.mark.parametrize("seed", range(6))
def test_polygon_maps_equal_valor_lite_and_scikit_learn(seed: int) -> None:
    c = 4
    preds, refs, pred_maps, ref_maps = polygon_images(seed, c=c)
    stats = confusion_matrices(preds, refs, c, ignore_index=None)
    np.testing.assert_array_equal(stats, confusion_matrices(pred_maps, ref_maps, c, ignore_index=None))
    ref = valor_lite(pred_maps, ref_maps, c)
    got = olive_eval.compute_metric("mean_iou", preds, refs, num_classes=c, convention="valor")
    assert got.value == pytest.approx(ref["mIOU"], abs=TOL)
    np.testing.assert_allclose(got.per_class[1:], ref[MetricType.IOU], rtol=0, atol=TOL)
    flat_p, flat_r = np.concatenate([m.ravel() for m in pred_maps]), np.concatenate([m.ravel() for m in ref_maps])
    present = np.union1d(flat_p, flat_r)
    expected = jaccard_score(flat_r, flat_p, labels=present, average="macro")
    default = olive_eval.compute_metric("mean_iou", preds, refs, num_classes=c)
    assert default.value == pytest.approx(expected, abs=TOL)
    acc = olive_eval.compute_metric("pixel_accuracy", preds, refs, num_classes=c)
    assert acc.value == pytest.approx(ref["accuracy"], abs=TOL) and 0 < acc.value < 1


def test_maps_and_polygons_mix_and_background_is_zero() -> None:
    _, refs, pred_maps, ref_maps = polygon_images(7, c=3)
    mixed = confusion_matrices(pred_maps, refs, 3, ignore_index=None)  # model label maps against polygons
    np.testing.assert_array_equal(mixed, confusion_matrices(pred_maps, ref_maps, 3, ignore_index=None))
    empty = {"size": [2, 3], "polygons": [], "labels": []}
    np.testing.assert_array_equal(confusion_matrices([empty], [empty], 3)[0], [[6, 0, 0], [0, 0, 0], [0, 0, 0]])
    square = [[0, 0], [2, 0], [2, 2], [0, 2]]
    one = {"size": [2, 3], "polygons": [square, [[1, 0], [3, 0], [3, 1], [1, 1]]], "labels": [2, 2]}  # same label
    assert confusion_matrices([one], [one], 3)[0, 2, 2] == 5


@pytest.mark.parametrize("item, message", [
    ({"size": [4, 4], "polygons": [[[0, 0], [3, 0], [3, 3]], [[0, 0], [3, 0], [0, 3]]], "labels": [1, 2]},
     r"^image 0 reference: polygons 0 and 1 \(labels 1 and 2\) both cover pixel \(row 0, column 1\)"),
    ({"polygons": [], "labels": []}, r"^image 0 reference: a polygon label map needs .*missing \['size'\]"),
    ({"size": [4], "polygons": [], "labels": []}, r"^image 0 reference: 'size' must be \[height, width\]"),
    ({"size": [4, 4], "polygons": [[[0, 0], [1, 1]]], "labels": [1]},
     r"^image 0 reference polygon 0: a polygon ring needs at least 3"),
    ({"size": [4, 4], "polygons": [[[0, 0], [3, 0], [3, 3]]], "labels": [1, 2]},
     r"^image 0 reference: 1 polygons but 2 labels"),
    ({"size": [4, 4], "polygons": [[[0, 0], [3, 0], [3, 3]]], "labels": [1.5]},
     r"^image 0 reference: polygon labels must be integer classes or text"),
    ({"size": [4, 4], "polygons": [[[0, 0], [3, 0], [3, 3]]], "labels": ["cat"]},
     r"^image 0 reference: text polygon labels need class_names"),
])  # fmt: skip
def test_bad_polygon_maps_are_one_line_errors(item: dict, message: str) -> None:
    good = np.zeros((4, 4), np.int64)
    with pytest.raises(ValueError, match=message) as err:
        confusion_matrices([good], [item], 3)
    assert "\n" not in str(err.value)


def test_text_labels_are_looked_up_in_class_names() -> None:
    preds, refs, _, _ = polygon_images(8, c=4)
    names = ["background", "road", "car", "tree"]
    text = [[{**d, "labels": [names[k] for k in d["labels"]]} for d in side] for side in (preds, refs)]
    for name in ("mean_iou", "segmentation_f1"):
        for convention in ("mmseg", "valor"):
            cfg = {"num_classes": 4, "class_names": names, "convention": convention}
            got = olive_eval.compute_metric(name, *text, **cfg)
            assert got.value == olive_eval.compute_metric(name, preds, refs, **cfg).value and got.value > 0
    two = [[[0, 0], [2, 0], [2, 2]], [[3, 3], [4, 3], [4, 4]]]
    bad = [{"size": refs[0]["size"], "polygons": two, "labels": ["road", 1]}]
    with pytest.raises(ValueError, match=r"^image 0 reference: polygon labels mix text and integers"):
        confusion_matrices(preds[:1], bad, 4, class_names=names)
    with pytest.raises(ValueError, match=r"^image 0 prediction: polygon label 'zebra' is not in class_names"):
        confusion_matrices(
            [{**preds[0], "labels": ["zebra"] * len(preds[0]["labels"])}], refs[:1], 4, class_names=names
        )


KEYS = {"animal": ["dog", "cat", "owl"], "color": ["brown", "white"]}


def keyed_images(seed: int) -> tuple[list[dict], list[dict]]:
    """Two keys on each image, each key a polygon scene of its own (polygons of different keys overlap)."""
    scenes = {key: polygon_images(seed + 10 * k, c=len(values) + 1) for k, (key, values) in enumerate(KEYS.items())}
    preds, refs = [], []
    for i in range(len(scenes["animal"][0])):
        sides = []
        for side in (0, 1):
            polys, labels = [], []
            size = None
            for key, scene in scenes.items():
                item = scene[side][i]
                size = size or item["size"]  # the first key's image size; the other key's polygons are clipped to it
                polys += item["polygons"]
                labels += [{"key": key, "value": KEYS[key][c - 1]} for c in item["labels"]]
            sides.append({"size": size, "polygons": polys, "labels": labels})
        preds.append(sides[0])
        refs.append(sides[1])
    return preds, refs


def test_label_keys_are_segmented_per_key_and_averaged() -> None:
    preds, refs = keyed_images(0)
    h_w = [tuple(r["size"]) for r in refs]
    yy_xx = [np.mgrid[0:h, 0:w] + 0.5 for h, w in h_w]
    n = 1 + sum(len(v) for v in KEYS.values())
    cfg = {"num_classes": n, "label_keys": KEYS, "ignore_index": None}
    for convention in ("valor", "mmseg"):
        got = olive_eval.compute_metric("mean_iou", preds, refs, convention=convention, **cfg)
        expected = {}
        for key, values in KEYS.items():
            maps = []
            for side in (preds, refs):
                drawn = []
                for item, (yy, xx) in zip(side, yy_xx, strict=True):
                    m = np.zeros(yy.shape, np.int64)
                    for poly, lab in zip(item["polygons"], item["labels"], strict=True):
                        if lab["key"] == key:
                            m[shapely.contains_xy(to_shapely(poly), xx, yy)] = values.index(lab["value"]) + 1
                    drawn.append(m)
                maps.append(drawn)
            if convention == "valor":
                expected[key] = valor_lite(maps[0], maps[1], len(values) + 1)["mIOU"]
            else:
                fp, fr = np.concatenate([m.ravel() for m in maps[0]]), np.concatenate([m.ravel() for m in maps[1]])
                present = np.setdiff1d(np.union1d(fp, fr), [0])
                expected[key] = jaccard_score(fr, fp, labels=present, average="macro")
        assert got.details["per_key"] == pytest.approx(expected, abs=TOL), convention
        assert got.value == pytest.approx(np.mean(list(expected.values())), abs=TOL)
        assert "animal: dog" in got.details["per_class"]
    # keys take effect: as one key's labels, the two keys' polygons claim the same pixels
    flat = [{**d, "labels": [1 + (lab["key"] == "color") for lab in d["labels"]]} for d in refs]
    with pytest.raises(ValueError, match="both cover pixel"):
        confusion_matrices(flat, flat, n)
    f1 = olive_eval.compute_metric("segmentation_f1", preds, refs, convention="valor", **cfg)
    assert set(f1.details["per_key"]) == set(KEYS) and 0 < f1.value < 1


@pytest.mark.parametrize("change, message", [
    ({"class_names": ["a"] * 6}, "give label_keys or class_names, not both"),
    ({"num_classes": 5}, "label_keys name 6 classes"),
    ({"label_keys": {"animal": []}, "num_classes": 1}, "non-empty list of distinct values"),
])  # fmt: skip
def test_bad_label_keys_configs(change: dict, message: str) -> None:
    cfg = {"num_classes": 6, "label_keys": KEYS, **change}
    with pytest.raises(Exception, match=message):
        olive_eval.compute_metric("mean_iou", [np.zeros((2, 2))], [np.zeros((2, 2))], **cfg)


def test_bad_keyed_labels_are_one_line_errors() -> None:
    square = [[0, 0], [2, 0], [2, 2], [0, 2]]
    good = {"size": [3, 3], "polygons": [square], "labels": [{"key": "animal", "value": "dog"}]}
    for labels in ([{"key": "animal", "value": "zebra"}], [{"value": "dog"}], ["dog"]):
        bad = {**good, "labels": labels}
        with pytest.raises(ValueError, match=r"^image 0 reference: label 0 .* is no \{'key', 'value'\} of label_keys"):
            confusion_matrices([good], [bad], 6, label_keys=KEYS)
    with pytest.raises(ValueError, match=r"^image 0 prediction: label keys need polygon images"):
        confusion_matrices([np.zeros((3, 3), np.int64)], [good], 6, label_keys=KEYS)

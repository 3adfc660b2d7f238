"""Segmentation sub-types with ``convention: valor`` against valor-lite's own
``Evaluator.compute_precision_recall_iou`` (mIOU, IOU, precision, recall, F1 per label, accuracy and the
confusion matrix of IoUs) on randomized label maps, the default against scikit-learn in the same test, issue
35's vector, and the option through per-image statistics and a bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import jaccard_score, precision_recall_fscore_support
from valor_lite.semantic_segmentation import Loader, MetricType, Segmentation

from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import get_metric
from olive_eval.metrics.resampling import ExampleStats, confidence_interval, distribution
from olive_eval.metrics.segmentation.valor import valor_per_class
from olive_eval.metrics.stats import index_chunks

pytestmark = pytest.mark.filterwarnings("ignore")  # scikit-learn warns on undefined per-class values

TOL = 1e-12
SEEDS = range(200)
PER_LABEL = {
    "mean_iou": MetricType.IOU,
    "segmentation_precision": MetricType.Precision,
    "segmentation_recall": MetricType.Recall,
    "segmentation_f1": MetricType.F1,
}
ISSUE_PREDS = [[[1], [1], [1], [1], [1]]]
ISSUE_REFS = [[[1], [1], [1], [1], [0]]]


def valor_lite(preds: list[np.ndarray], refs: list[np.ndarray], num_classes: int) -> dict:
    """valor-lite's metrics on the same maps: pixel 0 is background, pixel ``c`` names label ``str(c)``."""
    names = [str(c) for c in range(1, num_classes)]
    loader = Loader.in_memory()
    loader.add_data(
        [
            Segmentation(uid=str(i), groundtruths=np.asarray(r), predictions=np.asarray(p), labels=names)
            for i, (p, r) in enumerate(zip(preds, refs, strict=True))
        ]
    )
    metrics = loader.finalize().compute_precision_recall_iou()
    out = {
        "mIOU": metrics[MetricType.mIOU][0].value,
        "accuracy": metrics[MetricType.Accuracy][0].value,
        "confusion": metrics[MetricType.ConfusionMatrix][0].value,
    }
    for kind in PER_LABEL.values():
        by_label = {m.parameters["label"]: m.value for m in metrics[kind]}
        out[kind] = np.array([by_label[n] for n in names])
    return out


def random_maps(seed: int) -> tuple[list[np.ndarray], list[np.ndarray], int]:
    """One to five images of random sizes; each side draws from its own random subset of the classes, so
    labels go missing from one side or both, and background may be absent."""
    rng = np.random.default_rng(seed)
    c = int(rng.integers(2, 7))
    preds, refs = [], []
    ref_classes = rng.choice(c, size=int(rng.integers(1, c + 1)), replace=False)
    pred_classes = rng.choice(c, size=int(rng.integers(1, c + 1)), replace=False)
    for _ in range(int(rng.integers(1, 6))):
        shape = tuple(int(v) for v in rng.integers(1, 9, 2))
        ref = rng.choice(ref_classes, shape)
        noise = rng.choice(pred_classes, shape)
        pred = np.where((rng.random(shape) < 0.6) & np.isin(ref, pred_classes), ref, noise)
        preds.append(pred.astype(np.int64))
        refs.append(ref.astype(rng.choice([np.uint8, np.int64])))
    return preds, refs, c


def test_registered_sub_types_match_valor_lite_on_random_maps() -> None:
    checks = {name: 0 for name in (*PER_LABEL, "pixel_accuracy", "segmentation_confusion_matrix")}
    mismatches = dict.fromkeys(checks, 0)
    differs_from_default = 0
    for seed in SEEDS:
        preds, refs, c = random_maps(seed)
        expected = valor_lite(preds, refs, c)
        cfg = {"num_classes": c, "convention": "valor"}
        for name, kind in PER_LABEL.items():
            score = get_metric(name, cfg).compute(preds, refs)
            assert np.isnan(score.per_class[0])  # background has no per-class value
            got = np.array(score.per_class[1:])
            mismatches[name] += int((np.abs(got - expected[kind]) > TOL).sum())
            # mIOU is valor-lite's; it reports no mean precision, recall or F1: ours is their plain mean too
            mean = expected["mIOU"] if name == "mean_iou" else expected[kind].mean()
            mismatches[name] += int(abs(score.value - mean) > TOL)
            checks[name] += c
            default = get_metric(name, {"num_classes": c}).compute(preds, refs)
            differs_from_default += int(default.value != pytest.approx(score.value, abs=TOL))
        accuracy = get_metric("pixel_accuracy", cfg).compute(preds, refs).value
        mismatches["pixel_accuracy"] += int(abs(accuracy - expected["accuracy"]) > TOL)
        checks["pixel_accuracy"] += 1
        confusion = get_metric("segmentation_confusion_matrix", cfg).compute(preds, refs).details
        assert set(confusion) == set(expected["confusion"])
        for part, table in expected["confusion"].items():
            assert set(confusion[part]) == set(table)
            for key, cell in table.items():
                rows = cell.items() if part != "confusion_matrix" else ((k, v["iou"]) for k, v in cell.items())
                ours = confusion[part][key]
                for inner, value in rows:
                    got = ours[inner] if part != "confusion_matrix" else ours[inner]["iou"]
                    mismatches["segmentation_confusion_matrix"] += int(abs(got - value) > TOL)
                    checks["segmentation_confusion_matrix"] += 1
        _check_default_against_scikit_learn(preds, refs, c)
    print("\nsegmentation convention=valor vs valor-lite (checks, mismatches):")
    for name in checks:
        print(f"  {name}: {checks[name]}, {mismatches[name]}")
    assert mismatches == dict.fromkeys(checks, 0)
    assert min(checks.values()) >= len(SEEDS) and differs_from_default > 100


def _check_default_against_scikit_learn(preds: list[np.ndarray], refs: list[np.ndarray], c: int) -> None:
    """The default on the same maps: scikit-learn's per-class values where defined, NaN where 0 / 0."""
    y = np.concatenate([np.ravel(r) for r in refs]).astype(np.int64)
    p = np.concatenate([np.ravel(q) for q in preds])
    labels = list(range(c))
    present = np.isin(labels, y) | np.isin(labels, p)
    iou = np.where(present, jaccard_score(y, p, labels=labels, average=None, zero_division=0), np.nan)
    np.testing.assert_allclose(get_metric("mean_iou", {"num_classes": c}).compute(preds, refs).per_class, iou)
    precision = precision_recall_fscore_support(y, p, labels=labels, average=None, zero_division=0)[0]
    expected = np.where(np.isin(labels, p), precision, np.nan)
    got = get_metric("segmentation_precision", {"num_classes": c}).compute(preds, refs).per_class
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL)


def test_issue_35_vectors() -> None:
    """The issue's maps (3 classes): valor-lite's mIOU is (0.8 + 0.0) / 2 over labels 1 and 2. The default is
    0.4 as well there, by coincidence: background's IoU 0.0 takes the place of the absent label 2's. Maps that
    are all label 1 tell them apart: valor-lite 0.5, the default 1.0."""
    expected = valor_lite(np.asarray(ISSUE_PREDS), np.asarray(ISSUE_REFS), 3)
    valor = get_metric("mean_iou", {"num_classes": 3, "convention": "valor"}).compute(ISSUE_PREDS, ISSUE_REFS)
    assert valor.value == pytest.approx(expected["mIOU"], abs=TOL) == pytest.approx(0.4, abs=TOL)
    assert valor.details["per_class"] == {"0": None, "1": pytest.approx(0.8, abs=TOL), "2": 0.0}
    default = get_metric("mean_iou", {"num_classes": 3}).compute(ISSUE_PREDS, ISSUE_REFS)
    assert default.details["per_class"] == {"0": 0.0, "1": pytest.approx(0.8, abs=TOL), "2": None}
    ones = [np.ones((5, 1), np.int64)]
    expected = valor_lite(ones, ones, 3)
    assert get_metric("mean_iou", {"num_classes": 3, "convention": "valor"}).compute(ones, ones).value == pytest.approx(
        expected["mIOU"], abs=TOL
    )
    assert expected["mIOU"] == 0.5
    assert get_metric("mean_iou", {"num_classes": 3}).compute(ones, ones).value == 1.0
    # precision, recall, F1 of a label nowhere: valor-lite 0.0, the default undefined
    for name, kind in PER_LABEL.items():
        valor = get_metric(name, {"num_classes": 3, "convention": "valor"}).compute(ISSUE_PREDS, ISSUE_REFS)
        assert valor.per_class[2] == 0.0 == valor_lite(np.asarray(ISSUE_PREDS), np.asarray(ISSUE_REFS), 3)[kind][1]
        default = get_metric(name, {"num_classes": 3}).compute(ISSUE_PREDS, ISSUE_REFS)
        assert np.isnan(default.per_class[2]) and default.details["per_class"]["2"] is None
        assert valor.extra["convention"] == "valor" and default.extra["convention"] == "mmseg"


def test_each_sub_type_takes_the_option() -> None:
    """All label 1 and background, label 2 nowhere: every per-class sub-type moves; pixel accuracy, the same
    under both, does not; the confusion matrix changes form (valor-lite's IoUs and unmatched ratios)."""
    preds, refs = [np.array([[1, 1], [0, 1]])], [np.array([[1, 0], [0, 1]])]

    def value(name: str, convention: str) -> float:
        return get_metric(name, {"num_classes": 3, "convention": convention}).compute(preds, refs).value

    for name in PER_LABEL:
        assert value(name, "mmseg") != pytest.approx(value(name, "valor")), name
    assert value("pixel_accuracy", "mmseg") == value("pixel_accuracy", "valor") == 0.75
    default = get_metric("segmentation_confusion_matrix", {"num_classes": 3}).compute(preds, refs).details
    counts = {"0": {"0": 1, "1": 1, "2": 0}, "1": {"0": 0, "1": 2, "2": 0}, "2": {"0": 0, "1": 0, "2": 0}}
    assert default == {"confusion_matrix": counts}
    cfg = {"num_classes": 3, "convention": "valor", "class_names": ["bg", "a", "b"]}
    valor = get_metric("segmentation_confusion_matrix", cfg).compute(preds, refs).details
    assert valor["confusion_matrix"]["a"] == {"a": {"iou": 2 / 3}, "b": {"iou": 0.0}}
    assert valor["unmatched_predictions"] == {"a": {"ratio": 1 / 3}, "b": {"ratio": 0.0}}
    assert valor["unmatched_ground_truths"] == {"a": {"ratio": 0.0}, "b": {"ratio": 0.0}}


def test_ignored_pixels_and_bad_configs() -> None:
    """valor-lite has no ignored label: with the default ignore_index 255 its numbers hold on the other pixels
    (an image ignored whole is valor-lite without that image)."""
    preds, refs, c = random_maps(13)
    assert len(refs) == 5 and c == 6
    with_ignored = [np.full(refs[0].shape, 255), *refs[1:]]
    expected = valor_lite(preds[1:], refs[1:], c)
    for name, kind in PER_LABEL.items():
        score = get_metric(name, {"num_classes": c, "convention": "valor"}).compute(preds, with_ignored)
        np.testing.assert_allclose(score.per_class[1:], expected[kind], rtol=0, atol=TOL)
    nothing_counts = ([np.zeros((2, 2), int)], [np.full((2, 2), 255)])
    empty = get_metric("mean_iou", {"num_classes": 3, "convention": "valor"}).compute(*nothing_counts)
    assert np.isnan(empty.value) and empty.undefined == "no pixel counts (every reference pixel is ignored)"
    with pytest.raises(ValueError, match=r"part must be one of \('iou', 'precision', 'recall', 'f1'\), got 'dice'"):
        valor_per_class(np.zeros((3, 3)), "dice")


@pytest.mark.parametrize(
    ("metric_config", "line"),
    [
        ({"num_classes": 1, "convention": "valor"}, "convention 'valor' needs num_classes >= 2: class 0 is background"),
        ({"num_classes": 3, "convention": "coco"}, "convention: got 'coco'; expected 'mmseg' or 'valor'$"),
    ],
)
def test_bad_configs_are_one_line_errors(toy, metric_config: dict, line: str) -> None:
    sub = {"name": "mean_iou", "metric_config": metric_config}
    with pytest.raises(ConfigError, match=line):
        load_run_config(toy.config({}, [{"name": "seg", "type": "accuracy", "sub_types": [sub]}]))


@pytest.mark.parametrize("name", ["mean_iou", "segmentation_f1"])
def test_per_image_statistics_and_bootstrap_under_valor(name: str) -> None:
    """Statistics are the same per-image matrices under both conventions; each bootstrap resample's value is
    valor-lite's on the resampled images."""
    rng = np.random.default_rng(5)
    refs = [rng.choice([0, 1, 2], (6, 6)) for _ in range(15)]
    preds = [np.where(rng.random(r.shape) < 0.7, r, rng.integers(0, 4, r.shape)) for r in refs]
    metric = get_metric(name, {"num_classes": 4, "convention": "valor"})
    default = get_metric(name, {"num_classes": 4})
    stats = metric.statistics(preds, refs)
    np.testing.assert_array_equal(stats, default.statistics(preds, refs))
    assert metric.shared_key() == default.shared_key()
    sample = ExampleStats(metric, statistics=stats)
    theta = distribution(sample, n_resamples=10, seed=2)
    rows = np.concatenate(list(index_chunks(15, 10, 2)))
    kind = PER_LABEL[name]
    for value, idx in zip(theta, rows, strict=True):
        expected = valor_lite([preds[i] for i in idx], [refs[i] for i in idx], 4)
        reference = expected["mIOU"] if name == "mean_iou" else expected[kind].mean()
        assert value == pytest.approx(reference, abs=TOL)
    whole = metric.reduce(stats).value
    low, high = confidence_interval(sample, whole, "bca", 300, 0.9, seed=0)
    assert low <= whole <= high and low < high
    assert (distribution(ExampleStats(default, statistics=stats), 10, 2) != theta).any()

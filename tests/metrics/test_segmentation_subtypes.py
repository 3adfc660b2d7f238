"""Segmentation sub-types (mean_iou, pixel_accuracy, segmentation_precision/recall/f1, the confusion matrix)
against scikit-learn over the counted pixels, and through a run with a bootstrap interval."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix, jaccard_score, precision_recall_fscore_support

import olive_eval
from olive_eval import evaluate
from olive_eval.metrics import get_metric
from olive_eval.testing import check_metric
from tests.helpers import write_jsonl

TOL = 1e-12
C = 4


def maps(seed: int, n: int = 6, size: int = 16) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ref = rng.integers(0, C, (n, size, size)).astype(np.uint8)
    pred = np.where(rng.random(ref.shape) < 0.6, ref, rng.integers(0, C, ref.shape)).astype(np.int64)
    ref[rng.random(ref.shape) < 0.1] = 255  # ignored pixels
    return pred, ref


def counted(pred: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = ref != 255
    return ref[keep].astype(np.int64), pred[keep]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_match_scikit_learn_over_counted_pixels(seed: int) -> None:
    pred, ref = maps(seed)
    y, p = counted(pred, ref)
    labels = list(range(C))
    iou = jaccard_score(y, p, labels=labels, average=None)
    cfg = {"num_classes": C}
    assert olive_eval.compute_metric("mean_iou", pred, ref, **cfg) == pytest.approx(iou.mean(), abs=TOL)
    np.testing.assert_allclose(get_metric("mean_iou", cfg).compute(pred, ref).per_class, iou, atol=TOL)
    assert olive_eval.compute_metric("pixel_accuracy", pred, ref, **cfg) == pytest.approx(np.mean(y == p), abs=TOL)
    prf = precision_recall_fscore_support(y, p, labels=labels, average=None, zero_division=0)
    for name, ref_values in zip(
        ("segmentation_precision", "segmentation_recall", "segmentation_f1"), prf[:3], strict=False
    ):
        score = get_metric(name, cfg).compute(pred, ref)
        np.testing.assert_allclose(score.per_class, ref_values, atol=TOL)
        assert score.value == pytest.approx(ref_values.mean(), abs=TOL)
    details = get_metric("segmentation_confusion_matrix", cfg).compute(pred, ref).details["confusion_matrix"]
    np.testing.assert_array_equal([[details[str(r)][str(q)] for q in labels] for r in labels], confusion_matrix(y, p))


def test_absent_classes_are_undefined_and_left_out() -> None:
    pred, ref = maps(4)
    pred[pred == 3], ref[ref == 3] = 0, 0  # class 3 nowhere
    score = get_metric("mean_iou", {"num_classes": C, "class_names": ["a", "b", "c", "d"]}).compute(pred, ref)
    assert score.details["per_class"]["d"] is None
    y, p = counted(pred, ref)
    assert score.value == pytest.approx(jaccard_score(y, p, labels=[0, 1, 2], average="macro"), abs=TOL)


def test_check_metric_decomposes_and_ignores_order() -> None:
    pred, ref = maps(5)
    y, p = counted(pred, ref)
    check_metric(
        get_metric("mean_iou", {"num_classes": C}),
        list(pred),
        list(ref),
        global_target=jaccard_score(y, p, labels=list(range(C)), average="macro"),
    )


def test_bad_maps() -> None:
    pred, ref = maps(6)
    with pytest.raises(ValueError, match=r"image 0: predicted map has shape \[16, 15\], reference \[16, 16\]"):
        olive_eval.compute_metric("mean_iou", list(pred[:, :, :15]), list(ref), num_classes=C)
    with pytest.raises(ValueError, match=r"image 0: predicted labels must lie in \[0, 3\]"):
        olive_eval.compute_metric("mean_iou", pred + 1, ref, num_classes=C)
    with pytest.raises(ValueError, match="4 class names given for 3 classes"):
        get_metric("mean_iou", {"num_classes": 3, "class_names": list("abcd")})


MODEL = textwrap.dedent(
    """
    import numpy as np

    def load(model_path):
        def predict(batch):
            out = []
            for i, ref in zip(batch["image"], batch["mask"]):
                m = np.array(ref, dtype=np.int64)
                m[m == 255] = 0
                if i % 3 == 0:
                    m[:2] = (m[:2] + 1) % 4  # some errors
                out.append(m)
            return out
        return predict
    """
)


def test_a_run_with_an_interval(tmp_path) -> None:
    _pred, ref = maps(7, n=12)
    write_jsonl(tmp_path / "d.jsonl", [{"image": i, "mask": r.tolist()} for i, r in enumerate(ref)])
    (tmp_path / "model.py").write_text(MODEL)
    config = {
        "input_model": {
            "type": "PythonModel",
            "name": "seg",
            "user_script": str(tmp_path / "model.py"),
            "model_loader": "load",
        },
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(tmp_path / "d.jsonl")},
                "pre_process_data_config": {"input_cols": ["image", "mask"], "label_col": "mask"},
                "dataloader_config": {"batch_size": 5},
            }
        ],
        "metrics": [
            {
                "name": "seg",
                "type": "accuracy",
                "sub_types": [
                    {
                        "name": "mean_iou",
                        "priority": 1,
                        "metric_config": {"num_classes": C},
                        "confidence_interval": {"n_resamples": 200},
                    },
                    {"name": "segmentation_confusion_matrix", "metric_config": {"num_classes": C}},
                ],
            }
        ],
        "output_dir": str(tmp_path / "out"),
    }
    result = evaluate(config).models["seg"].metrics
    predicted = []
    for i, r in enumerate(ref):
        m = r.astype(np.int64)
        m[m == 255] = 0
        if i % 3 == 0:
            m[:2] = (m[:2] + 1) % 4
        predicted.append(m)
    y, p = counted(np.stack(predicted), ref)
    expected = jaccard_score(y, p, labels=list(range(C)), average="macro")
    sub = result["seg-mean_iou"]
    assert sub.value == pytest.approx(expected, abs=TOL)
    assert sub.ci_low <= sub.value <= sub.ci_high
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    matrix = written["models"]["seg"]["metrics"]["seg-segmentation_confusion_matrix"]["details"]["confusion_matrix"]
    assert sum(sum(row.values()) for row in matrix.values()) == int((ref != 255).sum())

"""roc_auc, average_precision, confusion_matrix, pr_curve, detailed_pr_curve and threshold_metrics as
registered sub-types: against scikit-learn and valor-lite's definitions, and the structured-value rules."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, confusion_matrix, roc_auc_score

import olive_eval
from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import get_metric

TOL = 1e-12


def scores(seed: int, n: int = 300, c: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities from small integer weights: many ties in score, rows summing to 1."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 6, (n, c)).astype(np.float64)
    s = weights / weights.sum(axis=1, keepdims=True)
    y = rng.integers(0, c, n)
    return s, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_roc_auc_and_average_precision_match_scikit_learn(seed: int) -> None:
    s, y = scores(seed)
    auc = olive_eval.compute_metric("roc_auc", s, y)
    assert auc == pytest.approx(roc_auc_score(y, s, multi_class="ovr", average="macro"), rel=0, abs=TOL)
    ap = get_metric("average_precision").compute(s, y)
    assert ap.value == pytest.approx(average_precision_score(np.eye(4)[y], s, average="macro"), abs=TOL)
    np.testing.assert_allclose(ap.per_class, average_precision_score(np.eye(4)[y], s, average=None), atol=TOL)


def test_binary_scores_and_class_names() -> None:
    rng = np.random.default_rng(3)
    s, y = np.round(rng.random(500), 2), rng.integers(0, 2, 500)
    score = get_metric("roc_auc", {"class_names": ["neg", "pos"]}).compute(s, y)
    assert score.details["per_class"]["pos"] == pytest.approx(roc_auc_score(y, s), abs=TOL)
    assert olive_eval.compute_metric("average_precision", np.stack([1 - s, s], 1), y) == pytest.approx(
        np.mean([average_precision_score(y == 1, s), average_precision_score(y == 0, 1 - s)]), abs=TOL
    )


def test_a_class_without_positives_is_left_out_and_named() -> None:
    s, y = scores(4, c=3)
    y[y == 2] = 0
    score = get_metric("roc_auc", {"class_names": ["a", "b", "c"]}).compute(s, y)
    assert score.details["per_class"]["c"] is None
    expected = np.mean([roc_auc_score(y == k, s[:, k]) for k in (0, 1)])
    assert score.value == pytest.approx(expected, abs=TOL)
    with pytest.raises(ValueError, match="roc_auc is undefined here: no class has both positives and negatives"):
        olive_eval.compute_metric("roc_auc", s, np.zeros(len(s), int))


def test_confusion_matrix_is_scikit_learns_with_names() -> None:
    s, y = scores(5, c=3)
    details = get_metric("confusion_matrix", {"class_names": ["a", "b", "c"]}).compute(s, y).details
    ref = confusion_matrix(y, np.argmax(s, axis=1), labels=[0, 1, 2])
    ours = [[details["confusion_matrix"][r][p] for p in "abc"] for r in "abc"]
    np.testing.assert_array_equal(ours, ref)


def test_pr_curve_counts_match_scikit_learn_per_threshold() -> None:
    s, y = scores(6, c=3)
    details = get_metric("pr_curve", {"score_thresholds": [0.1, 0.35, 0.9]}).compute(s, y).details
    for c in range(3):
        for t in (0.1, 0.35, 0.9):
            cm = confusion_matrix(y == c, s[:, c] >= t, labels=[False, True])
            point = details[str(c)][repr(t)]
            assert (point["tn"], point["fp"], point["fn"], point["tp"]) == tuple(cm.ravel())
            assert point["precision"] == (point["tp"] / (point["tp"] + point["fp"]) if point["tp"] + point["fp"] else 0)


def test_detailed_pr_curve_splits_the_errors() -> None:
    # example 0: class 0, predicted 1 (fn misclassification of 0, fp misclassification of 1);
    # example 1: class 0, nothing above 0.5 (no prediction); example 2: no label, predicts 1 (hallucination)
    s = np.array([[0.2, 0.8], [0.4, 0.3], [0.1, 0.9]])
    y = np.array([0, 0, -1])
    details = get_metric("detailed_pr_curve", {"score_thresholds": [0.5], "pr_curve_max_examples": 5}).compute(s, y)
    zero, one = details.details["0"]["0.5"], details.details["1"]["0.5"]
    assert zero["fn"]["observations"]["misclassifications"] == {"count": 1, "examples": [0]}
    assert zero["fn"]["observations"]["no_predictions"] == {"count": 1, "examples": [1]}
    assert one["fp"]["observations"]["misclassifications"] == {"count": 1, "examples": [0]}
    assert one["fp"]["observations"]["hallucinations"] == {"count": 1, "examples": [2]}


def test_threshold_metrics_follow_valor_hardmax() -> None:
    s, y = scores(8, c=3)
    details = get_metric("threshold_metrics").compute(s, y).details  # threshold 0, hardmax
    assert details["accuracy"]["0.0"] == pytest.approx(np.mean(np.argmax(s, 1) == y), abs=TOL)


def test_scores_outside_unit_interval_and_nan() -> None:
    s, y = scores(9, c=3)
    with pytest.raises(ValueError, match=r"scores must lie in \[0, 1\] when score thresholds apply"):
        olive_eval.compute_metric("pr_curve", s * 3, y)
    bad = s.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        olive_eval.compute_metric("roc_auc", bad, y)


def test_a_structured_sub_type_cannot_be_ranked(toy) -> None:
    def config(sub):
        return toy.config({}, [{"name": "acc", "type": "accuracy", "sub_types": [sub]}])

    with pytest.raises(ConfigError, match=r"sub_types\[0\]\.priority: sub-type 'pr_curve' is a structured value"):
        load_run_config(config({"name": "pr_curve", "priority": 1}))
    with pytest.raises(ConfigError, match=r"sub_types\[0\]\.goal: sub-type 'confusion_matrix' is a structured"):
        load_run_config(config({"name": "confusion_matrix", "goal": {"type": "threshold", "value": 0.5}}))


def test_structured_values_reach_results_json(toy) -> None:
    post = {"type": "softmax"}
    metric = {
        "name": "cls",
        "type": "accuracy",
        "sub_types": [{"name": "roc_auc", "priority": 1}, {"name": "confusion_matrix"}, {"name": "pr_curve"}],
    }
    config = toy.config({}, [metric])
    config["data_configs"][0]["post_process_data_config"] = post
    result = evaluate(config)
    model = result.models[result.baseline]
    assert model.metrics["cls-roc_auc"].value is not None
    matrix = model.metrics["cls-confusion_matrix"]
    assert matrix.value is None and "structured" in matrix.undefined
    assert sum(sum(row.values()) for row in matrix.details["confusion_matrix"].values()) > 0
    assert set(model.metrics["cls-pr_curve"].details) == {"0", "1", "2"}


# ------------------------------------------------------------------------ binary [N] scores (issue 16, items 7, 8)
def binary_scores(seed: int, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Scores over 30 decades (most below 1e-16, where 1 - s is 1.0) with ties, and 0/1 labels."""
    rng = np.random.default_rng(seed)
    s = np.round(rng.random(n), 1) * 10.0 ** rng.integers(-30, 0, n)
    return s, rng.integers(0, 2, n)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("shape", ["[N]", "[N, 1]"])
def test_binary_roc_auc_is_exact_on_tiny_scores(seed: int, shape: str) -> None:
    s, y = binary_scores(seed)
    given = s if shape == "[N]" else s[:, None]
    assert olive_eval.compute_metric("roc_auc", given, y) == pytest.approx(roc_auc_score(y, s), rel=0, abs=TOL)
    assert olive_eval.compute_metric("roc_auc", np.array([1e-19, 3e-19]), np.array([1, 0])) == 0.0
    assert olive_eval.compute_metric("roc_auc", [0.0, 1e-300, 5e-324], [0, 1, 1]) == roc_auc_score(
        [0, 1, 1], [0.0, 1e-300, 5e-324]
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_average_precision_is_the_positive_class(seed: int) -> None:
    s, y = binary_scores(seed)
    value = olive_eval.compute_metric("average_precision", s, y)
    assert value == pytest.approx(average_precision_score(y, s), rel=0, abs=TOL)
    assert value.per_class == [float(value)]
    vector = olive_eval.compute_metric("average_precision", [0.2, 0.6, 0.4], [1, 0, 0])
    assert vector == pytest.approx(average_precision_score([1, 0, 0], [0.2, 0.6, 0.4]), rel=0, abs=TOL)  # 1/3
    assert olive_eval.compute_metric("average_precision", [0.5, 0.5, 0.5], [1, 0, 1]) == pytest.approx(
        average_precision_score([1, 0, 1], [0.5, 0.5, 0.5]), abs=TOL
    )


def test_binary_scores_without_a_reference_label_count_as_negatives() -> None:
    s, y = binary_scores(3)
    y[::7] = -1
    assert olive_eval.compute_metric("roc_auc", s, y) == pytest.approx(roc_auc_score(y == 1, s), abs=TOL)
    assert olive_eval.compute_metric("average_precision", s, y) == pytest.approx(
        average_precision_score(y == 1, s), abs=TOL
    )
    with pytest.raises(ValueError, match=r"^average_precision is undefined here: no class has positives"):
        olive_eval.compute_metric("average_precision", s, np.where(y == 1, 0, y))

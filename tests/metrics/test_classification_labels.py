"""Classification labels at the edge (issue 16, items 5, 6, 17): no examples is undefined, a label outside the
model's classes is an error naming its example, and a label that is not a number says which one it is."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from olive_eval import compute_metric, evaluate
from olive_eval.metrics import get_metric
from tests.helpers import N_CLASSES, ToyProblem, write_jsonl

STAT_SCORES = ("accuracy_score", "f1_score", "precision", "recall")
SCORED = ("auroc", "roc_auc", "average_precision", "confusion_matrix", "pr_curve", "detailed_pr_curve")
EVERY_SUB_TYPE = (*STAT_SCORES, *SCORED, "threshold_metrics")


def probabilities(seed: int, n: int, c: int = N_CLASSES) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(size=(n, c))
    return np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)


# ----------------------------------------------------------------------------------------- item 5: no examples
@pytest.mark.parametrize("name", EVERY_SUB_TYPE)
@pytest.mark.parametrize("empty", [([], []), (np.zeros((0, 3)), np.zeros(0, int))], ids=["lists", "shaped"])
def test_no_examples_is_undefined_for_every_sub_type(name, empty):
    with pytest.raises(ValueError, match=rf"^{name} is undefined here: no examples to score$"):
        compute_metric(name, *empty)


@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "none"])
@pytest.mark.parametrize("name", STAT_SCORES)
def test_every_reference_ignored_is_undefined_not_zero(name, average):
    score = get_metric(name, {"ignore_index": -100, "average": average}).compute([0, 1, 2], [-100, -100, -100])
    assert np.isnan(score.value) and score.undefined == "every reference is ignore_index"
    with pytest.raises(ValueError, match=rf"^{name} is undefined here: every reference is ignore_index$"):
        compute_metric(name, [0, 1, 2], [-100, -100, -100], ignore_index=-100, average=average)


# ----------------------------------------------------------------------- item 6: labels outside [0, num_classes)
@pytest.mark.parametrize("name", [*STAT_SCORES, *SCORED, "threshold_metrics"])
@pytest.mark.parametrize("label", [7, 3, -3])
def test_a_label_outside_the_score_columns_names_its_example(name, label):
    s, y = probabilities(0, 12), np.random.default_rng(1).integers(0, N_CLASSES, 12)
    y[9] = label
    with pytest.raises(ValueError, match=rf"^references: example 9 is {label}, outside \[0, 3\): the scores have 3 "):
        compute_metric(name, s, y)


@pytest.mark.parametrize("name", STAT_SCORES)
def test_predicted_labels_check_against_num_classes(name):
    with pytest.raises(ValueError, match=r"^references: example 2 is 7, outside \[0, 3\): num_classes is 3$"):
        compute_metric(name, [0, 1, 2, 1], [0, 1, 7, 1], num_classes=3)
    with pytest.raises(ValueError, match=r"^predictions: example 3 is 5, outside \[0, 3\): num_classes is 3$"):
        compute_metric(name, [0, 1, 2, 5], [0, 1, 2, 1], num_classes=3)
    with pytest.raises(ValueError, match=r"^references: example 1 is -3, outside \[0, 8\): 8 classes inferred from"):
        compute_metric(name, [0, 1, 7, 1], [0, -3, 2, 1])


def test_binary_scores_take_labels_0_and_1_only():
    with pytest.raises(ValueError, match=r"^references: example 2 is 7, outside \[0, 2\): a binary task has the"):
        compute_metric("accuracy_score", [0.2, 0.7, 0.9], [0, 1, 7])
    with pytest.raises(ValueError, match=r"^references: example 1 is 2, outside \[0, 2\): a binary task has the"):
        compute_metric("auroc", [0.2, 0.7, 0.9], [0, 2, 1])
    with pytest.raises(ValueError, match=r"^references: example 0 is 3, outside \[0, 2\): binary scores \[N\]"):
        compute_metric("roc_auc", [0.2, 0.7, 0.9], [3, 0, 1])
    with pytest.raises(
        ValueError, match=r"^references: example 1 at position \[1\] is 2, outside \[0, 2\): multilabel"
    ):
        compute_metric("f1_score", np.full((2, 2), 0.6), [[0, 1], [1, 2]], task="multilabel")


def test_a_label_per_token_names_the_example_and_the_position():
    preds, refs = np.zeros((3, 4), int), np.full((3, 4), -100)
    refs[2, 3] = 5
    with pytest.raises(ValueError, match=r"^references: example 2 at position \[3\] is 5, outside \[0, 3\)"):
        compute_metric("accuracy_score", preds, refs, ignore_index=-100, num_classes=3)


def toy_run(tmp_path, n: int, edit, post: str, sub_types: list[dict]) -> tuple[dict, np.ndarray, np.ndarray]:
    """The toy 3-class linear ONNX model over its data in batches of 4, after ``edit(toy)`` changed its labels
    or weights: (the metrics, the labels, the model's predicted classes)."""
    toy = ToyProblem(tmp_path, n=n)
    edit(toy)
    rows = [{"x": x.tolist(), "label": int(y)} for x, y in zip(toy.x, toy.labels, strict=True)]
    write_jsonl(toy.data_file, rows)
    config = toy.config({}, [{"name": "acc", "type": "accuracy", "sub_types": sub_types}])
    config["data_configs"][0]["dataloader_config"]["batch_size"] = 4
    config["data_configs"][0]["post_process_data_config"] = {"type": post}
    return evaluate(config).models["base"].metrics, toy.labels, (toy.x @ toy.weights).argmax(axis=1)


SCORES = "the scores have 3 columns"


@pytest.mark.parametrize(
    ("post", "names", "why"),
    [
        ("argmax", ("accuracy_score", "f1_score"), "the model's logits have 3 classes"),
        ("softmax", ("accuracy_score", "f1_score"), SCORES),
        ("argmax", ("auroc",), SCORES),  # it reads the logits themselves
        ("softmax", ("roc_auc", "confusion_matrix"), f"{SCORES} (-1: no reference label)"),
    ],
)
@pytest.mark.parametrize("label", [7, -3])
def test_a_run_names_the_example_of_a_label_outside_the_models_classes(tmp_path, post, names, why, label):
    def relabel(toy):
        toy.labels[13] = label  # in the fourth batch: examples are numbered across batches

    subs = [{"name": name, "priority": 1 if i == 0 else -1} for i, name in enumerate(names)]
    metrics, _, _ = toy_run(tmp_path, 20, relabel, post, subs)
    for name in names:
        assert metrics[f"acc-{name}"].value is None
        assert metrics[f"acc-{name}"].error.endswith(f"references: example 13 is {label}, outside [0, 3): {why}")


@pytest.mark.parametrize("never", [None, 2])  # a class the run never shows
def test_a_run_with_an_argmax_model_scores_over_the_models_classes(tmp_path, never):
    """Predicted labels alone look binary when class 2 never occurs; the logits say the model has 3 classes."""

    def edit(toy):
        if never is not None:
            toy.weights[:, 2] = toy.weights[:, :2].mean(axis=1)  # its logit is never above both others ...
            toy.labels[toy.labels == never] = 0  # ... and no reference is of it
        toy.labels[np.arange(0, 40, 3)] = 1  # some errors

    subs = [{"name": "accuracy_score", "priority": 1}, {"name": "f1_score", "metric_config": {"average": "macro"}}]
    metrics, labels, predicted = toy_run(tmp_path, 40, edit, "argmax", subs)
    assert set(labels) | set(predicted) == ({0, 1, 2} - {never})
    assert metrics["acc-accuracy_score"].value == pytest.approx(accuracy_score(labels, predicted), abs=1e-12)
    assert metrics["acc-f1_score"].value == pytest.approx(f1_score(labels, predicted, average="macro"), abs=1e-12)


# ----------------------------------------------------------------------------- item 17: labels that are not numbers
@pytest.mark.parametrize(
    ("preds", "refs", "message"),
    [
        ([0, 1, 1], ["0", "b", "1"], r"^references: example 0 is '0', not a class label$"),
        ([0, 1, 1], [0, "b", 1], r"^references: example 1 is 'b', not a class label$"),
        ([0, 1, 1], [0, None, 1], r"^references: example 1 is None, not a class label$"),
        (
            [0, 1, 1],
            np.array([0, np.nan, 1]),
            r"^references: example 1 is NaN, not a class label \(a missing label\?\)$",
        ),
        ([0, 1, 1], [0.0, 1.5, 1.0], r"^references: example 1 is 1.5, not an integer class label$"),
        (["a", "b", "c"], [0, 1, 1], r"^predictions: example 0 is 'a', not a number \(a class label or a score\)$"),
    ],
)
@pytest.mark.parametrize("name", ["accuracy_score", "f1_score"])
def test_a_label_that_is_not_a_class_label_is_named(name, preds, refs, message):
    with pytest.raises(ValueError, match=message):
        compute_metric(name, preds, refs)


@pytest.mark.parametrize("name", ["auroc", "roc_auc", "average_precision", "confusion_matrix"])
def test_a_missing_label_beside_scores_is_named(name):
    with pytest.raises(ValueError, match=r"^references: example 2 is NaN, not a class label \(a missing label\?\)$"):
        compute_metric(name, probabilities(2, 4), np.array([0, 1, np.nan, 2]))
    with pytest.raises(ValueError, match=r"^references: example 3 is 'x', not a class label$"):
        compute_metric(name, probabilities(2, 4), [0, 1, 2, "x"])

"""Classification metrics against scikit-learn (1e-9) and torchmetrics.functional (1e-6) on the same data."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm
import torch
import torchmetrics.functional as tmf
from pydantic import ValidationError

from olive_eval.metrics import get_metric
from olive_eval.metrics.classification import functional as C
from olive_eval.metrics.classification import stat_scores as K
from olive_eval.metrics.classification.auroc import binary_auroc
from olive_eval.metrics.classification.inputs import infer_task

pytestmark = pytest.mark.filterwarnings("ignore")  # torchmetrics / sklearn warn on degenerate inputs

SK_TOL, TM_TOL = 1e-9, 1e-6
STAT_METRICS = ("accuracy_score", "f1_score", "precision", "recall")
SK_BINARY = {
    "accuracy_score": skm.accuracy_score,
    "f1_score": lambda t, p, **kw: skm.f1_score(t, p, zero_division=0, **kw),
    "precision": lambda t, p, **kw: skm.precision_score(t, p, zero_division=0, **kw),
    "recall": lambda t, p, **kw: skm.recall_score(t, p, zero_division=0, **kw),
}
TM = {"accuracy_score": tmf.accuracy, "f1_score": tmf.f1_score, "precision": tmf.precision, "recall": tmf.recall}


def ours(name, preds, targets, **config):
    return get_metric(name, config).compute(preds, targets)


def tm_value(name, preds, targets, **config):
    """The torchmetrics.functional result for the same metric_config (float, or list for average none)."""
    fn = tmf.auroc if name == "auroc" else TM[name]
    kwargs = {k: v for k, v in config.items() if v is not None}
    if kwargs.get("average") == "none":
        kwargs["average"] = None
    out = fn(torch.as_tensor(np.asarray(preds)), torch.as_tensor(np.asarray(targets)), **kwargs)
    return out.double().numpy()


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# ---------------------------------------------------------------------------------------------- binary
def binary_data(seed, n, kind, ignore=False):
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, 2, n)
    preds = {"prob": rng.random(n), "logit": rng.normal(0, 2, n), "label": rng.integers(0, 2, n)}[kind]
    if ignore:
        targets = np.where(rng.random(n) < 0.2, -1, targets)
    return preds, targets


def binary_decision(preds, threshold):
    if preds.dtype.kind == "f":
        scores = sigmoid(preds) if (preds.min() < 0 or preds.max() > 1) else preds
        return (scores > threshold).astype(int)
    return preds


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n", [1, 17, 300])
@pytest.mark.parametrize("kind", ["prob", "logit", "label"])
@pytest.mark.parametrize("ignore", [False, True])
def test_binary_stat_metrics_match_sklearn_and_torchmetrics(seed, n, kind, ignore):
    preds, targets = binary_data(seed, n, kind, ignore)
    threshold = 0.3 if seed == 2 else 0.5
    config = {"task": "binary", "threshold": threshold, "ignore_index": -1 if ignore else None}
    keep = targets != -1
    decision = binary_decision(preds, threshold)
    for name in STAT_METRICS:
        score = ours(name, preds, targets, **config)
        if not keep.any():  # 0 / 0: torchmetrics and scikit-learn say 0.0
            assert np.isnan(score.value) and score.undefined == "every reference is ignore_index", name
            continue
        assert score.value == pytest.approx(SK_BINARY[name](targets[keep], decision[keep]), abs=SK_TOL), name
        assert score.value == pytest.approx(float(tm_value(name, preds, targets, **config)), abs=TM_TOL), name


def test_binary_threshold_is_strict_like_torchmetrics():
    preds, targets = np.array([0.5, 0.5, 0.7, 0.2]), np.array([1, 0, 1, 0])
    stats = get_metric("accuracy_score", {"task": "binary"}).statistics(preds, targets)
    assert stats[:, 0].tolist() == [[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 0, 0, 1]]
    assert ours("accuracy_score", preds, targets).value == pytest.approx(
        float(tm_value("accuracy_score", preds, targets, task="binary"))
    )


def test_binary_two_column_scores_use_the_positive_column():
    rng = np.random.default_rng(5)
    logits, targets = rng.normal(size=(50, 2)), rng.integers(0, 2, 50)
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    for threshold in (0.5, 0.7):
        ref = skm.f1_score(targets, (probs[:, 1] > threshold).astype(int), zero_division=0)
        assert ours("f1_score", logits, targets, threshold=threshold).value == pytest.approx(ref, abs=SK_TOL)
        assert ours("f1_score", probs, targets, threshold=threshold).value == pytest.approx(ref, abs=SK_TOL)


@pytest.mark.parametrize(
    ("preds", "targets"),
    [
        ([1, 1, 1, 1], [1, 1, 1, 1]),  # all one class, perfect
        ([0, 0, 0], [1, 1, 1]),  # never predicts the positive class
        ([1, 0, 1], [0, 0, 0]),  # no positive targets
        ([0, 1, 1, 0], [0, 1, 1, 0]),  # perfect
    ],
)
def test_binary_edge_cases(preds, targets):
    preds, targets = np.array(preds), np.array(targets)
    for name in STAT_METRICS:
        got = ours(name, preds, targets, task="binary").value
        assert got == pytest.approx(SK_BINARY[name](targets, preds), abs=SK_TOL), name
        assert got == pytest.approx(float(tm_value(name, preds, targets, task="binary")), abs=TM_TOL), name


# ------------------------------------------------------------------------------------------ multiclass
def sk_multiclass(name, targets, labels, average, num_classes):
    """scikit-learn reference of a top-1 multiclass metric (accuracy macro/weighted = recall)."""
    if name == "accuracy_score" and average == "micro":
        return skm.accuracy_score(targets, labels)
    fn = {
        "accuracy_score": skm.recall_score,
        "recall": skm.recall_score,
        "precision": skm.precision_score,
        "f1_score": skm.f1_score,
    }[name]
    if average == "none":
        return fn(targets, labels, average=None, labels=list(range(num_classes)), zero_division=0)
    return fn(targets, labels, average=average, zero_division=0)


def multiclass_data(seed, n, num_classes, kind, ignore=False):
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, num_classes, n)
    if kind == "label":
        preds = rng.integers(0, num_classes, n)
        labels = preds
    else:
        preds = rng.normal(size=(n, num_classes))
        if kind == "prob":
            preds = np.exp(preds) / np.exp(preds).sum(1, keepdims=True)
        labels = preds.argmax(1)
    if ignore:
        targets = np.where(rng.random(n) < 0.25, -100, targets)
    return preds, targets, labels


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n", [1, 25, 400])
@pytest.mark.parametrize("kind", ["label", "logit", "prob"])
@pytest.mark.parametrize("ignore", [False, True])
def test_multiclass_stat_metrics_match_sklearn_and_torchmetrics(seed, n, kind, ignore):
    num_classes = 3 + seed
    preds, targets, labels = multiclass_data(seed, n, num_classes, kind, ignore)
    keep = targets != -100
    for name in STAT_METRICS:
        for average in ("micro", "macro", "weighted", "none"):
            config = {
                "task": "multiclass",
                "num_classes": num_classes,
                "average": average,
                "ignore_index": -100 if ignore else None,
            }
            score = ours(name, preds, targets, **config)
            if not keep.any():  # 0 / 0: torchmetrics says 0.0
                assert np.isnan(score.value) and score.undefined == "every reference is ignore_index"
                continue
            tm = tm_value(name, preds, targets, **config)
            got = np.array(score.per_class) if average == "none" else score.value
            np.testing.assert_allclose(got, tm, atol=TM_TOL, err_msg=f"{name} {average}")
            sk = sk_multiclass(name, targets[keep], labels[keep], average, num_classes)
            np.testing.assert_allclose(got, sk, atol=SK_TOL, rtol=0, err_msg=f"{name} {average}")
            if average == "none":  # value = unweighted mean over the classes macro includes
                macro = sk_multiclass(name, targets[keep], labels[keep], "macro", num_classes)
                assert score.value == pytest.approx(macro, abs=SK_TOL)


@pytest.mark.parametrize(
    ("preds", "targets", "num_classes"),
    [
        ([0, 0, 0, 0], [0, 0, 0, 0], 3),  # all one class, two classes nowhere
        ([0, 1, 1, 0, 1], [0, 1, 2, 2, 1], 3),  # class 2 never predicted
        ([0, 1, 2, 2, 1], [0, 1, 1, 0, 1], 4),  # class 2 absent from targets, class 3 nowhere
        ([3, 1, 0, 2], [3, 1, 0, 2], 4),  # perfect
    ],
)
def test_multiclass_edge_cases(preds, targets, num_classes):
    preds, targets = np.array(preds), np.array(targets)
    for name in STAT_METRICS:
        for average in ("micro", "macro", "weighted", "none"):
            config = {"task": "multiclass", "num_classes": num_classes, "average": average}
            score = ours(name, preds, targets, **config)
            got = np.array(score.per_class) if average == "none" else score.value
            sk = sk_multiclass(name, targets, preds, average, num_classes)
            np.testing.assert_allclose(got, sk, atol=SK_TOL, rtol=0, err_msg=f"{name} {average}")
            np.testing.assert_allclose(got, tm_value(name, preds, targets, **config), atol=TM_TOL)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("top_k", [2, 3])
@pytest.mark.parametrize("ignore", [False, True])
def test_multiclass_top_k(seed, top_k, ignore):
    num_classes = 5
    preds, targets, _ = multiclass_data(seed, 300, num_classes, "prob", ignore)
    keep = targets != -100
    base = {"task": "multiclass", "num_classes": num_classes, "top_k": top_k, "ignore_index": -100 if ignore else None}
    acc = ours("accuracy_score", preds, targets, **base).value
    ref = skm.top_k_accuracy_score(targets[keep], preds[keep], k=top_k, labels=list(range(num_classes)))
    assert acc == pytest.approx(ref, abs=SK_TOL)
    for name in STAT_METRICS:
        for average in ("micro", "macro", "weighted", "none"):
            score = ours(name, preds, targets, **base, average=average)
            got = np.array(score.per_class) if average == "none" else score.value
            np.testing.assert_allclose(got, tm_value(name, preds, targets, **base, average=average), atol=TM_TOL)


def test_multiclass_top_k_predicts_the_target_when_it_is_in_the_top_k():
    # torchmetrics >= 1.6: a row predicts its target if the target is among its k best scores, else its top-1
    preds = np.array([[0.1, 0.5, 0.4], [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]])
    targets = np.array([2, 1, 0])  # row 0: 2 in top-2, row 1: 1 in top-2, row 2: 0 not → predicts 2
    config = {"num_classes": 3, "top_k": 2}
    assert ours("accuracy_score", preds, targets, **config).value == pytest.approx(2 / 3)
    assert ours("precision", preds, targets, **config).value == pytest.approx(2 / 3)
    score = ours("precision", preds, targets, **config, average="none")
    assert score.per_class == pytest.approx([0.0, 1.0, 0.5])
    assert score.value == pytest.approx(0.5)
    np.testing.assert_allclose(
        score.per_class, tm_value("precision", preds, targets, task="multiclass", **config, average="none")
    )


# ------------------------------------------------------------------------------------------ multilabel
def sk_per_label(name, targets, decisions):
    """Per-label scikit-learn binary metrics on the non-ignored entries."""
    valid = targets != -1
    return np.array(
        [SK_BINARY[name](targets[valid[:, j], j], decisions[valid[:, j], j]) for j in range(targets.shape[1])]
    )


def sk_multilabel(name, targets, decisions, average, per_label):
    """scikit-learn's binary metric pooled over the non-ignored entries for micro, else ``per_label`` (of
    :func:`sk_per_label`, asked once per metric for the three other averages) averaged."""
    if average == "micro":
        valid = targets != -1
        return SK_BINARY[name](targets[valid], decisions[valid])
    if average == "none":
        return per_label
    weights = np.ones(len(per_label)) if average == "macro" else (targets == 1).sum(0)
    return float((per_label * weights).sum() / weights.sum()) if weights.sum() else 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n", [1, 30, 250])
@pytest.mark.parametrize("kind", ["prob", "logit", "label"])
@pytest.mark.parametrize("ignore", [False, True])
def test_multilabel_stat_metrics_match_sklearn_and_torchmetrics(seed, n, kind, ignore):
    rng = np.random.default_rng(seed)
    num_labels = 4
    targets = rng.integers(0, 2, (n, num_labels))
    targets[:, 3] = 0  # a label that is never positive
    preds = {
        "prob": rng.random((n, num_labels)),
        "logit": rng.normal(0, 2, (n, num_labels)),
        "label": rng.integers(0, 2, (n, num_labels)),
    }[kind]
    if ignore:
        targets = np.where(rng.random(targets.shape) < 0.2, -1, targets)
    threshold = 0.6
    decisions = binary_decision(preds, threshold)
    for name in STAT_METRICS:
        per_label = sk_per_label(name, targets, decisions) if (targets != -1).any(axis=0).all() else None
        for average in ("micro", "macro", "weighted", "none"):
            config = {
                "task": "multilabel",
                "num_labels": num_labels,
                "average": average,
                "threshold": threshold,
                "ignore_index": -1 if ignore else None,
            }
            score = ours(name, preds, targets, **config)
            got = np.array(score.per_class) if average == "none" else score.value
            np.testing.assert_allclose(got, tm_value(name, preds, targets, **config), atol=TM_TOL)
            if not (targets != -1).any(axis=0).all():
                continue
            sk = sk_multilabel(name, targets, decisions, average, per_label)
            np.testing.assert_allclose(got, sk, atol=SK_TOL, rtol=0, err_msg=f"{name} {average}")
            if not ignore and name != "accuracy_score":  # sklearn's own multilabel-indicator path
                fn = {"f1_score": skm.f1_score, "precision": skm.precision_score, "recall": skm.recall_score}[name]
                direct = fn(targets, decisions, average=None if average == "none" else average, zero_division=0)
                np.testing.assert_allclose(got, direct, atol=SK_TOL, rtol=0)


# ---------------------------------------------------------------------------------------- statistics
def test_statistics_layout_ignored_rows_and_shards():
    preds, targets, _ = multiclass_data(3, 200, 4, "logit", ignore=True)
    metric = get_metric("f1_score", {"num_classes": 4, "average": "macro", "ignore_index": -100})
    stats = metric.statistics(preds, targets)
    assert stats.shape == (200, 4, 4)
    assert np.issubdtype(stats.dtype, np.integer)
    ignored = targets == -100
    assert not stats[ignored].any()
    assert (stats[~ignored].sum(axis=(1, 2)) == 4).all()  # one of tp/fp/fn/tn per (example, class)
    assert (stats[~ignored, :, K.TP].sum(1) + stats[~ignored, :, K.FN].sum(1) == 1).all()
    whole = metric.reduce(stats).value
    shards = np.concatenate([metric.statistics(preds[:70], targets[:70]), metric.statistics(preds[70:], targets[70:])])
    assert metric.reduce(shards).value == pytest.approx(whole, abs=SK_TOL)
    assert metric.reduce(stats.sum(0)).value == pytest.approx(whole, abs=SK_TOL)  # [C, 4] totals too
    idx = np.random.default_rng(0).integers(0, 200, 200)  # a bootstrap resample indexes the rows
    keep = ~ignored[idx]
    ref = skm.f1_score(targets[idx][keep], preds[idx].argmax(1)[keep], average="macro", zero_division=0)
    assert metric.reduce(stats[idx]).value == pytest.approx(ref, abs=SK_TOL)


def test_task_inference():
    assert infer_task([0.1, 0.9], [0, 1]) == "binary"
    assert infer_task([0.1, 0.9], [0, 7]) == "binary"  # [N] fractional scores: a label above 1 is an error later
    assert infer_task([0, 2, 1], [0, 1, 1]) == "multiclass"
    assert infer_task(np.zeros((3, 3)), [0, 1, 2]) == "multiclass"
    assert infer_task(np.zeros((3, 2)), [0, 1, 1]) == "binary"
    assert infer_task(np.zeros((3, 2)), np.zeros((3, 2), int)) == "multilabel"
    assert infer_task([0, 1], [1, -100], ignore_index=-100) == "binary"
    assert ours("accuracy_score", [0, 2, 1, 2], [0, 1, 1, 2]).extra["task"] == "multiclass"
    true_negatives = np.zeros((3, 2, 4), np.int8)
    true_negatives[..., K.TN] = 1
    with pytest.raises(ValueError, match="multiclass from multilabel"):
        get_metric("precision").reduce(true_negatives)


def test_functional_forms():
    preds, targets, _ = multiclass_data(0, 100, 4, "logit")
    assert C.f1_score(preds, targets, average="macro") == pytest.approx(
        ours("f1_score", preds, targets, average="macro").value
    )
    assert C.accuracy(preds, targets) == pytest.approx(skm.accuracy_score(targets, preds.argmax(1)), abs=SK_TOL)
    assert C.precision(preds, targets, average="none").shape == (4,)
    assert C.recall(preds, targets, average="weighted") == pytest.approx(C.accuracy(preds, targets), abs=SK_TOL)


@pytest.mark.parametrize(
    ("config", "preds", "targets", "message"),
    [
        ({"task": "binary"}, [0.2, 0.7], [0, 2], r"^references: example 1 is 2, outside \[0, 2\): a binary task"),
        ({"task": "multiclass", "num_classes": 3}, [0, 1], [0, 3], r"^references: example 1 is 3, outside \[0, 3\)"),
        ({"num_classes": 3}, np.zeros((2, 4)), [0, 1], "num_classes is 3"),
        ({"top_k": 2}, [0, 1, 2], [0, 1, 2], "top_k > 1 needs per-class scores"),
        ({"top_k": 2}, [0.1, 0.7], [0, 1], "multiclass inputs only"),
        ({}, [0.1, 0.7, 0.3], [0, 1], "different numbers"),
    ],
)
def test_bad_inputs_raise(config, preds, targets, message):
    with pytest.raises(ValueError, match=message):
        ours("accuracy_score", np.array(preds), np.array(targets), **config)


# ------------------------------------------------------------------------------------------------ AUROC
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n", [2, 40, 1000])
@pytest.mark.parametrize("ties", [False, True])
def test_binary_auroc_matches_sklearn_and_torchmetrics(seed, n, ties):
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, 2, n)
    targets[:2] = [0, 1]
    scores = rng.random(n)
    if ties:
        scores = np.round(scores, 1)
    got = ours("auroc", scores, targets).value
    assert got == pytest.approx(skm.roc_auc_score(targets, scores), abs=SK_TOL)
    assert got == pytest.approx(float(tm_value("auroc", scores, targets, task="binary")), abs=TM_TOL)
    logits = rng.normal(0, 3, n)
    assert ours("auroc", logits, targets).value == pytest.approx(skm.roc_auc_score(targets, logits), abs=SK_TOL)
    assert binary_auroc(logits, targets) == pytest.approx(skm.roc_auc_score(targets, logits), abs=SK_TOL)


def test_binary_auroc_ignore_index_and_degenerate():
    rng = np.random.default_rng(7)
    scores, targets = rng.random(300), rng.integers(0, 2, 300)
    targets[rng.random(300) < 0.3] = -1
    keep = targets != -1
    got = ours("auroc", scores, targets, ignore_index=-1).value
    assert got == pytest.approx(skm.roc_auc_score(targets[keep], scores[keep]), abs=SK_TOL)
    assert got == pytest.approx(float(tm_value("auroc", scores, targets, task="binary", ignore_index=-1)), abs=TM_TOL)
    for only in (0, 1):  # one class only: undefined, as scikit-learn says (torchmetrics says 0.0)
        t = np.full(10, only)
        score = ours("auroc", scores[:10], t)
        assert np.isnan(score.value)
        assert score.undefined == f"AUROC needs both classes in the targets; only {only} is present"
        assert np.isnan(skm.roc_auc_score(t, scores[:10]))
    single = ours("auroc", [0.3], [1])  # one row
    assert np.isnan(single.value) and "only 1 is present" in single.undefined


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", ["prob", "logit"])
@pytest.mark.parametrize("ignore", [False, True])
def test_multiclass_auroc_matches_sklearn_and_torchmetrics(seed, kind, ignore):
    num_classes, n = 3 + seed, 500
    preds, targets, _ = multiclass_data(seed, n, num_classes, kind, ignore)
    keep = targets != -100
    probs = preds if kind == "prob" else np.exp(preds) / np.exp(preds).sum(1, keepdims=True)
    for average in ("macro", "weighted", "none"):
        config = {"task": "multiclass", "num_classes": num_classes, "average": average}
        if ignore:
            config["ignore_index"] = -100
        score = ours("auroc", preds, targets, **config)
        got = np.array(score.per_class) if average == "none" else score.value
        np.testing.assert_allclose(got, tm_value("auroc", preds, targets, **config), atol=TM_TOL)
        sk_avg = None if average == "none" else average
        sk = skm.roc_auc_score(
            targets[keep], probs[keep], multi_class="ovr", average=sk_avg, labels=list(range(num_classes))
        )
        np.testing.assert_allclose(got, sk, atol=SK_TOL, rtol=0, err_msg=average)
    micro = ours("auroc", probs[keep], targets[keep], num_classes=num_classes, average="micro").value
    onehot = np.eye(num_classes)[targets[keep]]
    assert micro == pytest.approx(skm.roc_auc_score(onehot, probs[keep], average="micro"), abs=SK_TOL)


def test_multiclass_auroc_degenerate_class_is_undefined_and_left_out():
    rng = np.random.default_rng(4)
    probs = rng.dirichlet(np.ones(4), size=60)
    targets = rng.integers(0, 3, 60)  # class 3 never a target: no ROC curve for it
    per_class = ours("auroc", probs, targets, average="none").per_class
    assert np.isnan(per_class[3])
    sk = [skm.roc_auc_score(targets == c, probs[:, c]) for c in range(3)]
    np.testing.assert_allclose(per_class[:3], sk, atol=SK_TOL, rtol=0)
    assert ours("auroc", probs, targets).value == pytest.approx(sum(sk) / 3, abs=SK_TOL)  # mean of the defined
    support = np.bincount(targets, minlength=3)
    weighted = ours("auroc", probs, targets, average="weighted").value
    assert weighted == pytest.approx(np.dot(support, sk) / support.sum(), abs=SK_TOL)
    # torchmetrics counts the undefined class as 0.0 in the macro mean: we differ on purpose
    assert float(tm_value("auroc", probs, targets, task="multiclass", num_classes=4)) == pytest.approx(sum(sk) / 4)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("ignore", [False, True])
def test_multilabel_auroc_matches_sklearn_and_torchmetrics(seed, ignore):
    rng = np.random.default_rng(seed)
    n, num_labels = 300, 5
    targets, logits = rng.integers(0, 2, (n, num_labels)), rng.normal(size=(n, num_labels))
    if ignore:
        targets = np.where(rng.random(targets.shape) < 0.2, -1, targets)
    for average in ("micro", "macro", "weighted", "none"):
        config = {
            "task": "multilabel",
            "num_labels": num_labels,
            "average": average,
            "ignore_index": -1 if ignore else None,
        }
        score = ours("auroc", logits, targets, **config)
        got = np.array(score.per_class) if average == "none" else score.value
        np.testing.assert_allclose(got, tm_value("auroc", logits, targets, **config), atol=TM_TOL)
        valid = targets != -1
        if average == "micro":
            sk = skm.roc_auc_score(targets[valid], logits[valid])
        else:
            per = np.array(
                [skm.roc_auc_score(targets[valid[:, j], j], logits[valid[:, j], j]) for j in range(num_labels)]
            )
            weights = np.ones(num_labels) if average != "weighted" else (targets == 1).sum(0)
            sk = per if average == "none" else (per * weights).sum() / weights.sum()
            if not ignore and average != "none":
                assert got == pytest.approx(skm.roc_auc_score(targets, logits, average=average), abs=SK_TOL)
        np.testing.assert_allclose(got, sk, atol=SK_TOL, rtol=0, err_msg=average)


def test_binary_auroc_one_million_examples():
    rng = np.random.default_rng(0)
    targets = rng.integers(0, 2, 1_000_000)
    scores = rng.random(1_000_000) + 0.1 * targets
    metric = get_metric("auroc", {"task": "binary"})
    got = metric.compute(scores, targets).value
    assert got == pytest.approx(skm.roc_auc_score(targets, scores), abs=SK_TOL)


# ------------------------------------------------------------------------------------ published vectors
def test_torchmetrics_doctest_vectors():
    assert ours("auroc", [0, 0.5, 0.7, 0.8], [0, 1, 1, 0]).value == pytest.approx(0.5)
    score = ours("f1_score", [2, 1, 0, 1], [2, 1, 0, 0], num_classes=3, average="none")
    assert score.per_class == pytest.approx([2 / 3, 2 / 3, 1.0])
    assert score.value == pytest.approx(0.7778, abs=5e-5)
    assert ours("f1_score", [2, 1, 0, 1], [2, 1, 0, 0], num_classes=3, average="macro").value == pytest.approx(7 / 9)


def test_unitxt_vectors():
    encode = {"cat": 0, "dog": 1}
    refs = [encode[w] for w in ["cat", "dog", "dog", "dog", "cat", "cat"]]
    preds = [encode[w] for w in ["cat", "cat", "dog", "dog", "cat", "cat"]]
    config = {"task": "multiclass", "num_classes": 2}
    per_class = ours("f1_score", preds, refs, **config, average="none").per_class
    assert per_class == pytest.approx([0.857142857143, 0.8])  # f1_cat, f1_dog
    assert ours("f1_score", preds, refs, **config, average="macro").value == pytest.approx(0.82857142, abs=1e-8)
    assert ours("f1_score", preds, refs, **config, average="micro").value == pytest.approx(0.8333333, abs=1e-7)
    assert ours("auroc", [0.2, 0.8, 1.0], [1, 0, 1]).value == pytest.approx(0.5)


# --------------------------------------------------------------------------------------------- config
@pytest.mark.parametrize("name", [*STAT_METRICS, "auroc"])
def test_unknown_config_key_is_rejected_and_named(name):
    with pytest.raises(ValidationError) as info:
        get_metric(name, {"averge": "macro"})
    assert "averge" in str(info.value)
    assert info.value.errors()[0]["ctx"]["key"] == "averge"
    assert "did you mean 'average'" in str(info.value)


@pytest.mark.parametrize(
    ("name", "config", "field"),
    [
        ("f1_score", {"task": "multi"}, "task"),
        ("auroc", {"task": "regression"}, "task"),
        ("f1_score", {"average": "samples"}, "average"),
        ("precision", {"threshold": 1.5}, "threshold"),
        ("recall", {"top_k": 0}, "top_k"),
        ("accuracy_score", {"num_classes": 1}, "num_classes"),
        ("auroc", {"threshold": 0.5}, "threshold"),  # AUROC sweeps thresholds: not a key it takes
    ],
)
def test_bad_config_values_are_rejected(name, config, field):
    with pytest.raises(ValidationError, match=field):
        get_metric(name, config)


def test_registered_attributes():
    for name in STAT_METRICS:
        metric = get_metric(name)
        assert (metric.kind, metric.reads[0], metric.higher_is_better) == ("map_reduce", "prediction", True)
        assert metric.config.average == "micro"
    auroc = get_metric("auroc")
    assert (auroc.kind, auroc.reads[0], auroc.config.average) == ("global", "logits", "macro")


@pytest.mark.parametrize("name", ["accuracy_score", "precision", "recall", "f1_score"])
@pytest.mark.parametrize(
    ("task", "average", "top_k"),
    [
        ("binary", "micro", 1),
        ("multiclass", "micro", 1),
        ("multiclass", "macro", 1),
        ("multiclass", "weighted", 1),
        ("multiclass", "none", 1),
        ("multiclass", "macro", 2),
        ("multilabel", "macro", 1),
        ("multilabel", "micro", 1),
    ],
)
def test_batched_finalize_equals_reducing_each_resample(name, task, average, top_k):
    """Bootstrap resamples reduce in one vectorized call; it must equal reducing each one alone."""
    rng = np.random.default_rng(11)
    n = 60
    if task == "binary":
        preds, targets, config = rng.random(n), rng.integers(0, 2, n), {}
    elif task == "multiclass":
        preds, targets, config = rng.random((n, 5)), rng.integers(0, 4, n), {"num_classes": 5, "top_k": top_k}
    else:
        preds, targets, config = rng.random((n, 3)), rng.integers(0, 2, (n, 3)), {}
    metric = get_metric(name, {"task": task, "average": average, **config})
    stats = metric.statistics(preds, targets)
    resamples = rng.integers(0, n, (25, n))
    totals = stats[resamples].sum(axis=1)
    batched = metric.finalize_totals(totals)
    one_by_one = [metric.reduce(stats[idx]).value for idx in resamples]
    np.testing.assert_allclose(batched, one_by_one, rtol=0, atol=1e-15)


def test_batched_perplexity_equals_reducing_each_resample():
    rng = np.random.default_rng(2)
    logits, targets = rng.standard_normal((30, 6, 7)), rng.integers(0, 7, (30, 6))
    targets[0] = -100
    metric = get_metric("perplexity")
    stats = metric.statistics(logits, targets)
    resamples = rng.integers(0, 30, (20, 30))
    np.testing.assert_allclose(
        metric.finalize_totals(stats[resamples].sum(axis=1)),
        [metric.reduce(stats[i]).value for i in resamples],
        rtol=1e-13,
    )


# ---------------------------------------------------------------------------- multiclass with extra dimensions
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scores", [False, True], ids=["labels", "scores"])
def test_multidim_multiclass_matches_torchmetrics_with_ignore_index(seed, scores):
    """A label per token: preds [N, S] (or scores [N, C, S]) for targets [N, S] padded with -100, as
    torchmetrics' multiclass functions take them (global average over every position)."""
    import torch
    from torchmetrics.functional.classification import (
        multiclass_accuracy,
        multiclass_f1_score,
        multiclass_precision,
        multiclass_recall,
    )

    from olive_eval.metrics.classification.functional import accuracy, f1_score, precision, recall
    from olive_eval.metrics.classification.stat_scores import stat_scores

    rng = np.random.default_rng(seed)
    n, s, c = 5, 9, 4
    t = rng.integers(0, c, (n, s))
    t[rng.random((n, s)) < 0.3] = -100
    p = rng.standard_normal((n, c, s)) if scores else rng.integers(0, c, (n, s))
    pairs = ((accuracy, multiclass_accuracy), (precision, multiclass_precision), (recall, multiclass_recall))
    for ours, theirs in (*pairs, (f1_score, multiclass_f1_score)):
        for average in ("micro", "macro", "weighted"):
            for task in ({"task": "multiclass", "num_classes": c}, {}):
                got = ours(p, t, ignore_index=-100, average=average, **task)
                want = theirs(torch.tensor(p), torch.tensor(t), num_classes=c, ignore_index=-100, average=average)
                assert got == pytest.approx(want.item(), abs=1e-6), (ours.__name__, average, task)
    stats = stat_scores(p, t, task="multiclass", num_classes=c, ignore_index=-100)
    assert stats.shape == (n, c, 4)  # one row per example: its tokens' counts summed
    assert (stats[:, :, 0].sum(axis=1) + stats[:, :, 2].sum(axis=1) == (t != -100).sum(axis=1)).all()


def test_multidim_multiclass_bad_shapes():
    from olive_eval.metrics.classification.functional import accuracy

    with pytest.raises(ValueError, match=r"labels \[N, \.\.\.\] or scores \[N, C, \.\.\.\].*\[2, 3, 4\].*\[2, 5\]"):
        accuracy(np.zeros((2, 3, 4)), np.zeros((2, 5), int), task="multiclass")

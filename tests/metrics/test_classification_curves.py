"""Classification curves and Valor-style threshold metrics against scikit-learn and valor-lite, in the same
test, plus the vectors published in valor's own tests (peer-metric-systems.md §3)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sklearn.metrics as skm
from valor_lite.classification import Classification, Loader, MetricType

from olive_eval.metrics.classification import curves as CC
from olive_eval.metrics.classification import pr_curves as PR
from olive_eval.metrics.classification import threshold_confusion as TC
from olive_eval.metrics.classification import thresholds as CT

pytestmark = pytest.mark.filterwarnings("ignore")  # scikit-learn warns on undefined values

TOL = 1e-12
THRESHOLDS = [0.0, 0.1, 0.25, 0.5, 0.75, 0.95]


def random_case(rng: np.random.Generator, n: int, c: int, grid: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities on a coarse grid (ties and exact zeros are common) and random labels."""
    raw = rng.integers(0, grid, (n, c)).astype(np.float64)
    raw[raw.sum(axis=1) == 0, 0] = 1.0
    return raw / raw.sum(axis=1, keepdims=True), rng.integers(0, c, n)


def names_of(c: int) -> list[str]:
    return [f"label{i}" for i in range(c)]


def valor_evaluator(scores: np.ndarray, labels: np.ndarray, names: list[str]):
    """valor-lite over the same data: every datum predicts every class, listed in column order."""
    loader = Loader.in_memory()
    loader.add_data(
        [
            Classification(uid=f"uid{i}", groundtruth=names[y], predictions=list(names), scores=[float(v) for v in row])
            for i, (row, y) in enumerate(zip(scores, labels, strict=True))
        ]
    )
    return loader.finalize()


def valor_counts(evaluator, names: list[str], thresholds: list[float], hardmax: bool) -> dict:
    metrics = evaluator.compute_precision_recall(score_thresholds=thresholds, hardmax=hardmax)
    out = {"counts": np.zeros((len(thresholds), len(names), 4), np.int64)}
    for stat in ("precision", "recall", "f1"):
        out[stat] = np.zeros((len(thresholds), len(names)))
    for m in metrics[MetricType.Counts]:
        ti, ci = thresholds.index(m.parameters["score_threshold"]), names.index(m.parameters["label"])
        out["counts"][ti, ci] = [m.value[k] for k in ("tp", "fp", "fn", "tn")]
    for stat, kind in (("precision", MetricType.Precision), ("recall", MetricType.Recall), ("f1", MetricType.F1)):
        for m in metrics[kind]:
            ti, ci = thresholds.index(m.parameters["score_threshold"]), names.index(m.parameters["label"])
            out[stat][ti, ci] = m.value
    out["accuracy"] = np.array([m.value for m in metrics[MetricType.Accuracy]])
    return out


def nan_equal(a, b, tol: float = TOL) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.all((np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= tol)))


# ----------------------------------------------------------------------------------- binary ROC AUC / AP
@pytest.mark.parametrize("seed", range(6))
def test_binary_roc_auc_and_average_precision_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    for n in (1, 2, 7, 50, 3000):
        y = rng.integers(0, 2, n)
        for s in (rng.integers(0, 4, n) / 3, rng.normal(size=n), rng.random(n), np.full(n, 0.3)):
            auc, ap = CC.binary_roc_auc(s, y), CC.binary_average_precision(s, y)
            expected_auc = skm.roc_auc_score(y, s) if 0 < y.sum() < n else np.nan
            expected_ap = skm.average_precision_score(y, s) if y.any() else np.nan
            assert nan_equal(auc, expected_auc), (n, auc, expected_auc)
            assert nan_equal(ap, expected_ap), (n, ap, expected_ap)


def test_binary_curve_fast_and_fallback_paths_agree_and_reject_nan():
    rng = np.random.default_rng(7)
    s, y = rng.integers(0, 6, 500) / 5, rng.integers(0, 2, 500).astype(bool)
    fast, slow = CC.binary_curve(s, y), CC.binary_curve(s - 1.0, y)  # the shift forces the argsort path
    np.testing.assert_array_equal(fast.thresholds - 1.0, slow.thresholds)
    np.testing.assert_array_equal(fast.tps, slow.tps)
    np.testing.assert_array_equal(fast.fps, slow.fps)
    signed_zero = CC.binary_curve(np.array([-0.0, 0.0, 0.5]), np.array([True, False, True]))
    np.testing.assert_array_equal(signed_zero.tps, [1, 2])
    with pytest.raises(ValueError, match="NaN"):
        CC.binary_roc_auc([0.1, np.nan], [0, 1])


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 1.0])
def test_binary_counts_and_f1_match_sklearn(threshold):
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 2000), rng.integers(0, 11, 2000) / 10
    tp, fp, fn, tn = CC.binary_counts(s, y, [threshold])[0]
    assert [tn, fp, fn, tp] == skm.confusion_matrix(y, s >= threshold, labels=[0, 1]).ravel().tolist()
    assert CC.binary_f1(s, y, threshold) == pytest.approx(skm.f1_score(y, s >= threshold, zero_division=0), abs=TOL)


# ---------------------------------------------------------------------------------- multiclass ROC AUC
@pytest.mark.parametrize("seed", range(4))
def test_roc_auc_per_class_and_macro_match_sklearn_and_valor(seed):
    rng = np.random.default_rng(seed)
    scores, labels = random_case(rng, 120, 4)
    per_class = CC.roc_auc(scores, labels)
    expected = [skm.roc_auc_score(labels == c, scores[:, c]) for c in range(4)]
    assert nan_equal(per_class, expected)
    ovr = skm.roc_auc_score(labels, scores, multi_class="ovr", average="macro")
    assert CC.macro_average(per_class, undefined="nan") == pytest.approx(ovr, abs=TOL)

    names = names_of(4)
    valor = valor_evaluator(scores, labels, names).compute_rocauc()
    valor_per_class = {m.parameters["label"]: m.value for m in valor[MetricType.ROCAUC]}
    ours_valor = CC.roc_auc(scores, labels, convention="valor")
    assert nan_equal(ours_valor, [valor_per_class[n] for n in names])
    assert CC.macro_average(ours_valor) == pytest.approx(valor[MetricType.mROCAUC][0].value, abs=TOL)


def test_roc_auc_edge_cases_match_sklearn_and_valor():
    names = names_of(3)
    # class 1: all-equal scores; class 2: never a reference label and scored zero everywhere
    scores = np.array([[0.7, 0.3, 0.0], [0.4, 0.3, 0.0], [0.2, 0.3, 0.0], [0.9, 0.3, 0.0]])
    labels = np.array([0, 1, 1, 0])
    ours = CC.roc_auc(scores, labels)
    assert ours[0] == pytest.approx(skm.roc_auc_score(labels == 0, scores[:, 0]), abs=TOL)
    assert ours[1] == pytest.approx(skm.roc_auc_score(labels == 1, scores[:, 1]), abs=TOL)
    assert np.isnan(ours[2]) and np.isnan(skm.roc_auc_score(labels == 2, scores[:, 2]))
    assert np.isnan(CC.macro_average(ours, undefined="nan"))
    probabilities = scores / scores.sum(axis=1, keepdims=True)
    assert np.isnan(skm.roc_auc_score(labels, probabilities, multi_class="ovr", labels=[0, 1, 2]))
    valor = valor_evaluator(scores, labels, names).compute_rocauc()
    expected = {m.parameters["label"]: m.value for m in valor[MetricType.ROCAUC]}
    assert nan_equal(CC.roc_auc(scores, labels, convention="valor"), [expected[n] for n in names])

    # an all-zero column of a class that does occur: scikit-learn 0.5, valor-lite 0.0
    labels2 = np.array([0, 2, 1, 2])
    sk = skm.roc_auc_score(labels2 == 2, scores[:, 2])
    assert CC.roc_auc(scores, labels2)[2] == pytest.approx(sk, abs=TOL) == 0.5
    valor2 = valor_evaluator(scores, labels2, names).compute_rocauc()
    expected2 = {m.parameters["label"]: m.value for m in valor2[MetricType.ROCAUC]}
    assert nan_equal(CC.roc_auc(scores, labels2, convention="valor"), [expected2[n] for n in names])

    one = CC.roc_auc(np.array([[0.6, 0.4]]), np.array([1]))  # one example: no negatives / no positives
    assert np.isnan(one).all()


def test_roc_auc_valor_published_animal_vector():
    """valor tests/classification/test_rocauc.py::test_rocauc_with_animal_example (= sklearn ovr)."""
    names = ["bird", "dog", "cat"]
    rows = [
        {"bird": 0.6, "dog": 0.2, "cat": 0.2},
        {"cat": 0.9, "dog": 0.1, "bird": 0.0},
        {"cat": 0.8, "dog": 0.05, "bird": 0.15},
        {"dog": 0.75, "cat": 0.1, "bird": 0.15},
        {"cat": 1.0, "dog": 0.0, "bird": 0.0},
        {"cat": 0.4, "dog": 0.4, "bird": 0.2},
    ]
    scores = np.array([[r[n] for n in names] for r in rows])
    labels = np.array([names.index(g) for g in ["bird", "dog", "bird", "bird", "cat", "dog"]])
    per_class = CC.roc_auc(scores, labels, convention="valor")
    assert per_class == pytest.approx([0.7777777777777778, 0.625, 1.0], abs=TOL)
    assert CC.macro_average(per_class) == pytest.approx(0.8009259259259259, abs=TOL)
    assert CC.macro_average(per_class) == pytest.approx(skm.roc_auc_score(labels, scores, multi_class="ovr"), abs=TOL)


# ----------------------------------------------------------------------------------- average precision
@pytest.mark.parametrize("seed", range(4))
def test_average_precision_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    scores, labels = random_case(rng, 150, 5)
    labels[labels == 4] = 3  # class 4 absent from the labels
    per_class = CC.average_precision(scores, labels)
    expected = [skm.average_precision_score(labels == c, scores[:, c]) for c in range(4)]
    assert nan_equal(per_class[:4], expected) and np.isnan(per_class[4])
    onehot = np.eye(5)[labels]
    macro = skm.average_precision_score(onehot, scores, average="macro")
    assert CC.macro_average(per_class, undefined="zero") == pytest.approx(macro, abs=TOL)
    assert CC.macro_average(per_class) == pytest.approx(np.mean(expected), abs=TOL)


# ------------------------------------------------------------------------ Valor threshold metrics
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("hardmax", [True, False])
def test_threshold_metrics_match_valor(seed, hardmax):
    rng = np.random.default_rng(seed)
    scores, labels = random_case(rng, 80, 4)
    labels[labels == 3] = 2  # class 3 is never a reference label
    names = names_of(4)
    expected = valor_counts(valor_evaluator(scores, labels, names), names, THRESHOLDS, hardmax)
    ours = CT.threshold_metrics(scores, labels, score_thresholds=THRESHOLDS, hardmax=hardmax)
    np.testing.assert_array_equal(ours.counts, expected["counts"])
    for stat in ("precision", "recall", "f1", "accuracy"):
        assert nan_equal(getattr(ours, stat), expected[stat]), stat
    per_example = CT.threshold_stat_scores(scores, labels, score_thresholds=THRESHOLDS, hardmax=hardmax)
    assert per_example.shape == (80, len(THRESHOLDS), 4, 4)
    np.testing.assert_array_equal(per_example.sum(axis=0, dtype=np.int64), ours.counts)


def test_threshold_metrics_match_sklearn_with_hardmax_at_zero():
    rng = np.random.default_rng(11)
    scores = rng.random((300, 6)) + 0.01
    scores[:, 5] = 0.001  # class 5 is a reference label but never predicted
    scores /= scores.sum(axis=1, keepdims=True)
    labels = rng.integers(0, 6, 300)
    labels[labels == 4] = 0  # class 4 is predicted but never a reference label
    ours = CT.threshold_metrics(scores, labels, score_thresholds=[0.0], hardmax=True)
    predicted = scores.argmax(axis=1)
    assert not (predicted == 5).any() and (labels == 5).any() and (predicted == 4).any()
    p, r, f, _ = skm.precision_recall_fscore_support(labels, predicted, labels=range(6), zero_division=0)
    assert nan_equal(ours.precision[0], p) and nan_equal(ours.recall[0], r) and nan_equal(ours.f1[0], f)
    assert ours.accuracy[0] == pytest.approx(skm.accuracy_score(labels, predicted), abs=TOL)
    for avg in ("macro", "micro", "weighted"):
        expected = skm.f1_score(labels, predicted, average=avg, zero_division=0)
        assert ours.average("f1", avg)[0] == pytest.approx(expected, abs=TOL)
    cm = TC.threshold_confusion_matrix(scores, labels, score_thresholds=[0.0, 0.3])
    np.testing.assert_array_equal(cm.matrix[0], skm.confusion_matrix(labels, predicted, labels=range(6)))
    top = scores.max(axis=1)
    kept = top >= 0.3
    np.testing.assert_array_equal(cm.matrix[1], skm.confusion_matrix(labels[kept], predicted[kept], labels=range(6)))
    np.testing.assert_array_equal(cm.unmatched_references[1], np.bincount(labels[~kept], minlength=6))
    assert kept.any() and not kept.all()


@pytest.mark.parametrize("hardmax", [True, False])
@pytest.mark.parametrize(
    "scores, labels",
    [
        (np.array([[0.2, 0.5, 0.3]]), np.array([1])),  # one example
        (np.full((4, 3), 1 / 3), np.array([0, 1, 2, 1])),  # all scores equal: hardmax picks column 0
        (np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), np.array([2, 2])),  # nothing predicted at all
    ],
    ids=["one-example", "all-equal", "all-zero"],
)
def test_threshold_edge_cases_match_valor(scores, labels, hardmax):
    names = names_of(3)
    evaluator = valor_evaluator(scores, labels, names)
    expected = valor_counts(evaluator, names, THRESHOLDS, hardmax)
    ours = CT.threshold_metrics(scores, labels, score_thresholds=THRESHOLDS, hardmax=hardmax)
    np.testing.assert_array_equal(ours.counts, expected["counts"])
    assert nan_equal(ours.f1, expected["f1"]) and nan_equal(ours.accuracy, expected["accuracy"])
    matrices = evaluator.compute_confusion_matrix(score_thresholds=THRESHOLDS, hardmax=hardmax)
    mine = TC.threshold_confusion_matrix(scores, labels, score_thresholds=THRESHOLDS, hardmax=hardmax).to_dict(names)
    assert [m.value["confusion_matrix"] for m in matrices] == [d["confusion_matrix"] for d in mine]
    assert [m.value["unmatched_ground_truths"] for m in matrices] == [d["unmatched_ground_truths"] for d in mine]


VALOR_ANIMAL = (  # valor tests/classification/test_counts.py::test_counts_with_animal_example (hardmax)
    ["cat", "dog", "bird"],  # column order puts cat before dog: datum 5 ties them and valor picks cat
    [
        {"bird": 0.6, "dog": 0.2, "cat": 0.2},
        {"cat": 0.9, "dog": 0.1, "bird": 0.0},
        {"cat": 0.8, "dog": 0.05, "bird": 0.15},
        {"dog": 0.75, "cat": 0.1, "bird": 0.15},
        {"cat": 1.0, "dog": 0.0, "bird": 0.0},
        {"cat": 0.4, "dog": 0.4, "bird": 0.2},
    ],
    ["bird", "dog", "bird", "bird", "cat", "dog"],
    [0.05, 0.5, 0.95],
    {  # label: (tp, fp, fn, tn) per threshold
        "bird": [(1, 0, 2, 3), (1, 0, 2, 3), (0, 0, 3, 3)],
        "dog": [(0, 1, 2, 3), (0, 1, 2, 3), (0, 0, 2, 4)],
        "cat": [(1, 3, 0, 2), (1, 2, 0, 3), (1, 0, 0, 5)],
    },
)
VALOR_TABULAR = (  # test_counts_with_tabular_example (threshold 0, hardmax)
    ["0", "1", "2"],
    [
        dict(zip("012", r, strict=True))
        for r in [
            [0.37, 0.35, 0.28],
            [0.24, 0.61, 0.15],
            [0.03, 0.88, 0.09],
            [0.97, 0.03, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.01, 0.96, 0.03],
            [0.28, 0.02, 0.7],
            [0.78, 0.21, 0.01],
            [0.45, 0.11, 0.44],
        ]
    ],
    list("1120001111"),
    [0.0],
    {"0": [(3, 3, 0, 4)], "1": [(2, 1, 4, 3)], "2": [(0, 1, 1, 8)]},
)
VALOR_MULTICLASS = (  # test_counts_multiclass
    ["cat", "dog", "bee"],
    [
        dict(zip(["cat", "dog", "bee"], r, strict=True))
        for r in [
            [0.44598543489942505, 0.3255517969601126, 0.22846276814046224],
            [0.4076893257212283, 0.14780458563955237, 0.4445060886392194],
            [0.25060075263871917, 0.3467428086425673, 0.4026564387187136],
            [0.2003514145616792, 0.2485912151889644, 0.5510573702493565],
            [0.33443897813714385, 0.5890646197236098, 0.07649640213924616],
        ]
    ],
    ["cat", "bee", "cat", "bee", "dog"],
    [0.05, 0.1, 0.3, 0.85],
    {
        "cat": [(1, 0, 1, 3)] * 3 + [(0, 0, 2, 3)],
        "dog": [(1, 0, 0, 4)] * 3 + [(0, 0, 1, 4)],
        "bee": [(2, 1, 0, 2)] * 3 + [(0, 0, 2, 3)],
    },
)


@pytest.mark.parametrize("vector", [VALOR_ANIMAL, VALOR_TABULAR, VALOR_MULTICLASS], ids=["animal", "tabular", "mc"])
def test_threshold_counts_valor_published_vectors(vector):
    names, rows, references, thresholds, published = vector
    scores = np.array([[row[n] for n in names] for row in rows])
    labels = np.array([names.index(r) for r in references])
    counts = CT.threshold_counts(scores, labels, score_thresholds=thresholds, hardmax=True)
    for ci, name in enumerate(names):
        assert [tuple(int(v) for v in counts[ti, ci]) for ti in range(len(thresholds))] == published[name], name
    np.testing.assert_array_equal(
        counts, valor_counts(valor_evaluator(scores, labels, names), names, thresholds, True)["counts"]
    )


# ---------------------------------------------------------------------------------- confusion matrices
@pytest.mark.parametrize("hardmax", [True, False])
def test_threshold_confusion_matrix_matches_valor(hardmax):
    rng = np.random.default_rng(5)
    scores, labels = random_case(rng, 70, 4)
    names = names_of(4)
    evaluator = valor_evaluator(scores, labels, names)
    ours = TC.threshold_confusion_matrix(scores, labels, score_thresholds=THRESHOLDS, hardmax=hardmax)
    expected = evaluator.compute_confusion_matrix(score_thresholds=THRESHOLDS, hardmax=hardmax)
    ours_dicts = ours.to_dict(names)
    for metric, mine in zip(expected, ours_dicts, strict=True):
        assert metric.parameters["score_threshold"] == mine["score_threshold"]
        assert metric.value["confusion_matrix"] == mine["confusion_matrix"]
        assert metric.value["unmatched_ground_truths"] == mine["unmatched_ground_truths"]

    ids = [f"uid{i}" for i in range(70)]
    with_examples = evaluator.compute_confusion_matrix_with_examples(score_thresholds=[0.25], hardmax=hardmax)[0]
    mine = TC.confusion_matrix_with_examples(
        scores, labels, score_threshold=0.25, hardmax=hardmax, max_examples=None, example_ids=ids, class_names=names
    )
    assert mine == with_examples.value
    capped = TC.confusion_matrix_with_examples(scores, labels, score_threshold=0.25, hardmax=hardmax, max_examples=1)
    for r, row in enumerate(names):
        for p, col in enumerate(names):
            cell, full = capped["confusion_matrix"][str(r)][str(p)], mine["confusion_matrix"][row][col]
            assert cell["count"] == full["count"]
            assert [f"uid{e['datum_id']}" for e in cell["examples"]] == [e["datum_id"] for e in full["examples"][:1]]


def test_confusion_with_no_reference_label_and_zero_scores():
    scores = np.array([[0.0, 0.0, 0.0], [0.2, 0.8, 0.0], [0.5, 0.5, 0.0], [0.0, 0.3, 0.7]])
    labels = np.array([0, 1, 0, CT.NO_LABEL])
    cm = TC.threshold_confusion_matrix(scores, labels, score_thresholds=[0.0, 0.6], hardmax=False)
    # hand count: example 0 predicts nothing; example 2 predicts 0 and 1; example 3 hallucinates 1 and 2
    np.testing.assert_array_equal(cm.matrix[0], [[1, 1, 0], [1, 1, 0], [0, 0, 0]])
    np.testing.assert_array_equal(cm.unmatched_references[0], [1, 0, 0])
    np.testing.assert_array_equal(cm.unmatched_predictions[0], [0, 1, 1])
    np.testing.assert_array_equal(cm.matrix[1], [[0, 0, 0], [0, 1, 0], [0, 0, 0]])
    np.testing.assert_array_equal(cm.unmatched_references[1], [2, 0, 0])
    np.testing.assert_array_equal(cm.unmatched_predictions[1], [0, 0, 1])


# ----------------------------------------------------------------------------------- precision-recall
@pytest.mark.parametrize("hardmax", [False, True])
def test_pr_curve_matches_sklearn_binary_counts(hardmax):
    rng = np.random.default_rng(9)
    scores, labels = random_case(rng, 200, 4, grid=21)
    labels[labels == 3] = 0  # class 3 never a reference
    curve = PR.pr_curve(scores, labels, hardmax=hardmax)
    np.testing.assert_array_equal(curve.thresholds, [k / 100 for k in range(5, 100, 5)])
    winner = np.eye(4, dtype=bool)[scores.argmax(axis=1)]
    for c in range(4):
        for ti, t in enumerate(curve.thresholds):
            decided = (scores[:, c] >= t) & (winner[:, c] if hardmax else True)
            tn, fp, fn, tp = skm.confusion_matrix(labels == c, decided, labels=[False, True]).ravel()
            assert (curve.tp[c, ti], curve.fp[c, ti], curve.fn[c, ti], curve.tn[c, ti]) == (tp, fp, fn, tn)
            p, r, f, _ = skm.precision_recall_fscore_support(labels == c, decided, average="binary", zero_division=0)
            assert (curve.precision[c, ti], curve.recall[c, ti], curve.f1[c, ti]) == pytest.approx((p, r, f), abs=TOL)
    as_dict = curve.to_dict(names_of(4))
    assert list(as_dict["label1"]) == [repr(k / 100) for k in range(5, 100, 5)]
    assert as_dict["label1"]["0.15"]["tp"] == int(curve.tp[1, 2])
    assert as_dict["label1"]["0.15"]["f1_score"] == float(curve.f1[1, 2])


def test_detailed_pr_curve_hand_example():
    """Valor's docs: fp = misclassification (the datum has another label) or hallucination (no label);
    fn = misclassification (another label passes) or no prediction (none passes)."""
    scores = np.array(
        [
            [0.9, 0.1, 0.0],  # ref 0
            [0.3, 0.6, 0.1],  # ref 0: 0 below 0.5, 1 passes -> fn misclassification, fp misclassification of 1
            [0.4, 0.3, 0.3],  # ref 0: nothing passes 0.5 -> fn no prediction
            [0.2, 0.2, 0.6],  # no reference label: 2 hallucinated
            [0.1, 0.8, 0.1],  # ref 1
        ]
    )
    labels = np.array([0, 0, 0, CT.NO_LABEL, 1])
    detailed = PR.detailed_pr_curve(scores, labels, thresholds=[0.5], max_examples=2)
    got = detailed.to_dict(["a", "b", "c"], example_ids=["d0", "d1", "d2", "d3", "d4"])
    a, b, c = got["a"]["0.5"], got["b"]["0.5"], got["c"]["0.5"]
    assert a["tp"] == {"total": 1, "observations": {"all": {"count": 1, "examples": ["d0"]}}}
    assert a["fn"]["observations"]["misclassifications"] == {"count": 1, "examples": ["d1"]}
    assert a["fn"]["observations"]["no_predictions"] == {"count": 1, "examples": ["d2"]}
    assert a["fn"]["total"] == 2 and a["fp"]["total"] == 0 and a["tn"]["total"] == 2
    assert b["tp"]["total"] == 1 and b["fp"]["observations"]["misclassifications"]["examples"] == ["d1"]
    assert c["fp"]["observations"]["hallucinations"] == {"count": 1, "examples": ["d3"]}
    assert c["fp"]["observations"]["misclassifications"]["count"] == 0


@pytest.mark.parametrize("hardmax", [False, True])
def test_detailed_pr_curve_adds_up_to_pr_curve_and_sklearn(hardmax):
    rng = np.random.default_rng(4)
    scores, labels = random_case(rng, 150, 4, grid=11)
    labels[rng.random(150) < 0.1] = CT.NO_LABEL
    detailed = PR.detailed_pr_curve(scores, labels, hardmax=hardmax, max_examples=3)
    curve = PR.pr_curve(scores, labels, hardmax=hardmax)
    k = detailed.counts
    np.testing.assert_array_equal(k["tp"], curve.tp)
    np.testing.assert_array_equal(k["fp_misclassification"] + k["fp_hallucination"], curve.fp)
    np.testing.assert_array_equal(k["fn_misclassification"] + k["fn_no_prediction"], curve.fn)
    np.testing.assert_array_equal(detailed.tn, curve.tn)
    winner = np.eye(4, dtype=bool)[scores.argmax(axis=1)]
    for c in range(4):
        for ti, t in enumerate(detailed.thresholds):
            positive = (scores >= t) & (winner if hardmax else True)
            misclassified = (labels == c) & ~positive[:, c] & positive.any(axis=1)
            hallucinated = (labels == CT.NO_LABEL) & positive[:, c]
            assert k["fn_misclassification"][c, ti] == misclassified.sum()
            assert k["fp_hallucination"][c, ti] == hallucinated.sum()
            np.testing.assert_array_equal(
                detailed.examples["fn_misclassification"][c][ti], np.flatnonzero(misclassified)[:3]
            )
            np.testing.assert_array_equal(
                detailed.examples["fp_hallucination"][c][ti], np.flatnonzero(hallucinated)[:3]
            )
        tn, fp, fn, tp = skm.confusion_matrix(labels == c, positive[:, c], labels=[False, True]).ravel()
        assert (curve.tp[c, -1], curve.fp[c, -1], curve.fn[c, -1], curve.tn[c, -1]) == (tp, fp, fn, tn)


# ------------------------------------------------------------------------------------------ bad input
def test_bad_inputs_raise_clear_errors():
    good = np.array([[0.6, 0.4], [0.2, 0.8]])
    with pytest.raises(ValueError, match="NaN"):
        CT.threshold_counts(np.array([[np.nan, 0.4], [0.2, 0.8]]), [0, 1])
    with pytest.raises(ValueError, match=r"\[0, 1\] when score thresholds"):
        CT.threshold_metrics(good * 2, [0, 1])
    with pytest.raises(ValueError, match=r"\[0, 1\] when score thresholds"):
        PR.pr_curve(good - 0.5, [0, 1])
    with pytest.raises(ValueError, match=r"^references: example 1 is 2, outside \[0, 2\): the scores have 2 columns"):
        CC.roc_auc(good, [0, 2])
    with pytest.raises(ValueError, match="shape"):
        CC.average_precision(good, [0, 1, 1])
    with pytest.raises(ValueError, match="at least one"):
        CT.threshold_counts(good, [0, 1], score_thresholds=[])
    with pytest.raises(ValueError, match="0 or 1"):
        CC.binary_roc_auc([0.1, 0.2], [0, 2])
    with pytest.raises(ValueError, match="class names"):
        PR.pr_curve(good, [0, 1]).to_dict(["only one"])
    assert np.isnan(CC.roc_auc(good * 3 - 1, [0, 1])).sum() == 0  # logits are fine for a ranking


def test_structured_values_are_json_and_agree_with_valor_metric_dicts():
    rng = np.random.default_rng(12)
    scores, labels = random_case(rng, 40, 3)
    names = names_of(3)
    metrics = CT.threshold_metrics(scores, labels, score_thresholds=[0.0, 0.5], hardmax=False)
    as_dict = json.loads(json.dumps(metrics.to_dict(names)))
    evaluator = valor_evaluator(scores, labels, names)
    valor = evaluator.compute_precision_recall(score_thresholds=[0.0, 0.5], hardmax=False)
    for m in valor[MetricType.Counts]:
        assert {k: as_dict[m.parameters["label"]][repr(m.parameters["score_threshold"])][k] for k in m.value} == m.value
    for m in valor[MetricType.Accuracy]:
        assert as_dict["accuracy"][repr(m.parameters["score_threshold"])] == pytest.approx(m.value, abs=TOL)
    json.dumps(PR.pr_curve(scores, labels).to_dict(names))
    json.dumps(PR.detailed_pr_curve(scores, labels, max_examples=2).to_dict(names, [f"id{i}" for i in range(40)]))
    json.dumps(TC.threshold_confusion_matrix(scores, labels).to_dict(names))

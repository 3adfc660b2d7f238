"""Multi-label classification over lists of class names: equal to scikit-learn on the binarized labels
(``MultiLabelBinarizer`` + ``f1_score`` / ``precision_score`` / ``recall_score`` with the same ``average``,
``accuracy_score`` = subset accuracy), batch by batch as in a pass, end to end, and with one-line errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score
from sklearn.preprocessing import MultiLabelBinarizer

from olive_eval import evaluate
from olive_eval.metrics.compute import compute_metric
from olive_eval.metrics.registry import get_metric
from tests.helpers import python_model_run, write_jsonl

NAMES = ["ant", "bee", "cat", "dog", "eel", "fox"]
SKLEARN = {"f1_score": f1_score, "precision": precision_score, "recall": recall_score}


def random_lists(rng: np.random.Generator, n: int, pool: list[str]) -> list[list[str]]:
    """Lists of 0..3 names (empty lists included, order and repeats random)."""
    return [list(rng.choice(pool, size=rng.integers(0, 4))) for _ in range(n)]


def sklearn_value(name: str, preds, refs, average: str, classes=None):
    binarizer = MultiLabelBinarizer(classes=classes).fit(preds + refs if classes is None else [classes])
    p, t = binarizer.transform(preds), binarizer.transform(refs)
    if name == "accuracy_score":
        return accuracy_score(t, p), list(binarizer.classes_)
    return SKLEARN[name](t, p, average=None if average == "none" else average, zero_division=0), list(
        binarizer.classes_
    )


@pytest.mark.filterwarnings("ignore:unknown class")
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("given", [False, True])
def test_equals_sklearn_on_random_name_lists(seed: int, given: bool) -> None:
    rng = np.random.default_rng(seed)
    refs = random_lists(rng, 40, NAMES[:4])
    preds = random_lists(rng, 40, NAMES)  # eel and fox: names no reference has
    classes = ["dog", "ant", "cat", "bee", "gnu"] if given else None  # gnu: a class nobody names
    config = {"class_names": classes} if given else {}
    for name in ("f1_score", "precision", "recall", "accuracy_score"):
        for average in ("micro", "macro", "weighted", "none"):
            got = compute_metric(name, preds, refs, average=average, **config)
            expected, order = sklearn_value(name, preds, refs, average, classes)
            if name == "accuracy_score":
                assert got == pytest.approx(expected, abs=1e-12)
            elif average == "none":
                assert got.per_class == pytest.approx(list(expected), abs=1e-12)
                assert list(got.details["per_class"]) == order  # sorted when inferred, as given otherwise
                assert got == pytest.approx(np.mean(expected), abs=1e-12)
            else:
                assert got == pytest.approx(expected, abs=1e-12)


def test_edge_cases_empty_lists_and_perfect_predictions() -> None:
    empty = [[], [], []]
    assert compute_metric("accuracy_score", empty, empty) == 1.0  # every empty set matches exactly
    with pytest.raises(ValueError, match="undefined here: no class names in the predictions or the references"):
        compute_metric("f1_score", empty, empty)
    refs = [["cat", "dog"], [], ["cat"]]
    assert compute_metric("f1_score", refs, refs, average="macro") == 1.0
    # sets: order and repeats in a list do not matter, as MultiLabelBinarizer
    assert compute_metric("accuracy_score", [["dog", "cat", "cat"], [], ["cat"]], refs) == 1.0
    # only empty predictions: precision 0 (zero division), recall 0
    got = compute_metric("recall", empty, refs, class_names=["cat", "dog"])
    assert got == sklearn_value("recall", empty, refs, "micro", ["cat", "dog"])[0] == 0.0


def test_references_wrapped_as_unitxt_lists_of_one_reference() -> None:
    preds, refs = [["cat"], ["dog", "cat"]], [["cat", "dog"], ["dog"]]
    wrapped = [[r] for r in refs]
    for name in ("f1_score", "accuracy_score"):
        assert compute_metric(name, preds, wrapped, average="macro") == compute_metric(
            name, preds, refs, average="macro"
        )


@pytest.mark.filterwarnings("ignore:unknown class")
def test_class_names_takes_effect_unknown_predictions_dropped_as_sklearn() -> None:
    preds, refs = [["cat", "yak"], ["dog"]], [["cat"], ["cat"]]
    inferred = compute_metric("precision", preds, refs, average="micro")
    given = compute_metric("precision", preds, refs, average="micro", class_names=["cat", "dog"])
    assert inferred == sklearn_value("precision", preds, refs, "micro")[0] == 1 / 3  # yak counts as a false positive
    assert given == sklearn_value("precision", preds, refs, "micro", ["cat", "dog"])[0] == 1 / 2  # yak dropped
    macro = compute_metric("f1_score", preds, refs, average="none", class_names=["dog", "cat", "eel"])
    assert list(macro.details["per_class"]) == ["dog", "cat", "eel"]
    assert macro.per_class == list(sklearn_value("f1_score", preds, refs, "none", ["dog", "cat", "eel"])[0])


def test_batches_with_late_classes_equal_the_whole_set_and_resample_from_sums() -> None:
    rng = np.random.default_rng(7)
    refs = [["ant"]] * 5 + random_lists(rng, 30, NAMES)  # most classes appear only after the first batch
    preds = [["ant"]] * 5 + random_lists(rng, 30, NAMES)
    for name in ("f1_score", "precision", "recall", "accuracy_score"):
        for average in ("micro", "macro", "weighted"):
            metric = get_metric(name, {"average": average})
            parts = [metric.statistics(preds[i : i + 5], refs[i : i + 5]) for i in range(0, 35, 5)]
            stats = metric.concat_statistics(parts)
            expected = sklearn_value(name, preds, refs, average)[0]
            assert metric.reduce(stats).value == pytest.approx(expected, abs=1e-12)
            totals = np.stack([stats.sum(axis=0), stats[:10].sum(axis=0)])
            sub = sklearn_value(name, preds[:10], refs[:10], average, sorted(set(NAMES)))[0]
            assert metric.finalize_totals(totals) == pytest.approx([expected, sub], abs=1e-12)
    metric = get_metric("accuracy_score", {})
    scores = metric.instance_scores(metric.statistics(preds, refs))
    assert scores.tolist() == [float(set(p) == set(r)) for p, r in zip(preds, refs, strict=True)]


@pytest.mark.parametrize(
    ("preds", "refs", "config", "message"),
    [
        ([["cat"], "dog"], [["cat"], ["dog"]], {}, r"^predictions: example 1 is 'dog', not a list of class names$"),
        ([["cat"], ["dog"]], [["cat"], ["dog", 3]], {}, r"^references: example 1 holds 3, not a class name"),
        ([["cat"]], [[["cat"], ["dog"]]], {}, r"^references: example 0 holds 2 lists; multi-label .* one per example$"),
        ([["cat"]], [["cat"], ["dog"]], {}, r"^predictions and references hold different numbers of examples: 1 vs 2$"),
        (
            [["cat"]],
            [["cow"]],
            {"class_names": ["cat"]},
            r"^references: example 0 names 'cow', not one of class_names$",
        ),
        ([["cat"]], [["cat"]], {"task": "multiclass"}, r"^lists of class names are multilabel: task 'multiclass'"),
        ([["cat"]], [["cat"]], {"num_classes": 3}, r"^lists of class names take class_names, not num_classes"),
    ],
)
def test_bad_input_is_one_line(preds, refs, config, message) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        compute_metric("f1_score", preds, refs, **config)
    assert "\n" not in str(caught.value)


def test_bad_class_names_config_is_refused() -> None:
    for names in ([], ["cat", "cat"]):
        with pytest.raises(ValueError, match="class_names must list at least one class, each once"):
            get_metric("f1_score", {"class_names": names})


MODEL = textwrap.dedent(
    """
    def load(model_path):
        return lambda batch: [[w for w in text.split() if w in {"cat", "dog", "owl"}] for text in batch["text"]]
    """
)


@pytest.mark.filterwarnings("ignore:unknown class")
def test_end_to_end_a_python_model_returning_lists_of_names(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(MODEL)
    (tmp_path / "loaded").write_text("")
    rng = np.random.default_rng(3)
    words = ["cat", "dog", "owl", "the", "a"]
    rows = [
        {"text": " ".join(rng.choice(words, size=4)), "target": list(rng.choice(["cat", "dog"], size=i % 3))}
        for i in range(26)
    ]
    write_jsonl(tmp_path / "d.jsonl", rows)
    subs = [
        {
            "name": "f1_score",
            "priority": 1,
            "metric_config": {"average": "macro"},
            "confidence_interval": {"n_resamples": 200},
        },
        {"name": "precision", "metric_config": {"average": "micro", "class_names": ["cat", "dog"]}},
        {"name": "recall", "metric_config": {"average": "weighted"}},
        {"name": "accuracy_score", "confidence_interval": {"n_resamples": 200}},
    ]
    result = evaluate(python_model_run(tmp_path, {"name": "ml", "sub_types": subs}, batch_size=4))
    metrics = result.models["m"].metrics
    preds = [[w for w in r["text"].split() if w in {"cat", "dog", "owl"}] for r in rows]
    refs = [r["target"] for r in rows]
    assert metrics["ml-f1_score"].value == pytest.approx(sklearn_value("f1_score", preds, refs, "macro")[0])
    assert metrics["ml-precision"].value == pytest.approx(
        sklearn_value("precision", preds, refs, "micro", ["cat", "dog"])[0]
    )
    assert metrics["ml-recall"].value == pytest.approx(sklearn_value("recall", preds, refs, "weighted")[0])
    assert metrics["ml-accuracy_score"].value == pytest.approx(
        accuracy_score(
            *[MultiLabelBinarizer(classes=["cat", "dog", "owl"]).fit([[]]).transform(x) for x in (refs, preds)]
        )
    )
    for name in ("ml-f1_score", "ml-accuracy_score"):
        assert metrics[name].ci_low <= metrics[name].value <= metrics[name].ci_high
        assert metrics[name].ci_low < metrics[name].ci_high

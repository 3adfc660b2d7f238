"""Unitxt's text metrics: token_overlap_{f1,precision,recall}, char_edit_distance (with its normalized form and
Unitxt's char_edit_dist_accuracy) and normalized_sacrebleu, each against an independent reference in the same test:
Unitxt's formulas written out here (TokenOverlap, CharEditDistance), the ``editdistance`` package Unitxt itself
uses, and sacrebleu's ``corpus_score`` / 100; on random text and on edge cases; plus resampling and bad input."""

from __future__ import annotations

import random
import string
from collections import Counter

import editdistance
import numpy as np
import pytest
import sacrebleu

from olive_eval import compute_metric
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import get_metric, metric_registry

OVERLAP = ("token_overlap_precision", "token_overlap_recall", "token_overlap_f1")
EDIT = ("char_edit_distance", "char_edit_distance_normalized", "char_edit_dist_accuracy")
WORDS = ["The", "the", "a", "An", "cat", "Cat.", "dog,", "sat", "on", "mat!", "the-end", "théâtre", "x", "an", "$5"]
SPACES = [" ", "  ", "\t", "\n", " \u3000 "]


def random_text(rng: random.Random, longest: int = 12) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, longest))]
    return "".join(w + rng.choice(SPACES) for w in words).strip() if rng.random() < 0.9 else rng.choice(SPACES)


def random_case(seed: int, n: int = 200, one_reference: bool = False) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    preds = [random_text(rng) for _ in range(n)]
    refs = [[random_text(rng) for _ in range(1 if one_reference else rng.choice([1, 1, 2, 3]))] for _ in range(n)]
    return preds, refs


# ---------------------------------------------------------------------------------------- Unitxt's formulas
def unitxt_normalize(text: str) -> list[str]:
    """SQuAD's normalize_answer, step by step: lower, drop ASCII punctuation, articles to spaces, split."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    out = []
    for word in text.split():
        out.append(word if word not in {"a", "an", "the"} else " ")
    return " ".join(out).split()


def unitxt_token_overlap(prediction: str, references: list[str]) -> dict[str, float]:
    """Unitxt's TokenOverlap.compute: (precision, recall, f1) per reference, each measure's max over them."""
    results = []
    for reference in references:
        p, r = unitxt_normalize(prediction), unitxt_normalize(reference)
        same = sum((Counter(p) & Counter(r)).values())
        if same == 0:
            results.append((0.0, 0.0, 0.0))
            continue
        precision, recall = same / len(p), same / len(r)
        results.append((precision, recall, 2 * precision * recall / (precision + recall)))
    return {name: max(row[i] for row in results) for i, name in enumerate(OVERLAP)}


def unitxt_char_edit(prediction: str, reference: str) -> dict[str, float]:
    """Unitxt's CharEditDistance(Accuracy).compute with editdistance.eval, and d / max length."""
    p, r = "".join(prediction.split()), "".join(reference.split())
    longest = max(len(p), len(r))
    if longest == 0:
        return dict.fromkeys(EDIT, 0.0)
    d = editdistance.eval(r, p)
    return {EDIT[0]: d, EDIT[1]: d / longest, EDIT[2]: 1 - d / longest}


def test_registered_kinds_and_directions():
    names = (*OVERLAP, *EDIT, "normalized_sacrebleu")
    assert {n: metric_registry.get(n).kind.value for n in names} == dict.fromkeys(names, "map_reduce")
    assert [metric_registry.get(n).higher_is_better for n in names] == [True] * 3 + [False, False, True, True]


# ---------------------------------------------------------------------------------------------- token overlap
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_token_overlap_equals_unitxt_per_example_and_mean(seed):
    preds, refs = random_case(seed)
    expected = [unitxt_token_overlap(p, r) for p, r in zip(preds, refs, strict=True)]
    for name in OVERLAP:
        metric = get_metric(name)
        rows = metric.statistics(preds, refs)
        np.testing.assert_allclose(metric.instance_scores(rows), [e[name] for e in expected], rtol=0, atol=1e-15)
        assert compute_metric(name, preds, refs) == pytest.approx(np.mean([e[name] for e in expected]), abs=1e-15)


@pytest.mark.parametrize(
    ("prediction", "references", "precision", "recall", "f1"),
    [
        ("", [""], 0.0, 0.0, 0.0),  # nothing shared: zeros, even between two empty texts
        ("The cat.", ["the CAT"], 1.0, 1.0, 1.0),  # case, punctuation and articles normalized away
        ("a an the", ["the"], 0.0, 0.0, 0.0),  # articles only: no words at all
        ("cat cat cat", ["cat"], 1 / 3, 1.0, 0.5),  # multiset: a repeated word counts once per reference copy
        ("théâtre « x »", ["Théâtre x"], 0.5, 1.0, 2 / 3),  # non-ASCII punctuation stays a word
        # each measure's own max: precision from the first reference, recall from the second
        ("cat dog", ["cat", "cat dog mat sat"], 1.0, 1.0, 2 / 3),
        ("cat", ["dog"], 0.0, 0.0, 0.0),
    ],
)
def test_token_overlap_edge_cases(prediction, references, precision, recall, f1):
    expected = unitxt_token_overlap(prediction, references)
    got = {name: float(compute_metric(name, [prediction], [references])) for name in OVERLAP}
    assert got == pytest.approx(expected, abs=1e-15)
    assert got == pytest.approx(dict(zip(OVERLAP, (precision, recall, f1), strict=True)), abs=1e-15)


# ------------------------------------------------------------------------------------------ char edit distance
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_char_edit_distance_equals_unitxt_with_editdistance(seed):
    preds, refs = random_case(seed, one_reference=True)
    expected = [unitxt_char_edit(p, r[0]) for p, r in zip(preds, refs, strict=True)]
    for name in EDIT:
        metric = get_metric(name)
        np.testing.assert_allclose(
            metric.instance_scores(metric.statistics(preds, refs)), [e[name] for e in expected], rtol=0, atol=1e-15
        )
        assert compute_metric(name, preds, refs) == pytest.approx(np.mean([e[name] for e in expected]), abs=1e-13)


@pytest.mark.parametrize(
    ("prediction", "reference", "distance", "normalized", "accuracy"),
    [
        ("", "", 0.0, 0.0, 0.0),  # Unitxt: 0.0 for both empty, the accuracy included
        (" \t\n", "\u3000", 0.0, 0.0, 0.0),  # whitespace only is empty
        ("abc", "", 3.0, 1.0, 0.0),  # an empty reference is a value, not an error
        ("a b c", "abc", 0.0, 0.0, 1.0),  # whitespace is deleted, not compared
        ("kitten", "sitting", 3.0, 3 / 7, 4 / 7),
        ("Abc", "abc", 1.0, 1 / 3, 2 / 3),  # case-sensitive
        ("🙂x", "x🙂", 2.0, 1.0, 0.0),  # code points, not bytes
    ],
)
def test_char_edit_distance_edge_cases(prediction, reference, distance, normalized, accuracy):
    expected = unitxt_char_edit(prediction, reference)
    got = {name: float(compute_metric(name, [prediction], [reference])) for name in EDIT}
    assert got == pytest.approx(expected, abs=1e-15)
    assert got == pytest.approx(dict(zip(EDIT, (distance, normalized, accuracy), strict=True)), abs=1e-15)


def test_char_edit_distance_takes_one_reference_per_example():
    assert compute_metric("char_edit_distance", ["ab", "c"], [["ab"], "d"]) == 0.5
    with pytest.raises(ValueError, match=r"^char_edit_distance: example 1 has 2 references; it takes exactly one"):
        compute_metric("char_edit_distance", ["ab", "c"], [["ab"], ["c", "d"]])


# ------------------------------------------------------------------------------------ shared rows, resampling
@pytest.mark.parametrize("names", [OVERLAP, EDIT])
def test_sub_types_share_rows_and_resamples_are_the_mean_of_the_resampled_examples(names):
    preds, refs = random_case(7, 150, one_reference=True)
    metrics = [get_metric(n) for n in names]
    assert len({m.shared_key() for m in metrics}) == 1
    rows = metrics[0].concat_statistics(
        [metrics[0].statistics(preds[:61], refs[:61]), metrics[0].statistics(preds[61:], refs[61:])]
    )
    rng = np.random.default_rng(0)
    draws = [rng.integers(0, len(preds), len(preds)) for _ in range(5)]
    for metric in metrics:
        scores = metric.instance_scores(rows)
        assert metric.reduce(rows).value == pytest.approx(scores.mean(), abs=1e-15)
        values = metric.finalize_totals(np.stack([rows[idx].sum(axis=0) for idx in draws]))
        np.testing.assert_allclose(values, [scores[idx].mean() for idx in draws], rtol=1e-13)


# ------------------------------------------------------------------------------------- normalized sacrebleu
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    ("options", "reference"),
    [
        ({}, {"effective_order": True}),  # Unitxt's default
        ({"effective_order": False}, {}),
        ({"tokenize": "char", "lowercase": True}, {"tokenize": "char", "lowercase": True, "effective_order": True}),
    ],
)
def test_normalized_sacrebleu_is_sacrebleu_over_100(seed, options, reference):
    preds, refs = random_case(seed)
    width = max(map(len, refs))
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
    expected = min(sacrebleu.BLEU(**reference).corpus_score(preds, streams).score / 100, 1.0)
    value = compute_metric("normalized_sacrebleu", preds, refs, **options)
    assert value == expected
    assert 0.0 <= value <= 1.0
    metric = get_metric("normalized_sacrebleu", options)
    rows = metric.statistics(preds, refs)
    assert metric.finalize_totals(rows.sum(axis=0)[None])[0] == expected


def test_normalized_sacrebleu_edges():
    # sacrebleu's exact match is 100.00000000000004 (exp of a mean of logs); the 0-1 scale caps it at 1
    assert sacrebleu.BLEU(effective_order=True).corpus_score(["the cat sat"], [["the cat sat"]]).score > 100
    assert compute_metric("normalized_sacrebleu", ["the cat sat"], ["the cat sat"]) == 1.0
    metric = get_metric("normalized_sacrebleu")
    assert metric.instance_scores(metric.statistics(["the cat sat", "x"], ["the cat sat", "y"])).tolist() == [1.0, 0.0]
    assert compute_metric("normalized_sacrebleu", [""], ["the cat"]) == 0.0
    with pytest.raises(ValueError, match=r"^normalized_sacrebleu is undefined here: no predictions to score$"):
        compute_metric("normalized_sacrebleu", [], [])


# ---------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("name", [*OVERLAP, *EDIT])
def test_bad_input_is_one_clear_line(name):
    with pytest.raises(TypeError, match=r"^prediction of example 1 is int, expected str$"):
        compute_metric(name, ["a", 7], ["a", "b"])
    with pytest.raises(TypeError, match=r"^reference of example 0 is NoneType, expected a str or a list of str$"):
        compute_metric(name, ["a", "b"], [None, "b"])
    with pytest.raises(ValueError, match=rf"^{name} is undefined here: no predictions to score$"):
        compute_metric(name, [], [])
    with pytest.raises(ValueError, match=rf"^Number of predictions \(2\) does not match .* for {name} metric\.$"):
        compute_metric(name, ["a", "b"], ["a"])


@pytest.mark.parametrize("name", [*OVERLAP, *EDIT])
def test_no_metric_config_keys(name):
    sub = {"name": name, "metric_config": {"normalizer": "lowercase"}}
    config = {
        "input_model": {"type": "PythonModel", "user_script": "m.py", "model_loader": "load"},
        "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "json", "data_files": "d.jsonl"}}],
        "metrics": [{"name": "mt", "type": "accuracy", "data_config": "d", "sub_types": [sub]}],
    }
    with pytest.raises(ConfigError, match=r"metrics\[0\]\.sub_types\[0\]\.metric_config\.normalizer: unknown key"):
        load_run_config(config, check_files=False)

"""The answer metrics as registered accuracy sub-types: through ``compute_metric`` and a JSON config, against
Olive's vectors (reference section 8.1), rapidfuzz, the ANLS and VQA formulas written in test_kernels, with
per-example scores, bootstrap intervals, Olive's task checks and a clear error for each bad input."""

from __future__ import annotations

import random

import numpy as np
import pytest
from rapidfuzz import fuzz, utils
from rapidfuzz.distance import Levenshtein
from scipy import stats

from olive_eval import compute_metric
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import get_metric, metric_registry, resampling
from olive_eval.metrics.answers.references import join_alternatives
from olive_eval.metrics.resampling import ExampleStats
from olive_eval.tasks.base import get_task
from tests.metrics.answers.test_kernels import (
    official_vqa,
    random_case,
    ref_anls,
    ref_exact,
    ref_mistral,
    ref_pix2struct,
    ref_relaxed,
    ref_word_sort,
)

NAMES = ["exact_match", "relaxed_accuracy", "word_sort_ratio", "anls", "vqa_accuracy"]


@pytest.fixture(scope="module")
def data() -> tuple[list[str], list[list[str]]]:
    return random_case(random.Random(11), 1500)


def mean_of(function, preds, refs, **kwargs) -> float:
    return float(np.mean([function(p, r, **kwargs) for p, r in zip(preds, refs, strict=True)]))


# ------------------------------------------------------------------------------------ registered, Olive's defaults
def test_registered_as_higher_is_better_instance_metrics():
    for name in NAMES:
        cls = metric_registry.get(name)
        assert cls.higher_is_better is True and cls.kind.value == "instance"
    assert get_metric("relaxed_accuracy").config.tolerance == 0.05  # Olive's default
    assert get_metric("relaxed_accuracy").config.rule == "olive"
    assert get_metric("word_sort_ratio").config.method == "olive"
    assert get_metric("anls").config.threshold == 0.5


def test_olive_vectors_through_compute_metric():
    # section 8.1 #9
    assert compute_metric("exact_match", ["A", "B", "C"], ["A", "B", "C"]) == 1.0
    assert compute_metric("exact_match", ["Hello World", "TEST"], ["hello world", "test"]) == 1.0
    assert compute_metric("exact_match", ["  hello   world  "], ["hello world"]) == 1.0
    assert compute_metric("exact_match", ["A", "wrong", "C"], ["A", "B", "C"]) == pytest.approx(2 / 3, abs=0)
    assert compute_metric("exact_match", ["X", "Y"], ["A", "B"]) == 0.0
    assert compute_metric("exact_match", ["paris."], ["paris"]) == 0.0  # no punctuation stripping
    with pytest.raises(ValueError, match=r"^Number of predictions \(2\) does not match number of references \(1\) "):
        compute_metric("exact_match", ["A", "B"], ["A"])
    # #10, with the float edges of section 2.5
    relaxed = {
        ("42.0", "42"): 1.0, ("41", "42"): 1.0, ("35", "42"): 0.0, ("yes", "yes"): 1.0, ("yes", "no"): 0.0,
        ("51%", "50%"): 1.0, ("0", "0"): 1.0, ("39.9", "42"): 0.0, ("44.1", "42"): 0.0, ("0.5", "50%"): 0.0,
        ("1,000", "1000"): 1.0, ("1e3", "1000"): 1.0, ("nan", "nan"): 0.0, ("0.01", "0"): 0.0,
        ("inf", "inf"): 1.0, ("-inf", "-inf"): 1.0, ("inf", "-inf"): 0.0, ("inf", "1e308"): 0.0,
    }  # fmt: skip
    for (pred, ref), expected in relaxed.items():
        assert compute_metric("relaxed_accuracy", [pred], [ref]) == expected, (pred, ref)
    assert compute_metric("relaxed_accuracy", ["38"], ["42"], tolerance=0.1) == 1.0
    # #11
    words = {
        ("hello world", "hello world"): 1.0, ("world hello", "hello world"): 1.0, ("hello earth", "hello world"): 0.5,
        ("foo bar", "hello world"): 0.0, ("HELLO WORLD", "hello world"): 1.0, ("", ""): 1.0,
    }  # fmt: skip
    for (pred, ref), expected in words.items():
        assert compute_metric("word_sort_ratio", [pred], [ref]) == expected, (pred, ref)


@pytest.mark.parametrize("form", ["lists", "joined"])
def test_every_metric_equals_its_reference_on_random_data(data, form):
    preds, refs = data
    column = refs if form == "lists" else [join_alternatives(r) for r in refs]
    exact = [
        ("exact_match", {}, ref_exact, {}),
        ("relaxed_accuracy", {}, ref_relaxed, {"tol": 0.05}),
        ("relaxed_accuracy", {"tolerance": 0.1}, ref_relaxed, {"tol": 0.1}),
        ("relaxed_accuracy", {"rule": "pix2struct"}, ref_pix2struct, {"tol": 0.05}),
        ("relaxed_accuracy", {"rule": "mistral", "tolerance": 0.02}, ref_mistral, {"tol": 0.02}),
        ("word_sort_ratio", {}, ref_word_sort, {}),
        ("anls", {}, ref_anls, {}),
        ("anls", {"threshold": 0.3}, ref_anls, {"threshold": 0.3}),
    ]
    for name, config, reference, kwargs in exact:
        assert compute_metric(name, preds, column, **config) == pytest.approx(
            mean_of(reference, preds, refs, **kwargs), rel=1e-12
        ), (name, config)


def test_token_sort_ratio_equals_rapidfuzz(data):
    preds, refs = data
    for processor, function in (("default", utils.default_process), ("none", None), (None, utils.default_process)):
        config = {"method": "token_sort_ratio", **({"processor": processor} if processor else {})}
        expected = np.mean(
            [
                max(fuzz.token_sort_ratio(p, a, processor=function) for a in r) / 100
                for p, r in zip(preds, refs, strict=True)
            ]
        )
        assert compute_metric("word_sort_ratio", preds, refs, **config) == pytest.approx(expected, rel=1e-12)


def test_anls_equals_rapidfuzz_normalized_similarity_on_normalized_text(data):
    """On answers already normalized the raw and normalized lengths agree: rapidfuzz's normalized similarity."""

    def norm(s: str) -> str:
        return " ".join(s.strip().lower().split())

    preds, refs = [norm(p) for p in data[0]], [[norm(a) for a in r] for r in data[1]]

    def one(p: str, alts: list[str]) -> float:
        sims = [Levenshtein.normalized_similarity(p, a) for a in alts]
        return max(s if 1 - s <= 0.5 else 0.0 for s in sims)

    assert compute_metric("anls", preds, refs) == pytest.approx(mean_of(one, preds, refs), rel=1e-12)


def test_anls_divides_by_the_longer_raw_answer_as_the_docvqa_scorer():
    assert compute_metric("anls", ["hallo"], [["  hello  "]]) == pytest.approx(1 - 1 / 9, abs=1e-15)
    # the scorer's quirk, kept: the padded answer is the longer one, so it scores higher (1 - 1/9 > 1 - 1/6)
    assert compute_metric("anls", ["Hallo "], ["hello|  hello  "]) == pytest.approx(1 - 1 / 9, abs=1e-15)
    assert compute_metric("anls", ["abc  d"], [["abxd"]]) == pytest.approx(1 - 2 / 6, abs=1e-15)


def test_anls_edge_cases_against_the_formula():
    cases = [
        ("", [""]),  # both empty: similarity 1
        ("", ["abc"]),  # NL = 1
        ("abcd", ["abzz"]),  # NL = 0.5 exactly: kept (inclusive boundary)
        ("abcde", ["abzzz"]),  # NL = 0.6: zero
        ("kitten", ["sitting", "kitchen", "mitten"]),  # several answers: the best
        ("  The   END ", ["the end"]),
    ]
    for pred, alts in cases:
        assert compute_metric("anls", [pred], [alts]) == pytest.approx(ref_anls(pred, alts), abs=1e-15)
    assert compute_metric("anls", ["abcd"], [["abzz"]]) == 0.5
    assert compute_metric("anls", ["abcd"], [["abzz"]], threshold=0.49) == 0.0


def test_vqa_accuracy_against_the_official_formula():
    humans = ["yes"] * 3 + ["no"] * 7
    assert compute_metric("vqa_accuracy", ["yes"], [humans]) == pytest.approx(official_vqa("yes", humans), abs=1e-15)
    assert compute_metric("vqa_accuracy", ["Yes."], [humans]) == pytest.approx(0.9, abs=1e-15)  # 3 of 10
    assert compute_metric("vqa_accuracy", ["two"], [["2"] * 2 + ["3"] * 8]) == pytest.approx(0.6, abs=1e-15)
    assert compute_metric("vqa_accuracy", ["a dog"], [["dog"] * 4 + ["cat"] * 6]) == 1.0
    rng = random.Random(3)
    pool = ["yes", "no", "2", "two", "the dog", "red", "Red."]
    preds = [rng.choice(pool) for _ in range(200)]
    refs = [[rng.choice(pool) for _ in range(10)] for _ in range(200)]
    assert compute_metric("vqa_accuracy", preds, refs) == pytest.approx(mean_of(official_vqa, preds, refs), rel=1e-12)


def test_a_literal_pipe_is_escaped_in_joined_references():
    assert compute_metric("exact_match", ["a|b"], ["a|b"]) == 0.0  # Olive's split: the answers "a" and "b"
    assert compute_metric("exact_match", ["a|b"], [r"a\|b"]) == 1.0
    assert compute_metric("exact_match", ["a|b"], [["a|b"]]) == 1.0  # lists need no escape
    assert compute_metric("exact_match", ["c"], [r"a\|b|c"]) == 1.0
    assert join_alternatives(["a|b", "c"]) == r"a\|b|c"


# ------------------------------------------------------------------------------------ per-example scores, intervals
def test_per_example_scores_give_scipys_bootstrap_interval(data):
    preds, refs = data
    metric = get_metric("anls")
    scores = metric.statistics(preds, refs)
    expected = [ref_anls(p, r) for p, r in zip(preds, refs, strict=True)]
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
    ours = resampling.confidence_interval(
        ExampleStats(metric, statistics=scores), metric.reduce(scores).value, "percentile", 999, 0.95, 5
    )
    reference = stats.bootstrap(
        (scores,),
        np.mean,
        vectorized=True,
        n_resamples=999,
        confidence_level=0.95,
        method="percentile",
        random_state=np.random.default_rng(5),
    ).confidence_interval
    # many examples share a score (0 or 1), so the draws are multinomial over the distinct scores: the same
    # bootstrap distribution, not scipy's draws; the two agree to Monte Carlo noise (~1e-3 here)
    np.testing.assert_allclose(ours, (reference.low, reference.high), rtol=0, atol=4e-3)


# ------------------------------------------------------------------------------------ bad input: one clear line each
@pytest.mark.parametrize("name", NAMES)
def test_bad_input_through_compute_metric(name):
    with pytest.raises(TypeError, match=r"^prediction of example 1 is int, expected str$"):
        compute_metric(name, ["a", 7], ["a", "b"])
    with pytest.raises(ValueError, match=r"^reference column mixes types: example 0 is list, example 1 is str"):
        compute_metric(name, ["a", "b"], [["a"], "b"])
    with pytest.raises(ValueError, match=rf"^{name} is undefined here: no predictions to score"):
        compute_metric(name, [], [])
    with pytest.raises(ValueError, match=rf"^Number of predictions \(1\) does not match .* for {name} metric\.$"):
        compute_metric(name, ["a"], ["a", "b"])


def test_examples_are_numbered_across_batches():
    metric = get_metric("exact_match")
    metric.statistics(["a", "b"], ["a", "b"])  # the first batch: examples 0 and 1
    with pytest.raises(TypeError, match=r"^prediction of example 3 is NoneType, expected str$"):
        metric.statistics(["c", None], ["c", "d"])


def run_config(sub_types: list[dict], task: str | None = None, **pre) -> dict:
    pre = {"type": "vision_vqa_pre_process", **({"task": task} if task else {}), **pre}
    return {
        "input_model": {"type": "PythonModel", "user_script": "m.py", "model_loader": "load"},
        "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "json", "data_files": "d.jsonl"}, "pre_process_data_config": pre}],
        "metrics": [{"name": "qa", "type": "accuracy", "data_config": "d", "sub_types": sub_types}],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("sub", "message"),
    [
        (
            {"name": "relaxed_accuracy", "metric_config": {"tolerance": -0.01}},
            r"metrics\[0\]\.sub_types\[0\]\.metric_config\.tolerance: .*greater than or equal to 0",
        ),
        (
            {"name": "relaxed_accuracy", "metric_config": {"rule": "chartqa"}},
            r"metrics\[0\]\.sub_types\[0\]\.metric_config\.rule: .*'olive', 'pix2struct' or 'mistral'",
        ),
        (
            {"name": "word_sort_ratio", "metric_config": {"processor": "none"}},
            r"metrics\[0\]\.sub_types\[0\]\.metric_config: .*processor applies to method 'token_sort_ratio' only",
        ),
        (
            {"name": "anls", "metric_config": {"threshold": 1.5}},
            r"metrics\[0\]\.sub_types\[0\]\.metric_config\.threshold: .*less than or equal to 1",
        ),
        (
            {"name": "exact_match", "metric_config": {"ignore_case": True}},
            r"metrics\[0\]\.sub_types\[0\]\.metric_config\.ignore_case: unknown key",
        ),
    ],
)
def test_bad_metric_config_is_a_config_error_with_its_path(sub, message):
    with pytest.raises(ConfigError, match=message):
        load_run_config(run_config([{**sub, "priority": 1}]), check_files=False)


def test_a_negative_tolerance_through_compute_metric():
    with pytest.raises(ValueError, match="tolerance"):
        compute_metric("relaxed_accuracy", ["1"], ["1"], tolerance=-1)


# ------------------------------------------------------------------------------------ Olive's task checks
def test_each_vision_task_declares_the_metrics_it_allows():
    assert get_task("vision-vqa").metrics == ("exact_match", "vqa_accuracy")
    assert get_task("vision-chart-qa").metrics == ("relaxed_accuracy",)
    assert get_task("vision-ocr").metrics == ("anls", "word_sort_ratio")
    for task in ("vision-vqa", "vision-chart-qa", "vision-ocr"):
        assert all(name in metric_registry for name in get_task(task).metrics)


@pytest.mark.parametrize(
    ("task", "name"),
    [
        ("vision-vqa", "exact_match"),
        ("vision-vqa", "vqa_accuracy"),
        ("vision-chart-qa", "relaxed_accuracy"),
        ("vision-ocr", "word_sort_ratio"),
        ("vision-ocr", "anls"),
        (None, "relaxed_accuracy"),  # no task: no check, as in Olive
    ],
)
def test_compatible_tasks_validate(task, name):
    load_run_config(run_config([{"name": name, "priority": 1}], task), check_files=False)


def test_a_metric_that_does_not_suit_the_task_gets_olives_message():
    with pytest.raises(ConfigError) as info:
        load_run_config(run_config([{"name": "exact_match", "priority": 1}], "vision-ocr"), check_files=False)
    assert str(info.value).endswith(
        "metrics[0].sub_types: Metric sub-type 'exact_match' is not compatible with task type 'vision-ocr'. "
        "Allowed metrics for 'vision-ocr': ['anls', 'word_sort_ratio']."
    )


def test_an_unknown_vision_task_gets_olives_message():
    with pytest.raises(ConfigError) as info:
        load_run_config(run_config([{"name": "exact_match", "priority": 1}], "unknown-task"), check_files=False)
    assert str(info.value).endswith(
        "metrics[0].sub_types: Unknown vision task type 'unknown-task'. "
        "Supported task types: ['vision-chart-qa', 'vision-ocr', 'vision-vqa']."
    )


def test_other_sub_types_beside_a_vision_metric_are_not_task_checked():
    subs = [{"name": "anls", "priority": 1}, {"name": "samples_per_second", "priority": 2}]
    load_run_config(run_config(subs, "vision-ocr"), check_files=False)


# ------------------------------------------------------------------------------------------ one example, bare strings
SINGLE_REFERENCES = {  # a per-sample reference written in test_kernels, and its keyword arguments
    "exact_match": (ref_exact, {}),
    "relaxed_accuracy": (ref_relaxed, {"tol": 0.05}),
    "word_sort_ratio": (ref_word_sort, {}),
    "anls": (ref_anls, {}),
    "vqa_accuracy": (official_vqa, {}),
}


@pytest.mark.parametrize("name", NAMES)
def test_one_example_as_a_bare_prediction_string(name):
    """Olive's tests pass one prediction and one reference as bare strings (8.1 #9: "answer" vs "answer" is 1.0);
    the reference may also be the example's list of answers or their ``|``-joined string."""
    reference, kwargs = SINGLE_REFERENCES[name]
    for pred, alts in [
        ("answer", ["answer"]),
        ("The cat", ["the cat", "a cat", "cat", "the  cat"]),
        ("4,2", ["42", "41", "x"]),
        ("kitten", ["sitting"]),
    ]:
        expected = reference(pred, alts, **kwargs)
        assert compute_metric(name, pred, alts) == pytest.approx(expected, abs=1e-15), (pred, alts)
        assert compute_metric(name, pred, "|".join(alts)) == pytest.approx(expected, abs=1e-15), (pred, alts)
        assert compute_metric(name, np.str_(pred), tuple(alts)) == pytest.approx(expected, abs=1e-15)
        assert compute_metric(name, np.array(pred), np.array("|".join(alts))) == pytest.approx(expected, abs=1e-15)
        scores = get_metric(name).statistics(pred, alts)
        assert scores.shape == (1,) and scores[0] == pytest.approx(expected, abs=1e-15)
    assert compute_metric("exact_match", "answer", "answer") == 1.0
    with pytest.raises(TypeError, match="single str"):  # a column of predictions needs a column of references
        compute_metric(name, ["a"], "a")


def test_word_sort_ratio_scores_a_joined_string_whole_when_given_as_a_one_element_list():
    """Olive 0.13's code scores a ``|``-joined reference as one string; a one-element list reproduces that."""
    preds = ["red car", "a|b c", "blue", "b c"]
    joined = ["red car|blue car", "a|b c", "red|blue", "a|b c"]
    whole = [ref_word_sort(p, [r]) for p, r in zip(preds, joined, strict=True)]
    assert whole == [2 / 3, 1.0, 0.0, 0.5]  # words of the whole string: "car|blue" is one word
    assert compute_metric("word_sort_ratio", preds, [[r] for r in joined]) == pytest.approx(np.mean(whole), abs=1e-15)
    split = [ref_word_sort(p, r.split("|")) for p, r in zip(preds, joined, strict=True)]
    assert split == [1.0, 0.5, 1.0, 1.0]  # the best alternative, as Olive's documentation describes
    assert compute_metric("word_sort_ratio", preds, joined) == pytest.approx(np.mean(split), abs=1e-15)

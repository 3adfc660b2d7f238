"""bleu, sentence_bleu, chrf and ter against sacrebleu itself: its README vectors, random text with ragged
references, options passed through, exact corpus scores of bootstrap resamples, and one clear error for each bad
input (a missing sacrebleu included)."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest
import sacrebleu

from olive_eval import compute_metric
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import get_metric, metric_registry
from olive_eval.metrics.text_overlap.references import pair_up, per_example

# sacrebleu's README
HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
STREAMS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
REFS = [list(r) for r in zip(*STREAMS, strict=True)]  # per example, its references
WORDS = [
    "the",
    "a",
    "dog",
    "man",
    "bit",
    "bitten",
    "had",
    "just",
    "it",
    "was",
    "not",
    "wasn't",
    "surprised",
    "surprising",
    "no",
    "one",
    "first",
    "him",
    ".",
    ",",
    "!",
    "?",
]


def random_case(seed: int, n: int = 300) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(
            rng.choice(WORDS).capitalize() if rng.random() < 0.1 else rng.choice(WORDS)
            for _ in range(rng.randint(0, 20))
        )

    return [text() for _ in range(n)], [[text() for _ in range(rng.choice([1, 1, 2, 3]))] for _ in range(n)]


def streams_of(refs: list[list[str]]) -> list[list[str | None]]:
    width = max(map(len, refs))
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


CORPUS = {"bleu": sacrebleu.BLEU, "chrf": sacrebleu.CHRF, "ter": sacrebleu.TER}


def test_registered_with_sacrebleus_directions_and_kinds():
    assert {n: metric_registry.get(n).kind.value for n in [*CORPUS, "sentence_bleu"]} == {
        "bleu": "map_reduce", "chrf": "map_reduce", "ter": "map_reduce", "sentence_bleu": "instance",
    }  # fmt: skip
    assert [metric_registry.get(n).higher_is_better for n in ("bleu", "chrf", "ter", "sentence_bleu")] == [
        True, True, False, True,
    ]  # fmt: skip


# ---------------------------------------------------------------------------------------------- README vectors
def test_readme_vectors():
    assert compute_metric("bleu", HYPS, REFS) == 48.530827009929865  # BLEU = 48.53
    assert round(compute_metric("chrf", HYPS, REFS), 2) == 59.73  # chrF2 = 59.73
    assert compute_metric("chrf", HYPS, REFS) == sacrebleu.corpus_chrf(HYPS, STREAMS).score
    # sacrebleu's test_bleu.py: the README corpus with other tokenizers
    assert compute_metric("bleu", HYPS, REFS, tokenize="none") == pytest.approx(49.1919566, abs=1e-7)
    assert compute_metric("bleu", HYPS, REFS, tokenize="intl") == pytest.approx(43.91623493, abs=1e-8)
    # README, variable number of references: the first example has only its second reference -> 29.44, nrefs:var
    ragged = [[REFS[0][1]], REFS[1], REFS[2]]
    value = compute_metric("bleu", HYPS, ragged)
    assert round(value, 2) == 29.44
    assert value.details["signature"].startswith("nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp")
    assert value.details["score"].startswith("BLEU = 29.44 82.4/42.9/27.3/12.5 (BP = 0.889")
    # all-empty hypotheses score 0
    assert compute_metric("bleu", ["", "", ""], REFS) == 0.0


def test_sentence_bleu_vectors():
    # sacrebleu's test_bleu.py, effective order: "test" against "a test" is exp(-1) (brevity penalty alone)
    assert compute_metric("sentence_bleu", ["test"], ["a test"]) == pytest.approx(100 * np.exp(-1), abs=1e-12)
    for hyp, ref in [("a little test", "a test"), ("this is a fest", "this is a test")]:
        assert compute_metric("sentence_bleu", [hyp], [ref]) == sacrebleu.sentence_bleu(hyp, [ref]).score


# ---------------------------------------------------------------------------------------------- random text
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("bleu", {}),
        ("bleu", {"tokenize": "char", "lowercase": True}),
        ("bleu", {"smooth_method": "floor", "smooth_value": 0.2, "max_ngram_order": 3}),
        ("bleu", {"tokenize": "intl", "effective_order": True}),
        ("chrf", {}),
        ("chrf", {"word_order": 2}),
        ("chrf", {"char_order": 4, "beta": 1, "lowercase": True, "whitespace": True, "eps_smoothing": True}),
        ("ter", {}),
        ("ter", {"normalized": True, "no_punct": True, "case_sensitive": True}),
    ],
)
def test_corpus_scores_identical_to_sacrebleu(seed, name, options):
    preds, refs = random_case(seed)
    expected = CORPUS[name](**options).corpus_score(preds, streams_of(refs)).score
    assert compute_metric(name, preds, refs, **options) == expected


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("options", [{}, {"tokenize": "none", "smooth_method": "add-k"}])
def test_sentence_bleu_identical_to_sacrebleu_per_example(seed, options):
    preds, refs = random_case(seed)
    kwargs = {"smooth_method": options.get("smooth_method", "exp"), "tokenize": options.get("tokenize")}
    expected = [sacrebleu.sentence_bleu(p, r, **kwargs).score for p, r in zip(preds, refs, strict=True)]
    np.testing.assert_array_equal(get_metric("sentence_bleu", options).statistics(preds, refs), expected)
    assert compute_metric("sentence_bleu", preds, refs, **options) == np.mean(expected)


@pytest.mark.parametrize("name", list(CORPUS))
def test_batches_add_up_to_the_corpus_score(name):
    preds, refs = random_case(5, 100)
    metric = get_metric(name)
    rows = metric.concat_statistics(
        [metric.statistics(preds[:37], refs[:37]), metric.statistics(preds[37:], refs[37:])]
    )
    assert metric.reduce(rows).value == CORPUS[name]().corpus_score(preds, streams_of(refs)).score


@pytest.mark.parametrize("name", list(CORPUS))
def test_each_bootstrap_resample_is_the_exact_corpus_score_of_the_resampled_corpus(name):
    preds, refs = random_case(6, 120)
    metric = get_metric(name)
    rows = metric.statistics(preds, refs)
    rng = np.random.default_rng(0)
    draws = [rng.integers(0, len(preds), len(preds)) for _ in range(4)]
    values = metric.finalize_totals(np.stack([rows[idx].sum(axis=0) for idx in draws]))
    for value, idx in zip(values, draws, strict=True):
        expected = CORPUS[name]().corpus_score([preds[i] for i in idx], streams_of([refs[i] for i in idx])).score
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-12)  # TER sums fractional lengths in another order


def test_per_example_keeps_each_examples_references():
    _, answers = pair_up(["a", "b", "c"], [["x"], ["y", "z", "w"], "v"], "bleu")
    assert per_example(answers) == [["x"], ["y", "z", "w"], ["v"]]


# ---------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("name", [*CORPUS, "sentence_bleu"])
def test_bad_input_through_compute_metric(name):
    with pytest.raises(TypeError, match=r"^prediction of example 1 is int, expected str$"):
        compute_metric(name, ["a", 7], ["a", "b"])
    with pytest.raises(TypeError, match=r"^reference of example 0 is NoneType, expected a str or a list of str$"):
        compute_metric(name, ["a", "b"], [None, "b"])
    with pytest.raises(ValueError, match=rf"^{name} is undefined here: no predictions to score$"):
        compute_metric(name, [], [])
    with pytest.raises(ValueError, match=rf"^Number of predictions \(2\) does not match .* for {name} metric\.$"):
        compute_metric(name, ["a", "b"], ["a"])


def run_config(sub: dict) -> dict:
    return {
        "input_model": {"type": "PythonModel", "user_script": "m.py", "model_loader": "load"},
        "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "json", "data_files": "d.jsonl"}}],
        "metrics": [{"name": "mt", "type": "accuracy", "data_config": "d", "sub_types": [sub]}],
    }


@pytest.mark.parametrize(
    ("sub", "message"),
    [
        (
            {"name": "bleu", "metric_config": {"tokenize": "moses"}},
            r"metric_config: sacrebleu has no tokenizer 'moses'",
        ),
        ({"name": "bleu", "metric_config": {"smooth_method": "add-one"}}, r"metric_config\.smooth_method: .*'exp'"),
        (
            {"name": "chrf", "metric_config": {"char_order": 0}},
            r"metric_config\.char_order: .*greater than or equal to 1",
        ),
        ({"name": "ter", "metric_config": {"tokenize": "13a"}}, r"metric_config\.tokenize: unknown key"),
        ({"name": "rouge1", "metric_config": {"score": "f1"}}, r"metric_config\.score: .*'fmeasure', 'precision' or"),
    ],
)
def test_bad_metric_config_is_a_config_error_with_its_path(sub, message):
    with pytest.raises(ConfigError, match=r"metrics\[0\]\.sub_types\[0\]\." + message):
        load_run_config(run_config(sub), check_files=False)


def test_without_sacrebleu_compute_metric_names_the_extra():
    code = (
        "import sys; sys.modules['sacrebleu'] = None\n"
        "from olive_eval import compute_metric\n"
        "compute_metric('chrf', ['a'], ['a'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1
    assert last == (
        "olive_eval.errors.MissingDependencyError: metric 'chrf' needs the 'sacrebleu' package; install it with: "
        "pip install 'olive-eval[text]'"
    )

"""ROUGE sub-types against rouge-score itself: its published test vectors, random text (several seeds, with and
without the stemmer, several references, empty and non-Latin texts), per-example precision, recall and F to the
last bit, and one clear error for each bad input."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest
from rouge_score import rouge_scorer

from olive_eval import compute_metric
from olive_eval.errors import MissingDependencyError
from olive_eval.metrics import get_metric, metric_registry
from olive_eval.metrics.text_overlap.rouge_kernels import lcs_overlap, ngram_overlap
from olive_eval.metrics.text_overlap.rouge_tokens import Tokens, tokenize

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
SCORES = ["fmeasure", "precision", "recall"]
WORDS = ["the", "cat", "sat", "on", "mat", "running", "runs", "ran", "flies", "flying", "a", "dog", "day", "x1"]
ODD = ["", " ", "\n", "...", "Ünïcödé", "日本語", "naïve", "İstanbul", "\x00", "can't", "e-mail", "KELVIN"]


def random_text(rng: random.Random, lines: bool = True) -> str:
    words = [rng.choice(WORDS + ODD) if rng.random() < 0.15 else rng.choice(WORDS) for _ in range(rng.randint(0, 14))]
    words = [w.upper() if rng.random() < 0.1 else w for w in words]
    seps = ["\n" if lines and rng.random() < 0.15 else rng.choice([" ", " ", ", ", ". "]) for _ in words]
    return "".join(w + s for w, s in zip(words, seps, strict=True))


def random_case(seed: int, n: int = 400) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    preds = [random_text(rng) for _ in range(n)]
    refs = [[random_text(rng) for _ in range(rng.choice([1, 1, 2, 3]))] for _ in range(n)]
    return preds, refs


def reference_all(preds, refs, kind, stemmer=False) -> dict[str, np.ndarray]:
    """rouge-score's precision, recall and F of every example, from one ``score_multi`` per example."""
    scorer = rouge_scorer.RougeScorer([kind], use_stemmer=stemmer)
    found = [scorer.score_multi(r, p)[kind] for p, r in zip(preds, refs, strict=True)]
    return {score: np.array([getattr(s, score) for s in found], float) for score in SCORES}


def reference_scores(preds, refs, kind, stemmer=False, score="fmeasure") -> np.ndarray:
    return reference_all(preds, refs, kind, stemmer)[score]


# ---------------------------------------------------------------------------------------------- registered
def test_registered_as_higher_is_better_instance_metrics():
    for name in TYPES:
        cls = metric_registry.get(name)
        assert cls.higher_is_better is True and cls.kind.value == "instance"
        assert cls.reads == ("prediction", "references")
    assert get_metric("rouge1").config.score == "fmeasure"
    assert get_metric("rouge1").config.use_stemmer is False


# ---------------------------------------------------------------------------------------------- rouge-score's vectors
@pytest.mark.parametrize(
    ("kind", "reference", "prediction", "expected"),
    [
        ("rouge1", "testing one two", "testing", (1, 1 / 3, 1 / 2)),
        ("rouge2", "testing one two", "testing one", (1, 1 / 2, 2 / 3)),
        ("rougeL", "testing one two", "testing one", (1, 2 / 3, 4 / 5)),
        ("rougeL", "testing one two", "testing two", (1, 2 / 3, 4 / 5)),
        ("rougeLsum", "w1 w2 w3 w4 w5", "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5", (0.4, 0.8, 0.4 * 0.8 * 2 / 1.2)),
        ("rougeLsum", "w1 w2 w3 w4 w5", "", (0, 0, 0)),
        ("rougeLsum", "", "w1", (0, 0, 0)),
        ("rougeLsum", "w1 w2 w3 w4 w5", "/", (0, 0, 0)),
        ("rouge1", "testing one two", "", (0, 0, 0)),
        ("rouge2", "testing one two", "", (0, 0, 0)),
        ("rougeL", "testing one two", "", (0, 0, 0)),
    ],
)
def test_rouge_score_published_vectors(kind, reference, prediction, expected):
    # rouge_score/rouge_scorer_test.py: precision, recall, F
    for score, value in zip(SCORES[1:] + SCORES[:1], expected, strict=True):
        assert compute_metric(kind, [prediction], [reference], score=score) == pytest.approx(value, abs=1e-12)


def test_rouge_score_multi_reference_vector_and_sentence_splitting():
    # testRougeAllMulti: references "first text" and "first something", prediction "text first"
    refs = [["first text", "first something"]]
    assert compute_metric("rouge1", ["text first"], refs) == 1.0
    assert compute_metric("rouge2", ["text first"], refs) == 0.0
    assert compute_metric("rougeL", ["text first"], refs) == 0.5
    # testRougeLSumSentenceSplitting: lines are sentences; without newlines a summary is one sentence
    target, prediction = "First sentence.\nSecond Sentence.", "Second sentence.\nFirst Sentence."
    assert compute_metric("rougeLsum", [prediction], [target], use_stemmer=True) == 1.0
    one_line = [prediction.replace("\n", " ")], [target.replace("\n", " ")]
    assert compute_metric("rougeLsum", *one_line, use_stemmer=True) == 0.5


def test_peer_vectors_unitxt_and_valor():
    # unitxt: rougeL over two examples, one with two references -> 5/6
    refs = [["hello", "there"], ["general kenobi", "general yoda"]]
    assert compute_metric("rougeL", ["hello there", "general kenobi"], refs) == pytest.approx(5 / 6, abs=1e-15)
    # valor: case-insensitive; the stemmer makes "flipping" and "flip" one token
    assert compute_metric("rouge1", ["Mary loves Joe"], ["Mary loves Jane"]) == pytest.approx(2 / 3, abs=1e-15)
    assert compute_metric("rouge2", ["Mary loves Joe"], ["mary LOVES jane"]) == 0.5
    flip = (["flipping the roaring white dolphin"], ["flip the roaring white dolphin"])
    assert compute_metric("rouge1", *flip) == 0.8000000000000002
    assert compute_metric("rouge2", *flip) == 0.75
    for kind in TYPES:
        assert compute_metric(kind, *flip, use_stemmer=True) == 1.0


# ---------------------------------------------------------------------------------------------- random text
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("stemmer", [False, True])
@pytest.mark.parametrize("kind", TYPES)
def test_identical_to_rouge_score_on_random_text(seed, stemmer, kind):
    preds, refs = random_case(seed)
    reference = reference_all(preds, refs, kind, stemmer)  # rouge-score once: its Score holds all three
    for score in SCORES:
        metric = get_metric(kind, {"use_stemmer": stemmer, "score": score})
        ours = metric.statistics(preds, refs)
        np.testing.assert_array_equal(ours, reference[score])
    expected = reference["fmeasure"].mean()
    assert compute_metric(kind, preds, refs, use_stemmer=stemmer) == expected


@pytest.mark.parametrize("kind", TYPES)
def test_long_texts_with_many_lines_and_repeated_words(kind):
    rng = random.Random(7)
    preds = ["\n".join(" ".join(rng.choices(WORDS[:5], k=rng.randint(1, 30))) for _ in range(5)) for _ in range(60)]
    refs = ["\n".join(" ".join(rng.choices(WORDS[:5], k=rng.randint(1, 30))) for _ in range(4)) for _ in range(60)]
    np.testing.assert_array_equal(
        get_metric(kind).statistics(preds, refs), reference_scores(preds, [[r] for r in refs], kind)
    )


def test_edge_cases_empty_unicode_nul_and_newlines_only():
    preds = ["", "日本語", "", "a\x00b", "\n\n", "İ K", "x"]
    refs = [["a b"], ["日本語"], [""], ["a b"], ["\n"], ["i k"], ["", "x"]]
    for kind in TYPES:
        np.testing.assert_array_equal(get_metric(kind).statistics(preds, refs), reference_scores(preds, refs, kind))


def test_the_best_reference_is_chosen_by_f_and_reports_its_precision():
    # reference 1 has the higher F (2/3 vs 1/2) but the lower precision (1/2 vs 1): score_multi reports its precision
    refs = [["the cat", "the cat sat on"]]
    assert compute_metric("rouge1", ["the"], refs, score="precision") == 1.0
    prediction = ["the cat sat"]
    expected = rouge_scorer.RougeScorer(["rouge1"]).score_multi(refs[0], prediction[0])["rouge1"]
    assert compute_metric("rouge1", prediction, refs, score="precision") == expected.precision
    assert compute_metric("rouge1", prediction, refs, score="recall") == expected.recall


def test_use_stemmer_takes_effect():
    assert compute_metric("rouge1", ["running"], ["runs"]) == 0.0
    assert compute_metric("rouge1", ["running"], ["runs"], use_stemmer=True) == 1.0
    assert compute_metric("rougeL", ["he runs fast"], ["he running fast"], use_stemmer=True) == 1.0


def test_examples_are_numbered_across_batches():
    metric = get_metric("rougeL")
    metric.statistics(["a", "b"], ["a", "b"])
    with pytest.raises(TypeError, match=r"^prediction of example 3 is NoneType, expected str$"):
        metric.statistics(["c", None], ["c", "d"])


# ---------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("name", TYPES)
def test_bad_input_through_compute_metric(name):
    with pytest.raises(TypeError, match=r"^prediction of example 1 is int, expected str$"):
        compute_metric(name, ["a", 7], ["a", "b"])
    with pytest.raises(TypeError, match=r"^reference of example 1 is int, expected a str or a list of str$"):
        compute_metric(name, ["a", "b"], ["a", 3])
    with pytest.raises(ValueError, match=r"^example 1 has an empty list of reference answers$"):
        compute_metric(name, ["a", "b"], [["a"], []])
    with pytest.raises(ValueError, match=rf"^{name} is undefined here: no predictions to score$"):
        compute_metric(name, [], [])
    with pytest.raises(ValueError, match=rf"^Number of predictions \(1\) does not match .* for {name} metric\.$"):
        compute_metric(name, ["a"], ["a", "b"])
    with pytest.raises(ValueError, match=r"score"):
        compute_metric(name, ["a"], ["a"], score="f1")


def test_use_stemmer_without_nltk_names_the_extra():
    code = (
        "import sys; sys.modules['nltk'] = None\n"
        "from olive_eval import compute_metric\n"
        "print(float(compute_metric('rouge1', ['running'], ['runs'])))\n"
        "compute_metric('rouge1', ['running'], ['runs'], use_stemmer=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and done.stdout.strip() == "0.0"
    last = done.stderr.strip().splitlines()[-1]
    assert last.endswith(
        "metric 'rouge1' with use_stemmer needs the 'nltk' package; install it with: pip install 'olive-eval[text]'"
    ), last
    assert MissingDependencyError.__name__ in last


def test_kernels_agree_when_ids_exceed_characters_or_n_gram_keys_exceed_int64():
    # a vocabulary too large for one character per id (rougeL compares lists) or for base-vocabulary n-gram codes
    # (rouge2 renumbers them densely) gives the same scores as a small one
    preds, refs = random_case(3, 200)
    tokens = tokenize(preds + [r[0] for r in refs])
    owner = np.arange(len(preds))
    huge = Tokens(tokens.ids + 2**31, tokens.offsets, 2**40)
    for n in (1, 2):
        small, large = ngram_overlap(tokens, owner, n), ngram_overlap(huge, owner, n)
        np.testing.assert_array_equal(small.fmeasure, large.fmeasure)
    np.testing.assert_array_equal(lcs_overlap(tokens, owner).fmeasure, lcs_overlap(huge, owner).fmeasure)


def test_rouge_sub_types_on_the_same_column_tokenize_it_once(monkeypatch):
    from olive_eval.metrics.text_overlap import rouge_kernels

    calls = []
    monkeypatch.setattr(rouge_kernels, "tokenize", lambda *a, **k: calls.append(a) or tokenize(*a, **k))
    preds, refs = random_case(9, 50)
    for kind in ("rouge1", "rouge2", "rougeL"):
        np.testing.assert_array_equal(get_metric(kind).statistics(preds, refs), reference_scores(preds, refs, kind))
    assert len(calls) == 1
    changed = [*preds[:-1], preds[-1] + " cat"]  # other texts, equal length: tokenized again, scored right
    np.testing.assert_array_equal(
        get_metric("rouge1").statistics(changed, refs), reference_scores(changed, refs, "rouge1")
    )
    get_metric("rouge1", {"use_stemmer": True}).statistics(changed, refs)  # another tokenizer: again
    assert len(calls) == 3

"""nltk_bleu (Valor's BLEU) against valor-lite's own ``calculate_sentence_bleu`` and against nltk's
``sentence_bleu`` on Valor's tokens, in the same test: random text with several references and weights, edge cases
(empty texts, no match of an order, zero weights, brevity), the 0-1 range, config options and bad input."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from nltk.tokenize import RegexpTokenizer
from nltk.translate.bleu_score import sentence_bleu
from valor_lite.text_generation.computation import calculate_sentence_bleu

from olive_eval import compute_metric
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import get_metric, metric_registry

WORDS = ["the", "The", "cat", "sat", "on", "mat.", "a", "dog", "$5", "$", "3.14", "x", "...", "it's", "über", "on."]
WEIGHTS = [[0.25] * 4, [1.0], [0.5, 0.5], [0.1, 0.3, 0.5, 0.1], [0.0, 0.0, 1.0], [0.2] * 5]


def random_case(seed: int, n: int = 150) -> tuple[list[str], list[list[str]]]:
    """Random texts; half the predictions are a reference with one word changed, so high orders match too."""
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choice(WORDS[: rng.randint(3, len(WORDS))]) for _ in range(rng.randint(0, 14)))

    refs = [[text() for _ in range(rng.choice([1, 1, 2, 3]))] for _ in range(n)]
    preds = []
    for example in refs:
        words = rng.choice(example).split()
        if words and rng.random() < 0.5:
            words[rng.randrange(len(words))] = rng.choice(WORDS)
            preds.append(" ".join(words))
        else:
            preds.append(text())
    return preds, refs


def nltk_as_valor(prediction: str, references: list[str], weights: list[float]) -> float:
    """nltk's sentence_bleu on the tokens of Valor's RegexpTokenizer, no smoothing, below 1e-9 as 0."""
    tokenizer = RegexpTokenizer(r"\w+|\$[\d]+|[^\s\.]+")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk warns on an order without a match
        score = float(
            sentence_bleu([tokenizer.tokenize(r) for r in references], tokenizer.tokenize(prediction), weights)
        )
    return score if score >= 1e-9 else 0.0


def valor(prediction: str, references: list[str], weights: list[float]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return calculate_sentence_bleu(prediction, references, weights)


def test_registered_as_an_instance_metric_higher_is_better():
    cls = metric_registry.get("nltk_bleu")
    assert (cls.kind.value, cls.higher_is_better) == ("instance", True)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("weights", WEIGHTS)
def test_equals_valor_and_nltk_per_example(seed, weights):
    preds, refs = random_case(seed)
    expected = [valor(p, r, weights) for p, r in zip(preds, refs, strict=True)]
    assert expected == [nltk_as_valor(p, r, weights) for p, r in zip(preds, refs, strict=True)]
    scores = get_metric("nltk_bleu", {"bleu_weights": weights}).statistics(preds, refs)
    np.testing.assert_allclose(scores, expected, rtol=1e-14, atol=0)
    assert ((scores >= 0) & (scores <= 1)).all()
    assert 0 < np.count_nonzero(scores) < len(scores)  # the data reaches both zero and positive scores
    assert compute_metric("nltk_bleu", preds, refs, bleu_weights=weights) == pytest.approx(np.mean(expected), abs=1e-15)


@pytest.mark.parametrize(
    ("prediction", "references", "weights"),
    [
        ("", ["the cat"], [0.25] * 4),  # empty prediction: 0
        ("the cat", [""], [0.25] * 4),  # empty reference: no unigram match
        ("", [""], [1.0]),
        ("the cat sat on the mat", ["the cat sat on the mat"], [0.25] * 4),  # exact: 1
        ("the cat sat", ["the cat sat on the mat"], [1.0]),  # brevity penalty exp(1 - 6/3)
        ("the cat sat", ["the cat sat on the mat", "the cat"], [1.0]),  # closest length ties: the shorter, 2 < 3
        ("cat the", ["the cat"], [0.5, 0.5]),  # no bigram match with a positive weight: below 1e-9, so 0
        ("cat the", ["the cat"], [1.0, 0.0]),  # a zero weight ignores the missing order
        ("the the the the", ["the cat"], [1.0]),  # clipped counts: 1/4 after brevity 1
        ("It costs $5.", ["it costs $5"], [1.0]),  # Valor's tokens: periods dropped, $5 kept, case kept
    ],
)
def test_edge_cases_equal_valor_and_nltk(prediction, references, weights):
    expected = valor(prediction, references, weights)
    assert expected == nltk_as_valor(prediction, references, weights)
    got = float(compute_metric("nltk_bleu", [prediction], [references], bleu_weights=weights))
    assert got == pytest.approx(expected, rel=1e-14, abs=0)


def test_edge_values():
    assert compute_metric("nltk_bleu", ["the cat sat on the mat"], ["the cat sat on the mat"]) == 1.0
    assert compute_metric("nltk_bleu", ["the cat sat"], ["the cat sat on the mat"], bleu_weights=[1.0]) == (
        pytest.approx(np.exp(-1.0), rel=1e-15)
    )
    assert compute_metric("nltk_bleu", ["the the the the"], ["the cat"], bleu_weights=[1.0]) == 0.25
    assert compute_metric("nltk_bleu", ["cat the"], ["the cat"], bleu_weights=[0.5, 0.5]) == 0.0


def test_bleu_weights_take_effect():
    preds, refs = ["the cat sat on a mat"], [["the cat sat on the mat"]]
    four = compute_metric("nltk_bleu", preds, refs)
    one = compute_metric("nltk_bleu", preds, refs, bleu_weights=[1.0])
    assert one == pytest.approx(5 / 6, rel=1e-15)
    assert four == pytest.approx(valor(preds[0], refs[0], [0.25] * 4), rel=1e-14)
    assert four < one


def test_bad_input_is_one_clear_line():
    with pytest.raises(TypeError, match=r"^prediction of example 1 is int, expected str$"):
        compute_metric("nltk_bleu", ["a", 7], ["a", "b"])
    with pytest.raises(ValueError, match=r"^nltk_bleu is undefined here: no predictions to score$"):
        compute_metric("nltk_bleu", [], [])
    with pytest.raises(ValueError, match=r"^example 0 has an empty list of reference answers$"):
        compute_metric("nltk_bleu", ["a"], [[]])


@pytest.mark.parametrize(
    ("weights", "message"),
    [([], "bleu_weights needs at least one weight"), ([0.5, -0.5], "must be finite and non-negative")],
)
def test_bad_bleu_weights_are_a_config_error_with_its_path(weights, message):
    sub = {"name": "nltk_bleu", "metric_config": {"bleu_weights": weights}}
    config = {
        "input_model": {"type": "PythonModel", "user_script": "m.py", "model_loader": "load"},
        "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "json", "data_files": "d.jsonl"}}],
        "metrics": [{"name": "mt", "type": "accuracy", "data_config": "d", "sub_types": [sub]}],
    }
    with pytest.raises(ConfigError, match=r"metrics\[0\]\.sub_types\[0\]\.metric_config\.bleu_weights: .*" + message):
        load_run_config(config, check_files=False)

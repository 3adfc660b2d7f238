"""``reward`` from a user's function ``(prompts, responses) -> [score]``: the value is the mean of the function's
own scores, asked in one batch per call with each distinct pair once; ``kwargs`` reach it; a reply that is not a
finite number fails its pair alone, and a function that raises fails the pairs of its call, never the run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from olive_eval.judges import judges_of
from olive_eval.metrics.judged.reward import scoring
from olive_eval.metrics.registry import get_metric
from olive_eval.user_module import load_user_module
from tests.metrics.judged import reward_script
from tests.runtimes.hf_models import sentences

SCRIPT = str(Path(reward_script.__file__))
#: The calls the script's functions got, as loaded by olive-eval (its own module object, not this import's).
calls = load_user_module(Path(SCRIPT)).CALLS


def score(function: str, queries: list, responses: list, **spec):
    raw = {"function": function, "user_script": SCRIPT, **spec}
    metric = get_metric("reward", {"reward": raw})
    judges = judges_of(scoring(raw))
    metric.bind_judges(judges)
    try:
        stats = metric.statistics(queries, responses)
        return metric.reduce(stats), metric.instance_scores(stats)
    finally:
        for judge in judges.values():
            judge.close()


@pytest.fixture(autouse=True)
def no_calls():
    calls.clear()


def test_the_value_is_the_mean_of_the_functions_scores_on_random_pairs():
    queries, responses = sentences(40, 1), sentences(40, 2, min_words=0, max_words=10)
    result, each = score("reward", queries, responses)
    expected = np.array([reward_script.overlap(q, r) for q, r in zip(queries, responses, strict=True)])
    np.testing.assert_array_equal(each, expected)
    assert result.value == pytest.approx(expected.mean())
    distinct = list(dict.fromkeys(zip(queries, responses, strict=True)))  # a repeated pair is asked once
    assert len(distinct) < 40 and "" in responses  # the random set has one repeat, and empty responses
    assert calls == [([q for q, _ in distinct], [r for _, r in distinct])]  # one batched call
    assert result.details["reward"]["source"] == "function" and result.details["reward"]["function"] == "reward"


def test_kwargs_take_effect_and_a_repeated_pair_is_asked_once():
    queries, responses = ["the cat", "the cat", "a dog"], ["the cat sits", "the cat sits", "dog"]
    result, each = score("reward", queries, responses, kwargs={"scale": 10.0})
    np.testing.assert_allclose(
        each, [10 * reward_script.overlap(q, r) for q, r in zip(queries, responses, strict=True)]
    )
    assert calls == [(["the cat", "a dog"], ["the cat sits", "dog"])]
    assert result.details["reward"]["kwargs"] == {"scale": 10.0}


def test_replies_that_are_not_finite_numbers_fail_their_pair_alone():
    responses = ["the cat", "text", "nan", "oops", "bool", "a dog"]
    result, each = score("picky", ["the cat"] * 6, responses)
    good = [reward_script.overlap("the cat", r) for r in ("the cat", "a dog")]
    assert each[0] == good[0] and each[5] == good[1] and np.isnan(each[1:5]).all()
    assert result.value == pytest.approx(np.mean(good))
    assert (result.details["scored"], result.details["failed"]) == (2, 4)
    assert result.details["messages"] == [
        "reward, example 1: failed: the judge returned str, not a number",
        "reward, example 2: failed: the judge returned nan, not a finite number",
        "reward, example 3: failed: the judge failed on this item: ValueError: cannot score 'oops'",
        "reward, example 4: failed: the judge returned bool, not a number",
    ]


def test_a_function_that_raises_or_miscounts_fails_its_pairs_and_the_value_is_undefined():
    result, each = score("broken", ["a", "b"], ["c", "d"])
    assert np.isnan(result.value) and np.isnan(each).all()
    assert result.details["messages"][0] == (
        "reward, example 0: failed: the judge raised RuntimeError: the reward model is down"
    )
    result, _ = score("short", ["a", "b"], ["c", "d"])
    assert result.details["messages"][0].endswith("the judge returned 1 replies for 2 prompts")


def test_a_query_or_prediction_that_is_not_text_fails_that_example_unasked():
    result, each = score("reward", ["the cat", 5, ["a dog"]], ["the cat", "x", ["dog"]])
    assert np.isnan(each[1]) and each[2] == reward_script.overlap("a dog", "dog")
    assert result.details["messages"] == ["reward, example 1: failed: query is int, not text"]
    assert calls == [(["the cat", "a dog"], ["the cat", "dog"])]

"""Reference columns: '|'-joined strings with the documented escape, lists, and the input checks."""

from __future__ import annotations

import random

import numpy as np
import pytest

from olive_eval.metrics.answers.references import (
    Answers,
    check_lengths,
    check_predictions,
    join_alternatives,
    split_alternatives,
    to_answers,
)


def documented_split(text: str) -> list[str]:
    """The module docstring's rule, read literally: '\\|' is '|', '\\\\' is '\\', every other '|' separates."""
    out, cur, chars = [], "", iter(text)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            cur += nxt if nxt in ("|", "\\") else ch + nxt  # a backslash before anything else stays
        elif ch == "|":
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [*out, cur]


def random_texts(rng: random.Random, n: int, alphabet: str = "ab|\\ é") -> list[str]:
    return ["".join(rng.choices(alphabet, k=rng.randint(0, 8))) for _ in range(n)]


def test_documented_examples():
    assert split_alternatives(r"a\|b|c") == ["a|b", "c"]
    assert split_alternatives(r"C:\temp|D:") == ["C:\\temp", "D:"]
    assert split_alternatives("") == [""]
    assert split_alternatives("|") == ["", ""]
    assert split_alternatives("a\\\\|b") == ["a\\", "b"]
    assert split_alternatives("trailing\\") == ["trailing\\"]


def test_split_follows_the_documented_rule_on_random_strings():
    rng = random.Random(0)
    for text in random_texts(rng, 3000):
        assert split_alternatives(text) == documented_split(text), text


def test_without_backslashes_the_split_is_olives():
    rng = random.Random(1)
    for text in random_texts(rng, 2000, alphabet="ab| é\t"):
        assert split_alternatives(text) == text.split("|")  # what Olive does with every reference


def test_join_then_split_gives_the_answers_back():
    rng = random.Random(2)
    for _ in range(2000):
        answers = random_texts(rng, rng.randint(1, 4))
        assert split_alternatives(join_alternatives(answers)) == answers
    with pytest.raises(ValueError, match="at least one"):
        join_alternatives([])


@pytest.mark.parametrize("alphabet", ["ab| é", "ab|\\ é", "ab|\x00"])
def test_to_answers_on_joined_strings_matches_splitting_each(alphabet):
    rng = random.Random(3)
    column = random_texts(rng, 500, alphabet)
    answers = to_answers(column)
    assert len(answers) == len(column)
    assert [answers[i] for i in range(len(column))] == [documented_split(s) for s in column]
    assert answers.counts.tolist() == [len(documented_split(s)) for s in column]
    assert answers.owner().tolist() == [i for i, s in enumerate(column) for _ in documented_split(s)]


def test_to_answers_on_lists_keeps_them_as_they_are():
    column = [["a", "b|c"], ("d",), np.array(["e", "f"])]
    answers = to_answers(column)
    assert answers.texts == ["a", "b|c", "d", "e", "f"]
    assert answers.offsets.tolist() == [0, 2, 3, 5]
    assert not answers.single
    assert to_answers(answers) is answers
    assert answers.best(np.array([0.2, 0.7, 0.1, 0.0, 0.3])).tolist() == [0.7, 0.1, 0.3]
    empty = to_answers([])
    assert len(empty) == 0 and empty.texts == []
    assert isinstance(empty, Answers)


@pytest.mark.parametrize(
    ("column", "error", "message"),
    [
        (["a", ["b"]], ValueError, "mixes types: example 0 is str, example 1 is list"),
        ([["a"], "b"], ValueError, "mixes types: example 0 is list, example 1 is str"),
        (["a", "b", 3], TypeError, "reference of example 2 is int"),
        ([None], TypeError, "reference of example 0 is NoneType"),
        ([["a"], ["b", 2.5]], TypeError, "a reference answer of example 1 is float"),
        ([["a"], []], ValueError, "example 1 has an empty list of reference answers"),
        ("a|b", TypeError, "single str"),
    ],
)
def test_bad_reference_columns(column, error, message):
    with pytest.raises(error, match=message):
        to_answers(column)


def test_predictions_must_be_strings():
    assert check_predictions(("a", np.str_("b"))) == ["a", "b"]
    with pytest.raises(TypeError, match="prediction of example 2 is int, expected str"):
        check_predictions(["a", "b", 7])
    with pytest.raises(TypeError, match="prediction of example 0 is NoneType"):
        check_predictions([None])
    with pytest.raises(TypeError, match="single str"):
        check_predictions("abc")


def test_length_mismatch_has_olives_message():
    check_lengths(3, 3, "anls")
    expected = "Number of predictions (2) does not match number of references (1) for exact_match metric."
    with pytest.raises(ValueError, match=expected.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        check_lengths(2, 1, "exact_match")

"""Text normalizers: Olive's recipe (bulk form against the per-text regexes), Whisper English (against
transformers' copy of Whisper's normalizer with the same spelling map, and its documented behaviours)."""

from __future__ import annotations

import json
import random
import re
import sys
from importlib.resources import files

import pytest
from transformers.models.whisper.english_normalizer import EnglishTextNormalizer as TransformersWhisperNormalizer

from olive_eval.metrics.speech import normalize as nz
from olive_eval.metrics.speech.normalize import NORMALIZERS, get_normalizer, normalize_texts


def olive_reference(text: str) -> str:
    """Olive's WordErrorRate normalization, step by step (olive-evaluator.md section 2.4)."""
    text = text.lower()
    text = re.sub(r"[^\w\s]", " ", text)
    return re.sub(r"\s+", " ", text).strip()


ASCII_PIECES = [
    "Hello",
    "WORLD",
    "don't",
    "x_y",
    "42",
    ",",
    ".",
    "!?",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "-",
    "\x1f",
    "\x7f",
]
UNICODE_PIECES = ["ΟΔΟΣ", "Σ", "naïve", "İstanbul", "ǅ", "\u00a0", "\u2003", "café", "—", "’", "ß", "\u0301", "中文"]


def random_texts(seed: int, n: int, pieces: list[str]) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(n)]


# ----------------------------------------------------------------------------------------------- olive
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, World!", "hello world"),  # Olive: "Hello, World!" vs "hello world" -> WER 0
        ("don't stop", "don t stop"),  # the apostrophe splits the word
        ("naïve", "naïve"),  # unicode letters are \w
        ("  many   spaces\tand\nlines  ", "many spaces and lines"),
        ("", ""),
        ("?!", ""),
    ],
)
def test_olive_documented_cases(text, expected):
    assert olive_reference(text) == expected
    assert normalize_texts([text], "olive") == [expected]
    assert get_normalizer("olive")(text) == expected


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("pieces", [ASCII_PIECES, ASCII_PIECES + UNICODE_PIECES], ids=["ascii", "unicode"])
def test_olive_bulk_equals_per_text_recipe(seed, pieces):
    texts = random_texts(seed, 300, pieces)
    assert normalize_texts(texts, "olive") == [olive_reference(t) for t in texts]


def test_olive_bulk_on_many_small_corpora():
    # empty corpora, empty texts, runs of spaces at the joins between texts and at both ends
    rng = random.Random(0)
    pieces = ["a", "B", " ", "  ", ",", "\t", "!", ""]
    for _ in range(500):
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(0, 4))]
        assert normalize_texts(texts, "olive") == [olive_reference(t) for t in texts], texts


def test_olive_final_sigma_is_lowered_per_text():
    # str.lower turns a word-final capital sigma into "ς": joining texts must not change that context
    texts = ["ΟΔΟΣ", "ΣΟΦΙΑ", "ΟΔΟΣ.", "Σ", "ΑΣ"]
    assert normalize_texts(texts, "olive") == [olive_reference(t) for t in texts]


def test_olive_text_containing_the_bulk_separator():
    texts = ["a\x00B", "C, d", ""]
    assert normalize_texts(texts, "olive") == [olive_reference(t) for t in texts] == ["a b", "c d", ""]


def test_none_keeps_texts_and_bare_string_is_one_text():
    assert normalize_texts(["A, b ", " C"], "none") == ["A, b ", " C"]
    assert normalize_texts([" A,\tb \n", "\u3000", "C"], "olive_raw") == ["A, b", "", "C"]  # whitespace only
    assert normalize_texts("Hello, World!", "olive") == ["hello world"]
    assert normalize_texts([], "olive") == []


# --------------------------------------------------------------------------------------------- whisper
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Uh, I um think so.", "i think so"),  # fillers removed
        ("hmm, that is mm good", "that is good"),
        ("I'm sure he won't come", "i am sure he will not come"),  # contractions
        ("we can't, let's go", "we can not let us go"),
        ("twenty five", "25"),  # spoken numbers to digits
        ("one hundred and one dogs", "101 dogs"),
        ("ten thousand dollars", "$10000"),
        ("The colour of the centre", "the color of the center"),  # British to American
        ("Mr. Smith [laughs] (inaudible) arrived", "mister smith arrived"),  # titles, bracketed phrases
    ],
)
@pytest.mark.parametrize("name", ["whisper_english", "open_asr_leaderboard"])
def test_whisper_english_documented_behaviours(text, expected, name):
    assert normalize_texts([text], name) == [expected]


@pytest.fixture(scope="module")
def transformers_whisper() -> TransformersWhisperNormalizer:
    mapping = json.loads(files("whisper_normalizer").joinpath("normalizers/english.json").read_text())
    return TransformersWhisperNormalizer(mapping)


@pytest.mark.parametrize("seed", range(3))
def test_whisper_english_equals_transformers_copy(seed, transformers_whisper):
    words = ["Uh", "colour", "twenty", "five", "I'm", "won't", "Mr.", "the", "theatre", "1,000", "dollars", "um,"]
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 10))) for _ in range(60)]
    assert normalize_texts(texts, "whisper_english") == [transformers_whisper(t) for t in texts]


# ------------------------------------------------------------------------------------------- bad input
def test_unknown_normalizer_names_the_choices():
    with pytest.raises(ValueError, match=r"unknown text normalizer 'basic'.*olive, olive_raw, none, whisper_english"):
        normalize_texts(["a"], "basic")
    assert NORMALIZERS == ("olive", "olive_raw", "none", "whisper_english", "open_asr_leaderboard")


@pytest.mark.parametrize("name", NORMALIZERS)
def test_non_string_text_names_index_and_type(name):
    with pytest.raises(TypeError, match=r"prediction at index 2 is a NoneType, not a str"):
        normalize_texts(["a", "b", None], name, what="prediction")
    with pytest.raises(TypeError, match=r"reference at index 0 is a bytes"):
        normalize_texts([b"a"], name, what="reference")


def test_missing_whisper_normalizer_package_names_pip_package(monkeypatch):
    nz._whisper_english.cache_clear()
    monkeypatch.setitem(sys.modules, "whisper_normalizer.english", None)
    try:
        with pytest.raises(ImportError, match="pip install whisper-normalizer"):
            normalize_texts(["a"], "whisper_english")
    finally:
        nz._whisper_english.cache_clear()

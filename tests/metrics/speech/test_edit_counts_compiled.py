"""The C edit counts (``_edit_counts.c``) against the rapidfuzz path and jiwer 4, pair by pair: words with ties
(small vocabularies, where the choice among optimal alignments decides H and S), tabs and newlines, every string
width, pairs past 64 words (several bit blocks) and past rapidfuzz's Hirschberg size (left to rapidfuzz)."""

from __future__ import annotations

import os
import random

import jiwer
import numpy as np
import pytest

from olive_eval.metrics import get_metric
from olive_eval.metrics.speech import native
from olive_eval.metrics.speech.alignment import char_edit_counts, compiled_available, word_edit_counts

GAPS = [" ", " ", " ", "  ", "\t", " \t", "\n", "\u3000", "\u00a0 "]
VOCABS = {
    "ascii": ["a", "b", "ab", "ba", "c"],
    "mixed widths": ["a", "é", "日本", "a\U0001f600", "b"],  # 1-, 2- and 4-byte strings share words
}


def random_text(rng: random.Random, vocab: list[str], lo: int, hi: int) -> str:
    words = [rng.choice(vocab) for _ in range(rng.randint(lo, hi))]
    gaps = [rng.choice(GAPS) for _ in words]
    text = rng.choice(["", " ", "\t", "  "]) + "".join(w + g for w, g in zip(words, gaps, strict=True))
    return text if rng.random() < 0.5 else text.rstrip()


def corpus(seed: int, vocab: list[str], lo: int, hi: int, n: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    refs = [random_text(rng, vocab, lo, hi) for _ in range(n)]
    preds = [random_text(rng, vocab, lo, hi) if rng.random() < 0.8 else r for r in refs]
    return preds, refs


def jiwer_rows(preds: list[str], refs: list[str], chars: bool) -> np.ndarray:
    process = jiwer.process_characters if chars else jiwer.process_words
    rows = []
    for p, r in zip(preds, refs, strict=True):
        if not (r.strip() if chars else r.split()):
            rows.append(None)  # jiwer refuses an empty reference alone; compared through the Python path
            continue
        out = process(r, p)
        rows.append((out.hits, out.substitutions, out.deletions, out.insertions))
    return rows


def test_the_extension_is_built():
    assert compiled_available()


@pytest.mark.parametrize("vocab", list(VOCABS))
@pytest.mark.parametrize(("lo", "hi"), [(0, 12), (50, 140)])
@pytest.mark.parametrize("chars", [False, True])
def test_compiled_counts_equal_rapidfuzz_and_jiwer_pair_by_pair(vocab, lo, hi, chars):
    preds, refs = corpus(lo + hi, VOCABS[vocab], lo, hi, 400 if hi < 50 else 60)
    counter = char_edit_counts if chars else word_edit_counts
    compiled, python = counter(preds, refs), counter(preds, refs, use_compiled=False)
    np.testing.assert_array_equal(compiled, python)
    for row, expected in zip(compiled.tolist(), jiwer_rows(preds, refs, chars), strict=True):
        assert expected is None or tuple(row) == expected


@pytest.mark.parametrize("seed", range(3))
def test_many_short_pairs_with_ties_equal_the_rapidfuzz_path(seed):
    preds, refs = corpus(seed, ["x", "y", "xy"], 0, 9, 5000)
    np.testing.assert_array_equal(word_edit_counts(preds, refs), word_edit_counts(preds, refs, use_compiled=False))
    np.testing.assert_array_equal(char_edit_counts(preds, refs), char_edit_counts(preds, refs, use_compiled=False))


@pytest.mark.parametrize("threads", [1, 2, 3, 16, 40])
def test_threads_split_the_pairs_without_changing_a_count(threads):
    rng = random.Random(threads)
    preds, refs = corpus(threads, ["x", "y", "xy"], 0, 30, 3000)
    big = " ".join(rng.choice("ab") for _ in range(2100))  # Hirschberg-sized pairs, left to rapidfuzz
    for i in (5, 1500, 2999):
        preds[i], refs[i] = big, " ".join(reversed(big.split()))
    expected = word_edit_counts(preds, refs, use_compiled=False)
    np.testing.assert_array_equal(word_edit_counts(preds, refs, threads=threads), expected)
    np.testing.assert_array_equal(
        char_edit_counts(preds[:500], refs[:500], threads=threads),
        char_edit_counts(preds[:500], refs[:500], use_compiled=False),
    )


@pytest.mark.parametrize("words", [1900, 2100])  # below and past rapidfuzz's Hirschberg size (2nm/8 >= 1 MiB)
def test_very_long_pairs_equal_jiwer(words):
    rng = random.Random(words)
    ref = [rng.choice("abc") for _ in range(words)]
    hyp = [w if rng.random() < 0.7 else rng.choice("abcd") for w in ref]
    refs, preds = [" ".join(ref), "a b"], [" ".join(hyp), "b a"]
    out = jiwer.process_words(refs[0], preds[0])
    counts = word_edit_counts(preds, refs)
    assert tuple(counts[0]) == (out.hits, out.substitutions, out.deletions, out.insertions)
    np.testing.assert_array_equal(counts, word_edit_counts(preds, refs, use_compiled=False))


@pytest.mark.parametrize(
    ("prediction", "reference", "expected"),
    [
        ("", "", (0, 0, 0, 0)),
        ("  \t ", "\n", (0, 0, 0, 0)),
        ("a b", "", (0, 0, 0, 2)),
        ("", "a\tb c", (0, 0, 2, 0)),  # a lone tab stays inside its word: "a\tb", "c"
        ("a\tb c", "a\t\tb c", (1, 1, 1, 0)),  # a run of two separates: "a", "b", "c" vs "a\tb", "c"
        ("a\U0001f600 é", "a\U0001f600 e", (1, 1, 0, 0)),
    ],
)
def test_edge_pairs(prediction, reference, expected):
    assert tuple(word_edit_counts([prediction], [reference])[0]) == expected
    assert tuple(word_edit_counts([prediction], [reference], use_compiled=False)[0]) == expected


def test_empty_corpus_and_a_bare_string():
    assert word_edit_counts([], []).shape == (0, 4)
    assert tuple(word_edit_counts("a b c", "a c")[0]) == (2, 0, 0, 1)
    assert tuple(char_edit_counts("ab", " abc ")[0]) == (2, 0, 1, 0)


@pytest.mark.parametrize("counter", [word_edit_counts, char_edit_counts])
def test_a_non_string_is_named_by_index(counter):
    with pytest.raises(TypeError, match=r"^reference at index 1 is a int, not a str: 7$"):
        counter(["a", "b"], ["a", 7])
    with pytest.raises(TypeError, match=r"^prediction at index 0 is a bytes, not a str"):
        counter([b"a"], ["a"])


def test_the_metric_names_a_non_string_example_across_batches():
    metric = get_metric("wer", {"normalizer": "none"})
    metric.statistics(["a b"], ["a b"])
    with pytest.raises(TypeError, match=r"^the prediction of example 2 is a NoneType, not a str: None$"):
        metric.statistics(["a", None], ["a", "b"])


def test_kernel_threads_follow_the_batch_size_and_the_cores(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1, 2, 3, 4, 5}, raising=False)
    assert [native.kernel_threads(n) for n in (0, 4_999, 10_000, 17_000, 10**6)] == [1, 1, 2, 3, native.MAX_THREADS]
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1}, raising=False)
    assert native.kernel_threads(10**6) == 2

"""Edit counts and error rates against jiwer 4 (alignment, counts and measures), torchmetrics (Olive's
WER backend) and kaldialign (the Open ASR Leaderboard's counting), on published vectors and random corpora."""

from __future__ import annotations

import random
import sys

import jiwer
import kaldialign
import numpy as np
import pytest
from torchmetrics.functional.text import word_error_rate as torchmetrics_wer

from olive_eval.metrics.speech.alignment import (
    COUNT_COLUMNS,
    MEASURES,
    cer,
    char_edit_counts,
    instance_scores,
    leaderboard_edit_counts,
    mer,
    wer,
    wil,
    wip,
    word_edit_counts,
)
from olive_eval.metrics.speech.normalize import normalize_texts

JIWER_WORD_MEASURES = {"wer": jiwer.wer, "mer": jiwer.mer, "wil": jiwer.wil, "wip": jiwer.wip}


def corpus_wer(predictions, references, normalizer: str = "olive") -> float:
    preds = normalize_texts(predictions, normalizer, what="prediction")
    refs = normalize_texts(references, normalizer, what="reference")
    return wer(word_edit_counts(preds, refs).sum(axis=0))


def jiwer_counts(output) -> tuple[int, int, int, int]:
    return output.hits, output.substitutions, output.deletions, output.insertions


def random_text(rng: random.Random, vocab: list[str], max_words: int) -> str:
    """Words from ``vocab`` with irregular spacing; now and then empty or only spaces."""
    if rng.random() < 0.08:
        return rng.choice(["", " ", "   "])
    words = [rng.choice(vocab) for _ in range(rng.randint(1, max_words))]
    gaps = [rng.choice([" ", " ", " ", "  "]) for _ in words]
    return (
        rng.choice(["", " "])
        + "".join(w + g for w, g in zip(words, gaps, strict=True)).rstrip(" ")
        + rng.choice(["", "  "])
    )


def edited(rng: random.Random, text: str, vocab: list[str]) -> str:
    """``text`` with a few random substitutions, deletions and insertions (or an unrelated text)."""
    if rng.random() < 0.2:
        return random_text(rng, vocab, 12)
    words = text.split()
    for _ in range(rng.randint(0, 4)):
        op = rng.random()
        if op < 0.35 and words:
            words[rng.randrange(len(words))] = rng.choice(vocab)
        elif op < 0.65 and words:
            del words[rng.randrange(len(words))]
        else:
            words.insert(rng.randint(0, len(words)), rng.choice(vocab))
    return " ".join(words)


def random_corpus(seed: int, n: int, vocab: list[str], max_words: int = 10) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    refs = [random_text(rng, vocab, max_words) for _ in range(n)]
    refs[0] = refs[0].strip() or vocab[0]  # at least one reference word
    preds = [edited(rng, r, vocab) for r in refs]
    return preds, refs


SMALL_VOCAB = ["a", "b", "c", "dd", "e"]  # few words: many ties between optimal alignments
WIDE_VOCAB = [f"w{i}" for i in range(40)] + ["x", "é", "naïve", "don't"]


# ------------------------------------------------------------------------------------- Olive's vectors
@pytest.mark.parametrize(
    ("predictions", "references", "normalizer", "expected"),
    [
        (["hello world", "test sentence"], ["hello world", "test sentence"], "olive", 0.0),  # row 1
        (["completely wrong words here"], ["the correct reference text"], "olive", 1.0),  # row 2
        ("hello world", "hello world", "olive", 0.0),  # row 3: a bare string is one utterance
        (["hello world"], ["hello earth"], "olive", 0.5),  # row 4
        (["Hello, World!"], ["hello world"], "olive", 0.0),  # row 5: normalize (default)
        (["Hello, World!"], ["hello world"], "olive_raw", 1.0),  # row 6: normalize=False
        (["the quick fox"], ["the slow fox"], "olive", 1 / 3),  # row 7
        (["a b", "c d e f"], ["a x", "c d e f"], "olive", 1 / 6),  # corpus level, not the mean 0.25
    ],
)
def test_olive_wer_vectors(predictions, references, normalizer, expected):
    ours = corpus_wer(predictions, references, normalizer)
    tm_preds = normalize_texts(predictions, normalizer)
    tm_refs = normalize_texts(references, normalizer)
    assert ours == pytest.approx(expected, abs=1e-12)
    assert ours == pytest.approx(float(torchmetrics_wer(tm_preds, tm_refs)), abs=1e-6)  # float32 in torchmetrics


@pytest.mark.parametrize("seed", range(3))
def test_olive_raw_normalizer_splits_on_any_whitespace_like_torchmetrics(seed):
    """Olive's raw rule (``normalize: false``; Olive 0.13's only one): torchmetrics splits with ``str.split()``."""
    rng = random.Random(seed)
    pieces = [*SMALL_VOCAB, "A,", "B."]
    refs = ["\t".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(30)]
    preds = ["\n ".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(30)]
    assert corpus_wer(preds, refs, "olive_raw") == pytest.approx(float(torchmetrics_wer(preds, refs)), abs=1e-6)


def whitespace_text(rng: random.Random, vocab: list[str]) -> str:
    """Words separated by a space, spaces, a lone tab or newline, or runs of whitespace; stray whitespace at the
    ends; now and then empty or whitespace only."""
    gaps = [" ", " ", " ", "  ", "\t", "\n", " \t", "\t\t", "\r\n", "\u00a0", "\x0b", "\x1c", "\u3000 "]
    if rng.random() < 0.1:
        return rng.choice(["", " ", "\t", " \n ", "\u00a0"])
    words = [rng.choice(vocab) for _ in range(rng.randint(1, 8))]
    ends = ["", "", " ", "\t", "\n", "  "]
    return rng.choice(ends) + "".join(w + rng.choice(gaps) for w in words[:-1]) + words[-1] + rng.choice(ends)


@pytest.mark.parametrize("seed", range(4))
def test_none_normalizer_splits_words_as_jiwer(seed):
    """jiwer's default transform: whitespace runs of two or more become a space, the ends are stripped, and words
    are split at single spaces, so a lone tab or newline does not separate words ("none" promises no change)."""
    rng = random.Random(seed)
    refs = [whitespace_text(rng, SMALL_VOCAB) for _ in range(60)]
    preds = [whitespace_text(rng, SMALL_VOCAB) if rng.random() < 0.5 else r.replace("\t", " ") for r in refs]
    refs[0] = "a\tb c"
    counts = word_edit_counts(normalize_texts(preds, "none"), normalize_texts(refs, "none"))
    assert tuple(counts.sum(axis=0)) == jiwer_counts(jiwer.process_words(refs, preds))
    for name, measure in JIWER_WORD_MEASURES.items():
        assert MEASURES[name](counts.sum(axis=0)) == pytest.approx(measure(refs, preds), abs=1e-12), name
        expected = [measure(r, p) for r, p in zip(refs, preds, strict=True)]
        np.testing.assert_allclose(instance_scores(counts, name), expected, atol=1e-12, err_msg=name)
    chars = char_edit_counts(preds, refs)
    assert cer(chars.sum(axis=0)) == pytest.approx(jiwer.cer(refs, preds), abs=1e-12)
    expected = [jiwer.cer(r, p) for r, p in zip(refs, preds, strict=True)]
    np.testing.assert_allclose(instance_scores(chars, "cer"), expected, atol=1e-12)
    assert wer(word_edit_counts("a b c", "a\tb c").sum(axis=0)) == jiwer.wer("a\tb c", "a b c") == 1.0


# ------------------------------------------------------------------------------------- jiwer's vectors
@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [
        ("This is a test", "This test", {"wer": 0.5, "mer": 0.5, "wil": 0.5}),
        ("X", "X X Y Y", {"wer": 3.0, "mer": 0.75, "wil": 0.75}),
        ("X Y X", "X Z", {"wer": 2 / 3, "mer": 2 / 3, "wil": 5 / 6}),
        ("X", "Y Z", {"wer": 2.0, "mer": 1.0}),
        (["hello world", ""], ["hello world", "done"], {"wer": 1 / 2, "mer": 1 / 3, "wil": 1 / 3}),
    ],
)
def test_jiwer_measure_vectors(reference, hypothesis, expected):
    counts = word_edit_counts(hypothesis, reference).sum(axis=0)
    for name, value in expected.items():
        assert MEASURES[name](counts) == pytest.approx(value, abs=1e-12)
        assert JIWER_WORD_MEASURES[name](reference, hypothesis) == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [("This is a test", "This test", 5 / 14), ("X", "X X Y Y", 6.0), ("X Y X", "X Z", 3 / 5)],
)
def test_jiwer_cer_vectors(reference, hypothesis, expected):
    assert cer(char_edit_counts(hypothesis, reference).sum(axis=0)) == pytest.approx(expected, abs=1e-12)
    assert jiwer.cer(reference, hypothesis) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("hypothesis", "expected"), [("hello", 1.0), ("one two three", 3.0), ("", 0.0)])
def test_jiwer_empty_reference_vectors(hypothesis, expected):
    counts = word_edit_counts([hypothesis], [""])
    assert instance_scores(counts, "wer")[0] == expected == jiwer.wer("", hypothesis)
    assert wer(counts.sum(axis=0), empty_reference="jiwer") == expected
    with pytest.raises(ValueError, match="no words"):
        wer(counts.sum(axis=0))


# ---------------------------------------------------------------------------------- random vs jiwer
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("vocab", [SMALL_VOCAB, WIDE_VOCAB], ids=["small-vocab", "wide-vocab"])
def test_word_counts_and_measures_equal_jiwer(seed, vocab):
    preds, refs = random_corpus(seed, 150, vocab)
    counts = word_edit_counts(preds, refs)
    assert counts.dtype == np.int64 and counts.shape == (150, 4)
    for k, (p, r) in enumerate(zip(preds, refs, strict=True)):
        assert tuple(counts[k]) == jiwer_counts(jiwer.process_words(r, p)), (k, r, p)
    total = counts.sum(axis=0)
    assert tuple(total) == jiwer_counts(jiwer.process_words(refs, preds))
    for name, reference_measure in JIWER_WORD_MEASURES.items():
        assert MEASURES[name](total) == pytest.approx(reference_measure(refs, preds), abs=1e-12, rel=0)


@pytest.mark.parametrize("seed", range(2))
def test_long_utterances_equal_jiwer(seed):
    preds, refs = random_corpus(seed, 12, SMALL_VOCAB + WIDE_VOCAB, max_words=300)
    counts = word_edit_counts(preds, refs)
    for k, (p, r) in enumerate(zip(preds, refs, strict=True)):
        assert tuple(counts[k]) == jiwer_counts(jiwer.process_words(r, p))
    assert wer(counts.sum(axis=0)) == pytest.approx(jiwer.wer(refs, preds), abs=1e-12, rel=0)


@pytest.mark.parametrize("seed", range(3))
def test_olive_normalized_corpus_equals_jiwer_on_normalized_text(seed):
    preds, refs = random_corpus(seed, 200, [*WIDE_VOCAB, "Hello,", "WORLD!", "it's"])
    ours = corpus_wer(preds, refs, "olive")
    assert ours == pytest.approx(jiwer.wer(normalize_texts(refs), normalize_texts(preds)), abs=1e-12, rel=0)


@pytest.mark.parametrize("seed", range(4))
def test_char_counts_and_cer_equal_jiwer(seed):
    rng = random.Random(seed)
    alphabet = ["a", "b", "c", " ", " ", "\t", "é", "😀"]
    refs = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(120)]
    refs[0] = "abc"
    preds = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(120)]
    counts = char_edit_counts(preds, refs)
    for k, (p, r) in enumerate(zip(preds, refs, strict=True)):
        assert tuple(counts[k]) == jiwer_counts(jiwer.process_characters(r, p)), (k, r, p)
    assert cer(counts.sum(axis=0)) == pytest.approx(jiwer.cer(refs, preds), abs=1e-12, rel=0)


@pytest.mark.parametrize("measure", ["wer", "mer", "wil", "wip"])
def test_instance_scores_equal_jiwer_per_utterance(measure):
    preds, refs = random_corpus(7, 120, SMALL_VOCAB)
    scores = instance_scores(word_edit_counts(preds, refs), measure)
    expected = [JIWER_WORD_MEASURES[measure](r, p) for p, r in zip(preds, refs, strict=True)]
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)


def test_instance_cer_equals_jiwer_per_utterance():
    preds, refs = random_corpus(8, 60, SMALL_VOCAB)
    scores = instance_scores(char_edit_counts(preds, refs), "cer")
    np.testing.assert_allclose(scores, [jiwer.cer(r, p) for p, r in zip(preds, refs, strict=True)], rtol=0, atol=1e-12)


@pytest.mark.parametrize("measure", ["wer", "mer", "wil", "wip"])
def test_resampled_counts_reduce_in_one_call_like_jiwer_on_each_resample(measure):
    preds, refs = random_corpus(9, 80, SMALL_VOCAB)
    counts = word_edit_counts(preds, refs)
    rows = np.random.default_rng(0).integers(0, len(refs), (6, len(refs)))
    values = MEASURES[measure](counts[rows].sum(axis=1))
    assert values.shape == (6,)
    expected = [JIWER_WORD_MEASURES[measure]([refs[i] for i in r], [preds[i] for i in r]) for r in rows]
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------ Open ASR Leaderboard
COMPOUND_VOCAB = ["ice", "cream", "icecream", "white", "paper", "whitepaper", "note", "book", "notebook", "the", "a"]


def test_split_compound_is_no_error_in_leaderboard_mode():
    counts = leaderboard_edit_counts(["icecream", "white paper"], ["ice cream", "whitepaper"])
    assert kaldialign.edit_distance(["ice", "cream"], ["icecream"], merge_compounds=True)["total"] == 0
    assert counts.tolist() == [[2, 0, 0, 0], [1, 0, 0, 0]]
    assert wer(counts.sum(axis=0)) == 0.0
    assert wer(word_edit_counts(["icecream"], ["ice cream"]).sum(axis=0)) == jiwer.wer("ice cream", "icecream") == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_leaderboard_counts_equal_kaldialign(seed):
    preds, refs = random_corpus(seed, 150, COMPOUND_VOCAB)
    counts = leaderboard_edit_counts(preds, refs)
    for k, (p, r) in enumerate(zip(preds, refs, strict=True)):
        expected = kaldialign.edit_distance(r.split(), p.split(), merge_compounds=True)
        assert (counts[k, 1], counts[k, 2], counts[k, 3]) == (expected["sub"], expected["del"], expected["ins"])
        assert counts[k].sum() - counts[k, 3] == len(r.split())  # H + S + D = reference words
    # the leaderboard's own call: tuples of split words, batch_error_rate with merged compounds
    board = kaldialign.batch_error_rate(
        [tuple(r.split()) for r in refs], [tuple(p.split()) for p in preds], merge_compounds=True
    )
    total = counts.sum(axis=0)
    assert (total[1], total[2], total[3]) == (board["sub"], board["del"], board["ins"])
    assert wer(total) == pytest.approx(board["err_rate"], abs=1e-12, rel=0)


def test_leaderboard_pipeline_with_whisper_normalizer_equals_kaldialign():
    refs = ["The colour of the ice cream, uh, was white.", "Twenty five notebooks", "I'm here"]
    preds = ["the color of the icecream was whitepaper", "25 note books", "I am here um"]
    norm_refs = normalize_texts(refs, "open_asr_leaderboard")
    norm_preds = normalize_texts(preds, "open_asr_leaderboard")
    board = kaldialign.batch_error_rate(
        [tuple(r.split()) for r in norm_refs], [tuple(p.split()) for p in norm_preds], merge_compounds=True
    )
    assert wer(leaderboard_edit_counts(norm_preds, norm_refs).sum(axis=0)) == pytest.approx(
        board["err_rate"], abs=1e-12
    )


def test_missing_kaldialign_names_pip_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "kaldialign", None)
    with pytest.raises(ImportError, match="pip install kaldialign"):
        leaderboard_edit_counts(["a"], ["a"])


# ------------------------------------------------------------------------------------------- bad input
KERNELS = [word_edit_counts, char_edit_counts, leaderboard_edit_counts]


@pytest.mark.parametrize("kernel", KERNELS)
def test_length_mismatch_names_both_lengths(kernel):
    with pytest.raises(ValueError, match="3 predictions and 2 references"):
        kernel(["a", "b", "c"], ["a", "b"])


@pytest.mark.parametrize("kernel", KERNELS)
def test_non_string_names_the_example_and_type(kernel):
    with pytest.raises(TypeError, match="prediction at index 1 is a NoneType, not a str"):
        kernel(["a", None, "c"], ["a", "b", "c"])
    with pytest.raises(TypeError, match="reference at index 2 is a int, not a str"):
        kernel(["a", "b", "c"], ["a", "b", 7])


@pytest.mark.parametrize("measure", ["wer", "mer", "wil", "wip"])
def test_all_empty_references_is_an_error_not_inf(measure):
    counts = word_edit_counts(["some words", ""], ["", "  "]).sum(axis=0)
    with pytest.raises(ValueError, match="references hold no words at all"):
        MEASURES[measure](counts)
    assert jiwer.wer(["", "  "], ["some words", ""]) == 2  # jiwer returns the insertion count instead


def test_all_empty_references_cer_and_resamples():
    with pytest.raises(ValueError, match="references hold no characters at all"):
        cer(char_edit_counts(["abc"], [" "]).sum(axis=0))
    counts = word_edit_counts(["a", "b"], ["a", ""])
    with pytest.raises(ValueError, match="no words"):
        wer(counts[[[0, 1], [1, 1]]].sum(axis=1))  # one resample drew only the empty reference
    assert wer(counts[[[0, 1], [1, 1]]].sum(axis=1), empty_reference="jiwer").tolist() == [1.0, 2.0]


def test_bad_counts_and_options():
    with pytest.raises(ValueError, match=r"shape \[\.\.\., 4\]"):
        wer(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="integers"):
        wer(np.ones(4))
    with pytest.raises(ValueError, match="empty_reference"):
        wer(np.ones(4, np.int64), empty_reference="zero")
    with pytest.raises(ValueError, match="unknown measure 'bleu'"):
        instance_scores(np.ones((2, 4), np.int64), "bleu")
    assert COUNT_COLUMNS == ("hits", "substitutions", "deletions", "insertions")
    assert isinstance(wil(np.array([1, 1, 0, 0])), float) and isinstance(mer(np.array([1, 1, 0, 0])), float)
    assert wip(np.array([1, 1, 0, 0])) == pytest.approx(jiwer.wip("a b", "a c"))

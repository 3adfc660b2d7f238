"""BLEU's compiled sentence statistics (``_bleu_rows.c``: 13a replayed in C, n-grams counted in hash tables) against
the Python rows and sacrebleu's public ``sentence_score`` / ``corpus_score``, for every tokenizer and option, on
text built to hit each of 13a's rules: entities (and entities of entities), ``<skipped>``, ``-`` + newline, periods
and commas beside digits or not, dashes after digits, every punctuation class, unicode of every string width."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

from olive_eval import compute_metric
from olive_eval.metrics.text_overlap.bleu_statistics import compiled_available
from olive_eval.metrics.text_overlap.sacrebleu_metrics import BleuConfig

PIECES = [
    "a", "b", "ab", "A", "1", "2.5", "3,4", "x.", ",y", "-", "1-2", "5-", "a-b", "9.", ".9", "..", ".", ",", "'s",
    "&amp;", "&quot;", "&lt;", "&gt;", "&amp;lt;", "&amp;quot;", "&", "<skipped>", "<skip", "ped>", "-\n", "\n", "\t",
    "  ", " ", "é", "Straße", "ΣΊΣ", "日本", "\U0001f600", "{", "}", "~", "[", "`", "!", "(", "+", ":", "@", "/",
    "\\", "\u00a0", "\u3000", "\r",
]  # fmt: skip
OPTIONS = [
    {},
    {"lowercase": True},
    {"max_ngram_order": 1},
    {"max_ngram_order": 6, "smooth_method": "floor", "effective_order": True},
    {"tokenize": "none", "smooth_method": "none"},
    {"tokenize": "intl", "lowercase": True},
    {"tokenize": "char"},
    {"tokenize": "zh", "smooth_method": "add-k"},
]


def hard_text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(["", "", " "]) for _ in range(rng.randint(0, 30)))


def hard_corpus(seed: int, n: int) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    refs = [[hard_text(rng) for _ in range(rng.choice([1, 1, 2, 4]))] for _ in range(n)]
    hyps = [hard_text(rng) if rng.random() < 0.6 else " ".join(rng.sample(r[0], len(r[0]))) for r in refs]
    return hyps, refs


def test_the_extension_is_built():
    assert compiled_available()


@pytest.mark.parametrize("options", OPTIONS)
def test_compiled_rows_equal_python_rows_and_sacrebleus_sentence_statistics(options):
    hyps, refs = hard_corpus(7, 600)
    scorer = BleuConfig(force=True, **options).scorer()
    compiled = scorer.rows(hyps, refs)
    assert isinstance(compiled, np.ndarray)
    python = dataclasses.replace(scorer, use_compiled=False).rows(hyps, refs)
    np.testing.assert_array_equal(compiled, np.asarray(python, np.int64))
    reference = BLEU(**options)
    order = reference.max_ngram_order
    for hyp, its_refs, row in zip(hyps[:150], refs, compiled.tolist(), strict=False):
        theirs = reference.sentence_score(hyp, its_refs)
        if options.get("smooth_method") != "add-k":  # add-k adds to sacrebleu's reported counts
            assert row == [theirs.sys_len, theirs.ref_len, *theirs.counts, *theirs.totals][: 2 + 2 * order]
        assert scorer.score(row) == (theirs.score, str(theirs))


@pytest.mark.parametrize("options", OPTIONS)
def test_corpus_bleu_equals_sacrebleus_exactly(options):
    hyps, refs = hard_corpus(11, 800)
    width = max(map(len, refs))
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
    theirs = BLEU(force=True, **options).corpus_score(hyps, streams)
    assert compute_metric("bleu", hyps, refs, force=True, **options) == theirs.score


def test_repeated_ngrams_are_clipped_to_the_most_one_reference_holds():
    scorer = BleuConfig().scorer()
    hyps, refs = ["the the the the cat"], [["the cat the", "the the x", "cat cat"]]
    row = scorer.rows(hyps, refs)[0].tolist()
    # "the" 4 times, at most 2 in one reference; "the the" 3 times, at most once; "the cat" once
    assert row == [5, 3, 3, 2, 0, 0, 5, 4, 3, 2]
    assert row == dataclasses.replace(scorer, use_compiled=False).rows(hyps, refs)[0]


def test_an_empty_batch_and_empty_texts():
    scorer = BleuConfig().scorer()
    assert len(scorer.rows([], [])) == 0
    assert scorer.rows(["", " \n"], [[""], ["", "a"]]).tolist() == [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0]] * 2

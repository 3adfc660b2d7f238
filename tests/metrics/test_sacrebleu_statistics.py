"""Our BLEU, chrF and TER statistics and scores against sacrebleu's public ``sentence_score`` / ``corpus_score``,
sentence by sentence and for the corpus, on random text and on edge cases: empty hypotheses and references,
several references, unicode, punctuation, text that looks tokenized, very unequal lengths, and TER's shift limits
(distance, run length, the candidate cap). sacrebleu's private methods are used nowhere (a check of the source)."""

from __future__ import annotations

import ast
import logging
import random
from pathlib import Path

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from olive_eval import compute_metric
from olive_eval.metrics import get_metric
from olive_eval.metrics.text_overlap import ter_shifts
from olive_eval.metrics.text_overlap.bleu_statistics import bleu_of
from olive_eval.metrics.text_overlap.chrf_statistics import words_of
from olive_eval.metrics.text_overlap.sacrebleu_metrics import BleuConfig, ChrfConfig, TerConfig

PACKAGE = Path(__file__).resolve().parents[2] / "olive_eval" / "metrics" / "text_overlap"
VOCABULARY = [
    "the", "The", "dog", "man", "bit", "bitten", "it", "wasn't", "(hi)", "«ça»", "naïve", "Straße", "ΣΊΣΥΦΟΣ",
    "東京", "日本語", "🙂", "e-mail", "3.14", "U.S.", "&amp;", "&quot;", "-", ".", ",", "!", "?", "'", "...",
]  # fmt: skip
LONG = [f"w{i}" for i in range(60)]
#: Hypothesis, references: the edge cases every metric is checked on.
EDGES: list[tuple[str, list[str]]] = [
    ("", ["the dog bit the man ."]),
    ("the dog bit the man .", [""]),
    ("", [""]),
    ("   ", ["  "]),
    ("the dog", ["", "the dog bit", "dog"]),
    ("the the the the the the the", ["the cat is on the mat", "there is a cat on the mat"]),
    ("naïve «ça» Straße 東京 🙂!", ["Naïve ça Strasse 東京の 🙂 !"]),
    ("(hi) ,hello world. (a) -b- ...", ["hi , hello world . a b"]),
    ("It wasn't surprising . ", ["It was not surprising.", "It wasn't surprising ."]),
    ("a b", [" ".join(["c"] * 10 + ["a", "b"] + ["c"] * 108)]),  # 60 times as long: TER's beam widens to reach "a b"
    (" ".join(LONG[1:53] + LONG[:1] + LONG[53:]), [" ".join(LONG)]),  # a word 52 places away: too far for a shift
    (" ".join(LONG[52:53] + LONG[:52] + LONG[53:]), [" ".join(LONG)]),  # and the other way
    (" ".join(["x"] * 70), ["y"]),
    ("&amp; &quot;quoted&quot; -\nline", ['& "quoted" line']),
]


def random_sentence(rng: random.Random, longest: int = 25) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(0, longest)))


def random_cases(seed: int, n: int = 120) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        refs = [random_sentence(rng) for _ in range(rng.choice([1, 1, 2, 3]))]
        words = refs[0].split()
        rng.shuffle(words)
        hyp = " ".join(words[: rng.randint(0, len(words))]) if rng.random() < 0.5 else random_sentence(rng)
        cases.append((hyp, refs))
    return cases


CASES = [*EDGES, *random_cases(0)]
BLEU_OPTIONS = [
    {},
    {"tokenize": "intl", "lowercase": True},
    {"tokenize": "char"},
    {"tokenize": "none", "smooth_method": "none"},
    {"tokenize": "zh", "smooth_method": "floor", "smooth_value": 0.3, "max_ngram_order": 3},
    {"smooth_method": "add-k", "effective_order": True},
    {"smooth_method": "floor", "max_ngram_order": 6, "effective_order": True},
]
CHRF_OPTIONS = [
    {},
    {"word_order": 2},
    {"word_order": 1, "char_order": 3, "beta": 1, "lowercase": True},
    {"whitespace": True, "eps_smoothing": True},
    {"word_order": 2, "eps_smoothing": True, "beta": 3},
]
TER_OPTIONS = [
    {},
    {"case_sensitive": True},
    {"normalized": True, "no_punct": True},
    {"normalized": True, "asian_support": True},
]


def corpus(cases: list[tuple[str, list[str]]]) -> tuple[list[str], list[list[str]], list[list[str | None]]]:
    """Hypotheses, references per example, and sacrebleu's streams of them (``None`` where an example has fewer)."""
    hyps, refs = [h for h, _ in cases], [r for _, r in cases]
    width = max(map(len, refs))
    return hyps, refs, [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


def rows_and_scores(name: str, options: dict, hyps: list[str], refs: list[list[str]]) -> tuple[list, list]:
    config = {"bleu": BleuConfig, "chrf": ChrfConfig, "ter": TerConfig}[name](**options)
    scorer = config.scorer()
    rows = np.asarray(scorer.rows(hyps, refs)).tolist()  # BLEU's compiled rows come as an array
    return rows, [scorer.score(row) for row in rows]


# ------------------------------------------------------------------------------------------------------- BLEU
@pytest.mark.parametrize("options", BLEU_OPTIONS)
def test_bleu_sentence_statistics_and_scores_equal_sacrebleus(options):
    hyps, refs, _ = corpus(CASES)
    reference = BLEU(**options)
    rows, scores = rows_and_scores("bleu", options, hyps, refs)
    for hyp, its_refs, row, (value, line) in zip(hyps, refs, rows, scores, strict=True):
        theirs = reference.sentence_score(hyp, its_refs)
        order = reference.max_ngram_order
        if options.get("smooth_method") != "add-k":  # add-k adds to sacrebleu's reported counts
            assert row == [theirs.sys_len, theirs.ref_len, *theirs.counts, *theirs.totals][: 2 + 2 * order], hyp
        assert (value, line) == (theirs.score, str(theirs)), hyp


@pytest.mark.parametrize("options", BLEU_OPTIONS)
def test_bleu_corpus_value_line_and_signature_equal_sacrebleus(options):
    hyps, refs, streams = corpus(CASES)
    reference = BLEU(**options)
    theirs = reference.corpus_score(hyps, streams)
    ours = compute_metric("bleu", hyps, refs, **options)
    assert ours == theirs.score
    assert ours.details == {"score": str(theirs), "signature": str(reference.get_signature())}


def test_bleu_of_zero_matches_and_an_empty_hypothesis():
    """No match at all is 0 whatever the smoothing; an empty hypothesis has a brevity penalty of 0."""
    score = bleu_of([0, 5, 0, 0, 0, 0, 0, 0, 0, 0])
    assert (score.value, score.brevity_penalty, score.precisions) == (0.0, 0.0, [0.0] * 4)
    theirs = BLEU().sentence_score("", ["a b c d e"])
    assert score.text() == str(theirs)


@pytest.mark.parametrize(("force", "warned"), [(False, True), (True, False)])
def test_force_silences_the_tokenized_text_warning(caplog, force, warned):
    metric = get_metric("bleu", {"force": force})
    with caplog.at_level(logging.WARNING):
        metric.statistics(["the dog bit the man ."] * 100, ["the dog bit the man."] * 100)
    assert any("tokenized period" in r.getMessage() for r in caplog.records) is warned


# ------------------------------------------------------------------------------------------------------- chrF
@pytest.mark.parametrize("options", CHRF_OPTIONS)
def test_chrf_sentence_scores_and_corpus_equal_sacrebleus(options):
    hyps, refs, streams = corpus(CASES)
    reference = CHRF(**options)
    _, scores = rows_and_scores("chrf", options, hyps, refs)
    for hyp, its_refs, (value, line) in zip(hyps, refs, scores, strict=True):
        theirs = reference.sentence_score(hyp, its_refs)
        assert (value, line) == (theirs.score, str(theirs)), hyp
    theirs = reference.corpus_score(hyps, streams)
    ours = compute_metric("chrf", hyps, refs, **options)
    assert ours == theirs.score
    assert ours.details == {"score": str(theirs), "signature": str(reference.get_signature())}


def test_chrf_words_split_one_punctuation_mark_off_either_end():
    assert words_of("(hi) ,hello world. - ...x x!?") == [
        "(hi",
        ")",
        ",",
        "hello",
        "world",
        ".",
        "-",
        ".",
        "..x",
        "x!",
        "?",
    ]


# ------------------------------------------------------------------------------------------------------- TER
@pytest.mark.parametrize("options", TER_OPTIONS)
def test_ter_sentence_statistics_and_corpus_equal_sacrebleus(options):
    hyps, refs, streams = corpus(CASES)
    reference = TER(**options)
    rows, scores = rows_and_scores("ter", options, hyps, refs)
    for hyp, its_refs, row, (value, line) in zip(hyps, refs, rows, scores, strict=True):
        theirs = reference.sentence_score(hyp, its_refs)
        assert row == [theirs.num_edits, theirs.ref_length], hyp
        assert (value, line) == (theirs.score, str(theirs)), hyp
    theirs = reference.corpus_score(hyps, streams)
    ours = compute_metric("ter", hyps, refs, **options)
    assert ours == theirs.score
    assert ours.details["signature"] == str(reference.get_signature())


def shifted_pair(rng: random.Random, size: int, vocabulary: int) -> tuple[list[str], list[str]]:
    reference = [f"w{rng.randrange(vocabulary)}" for _ in range(size)]
    hypothesis = list(reference)
    for _ in range(size // 8):  # move runs about
        start, length = rng.randrange(size), rng.randint(1, 12)
        run = hypothesis[start : start + length]
        del hypothesis[start : start + length]
        at = rng.randrange(len(hypothesis) + 1)
        hypothesis[at:at] = run
    return hypothesis, reference


@pytest.mark.parametrize(("seed", "size", "vocabulary"), [(1, 30, 40), (2, 80, 60)])
def test_ter_edits_with_long_shifts_equal_sacrebleus(seed, size, vocabulary):
    """Runs longer than 10 words and moves farther than 50 words (the cap on tried shifts: the next test)."""
    hyp, ref = shifted_pair(random.Random(seed), size, vocabulary)
    theirs = TER(case_sensitive=True).sentence_score(" ".join(hyp), [" ".join(ref)])
    assert ter_shifts.ter_edits(hyp, ref) == theirs.num_edits


def test_the_shift_cap_is_reached_and_the_shift_it_was_choosing_not_made():
    hyp, ref = shifted_pair(random.Random(4), 60, 3)
    table = ter_shifts.EditTable(ref)
    distance = table.rebase(hyp)
    _, _, tried = ter_shifts.best_shift(table, 0)
    assert tried >= ter_shifts.MAX_SHIFT_CANDIDATES  # the first search hits the cap: no shift is made
    assert ter_shifts.ter_edits(hyp, ref) == distance
    assert TER(case_sensitive=True).sentence_score(" ".join(hyp), [" ".join(ref)]).num_edits == distance


@pytest.mark.parametrize(
    ("start", "length", "target"), [(4, 2, 1), (4, 2, 0), (1, 2, 7), (2, 3, 3), (2, 3, 5), (0, 1, 8)]
)
def test_a_moved_run_lands_where_tercom_puts_it(start, length, target):
    words = list("abcdefgh")
    run, rest = words[start : start + length], words[:start] + words[start + length :]
    out = ter_shifts.moved(words, start, length, target)
    assert sorted(out) == words and out[out.index(run[0]) : out.index(run[0]) + length] == run
    if target <= start:  # before the word at target
        assert out == words[:target] + run + words[target:start] + words[start + length :]
    elif target > start + length:  # before the word at target, counted in the original
        assert out == rest[: target - length] + run + rest[target - length :]
    else:  # inside or just after the run: that many places to the right
        assert out == rest[:target] + run + rest[target:]


# ------------------------------------------------------------------------------------------------------- the API used
def test_no_private_sacrebleu_name_is_used():
    """Our modules touch no ``_name`` of another object (sacrebleu's internal methods included)."""
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            private = isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
            if private and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{path.name}:{node.lineno} .{node.attr}")
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sacrebleu"):
                found += [f"{path.name}:{node.lineno} {a.name}" for a in node.names if a.name.startswith("_")]
    assert found == []


def test_sacrebleus_public_pieces_we_use_are_there():
    """What we read from sacrebleu: a metric's ``tokenizer`` and ``num_refs`` for ``get_signature()``."""
    assert callable(BLEU(tokenize="intl").tokenizer) and callable(TER(normalized=True).tokenizer)
    metric = CHRF()
    metric.num_refs = 2
    assert str(metric.get_signature()).startswith("nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:")


def test_statistics_keep_their_dtypes():
    hyps, refs, _ = corpus(EDGES)
    assert get_metric("bleu").statistics(hyps, refs).dtype == np.int64
    assert get_metric("chrf").statistics(hyps, refs).dtype == np.int64
    assert get_metric("ter").statistics(hyps, refs).dtype == np.float64

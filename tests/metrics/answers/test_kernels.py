"""Answer kernels against Olive's vectors, per-sample references written here from the documented formulas,
rapidfuzz itself (token_sort_ratio), a Levenshtein DP (ANLS) and the official VQA leave-one-out formula."""

from __future__ import annotations

import random
import string
from collections import Counter
from unittest.mock import patch

import numpy as np
import pytest
from rapidfuzz import fuzz, utils

from olive_eval.metrics.answers import blocks, kernels
from olive_eval.metrics.answers.anls import upper_lengths
from olive_eval.metrics.answers.kernels import (
    anls_scores,
    exact_match_scores,
    mean_score,
    relaxed_accuracy_scores,
    vqa_accuracy_scores,
    word_sort_ratio_scores,
)
from olive_eval.metrics.answers.references import Answers, join_alternatives, split_alternatives, to_answers
from olive_eval.metrics.answers.vqa import vqa_normalize


# ------------------------------------------------------------------------------- references written from the docs
def olive_normalize(s: str) -> str:
    return " ".join(s.strip().lower().split())


def olive_number(s: str) -> float | None:
    try:
        return float(s.strip().replace(",", "").replace("%", ""))
    except ValueError:
        return None


def ref_exact(pred: str, alts: list[str]) -> float:
    return float(any(olive_normalize(pred) == olive_normalize(a) for a in alts))


def ref_relaxed(pred: str, alts: list[str], tol: float) -> float:
    """Olive's rule as the reference documents it: equal values match, else a non-zero reference within tol."""
    for alt in alts:
        p, r = olive_number(pred), olive_number(alt)
        if p is not None and r is not None:
            hit = r == p or (r != 0 and abs(p - r) / abs(r) <= tol)
        else:
            hit = olive_normalize(pred) == olive_normalize(alt)
        if hit:
            return 1.0
    return 0.0


def ref_word_sort(pred: str, alts: list[str]) -> float:
    best = 0.0
    for alt in alts:
        pw, rw = sorted(pred.strip().lower().split()), sorted(alt.strip().lower().split())
        if not rw:
            value = 1.0 if not pw else 0.0
        else:
            value = sum((Counter(pw) & Counter(rw)).values()) / max(len(pw), len(rw))
        best = max(best, value)
    return best


def ref_pix2struct(pred: str, alts: list[str], tol: float) -> float:
    def number(text: str) -> float | None:
        try:
            return float(text[:-1].rstrip("%")) / 100.0 if text.endswith("%") else float(text)
        except ValueError:
            return None

    hits = []
    for target in alts:
        p, t = number(pred), number(target)
        hits.append(abs(p - t) / abs(t) <= tol if p is not None and t else pred.lower() == target.lower())
    return float(any(hits))


def ref_mistral(pred: str, alts: list[str], tol: float) -> float:
    def clean(text: str) -> str:
        if not any(c.isdigit() for c in text):
            return text[1:-1] if len(text) >= 1 and text[0] in "'\"" and text[-1] == text[0] else text
        while text and text[-1] != "%" and (text[-1] in string.punctuation or text[-1].isspace()):
            text = text[:-1]
        return text.replace(",", "").replace("$", "")

    def number(text: str) -> tuple[float | None, bool]:
        text = text.strip()
        try:
            return float(text.rstrip("%")), text.endswith("%")
        except ValueError:
            return None, False

    def near(x: float, y: float) -> bool:
        return abs(x - y) / max(abs(y), 1e-10) <= tol

    p = clean(pred)
    pv, pp = number(p)
    hits = []
    for alt in alts:
        t = clean(alt)
        tv, tp = number(t)
        if pv is not None and tv is not None:
            scaled = near(pv / 100 if pp else pv, tv) or near(pv, tv / 100 if tp else tv)
            hits.append(near(pv, tv) or ((pp or tp) and scaled))
        elif len(t) == 1 and t.isalpha() and p:
            hits.append(p[0].lower() == t.lower())
        else:
            hits.append(p.lower() == t.lower())
    return float(any(hits))


def levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def ref_anls(pred: str, alts: list[str], threshold: float = 0.5) -> float:
    """The DocVQA scorer's ANLS with any threshold: the distance between the normalized answers over the longer
    raw one (as given, upper-cased as the scorer measures it); max over answers of 1 - NL when NL <= threshold."""
    best = 0.0
    p = olive_normalize(pred)
    for alt in alts:
        longest = max(len(pred.upper()), len(alt.upper()))
        nl = levenshtein(p, olive_normalize(alt)) / longest if longest else 0.0
        best = max(best, 1 - nl if nl <= threshold else 0.0)
    return best


def official_docvqa(pred: str, alts: list[str]) -> float:
    """The RRC scorer's steps for one question (raw lengths; threshold 0.5 on 1 - min NL)."""
    values = []
    for answer in alts:
        dist = levenshtein(olive_normalize(answer), olive_normalize(pred))
        length = max(len(answer.upper()), len(pred.upper()))
        values.append(0.0 if length == 0 else dist / length)
    result = 1 - min(values)
    return 0.0 if result < 0.5 else result


def official_vqa(pred: str, humans: list[str]) -> float:
    """The VQA leave-one-out average, literally: for each human, matches among the others / 3, capped at 1."""
    pred = vqa_normalize(pred)
    humans = [vqa_normalize(h) for h in humans]
    accs = [min(1.0, sum(o == pred for o in humans[:i] + humans[i + 1 :]) / 3) for i in range(len(humans))]
    return sum(accs) / len(accs)


# --------------------------------------------------------------------------------------------------- random data
WORDS = ["paris", "Paris", "blue", "ΟΔΟΣ", "ὀδυσσεύς", "café", "漢字", "yes", "No", "the cat", "42", "3.5"]
SPACES = [" ", "  ", "\t", "\n", "\u00a0", "\u3000", ""]


def random_answer(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.4:
        value = rng.choice([0, 0.0, 1, 42, 41.0, 39.9, 44.1, 1000, 1234.5, -7, 1e-3, 1e22, 123456789.125])
        text = rng.choice(["{}", "{:,}", "{}%", "{:.2f}", "{:e}", " {} ", "${}"]).format(value)
        return rng.choice([text, text.upper(), "nan", "inf", "1_000", "٣", "0.5", "50%", "-0"])
    words = rng.choices(WORDS, k=rng.randint(0, 4))
    sep = [rng.choice(SPACES) or " " for _ in words]
    text = "".join(w + s for w, s in zip(words, sep, strict=True))
    return rng.choice(SPACES) + (text.upper() if rng.random() < 0.2 else text)


def random_case(rng: random.Random, n: int) -> tuple[list[str], list[list[str]]]:
    refs = [[random_answer(rng) for _ in range(rng.randint(1, 3))] for _ in range(n)]
    preds = []
    for alts in refs:
        if rng.random() < 0.5:  # close to an answer: case, spacing and word order changes
            words = rng.choice(alts).split()
            rng.shuffle(words) if rng.random() < 0.3 else None
            pred = rng.choice(SPACES).join(words) or ""
            preds.append(pred.upper() if rng.random() < 0.3 else pred)
        else:
            preds.append(random_answer(rng))
    return preds, refs


@pytest.fixture(scope="module")
def data():
    return random_case(random.Random(7), 3000)


# --------------------------------------------------------------------------------------- Olive's vectors (8.1)
def test_exact_match_olive_vectors():
    assert mean_score(exact_match_scores(["A", "B", "C"], ["A", "B", "C"])) == 1.0
    assert mean_score(exact_match_scores(["Hello World", "TEST"], ["hello world", "test"])) == 1.0
    assert mean_score(exact_match_scores(["  hello   world  "], ["hello world"])) == 1.0
    assert mean_score(exact_match_scores(["A", "wrong", "C"], ["A", "B", "C"])) == 2 / 3
    assert mean_score(exact_match_scores(["X", "Y"], ["A", "B"])) == 0.0
    assert mean_score(exact_match_scores(["answer"], ["answer"])) == 1.0
    assert exact_match_scores(["paris."], ["paris"]).tolist() == [0.0]  # no punctuation stripping
    with pytest.raises(ValueError, match="does not match"):
        exact_match_scores(["A", "B"], ["A"])


@pytest.mark.parametrize(
    ("pred", "ref", "tolerance", "expected"),
    [
        ("42.0", "42", 0.05, 1.0),
        ("41", "42", 0.05, 1.0),
        ("35", "42", 0.05, 0.0),
        ("yes", "yes", 0.05, 1.0),
        ("yes", "no", 0.05, 0.0),
        ("51%", "50%", 0.05, 1.0),
        ("0", "0", 0.05, 1.0),
        ("38", "42", 0.1, 1.0),
        # float edges: 2.1000000000000014 / 42 > 0.05
        ("39.9", "42", 0.05, 0.0),
        ("44.1", "42", 0.05, 0.0),
        ("1,000", "1000", 0.05, 1.0),
        ("1e3", "1000", 0.05, 1.0),
        ("nan", "nan", 0.05, 0.0),
        ("0.5", "50%", 0.05, 0.0),  # "%" is deleted, not scaled
        ("0.0001", "0", 0.05, 0.0),  # a zero reference only matches zero
        ("-0", "0", 0.05, 1.0),
        ("0.0", "0", 0.05, 1.0),
        ("inf", "inf", 0.05, 1.0),  # equal values match (inf - inf would be nan)
        ("Paris", " paris ", 0.05, 1.0),  # not numbers: normalized strings
    ],
)
def test_relaxed_accuracy_olive_vectors(pred, ref, tolerance, expected):
    assert 2.1000000000000014 / 42 > 0.05 and abs(39.9 - 42) == 2.1000000000000014
    assert relaxed_accuracy_scores([pred], [ref], tolerance=tolerance).tolist() == [expected]
    assert ref_relaxed(pred, [ref], tolerance) == expected


NON_FINITE = ["inf", "-inf", "+inf", "Infinity", "-INFINITY", "1e309", "-1e309", "nan", "-nan", "NaN", "0", "-0", "5"]


@pytest.mark.parametrize("ref", NON_FINITE)
@pytest.mark.parametrize("pred", NON_FINITE)
def test_relaxed_accuracy_non_finite_numbers_follow_olives_rule(pred, ref):
    """Every pairing of inf, -inf, nan, zero and a finite number: equal values match, nan matches nothing."""
    p, r = float(pred), float(ref)
    expected = float(r == p or (r != 0 and abs(p - r) / abs(r) <= 0.05))
    assert relaxed_accuracy_scores([pred], [[ref]]).tolist() == [expected]
    assert relaxed_accuracy_scores([pred], [f"x|{ref}"]).tolist() == [expected]


@pytest.mark.parametrize(
    ("pred", "ref", "expected"),
    [
        ("hello world", "hello world", 1.0),
        ("world hello", "hello world", 1.0),
        ("hello earth", "hello world", 0.5),
        ("foo bar", "hello world", 0.0),
        ("HELLO WORLD", "hello world", 1.0),
        ("", "", 1.0),
        ("x", "", 0.0),  # empty reference: 1.0 only for an empty prediction
        ("", "x", 0.0),
        ("a a b", "a b b", 2 / 3),  # multisets
    ],
)
def test_word_sort_ratio_olive_vectors(pred, ref, expected):
    assert word_sort_ratio_scores([pred], [ref]).tolist() == [expected]


# ------------------------------------------------------------------------------ against the per-sample references
def test_olive_metrics_equal_per_sample_references(data):
    preds, refs = data
    assert exact_match_scores(preds, refs).tolist() == [ref_exact(p, a) for p, a in zip(preds, refs, strict=True)]
    for tol in (0.05, 0.0, 0.2):
        expected = [ref_relaxed(p, a, tol) for p, a in zip(preds, refs, strict=True)]
        assert relaxed_accuracy_scores(preds, refs, tolerance=tol).tolist() == expected
    expected = [ref_word_sort(p, a) for p, a in zip(preds, refs, strict=True)]
    assert word_sort_ratio_scores(preds, refs).tolist() == expected


def test_joined_references_score_like_lists(data):
    """Olive's form: every "|" separates (spaces around it belong to the answers); a prediction is never split."""
    preds, refs = data
    rng = random.Random(11)
    joined = ["".join(a + rng.choice(["|", " | ", "|  ", "\t|", "||"]) for a in alts)[:-1] for alts in refs]
    preds = [p + "|" + p if rng.random() < 0.05 else p for p in preds]
    split = [j.split("|") for j in joined]
    assert any(len(a) > 1 for a in split) and any("" in a for a in split) and any("|" in p for p in preds)
    for name, kernel in KERNELS.items():
        assert kernel(preds, joined).tolist() == kernel(preds, split).tolist(), name
        assert kernel(preds, to_answers(joined)).tolist() == kernel(preds, split).tolist(), name


def test_escaped_references_score_like_lists(data):
    """Answers holding "|" or a backslash: lists, the escaped joined form and parsed Answers score alike."""
    preds, refs = data
    rng = random.Random(12)
    refs = [
        [a + rng.choice(["", "|x", "\\", "\\|", "C:\\temp"]) if rng.random() < 0.1 else a for a in alts]
        for alts in refs
    ]
    joined = [join_alternatives(a) for a in refs]
    assert any("\\" in j for j in joined)
    for name, kernel in KERNELS.items():
        expected = kernel(preds, refs).tolist()
        assert kernel(preds, joined).tolist() == expected, name
        assert kernel(preds, to_answers(refs)).tolist() == expected, name
    expected = [ref_exact(p, a) for p, a in zip(preds, refs, strict=True)]
    assert exact_match_scores(preds, joined).tolist() == expected


@pytest.mark.parametrize("rule", ["pix2struct", "mistral"])
def test_other_relaxed_rules_equal_per_sample_references(data, rule):
    preds, refs = data
    reference = ref_pix2struct if rule == "pix2struct" else ref_mistral
    expected = [reference(p, a, 0.05) for p, a in zip(preds, refs, strict=True)]
    assert relaxed_accuracy_scores(preds, refs, rule=rule).tolist() == expected


@pytest.mark.parametrize(
    ("rule", "pred", "ref", "expected"),
    [
        ("pix2struct", "0.5", "50%", 1.0),  # "%" scales by 1/100
        ("pix2struct", "0.0", "0", 0.0),  # a zero target needs the same string
        ("pix2struct", "0", "0", 1.0),
        ("pix2struct", "1,000", "1000", 0.0),  # no comma removal
        ("pix2struct", " 42", "42", 1.0),  # float() ignores the space
        ("pix2struct", "YES", "yes", 1.0),
        ("mistral", "$1,234.", "1234", 1.0),
        ("mistral", "5%", "0.05", 1.0),
        ("mistral", "0.0", "0", 1.0),  # max(|t|, 1e-10): zero targets compare numerically
        ("mistral", "B) the second", "b", 1.0),  # one-letter target: the first character
        ("mistral", '"Yes"', "yes", 1.0),
        ("mistral", "Paris.", "paris", 0.0),  # no digit: trailing punctuation stays
    ],
)
def test_other_relaxed_rules_vectors(rule, pred, ref, expected):
    assert relaxed_accuracy_scores([pred], [ref], rule=rule).tolist() == [expected]


# --------------------------------------------------------------------------------------------- token_sort_ratio
@pytest.mark.parametrize(("processor", "function"), [("default", utils.default_process), ("none", None)])
def test_token_sort_ratio_equals_rapidfuzz(data, processor, function):
    rng = random.Random(11)
    preds, refs = data
    noise = ["".join(rng.choices(string.ascii_letters + " ,.!-", k=rng.randint(0, 20))) for _ in range(500)]
    preds = preds + noise
    refs = refs + [[rng.choice(noise), "".join(rng.sample(t, len(t)))] for t in noise]
    expected = [
        max(fuzz.token_sort_ratio(p, a, processor=function) / 100 for a in alts)
        for p, alts in zip(preds, refs, strict=True)
    ]
    got = word_sort_ratio_scores(preds, refs, method="token_sort_ratio", processor=processor)
    assert got.tolist() == expected


def test_token_sort_ratio_published_vectors():
    score = word_sort_ratio_scores(["fuzzy was a bear"], ["fuzzy fuzzy was a bear"], method="token_sort_ratio")
    assert score[0] == pytest.approx(0.842105263157, abs=1e-12)  # 32/38
    mets = ["New York Mets"], ["new york mets"]
    assert word_sort_ratio_scores(*mets, method="token_sort_ratio", processor="none")[0] == pytest.approx(10 / 13)
    assert word_sort_ratio_scores(*mets, method="token_sort_ratio", processor="default")[0] == 1.0


# ------------------------------------------------------------------------------------------------------------ ANLS
@pytest.mark.parametrize(
    ("pred", "alts", "expected"),
    [
        ("", [""], 1.0),  # both empty: NL = 0
        ("", ["abc"], 0.0),
        ("abc", [""], 0.0),
        ("ab", ["ac"], 0.5),  # NL exactly 0.5: kept (the scorer zeroes only 1 - NL < 0.5)
        ("abcd", ["abxy"], 0.5),
        ("abcde", ["abxyz"], 0.0),  # NL 0.6
        ("Denver  Broncos ", ["denver broncos"], 1.0),  # case and whitespace normalized
        ("Dear dr. Lobo", ["Dear Dr. Lobo", "Dr. Lobo"], 1.0),
        ("12/15/89", ["12/15/88"], 0.875),
        ("lobo", ["Dr. Lobo", "lobo x", "xyz"], 1 - 2 / 6),  # several answers: the best
        ("hallo", ["  hello  "], 1 - 1 / 9),  # the scorer divides by the longer raw answer
        ("  hallo\t", ["hello"], 1 - 1 / 8),
        ("a  b", ["a b c"], 1 - 2 / 5),
        ("ßa", ["xa"], 1 - 1 / 3),  # len("ßa".upper()) == 3, as the scorer measures it
        ("   ", [""], 1.0),  # both empty once normalized: NL = 0
        ("xy ", ["ab"], 0.0),  # NL = 2 / 3
    ],
)
def test_anls_edge_cases_against_the_formula(pred, alts, expected):
    assert anls_scores([pred], [alts])[0] == pytest.approx(expected, abs=1e-15)
    assert ref_anls(pred, alts) == pytest.approx(expected, abs=1e-15)


def test_anls_equals_the_formula_on_random_data(data):
    preds, refs = data
    for threshold in (0.5, 0.3, 1.0, 0.0):
        expected = [ref_anls(p, a, threshold) for p, a in zip(preds, refs, strict=True)]
        assert anls_scores(preds, refs, threshold=threshold).tolist() == pytest.approx(expected, abs=1e-15)


def test_anls_equals_the_official_scorer_with_stray_whitespace():
    rng = random.Random(5)
    pad, gaps = ["", "", " ", "  ", "\t", "\n ", "\u00a0"], [" ", " ", "  ", "\t", " \n"]
    preds, refs = [], []
    for _ in range(1500):
        alts = [
            rng.choice(pad) + rng.choice(gaps).join(rng.choices(["ab", "Abc", "x", "12/15/88", "dr.", "ßo"], k=k))
            for k in (rng.randint(0, 3), rng.randint(0, 3))
        ]
        refs.append(alts)
        preds.append(rng.choice(alts)[: rng.randint(0, 8)] + rng.choice(["", "q", "b", "zz", "  ", " \t"]))
    expected = [official_docvqa(p, a) for p, a in zip(preds, refs, strict=True)]
    assert anls_scores(preds, refs).tolist() == pytest.approx(expected, abs=1e-15)
    assert anls_scores(preds, [join_alternatives(r) for r in refs]).tolist() == pytest.approx(expected, abs=1e-15)


def test_anls_equals_the_official_scorer_on_hard_text(monkeypatch):
    """NUL, "|" and backslashes in answers, lone surrogates, a character whose upper case is longer ("ß"):
    every reference form, in many blocks, against the scorer's steps per question."""
    preds, refs = hard_case(random.Random(8), 3000)
    expected = [official_docvqa(p, a) for p, a in zip(preds, refs, strict=True)]
    plain = ["|".join(a) for a in refs]  # not escaped: Olive's split, but a "\\|" from an answer is an escape
    plain_expected = [official_docvqa(p, split_alternatives(j)) for p, j in zip(preds, plain, strict=True)]
    monkeypatch.setattr(blocks, "BLOCK", 97)
    forms = {
        "lists": (refs, expected),
        "joined": ([join_alternatives(a) for a in refs], expected),
        "answers": (to_answers(refs), expected),
        "plain": (plain, plain_expected),
    }
    for form, (references, want) in forms.items():
        assert anls_scores(preds, references).tolist() == pytest.approx(want, abs=1e-15), form


def test_upper_lengths_are_the_lengths_of_the_upper_cased_pieces():
    rng = random.Random(4)
    strings = [hard_text(rng) + rng.choice(["", "ß", "ŉ", "ﬃ", "ΐ", "İ"]) for _ in range(3000)]
    assert upper_lengths(strings).tolist() == [len(s.upper()) for s in strings]
    pieces = [len(p.upper()) for s in strings for p in s.split("|")]
    assert upper_lengths(strings, cut="|").tolist() == pieces
    clean = [s.replace("\x00", "") for s in strings]  # the one-buffer path (a NUL sends all to the other)
    assert upper_lengths(clean, cut="|").tolist() == [len(p.upper()) for s in clean for p in s.split("|")]
    assert upper_lengths([]).tolist() == [] and upper_lengths([""], cut="|").tolist() == [0]


# ------------------------------------------------------------------------------------------------------------- VQA
def test_vqa_accuracy_hand_computed():
    # Ten humans, k of them gave the prediction. Leaving out one of those k leaves k - 1 matches, leaving out one of
    # the other 10 - k leaves k; each subset scores min(1, matches / 3), and the ten subsets are averaged:
    #   k = 1: (1 * 0   + 9 * 1/3) / 10 = 0.3
    #   k = 2: (2 * 1/3 + 8 * 2/3) / 10 = 18/30 = 0.6
    #   k = 3: (3 * 2/3 + 7 * 1)   / 10 = 0.9   (three agreeing humans give 0.9, not 1.0)
    #   k = 4: (4 * 1   + 6 * 1)   / 10 = 1.0
    hand = {0: 0.0, 1: 0.3, 2: 0.6, 3: 0.9, 4: 1.0, 7: 1.0, 10: 1.0}
    preds = ["cat"] * len(hand)
    refs = [["cat"] * k + ["dog"] * (10 - k) for k in hand]
    got = vqa_accuracy_scores(preds, refs)
    assert got.tolist() == pytest.approx(list(hand.values()), abs=1e-15)
    assert [official_vqa(p, r) for p, r in zip(preds, refs, strict=True)] == pytest.approx(list(hand.values()))


@pytest.mark.parametrize(
    ("pred", "human", "same"),
    [
        ("Two", "2", True),  # number words
        ("a dog", "dog", True),  # articles
        ("the Dog.", "dog", True),  # final period
        ("dont", "don’t", True),  # contractions get the typographic apostrophe
        ("don't", "don t", True),  # a straight apostrophe not next to a space becomes a space (official rule)
        ("don ' t", "dont", False),  # next to a space it is deleted: "don t"
        ("1,000", "1000", True),  # digit,digit: punctuation deleted, not spaced
        ("3.5", "35", False),  # a period before a digit stays
        ("hi, there", "hi there", True),
        ("black/white", "black white", True),
        ("yes\n", "yes", True),
        ("two dogs", "2 dog", False),
    ],
)
def test_vqa_normalization(pred, human, same):
    assert (vqa_normalize(pred) == vqa_normalize(human)) is same
    assert vqa_accuracy_scores([pred], [[human] * 10]).tolist() == [1.0 if same else 0.0]


def test_vqa_accuracy_equals_the_official_formula_on_random_data():
    rng = random.Random(9)
    pool = ["2", "two", "Yes", "yes.", "a red car", "red car", "don't", "1,000", "3.5", "blue"]
    refs = [[rng.choice(pool) for _ in range(rng.choice([10, 10, 3, 1]))] for _ in range(2000)]
    preds = [rng.choice(pool) for _ in refs]
    expected = [official_vqa(p, r) for p, r in zip(preds, refs, strict=True)]
    assert vqa_accuracy_scores(preds, refs).tolist() == pytest.approx(expected, rel=1e-14, abs=1e-15)


# ------------------------------------------------------------------------------------------------------- bad input
def exact_match_numpy(predictions, references) -> np.ndarray:
    """exact_match as an install without the C extension runs it: the numpy kernel."""
    with patch.object(kernels, "_compiled", None):
        return exact_match_scores(predictions, references)


KERNELS = {  # the metric's name, then "/" and the path where a metric has two
    "exact_match": exact_match_scores,
    "exact_match/numpy": exact_match_numpy,
    "relaxed_accuracy": relaxed_accuracy_scores,
    "word_sort_ratio": word_sort_ratio_scores,
    "anls": anls_scores,
    "vqa_accuracy": vqa_accuracy_scores,
}


@pytest.mark.parametrize("name", KERNELS)
def test_bad_input(name):
    kernel = KERNELS[name]
    with pytest.raises(ValueError, match=r"mixes types: example 0 is str, example 1 is list"):
        kernel(["a", "b"], ["a", ["b"]])
    with pytest.raises(TypeError, match=r"prediction of example 1 is int, expected str"):
        kernel(["a", 3], ["a", "b"])
    metric = name.split("/")[0]
    message = rf"Number of predictions \(2\) does not match number of references \(3\) for {metric} metric\."
    with pytest.raises(ValueError, match=message):
        kernel(["a", "b"], ["a", "b", "c"])
    empty = kernel([], [])
    assert empty.dtype == np.float64 and empty.shape == (0,)
    assert mean_score(empty) == 0.0  # Olive's value for no examples


@pytest.mark.parametrize("name", KERNELS)
def test_bad_input_in_a_later_block_names_its_example(name, monkeypatch):
    kernel = KERNELS[name]
    monkeypatch.setattr(blocks, "BLOCK", 2)
    preds = ["a", "b", "c", "d", "e"]
    cases = [
        (TypeError, r"prediction of example 3 is int", ["a", "b", "c", 4, "e"], ["a"] * 5),
        (TypeError, r"prediction of example 4 is bytes", [*preds[:4], b"e"], [["a"]] * 5),
        (TypeError, r"reference of example 3 is NoneType", preds, ["a", "b", "c", None, "e"]),
        (TypeError, r"a reference answer of example 3 is float", preds, [["a"], ["b"], ["c"], ["d", 1.5], ["e"]]),
        (ValueError, r"example 4 has an empty list", preds, [["a"], ["b"], ["c"], ["d"], []]),
        (ValueError, r"mixes types: example 0 is list, example 3 is str", preds, [["a"], ["b"], ["c"], "d", ["e"]]),
        (ValueError, r"mixes types: example 0 is str, example 3 is list", preds, ["a", "b", "c", ["d"], "e"]),
    ]
    for error, message, p, r in cases:
        with pytest.raises(error, match=message):
            kernel(p, r)


def test_bad_parameters():
    for tolerance in (-0.01, float("nan")):
        with pytest.raises(ValueError, match="tolerance must be >= 0"):
            relaxed_accuracy_scores(["1"], ["1"], tolerance=tolerance)
    with pytest.raises(ValueError, match="rule must be one of"):
        relaxed_accuracy_scores(["1"], ["1"], rule="chartqa")
    with pytest.raises(ValueError, match="method must be"):
        word_sort_ratio_scores(["a"], ["a"], method="levenshtein")
    with pytest.raises(ValueError, match="processor must be one of"):
        word_sort_ratio_scores(["a"], ["a"], method="token_sort_ratio", processor="lower")
    for threshold in (-0.1, 1.5):
        with pytest.raises(ValueError, match="threshold must lie in"):
            anls_scores(["a"], ["a"], threshold=threshold)


def test_scores_are_float64_per_example(data):
    preds, refs = data
    for kernel in KERNELS.values():
        scores = kernel(preds, refs)
        assert scores.dtype == np.float64 and scores.shape == (len(preds),)
        assert ((scores >= 0) & (scores <= 1)).all()


def test_blocks_of_examples_score_like_one_block(data, monkeypatch):
    preds, refs = data
    whole = {name: kernel(preds, refs) for name, kernel in KERNELS.items()}
    joined = [join_alternatives(a) for a in refs]
    monkeypatch.setattr(blocks, "BLOCK", 7)  # many blocks, the last one short
    for name, kernel in KERNELS.items():
        assert kernel(preds, refs).tolist() == whole[name].tolist(), name
        assert kernel(preds, joined).tolist() == whole[name].tolist(), name


# ------------------------------------------------------------------------------------ exact_match's C extension
HARD_CHARS = ["a", "B", "Σ", "ς", "σ", "İ", "ǅ", "ß", "ẞ", "|", "\\", "\x00", " ", "\t", "\x1c", "\x1f", "\x85", "\xa0"]
HARD_CHARS += ["\u2028", "\u3000", "\u200b", "\ud800", "漢", "😀", "\u0345", "'", "."]


def hard_text(rng: random.Random) -> str:
    """Text where a per-character shortcut would go wrong: final sigma, one-to-many lowercasing, Python's
    whitespace (which includes \\x1c-\\x1f but not U+200B), NUL, "|", backslashes, surrogates, wide characters."""
    return "".join(rng.choices(HARD_CHARS, k=rng.randint(0, 6)))


def hard_case(rng: random.Random, n: int) -> tuple[list[str], list[list[str]]]:
    refs = [[hard_text(rng) for _ in range(rng.randint(1, 3))] for _ in range(n)]
    preds = []
    for alts in refs:  # half of them an answer in another case or spacing
        pred = rng.choice(alts) if rng.random() < 0.5 else hard_text(rng)
        preds.append(rng.choice([pred, pred.upper(), pred.lower(), f" {pred}\t", pred.replace(" ", "  ")]))
    return preds, refs


def exact_match_compiled(predictions: list, references: list | Answers) -> np.ndarray:
    """The C kernel alone, which must take the input (None would mean exact_match fell back to numpy)."""
    if isinstance(references, Answers):
        scores = kernels._compiled.matches(predictions, references.texts, references.offsets)
    else:
        scores = kernels._compiled.matches(predictions, references)
    assert scores is not None
    return np.frombuffer(scores, np.float64)


def test_the_c_extension_is_built():
    """The dev install compiles it; without a compiler exact_match runs its numpy kernel (tested beside it)."""
    assert kernels._compiled is not None


def test_compiled_exact_match_equals_the_reference_on_hard_text():
    preds, refs = hard_case(random.Random(5), 4000)
    expected = [ref_exact(p, a) for p, a in zip(preds, refs, strict=True)]
    assert 0.2 < np.mean(expected) < 0.8
    joined = [join_alternatives(a) for a in refs]
    assert [split_alternatives(j) for j in joined] == refs
    plain = ["|".join(a) for a in refs]  # not escaped: split on every "|" but a "\\|" or "\\\\" from an answer
    plain_expected = [ref_exact(p, split_alternatives(j)) for p, j in zip(preds, plain, strict=True)]
    forms = {
        "lists": (refs, expected),
        "tuples": ([tuple(a) for a in refs], expected),
        "joined": (joined, expected),
        "answers": (to_answers(refs), expected),
        "plain": (plain, plain_expected),
    }
    for form, (references, want) in forms.items():
        assert exact_match_compiled(preds, references).tolist() == want, form
        assert exact_match_numpy(preds, references).tolist() == want, form
    numpy_strings = [np.str_(p) for p in preds], [[np.str_(a) for a in alts] for alts in refs]
    assert exact_match_scores(*numpy_strings).tolist() == expected


class LoudStr(str):
    def lower(self) -> str:
        raise AssertionError("str.lower runs, not a subclass's own lower()")


def test_a_str_subclass_is_lowercased_as_str_by_both_paths():
    """A subclass's lower() could run any code (in C, code that edits the lists being read): str.lower runs."""
    preds = [LoudStr("ÀB"), LoudStr("ŸX")]
    for refs in ([LoudStr("àb|c"), LoudStr("c|ÿx")], [[LoudStr("àb")], ["c", LoudStr("ÿx")]]):
        assert exact_match_scores(preds, refs).tolist() == [1.0, 1.0]
        assert exact_match_numpy(preds, refs).tolist() == [1.0, 1.0]


def test_compiled_exact_match_leaves_what_it_does_not_take_to_the_checked_path():
    """None: the numpy path then raises the error that names the example (test_bad_input checks those)."""
    matches = kernels._compiled.matches
    offsets = np.array([0, 1, 2], np.int64)
    for preds, refs in [
        (["a", 1], ["a", "b"]),
        (["a", "b"], ["a", None]),
        (["a", "b"], ["a", ["b"]]),
        (["a", "b"], [["a"], "b"]),
        (["a", "b"], [["a"], []]),
        (["a", "b"], [["a"], ["b", 2]]),
        (["a", "b"], [np.array(["a"]), np.array(["b"])]),
        (["a", "b"], ["a"]),
    ]:
        assert matches(preds, refs) is None, (preds, refs)
    for bad in (np.array([0, 2, 2], np.int64), np.array([0, 1, 3], np.int64), np.array([0, 2], np.int64)):
        assert matches(["a", "b"], ["a", "b"], bad) is None
    assert np.frombuffer(matches(["a", "B"], ["a", "b"], offsets), np.float64).tolist() == [1.0, 1.0]
    assert np.frombuffer(matches([], []), np.float64).size == 0
    assert exact_match_scores(["a", "b"], [np.array(["A"]), np.array(["c", "B "])]).tolist() == [1.0, 1.0]

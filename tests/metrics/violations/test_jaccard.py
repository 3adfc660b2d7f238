"""``similarity: jaccard``: the seed's string-based Jaccard similarity (IoU) of word sets.

The reference is the deck's formula written plainly here, |A ∩ B| / (|A| + |B| - |A ∩ B|), with words found
another way than the code's regex: runs of characters that are ``str.isalnum()`` or ``_`` (what Python's ``\\w``
is documented to match).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from olive_eval.metrics import get_metric
from olive_eval.metrics.violations.metrics import match_violations
from olive_eval.metrics.violations.similarity import jaccard_similarity


def reference_words(text: str, lowercase: bool = False) -> set[str]:
    text = text.lower() if lowercase else text
    return set("".join(c if c.isalnum() or c == "_" else " " for c in text).split())


def reference_jaccard(a: str, b: str, lowercase: bool = False) -> float:
    left, right = reference_words(a, lowercase), reference_words(b, lowercase)
    shared = len(left & right)
    denominator = len(left) + len(right) - shared
    return shared / denominator if denominator else 1.0  # two texts without words: equal


def ours(a: list[str], b: list[str], lowercase: bool = False) -> np.ndarray:
    """Every (a[i], b[j]) pair, through the PairSimilarity interface the matching calls."""
    ia, ib = np.meshgrid(np.arange(len(a)), np.arange(len(b)), indexing="ij")
    return jaccard_similarity(lowercase)(a, b, ia.reshape(-1), ib.reshape(-1)).reshape(len(a), len(b))


VOCABULARY = ["passive", "Passive", "voice", "spelling", "tone", "brand", "name", "ä", "café", "x_1", "42", "Ünïcode"]
SEPARATORS = [" ", "  ", ", ", ". ", "-", "\t", "/", "!"]


def random_text(rng: random.Random) -> str:
    words = rng.choices(VOCABULARY, k=rng.randint(0, 6))
    return "".join(w + rng.choice(SEPARATORS) for w in words).strip() if words else rng.choice(["", " ", ".,"])


@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_random_texts_equal_the_plain_formula(seed: int, lowercase: bool) -> None:
    rng = random.Random(seed)
    a = [random_text(rng) for _ in range(23)]
    b = [random_text(rng) for _ in range(17)] + a[:3]  # some identical strings
    expected = np.array([[reference_jaccard(x, y, lowercase) for y in b] for x in a])
    np.testing.assert_allclose(ours(a, b, lowercase), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("", "", 1.0),  # no words on either side: equal
        ("", "passive voice", 0.0),  # no words on one side
        ("...", "!", 1.0),  # punctuation only: no words
        ("passive voice", "passive voice", 1.0),  # identical
        ("passive voice", "brand name", 0.0),  # disjoint
        ("passive voice", "voice, passive!", 1.0),  # order and punctuation do not count
        ("voice voice voice", "voice", 1.0),  # sets: repeats do not count
        ("passive voice", "Passive voice", 1 / 3),  # case counts: {passive, voice} vs {Passive, voice}
        ("use passive voice", "avoid passive voice", 2 / 4),
    ],
)
def test_edge_cases_by_hand(a: str, b: str, expected: float) -> None:
    assert ours([a], [b])[0, 0] == pytest.approx(expected, abs=1e-15)
    assert reference_jaccard(a, b) == pytest.approx(expected, abs=1e-15)


def test_lowercase_takes_effect() -> None:
    assert ours(["Passive Voice"], ["passive voice"])[0, 0] == 0.0
    assert ours(["Passive Voice"], ["passive voice"], lowercase=True)[0, 0] == 1.0


def test_no_pairs_is_an_empty_array() -> None:
    empty = np.empty(0, dtype=np.int64)
    assert jaccard_similarity()(["a"], ["b"], empty, empty).shape == (0,)


# ---------------------------------------------------------------------------------------------- end to end
DOC = "abcdefghijklmnopqrstuvwxyz0123"


def v(span, rule, correction="receive"):
    return {"span": span, "rule": rule, "category": "c", "explanation": "Misspelt word.", "correction": correction}


def test_std_match_score_uses_the_word_iou_of_the_rules() -> None:
    preds = [[v([0, 10], "use the passive voice")]]
    refs = [[v([0, 10], "passive voice")]]
    # text IoU 1; rule jaccard {use, the, passive, voice} vs {passive, voice} = 2/4 -> 0.5 + 0.5 * 0.5 = 0.75
    expected = 0.5 * 1 + 0.5 * reference_jaccard("use the passive voice", "passive voice")
    assert expected == 0.75
    jaccard = get_metric("std_match_score", {"similarity": "jaccard"}).compute(preds, refs, [DOC])
    assert jaccard.value == pytest.approx(expected, abs=1e-15)
    assert jaccard.details["similarity"] == "jaccard"
    fuzz = get_metric("std_match_score").compute(preds, refs, [DOC])
    assert fuzz.value != pytest.approx(expected)  # the option takes effect: rapidfuzz scores the rules otherwise


def test_ha_explanations_and_corrections_are_jaccard_too() -> None:
    preds = [[v([0, 10], "spelling", correction="we receive it")]]
    refs = [[v([0, 10], "spelling", correction="they receive it")]]
    # text 1, rule 1, category 1, explanation 1, correction {we, receive, it} vs {they, receive, it} = 2/4
    score = get_metric("ha_match_score", {"similarity": "jaccard"}).compute(preds, refs, [DOC])
    assert score.value == pytest.approx(0.3 + 0.3 + 0.1 + 0.2 + 0.1 * 0.5, abs=1e-15)


def test_disjoint_rule_words_fail_the_rule_threshold() -> None:
    preds = [[v([0, 10], "passive voice")]]
    refs = [[v([0, 10], "brand name")]]
    # rapidfuzz finds shared letters (similarity > 0.01) and, with text IoU 1, a match; jaccard 0 does not pass
    assert get_metric("std_tp").compute(preds, refs, [DOC]).value == 1
    metric = get_metric("std_tp", {"similarity": "jaccard", "weights": {"text": 0.9, "rule": 0.1}})
    assert metric.compute(preds, refs, [DOC]).value == 0


def test_lowercase_takes_effect_through_the_metric() -> None:
    preds = [[v([0, 10], "Passive Voice")]]
    refs = [[v([0, 10], "passive voice")]]
    assert (
        get_metric("std_tp", {"similarity": "jaccard", "weights": {"text": 0.9, "rule": 0.1}})
        .compute(preds, refs, [DOC])
        .value
        == 0
    )
    lowered = get_metric("std_match_score", {"similarity": "jaccard", "lowercase": True}).compute(preds, refs, [DOC])
    assert lowered.value == 1.0 and lowered.details["similarity"] == "jaccard:lowercase"


def test_many_documents_equal_the_plain_formula() -> None:
    """Random rules over many documents of one shape (the broadcast path): each matched pair's score is
    0.5 * span IoU + 0.5 * the reference Jaccard of its rules."""
    rng = random.Random(7)
    preds, refs = [], []
    for _ in range(40):
        preds.append([v([0, 10], random_text(rng)) for _ in range(3)])
        refs.append([v([0, 10], random_text(rng)) for _ in range(3)])
    matching = match_violations(preds, refs, [DOC] * 40, preset="std", similarity="jaccard")
    assert len(matching.score) > 0
    for d, p, g, s in zip(matching.doc, matching.pred, matching.truth, matching.score, strict=True):
        rule = reference_jaccard(preds[d][p]["rule"], refs[d][g]["rule"])
        assert s == pytest.approx(0.5 + 0.5 * rule, abs=1e-15)


def test_an_unknown_similarity_is_one_line() -> None:
    with pytest.raises(ValueError, match="similarity"):
        get_metric("std_f1", {"similarity": "jacard"})

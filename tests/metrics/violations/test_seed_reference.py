"""The matching against a plain implementation written from seed 002's formulas, on many random documents whose
violations share categories, rules and explanations and whose spans overlap: the cases where a batch repeats a
string are the ones a shortcut in the kernels can get wrong."""

from __future__ import annotations

import numpy as np
import pytest
from rapidfuzz import fuzz

from olive_eval.metrics import get_metric
from olive_eval.metrics.violations.metrics import PRESETS, match_violations

TEXT = "The report was written by the team in a hurry, and it shows in every line of it."
PARTS = ("text", "rule", "category", "explanation", "correction")


def seed_matching(preds: list[dict], truths: list[dict], weights: dict[str, float]) -> list[tuple[int, int, float]]:
    """Seed 002, literally, for one document: every pair's parts (IoU of the character sets, rule similarity,
    category equality, explanation and correction similarity), the weighted score, the three strict thresholds
    (IoU > 0, rule > 0.01, score > 0.5), then the best remaining pair first, one to one (ties: the lower
    prediction, then the lower ground truth). The matched pairs ``(prediction, truth, score)`` in that order."""
    candidates = []
    for i, p in enumerate(preds):
        for j, g in enumerate(truths):
            a, b = set(range(*p["span"])), set(range(*g["span"]))
            part = {
                "text": len(a & b) / len(a | b) if a | b else 0.0,
                "rule": fuzz.ratio(p["rule"], g["rule"]) / 100,
                "category": 1.0 if p["category"] == g["category"] else 0.0,
                "explanation": fuzz.ratio(p["explanation"], g["explanation"]) / 100,
                "correction": fuzz.ratio(p["correction"], g["correction"]) / 100,
            }
            score = sum(weights.get(name, 0.0) * part[name] for name in PARTS)
            if part["text"] > 0 and part["rule"] > 0.01 and score > 0.5:
                candidates.append((score, i, j))
    matched, used_p, used_g = [], set(), set()
    for score, i, j in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        if i not in used_p and j not in used_g:
            matched.append((i, j, score))
            used_p.add(i)
            used_g.add(j)
    return matched


def random_document(rng: np.random.Generator) -> tuple[list[dict], list[dict]]:
    """Predictions and ground truths from small vocabularies (so categories, rules and explanations repeat within
    a document and across the batch), with spans in one short stretch of the text (so they overlap)."""
    rules = ["passive voice", "Passive voice", "spelling", "wordiness"]
    categories = ["style", "grammar", "g"]
    explanations = ["Passive construction.", "Misspelt word.", "Too many words.", ""]
    corrections = ["the team wrote", "receive", "shorter", "c"]

    def violation() -> dict:
        start = int(rng.integers(0, 20))
        return {
            "span": [start, start + int(rng.integers(1, 15))],
            "rule": str(rng.choice(rules)),
            "category": str(rng.choice(categories)),
            "explanation": str(rng.choice(explanations)),
            "correction": str(rng.choice(corrections)),
        }

    return [violation() for _ in range(rng.integers(0, 5))], [violation() for _ in range(rng.integers(0, 5))]


@pytest.mark.parametrize("batch", [1, 2, 3, 7, 40, 2000])  # small batches: no string dedupe; large: dedupe
def test_random_documents_match_as_the_seed_s_formulas_say(batch: int) -> None:
    rng = np.random.default_rng(29)
    documents = [random_document(rng) for _ in range(2000)]
    for preset, weights in PRESETS.items():
        for first in range(0, len(documents), batch):
            chunk = documents[first : first + batch]
            preds, truths = [d[0] for d in chunk], [d[1] for d in chunk]
            got = match_violations(preds, truths, [TEXT] * len(chunk), preset=preset)
            for k, (p, g) in enumerate(chunk):
                expected = seed_matching(p, g, weights)
                at = got.doc == k
                pairs = list(zip(got.pred[at].tolist(), got.truth[at].tolist(), strict=True))
                assert pairs == [(i, j) for i, j, _ in expected], (preset, first + k)
                assert got.score[at].tolist() == pytest.approx([s for _, _, s in expected], abs=1e-12)
                tp = len(expected)
                assert got.counts[k].tolist() == pytest.approx(
                    [tp, len(p) - tp, len(g) - tp, sum(s for _, _, s in expected)], abs=1e-12
                )


V = {"span": [0, 3], "rule": "r", "category": "g", "explanation": "e", "correction": "c"}


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_equal_violations_in_every_document_score_1(k: int) -> None:
    text = "abcdefghij"
    score = get_metric("ha_match_score").compute([[V]] * k, [[V]] * k, [text] * k).value
    assert score == pytest.approx(1.0, abs=1e-15)  # 0.3 + 0.3 + 0.1 + 0.2 + 0.1 in floating point


def test_a_ground_truth_sharing_its_category_with_another_still_matches() -> None:
    text = "abcdefghijklmnopqrstuvwxyz"
    pred = [{**V, "span": [0, 10], "explanation": "x", "correction": "ab"}]
    truths = [{**V, "span": [5, 15], "explanation": "y", "correction": "ac"}, {**V, "span": [20, 25]}]
    # [0,10) and [5,15): IoU 5/15; rule and category equal; explanations "x"/"y" 0; corrections "ab"/"ac": one
    # Indel substitution, 1 - 2/4 = 0.5. Score 0.3 / 3 + 0.3 + 0.1 + 0 + 0.1 * 0.5 = 0.55 > 0.5: a match (with the
    # category read as 0 it would be 0.45, no match).
    assert seed_matching(pred, truths, PRESETS["ha"]) == [(0, 0, pytest.approx(0.55, abs=1e-15))]
    assert get_metric("ha_tp").compute([pred], [truths], [text]).value == 1
    assert get_metric("ha_match_score").compute([pred], [truths], [text]).value == pytest.approx(0.55, abs=1e-15)

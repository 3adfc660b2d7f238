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


@pytest.fixture(scope="module")
def seeded() -> tuple[list[tuple[list[dict], list[dict]]], dict[str, list[list[tuple[int, int, float]]]]]:
    """The random documents and seed 002's matching of each, per preset: the same for every batch size, so made
    once for the module."""
    rng = np.random.default_rng(29)
    documents = [random_document(rng) for _ in range(2000)]
    expected = {preset: [seed_matching(p, g, weights) for p, g in documents] for preset, weights in PRESETS.items()}
    return documents, expected


def first_bad(*checks: np.ndarray) -> int | None:
    """The first position where any check is false, or None."""
    bad = np.flatnonzero(~np.logical_and.reduce(checks)) if len(checks[0]) else []
    return int(bad[0]) if len(bad) else None


@pytest.mark.parametrize("batch", [1, 2, 3, 7, 40, 2000])  # small batches: no string dedupe; large: dedupe
def test_random_documents_match_as_the_seed_s_formulas_say(seeded, batch: int) -> None:
    """Each document's matched pairs in the seed's order, their scores and counts (to 1e-12): checked for a whole
    chunk at once, the pairs of its documents laid end to end in document order."""
    documents, expected_by_preset = seeded
    for preset, expected_all in expected_by_preset.items():
        for first in range(0, len(documents), batch):
            chunk = documents[first : first + batch]
            expected = expected_all[first : first + batch]
            preds, truths = [d[0] for d in chunk], [d[1] for d in chunk]
            got = match_violations(preds, truths, [TEXT] * len(chunk), preset=preset)
            order = np.argsort(got.doc, kind="stable")  # by document, each document's pairs in their order
            want = [(k, i, j, s) for k, pairs in enumerate(expected) for i, j, s in pairs]
            want_doc, want_pred, want_truth, want_score = (
                (np.array(c) for c in zip(*want, strict=True)) if want else [np.zeros(0)] * 4
            )
            assert len(order) == len(want), (preset, first)
            bad = first_bad(
                got.doc[order] == want_doc,
                got.pred[order] == want_pred,
                got.truth[order] == want_truth,
                np.abs(got.score[order] - want_score) <= 1e-12,
            )
            assert bad is None, (preset, first + int(want_doc[bad]))
            tp = np.array([len(e) for e in expected], dtype=np.float64)
            counts = np.column_stack([
                tp,
                [len(p) for p, _ in chunk] - tp,
                [len(g) for _, g in chunk] - tp,
                [sum(s for _, _, s in e) for e in expected],
            ])  # fmt: skip
            bad = first_bad(np.all(np.abs(got.counts - counts) <= 1e-12, axis=1))
            assert got.counts.shape == counts.shape and bad is None, (preset, first + (bad or 0))


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

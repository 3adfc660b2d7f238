"""The violation kernels against independent references: sets of character positions for IoU, rapidfuzz itself for
the similarities, a sequential greedy and a brute force over every one-to-one assignment for the matching."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from rapidfuzz import fuzz
from rapidfuzz.distance import Indel

from olive_eval.metrics.violations.greedy import greedy_match
from olive_eval.metrics.violations.inputs import flatten
from olive_eval.metrics.violations.kernels import overlapping_pairs, rapidfuzz_similarity, span_iou
from olive_eval.metrics.violations.similarity import fuzz_similarity


def test_span_iou_is_the_jaccard_index_of_the_character_positions() -> None:
    rng = np.random.default_rng(0)
    a = np.sort(rng.integers(0, 30, size=(500, 2)), axis=1)
    b = np.sort(rng.integers(0, 30, size=(500, 2)), axis=1)
    got = span_iou(a[:, 0], a[:, 1], b[:, 0], b[:, 1])
    for (s1, e1), (s2, e2), value in zip(a, b, got, strict=True):
        x, y = set(range(s1, e1)), set(range(s2, e2))
        expected = len(x & y) / len(x | y) if x | y else 0.0
        assert value == pytest.approx(expected, abs=1e-15)


def test_overlapping_pairs_are_those_of_a_loop_over_every_pair() -> None:
    rng = np.random.default_rng(4)
    texts = ["x" * 40] * 30
    n_pred, n_truth = rng.integers(0, 4, 30), rng.integers(0, 4, 30)
    spans = lambda n: [[sorted(rng.integers(0, 41, 2).tolist()) for _ in range(k)] for k in n]  # noqa: E731
    pred_spans, truth_spans = spans(n_pred), spans(n_truth)
    pred = flatten([[{"span": s, "rule": "r"} for s in d] for d in pred_spans], texts, "prediction", ())
    truth = flatten([[{"span": s, "rule": "r"} for s in d] for d in truth_spans], texts, "reference", ())
    for above in (0.0, 0.3, -1.0):
        doc, p, g, iou = overlapping_pairs(pred, truth, above)
        expected = []
        for d in range(30):
            for i, a in enumerate(pred_spans[d]):
                for j, b in enumerate(truth_spans[d]):
                    value = span_iou(np.array([a[0]]), np.array([a[1]]), np.array([b[0]]), np.array([b[1]]))[0]
                    if value > above:
                        expected.append((d, pred.offsets[d] + i, truth.offsets[d] + j, value))
        got = list(zip(doc.tolist(), p.tolist(), g.tolist(), iou.tolist(), strict=True))
        assert got == expected


WORDS = ["passive voice", "Passive voice", "spelling", "speling", "banned word", "", "wordiness", "word"]


@pytest.mark.parametrize("pairs", [3, 200])  # few pairs: per-pair cpdist; many: the matrix of distinct strings
def test_rapidfuzz_similarity_is_rapidfuzz_ratio_over_100(pairs: int) -> None:
    rng = np.random.default_rng(1)
    ia, ib = rng.integers(0, len(WORDS), pairs), rng.integers(0, len(WORDS), pairs)
    got = fuzz_similarity()(WORDS, WORDS, ia, ib)
    for i, j, value in zip(ia, ib, got, strict=True):
        assert value == fuzz.ratio(WORDS[i], WORDS[j]) / 100
        assert value == pytest.approx(Indel.normalized_similarity(WORDS[i], WORDS[j]), abs=1e-12)


def test_other_scorers_and_lowercase_are_rapidfuzz_s() -> None:
    ia, ib = np.array([0, 2, 4]), np.array([1, 3, 7])
    got = fuzz_similarity("token_sort_ratio", lowercase=True)(WORDS, WORDS, ia, ib)
    from rapidfuzz.utils import default_process

    expected = [
        fuzz.token_sort_ratio(WORDS[i], WORDS[j], processor=default_process) / 100 for i, j in zip(ia, ib, strict=True)
    ]
    assert got.tolist() == expected
    assert got[0] == 1.0  # "passive voice" vs "Passive voice" once lowercased
    assert rapidfuzz_similarity(fuzz.ratio, 100.0)(WORDS, WORDS, np.array([], int), np.array([], int)).size == 0


# ------------------------------------------------------------------------------------------------ greedy
def sequential_greedy(rows: np.ndarray, cols: np.ndarray, scores: np.ndarray) -> set[int]:
    """The seed's loop, literally: take the best remaining pair (ties: lower row, then lower column), drop its row
    and column, repeat."""
    taken, used_r, used_c = set(), set(), set()
    for k in sorted(range(len(scores)), key=lambda k: (-scores[k], rows[k], cols[k])):
        if rows[k] not in used_r and cols[k] not in used_c:
            taken.add(k)
            used_r.add(rows[k])
            used_c.add(cols[k])
    return taken


def brute_force(rows: np.ndarray, cols: np.ndarray, scores: np.ndarray) -> set[int]:
    """Over every one-to-one assignment of the pairs: the one whose pairs, listed best first by (score desc, row, col),
    come first lexicographically (a longer list wins a tie on its prefix). The greedy's matching is that one."""
    key = {k: (-scores[k], rows[k], cols[k]) for k in range(len(scores))}
    best: tuple | None = None
    best_set: set[int] = set()
    for r in range(len(scores) + 1):
        for subset in itertools.combinations(range(len(scores)), r):
            if len({rows[k] for k in subset}) < r or len({cols[k] for k in subset}) < r:
                continue
            listed = tuple(sorted(key[k] for k in subset))
            if best is None or _better(listed, best):
                best, best_set = listed, set(subset)
    return best_set


def _better(a: tuple, b: tuple) -> bool:
    for x, y in zip(a, b, strict=False):
        if x != y:
            return x < y
    return len(a) > len(b)


def _random_pairs(rng: np.random.Generator, n_rows: int, n_cols: int, density: float, levels: int):
    """A random bipartite set of pairs with few distinct scores, so ties are common."""
    mask = rng.random((n_rows, n_cols)) < density
    rows, cols = np.nonzero(mask)
    scores = rng.integers(1, levels + 1, len(rows)) / levels
    return rows, cols, scores


def test_greedy_matches_the_sequential_loop_and_the_brute_force_with_ties() -> None:
    rng = np.random.default_rng(2)
    for _ in range(300):
        rows, cols, scores = _random_pairs(rng, int(rng.integers(1, 5)), int(rng.integers(1, 5)), 0.7, 3)
        got = set(greedy_match(rows, cols, scores).tolist())
        assert got == sequential_greedy(rows, cols, scores)
        if len(scores) <= 10:
            assert got == brute_force(rows, cols, scores)


def test_greedy_on_many_documents_at_once_matches_each_alone() -> None:
    rng = np.random.default_rng(3)
    rows, cols, scores, offset_r, offset_c = [], [], [], 0, 0
    for _ in range(50):
        r, c, s = _random_pairs(rng, 6, 5, 0.5, 4)
        rows.append(r + offset_r)
        cols.append(c + offset_c)
        scores.append(s)
        offset_r, offset_c = offset_r + 6, offset_c + 5
    rows, cols, scores = map(np.concatenate, (rows, cols, scores))
    assert set(greedy_match(rows, cols, scores).tolist()) == sequential_greedy(rows, cols, scores)


def test_greedy_ties_go_to_the_lower_prediction_then_the_lower_ground_truth() -> None:
    # one ground truth, two predictions with the same score: prediction 0 takes it
    assert greedy_match(np.array([1, 0]), np.array([0, 0]), np.array([0.8, 0.8])).tolist() == [1]
    # one prediction, two ground truths with the same score: ground truth 0
    assert greedy_match(np.array([0, 0]), np.array([1, 0]), np.array([0.8, 0.8])).tolist() == [1]
    assert greedy_match(np.array([], int), np.array([], int), np.array([])).tolist() == []


@pytest.mark.parametrize("dense", [0.0, 2.0])  # every field a document at a time, or pair by pair
def test_free_text_gives_the_same_values_a_document_at_a_time_or_pair_by_pair(monkeypatch, dense: float) -> None:
    from olive_eval.metrics.violations import kernels

    monkeypatch.setattr(kernels, "DENSE", dense)
    rng = np.random.default_rng(5)
    texts = ["y" * 50] * 40
    words = [w for w in WORDS if w] + ["spellings", "banned words", "voice"]

    def side(n: int) -> list[list[dict]]:
        return [
            [{"span": sorted(rng.integers(0, 51, 2).tolist()), "rule": str(rng.choice(words)),
              "explanation": f"{rng.choice(words)} {i}"} for i in range(rng.integers(0, 5))]
            for _ in range(n)
        ]  # fmt: skip

    pred = flatten(side(40), texts, "prediction", ("explanation",))
    truth = flatten(side(40), texts, "reference", ("explanation",))
    doc, p, g, _ = overlapping_pairs(pred, truth, -1.0)
    got = kernels._text_part(pred, truth, "explanation", (doc, p, g), fuzz_similarity())
    a, b = pred.texts["explanation"], truth.texts["explanation"]
    assert got.tolist() == [fuzz.ratio(a[i], b[j]) / 100 for i, j in zip(p.tolist(), g.tolist(), strict=True)]


def test_greedy_by_document_is_greedy_match_on_small_and_large_documents(monkeypatch) -> None:
    from olive_eval.metrics.violations import greedy as kernels
    from olive_eval.metrics.violations.inputs import Violations

    rng = np.random.default_rng(6)
    n_pred, n_truth = rng.integers(0, 7, 200), rng.integers(0, 7, 200)
    n_pred[:3], n_truth[:3] = 30, 25  # larger than SMALL: through greedy_match
    offsets = lambda n: np.concatenate([[0], np.cumsum(n)])  # noqa: E731
    empty = np.zeros(0, dtype=np.int64)
    pred = Violations(offsets(n_pred), empty, empty, {})
    truth = Violations(offsets(n_truth), empty, empty, {})
    doc, p, g = [], [], []
    for d in range(200):
        for i in range(n_pred[d]):
            for j in range(n_truth[d]):
                if rng.random() < 0.6:
                    doc.append(d), p.append(pred.offsets[d] + i), g.append(truth.offsets[d] + j)
    doc, p, g = map(np.array, (doc, p, g))
    scores = rng.integers(1, 4, len(doc)) / 4  # many ties
    expected = greedy_match(p, g, scores).tolist()
    assert kernels.greedy_by_document(doc, p, g, scores, pred, truth).tolist() == expected
    monkeypatch.setattr(kernels, "SMALL", 10**9)  # every document as arrays
    assert kernels.greedy_by_document(doc, p, g, scores, pred, truth).tolist() == expected

"""The matching's C form (_matching.c: overlaps, string codes, the greedy) against its numpy form and a plain loop
written from seed 002: identical pairs, scores, parts and metric values on random data and on the edges (ties in
similarity, empty documents, one side empty, documents large enough for the greedy's sort path)."""

from __future__ import annotations

import numpy as np
import pytest

from olive_eval.metrics import get_metric
from olive_eval.metrics.violations import greedy, kernels, native
from olive_eval.metrics.violations.inputs import Violations, flatten
from olive_eval.metrics.violations.metrics import PRESETS, match_violations
from tests.metrics.violations.test_seed_reference import seed_matching

TEXT = "x" * 60
RULES = ["passive voice", "Passive voice", "spelling", "wordiness", "spelling"]  # equal strings: equal scores
WORDS = ["Passive construction.", "Misspelt word.", "Too many words.", "", "receive"]


def test_the_c_extension_is_built() -> None:
    assert native.matching_extension is not None


def _side(rng: np.random.Generator, n: int) -> list[dict]:
    out = []
    for _ in range(n):
        start = int(rng.integers(0, 30))
        out.append({
            "span": [start, start + int(rng.integers(0, 20))],  # empty spans too
            "rule": str(rng.choice(RULES)),
            "category": str(rng.choice(["style", "grammar"])),
            "explanation": str(rng.choice(WORDS)),
            "correction": str(rng.choice(WORDS)),
        })  # fmt: skip
    return out


def _batch(seed: int, docs: int = 120) -> tuple[list[list[dict]], list[list[dict]], list[str]]:
    rng = np.random.default_rng(seed)
    preds, refs = [], []
    for d in range(docs):
        if d % 10 == 0:  # large documents: more than 256 candidate pairs, the C greedy's sort path
            n_p, n_g = 30, 25
        else:
            n_p, n_g = int(rng.integers(0, 7)), int(rng.integers(0, 7))
        if d % 7 == 1:
            n_p = 0  # no predictions
        if d % 7 == 2:
            n_g = 0  # no ground truth
        preds.append(_side(rng, n_p))
        refs.append(_side(rng, n_g))
    preds.append(_side(rng, 3))  # a document whose predictions all equal its ground truths: every score ties
    refs.append([dict(v) for v in preds[-1]])
    return preds, refs, [TEXT] * len(preds)


def _fields(matching) -> dict[str, list]:
    return {name: getattr(matching, name).tolist() for name in ("counts", "doc", "pred", "truth", "score")} | {
        "parts": np.nan_to_num(matching.parts, nan=-9.0).tolist()
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("preset", ["std", "ha"])
def test_c_and_numpy_give_identical_matchings_and_the_seeds(monkeypatch, seed: int, preset: str) -> None:
    preds, refs, texts = _batch(seed)
    with_c = match_violations(preds, refs, texts, preset)
    monkeypatch.setattr(native, "matching_extension", None)
    without = match_violations(preds, refs, texts, preset)
    assert _fields(with_c) == _fields(without)
    by_doc = [[] for _ in preds]
    for d, s in zip(with_c.doc.tolist(), with_c.score.tolist(), strict=True):
        by_doc[d].append(s)
    for d, (p, g) in enumerate(zip(preds, refs, strict=True)):
        # Scores equal in exact arithmetic can round apart (0.7 against 0.7000000000000001: a dot product here, a
        # sum in the loop), so the pairs of such a tie may differ; the scores taken and their number may not.
        expected = seed_matching(p, g, PRESETS[preset])
        assert by_doc[d] == pytest.approx([s for *_, s in expected], abs=1e-12), d
    assert len(with_c.doc) > 200  # the batch has matches, in large and small documents


@pytest.mark.parametrize("output", ["tp", "fp", "fn", "precision", "recall", "f1", "match_score"])
def test_c_and_numpy_give_identical_metric_values(monkeypatch, output: str) -> None:
    preds, refs, texts = _batch(3)
    for preset in ("std", "ha"):
        name = f"{preset}_{output}"
        with_c = get_metric(name).compute(preds, refs, texts).value
        monkeypatch.setattr(native, "matching_extension", None)
        assert get_metric(name).compute(preds, refs, texts).value == with_c
        monkeypatch.undo()


def test_one_side_empty_or_no_documents_in_both_forms(monkeypatch) -> None:
    for extension in (native.matching_extension, None):
        monkeypatch.setattr(native, "matching_extension", extension)
        got = match_violations([[], [], []], [_side(np.random.default_rng(0), 2), [], []], [TEXT] * 3, "ha")
        assert got.counts.tolist() == [[0, 0, 2, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
        got = match_violations([_side(np.random.default_rng(1), 4)], [[]], [TEXT], "std")
        assert got.counts.tolist() == [[0, 4, 0, 0]] and len(got.doc) == 0
        assert match_violations([], [], [], "std").counts.shape == (0, 4)


def _violations(seed: int) -> tuple[Violations, Violations]:
    preds, refs, texts = _batch(seed)
    return flatten(preds, texts, "prediction", ("rule",)), flatten(refs, texts, "reference", ("rule",))


@pytest.mark.parametrize("above", [-1.0, 0.0, 0.25, 1.0])
def test_overlaps_in_c_and_numpy_are_a_loop_over_every_pair(monkeypatch, above: float) -> None:
    pred, truth = _violations(4)
    expected = []
    for d in range(len(pred.offsets) - 1):
        for i in range(pred.offsets[d], pred.offsets[d + 1]):
            for j in range(truth.offsets[d], truth.offsets[d + 1]):
                a = set(range(pred.starts[i], pred.ends[i]))
                b = set(range(truth.starts[j], truth.ends[j]))
                iou = len(a & b) / len(a | b) if a | b else 0.0
                if iou > above:
                    expected.append((d, i, j, iou))
    got_c = [a.tolist() for a in kernels.overlapping_pairs(pred, truth, above)]
    monkeypatch.setattr(native, "matching_extension", None)
    got_numpy = [a.tolist() for a in kernels.overlapping_pairs(pred, truth, above)]
    assert got_c == got_numpy
    assert list(zip(*got_c, strict=True)) == expected


def test_codes_in_c_and_python_are_the_same_distinct_strings(monkeypatch) -> None:
    rng = np.random.default_rng(8)
    values = [f"rule {k}" for k in rng.integers(0, 6, 600).tolist()]  # few distinct: coded, not compared as-is
    values[5] = "never asked about"
    rows = rng.choice(np.delete(np.arange(600), 5), 900)
    got = kernels._codes(values, rows)
    monkeypatch.setattr(native, "matching_extension", None)
    expected = kernels._codes(values, rows)
    assert (got[0], got[1].tolist()) == (expected[0], expected[1].tolist())
    distinct = list(dict.fromkeys(values[r] for r in sorted(set(rows.tolist()))))  # first seen, by row
    assert got[0] == distinct and "never asked about" not in distinct
    assert got[1][5] == -1 and [got[0][got[1][r]] for r in rows.tolist()] == [values[r] for r in rows.tolist()]


def test_greedy_in_c_is_the_numpy_greedy_with_many_ties(monkeypatch) -> None:
    rng = np.random.default_rng(7)
    n_pred, n_truth = rng.integers(0, 8, 300), rng.integers(0, 8, 300)
    n_pred[:5], n_truth[:5] = 40, 30  # over 256 pairs: the sort path
    offsets = lambda n: np.concatenate([[0], np.cumsum(n)])  # noqa: E731
    empty = np.zeros(0, dtype=np.int64)
    pred, truth = Violations(offsets(n_pred), empty, empty, {}), Violations(offsets(n_truth), empty, empty, {})
    doc, p, g = [], [], []
    for d in range(300):
        for i in range(n_pred[d]):
            for j in range(n_truth[d]):
                if rng.random() < 0.7:
                    doc.append(d), p.append(pred.offsets[d] + i), g.append(truth.offsets[d] + j)
    doc, p, g = map(np.array, (doc, p, g))
    scores = rng.integers(1, 4, len(doc)) / 4
    shuffled = np.lexsort((rng.random(len(doc)), doc))  # each document's pairs out of (prediction, truth) order
    got = greedy.greedy_order(doc, p, g, scores, pred, truth).tolist()
    again = greedy.greedy_order(doc[shuffled], p[shuffled], g[shuffled], scores[shuffled], pred, truth)
    monkeypatch.setattr(native, "matching_extension", None)
    assert greedy.greedy_order(doc, p, g, scores, pred, truth).tolist() == got
    assert sorted(got) == greedy.greedy_match(p, g, scores).tolist()
    assert shuffled[again].tolist() == got
    again = greedy.greedy_order(doc[shuffled], p[shuffled], g[shuffled], scores[shuffled], pred, truth)
    assert shuffled[again].tolist() == got


def test_the_c_greedy_names_inconsistent_arrays() -> None:
    extension = native.matching_extension
    one = np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError, match="pred, truth and score must have one length"):
        extension.greedy(np.array([0, 2]), one, one, np.zeros(1))
    with pytest.raises(ValueError, match="offsets of both sides must have the same length"):
        extension.overlaps(np.array([0, 1]), one, one, np.array([0]), one, one, 0.0)

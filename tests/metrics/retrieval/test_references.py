"""The retrieval sub-types against ranx and pytrec_eval (trec_eval) in the same test, per query, on random queries
with tied scores, graded (and negative) relevance, short lists and queries with nothing relevant.

Ties: ours keep the candidates' order; trec_eval orders equal scores by doc id, descending, so the doc ids are
made to descend in the candidates' order. ranx's order of equal scores is its sort's (numba's quicksort, not
stable from 16 candidates on), so ranx is handed the same ranking with its ties broken explicitly (the scores
replaced by descending ranks, the order worked out here with Python's stable sort, independent of our kernels).

ranx is handed plain dicts (its ``evaluate``'s documented input, doc ids hashed), not ``Qrels``/``Run``, and runs
interpreted (``NUMBA_DISABLE_JIT``, set in ``tests/conftest.py``): numba's compile of its metrics cost 15-20 s per
fresh environment, the 51 cases take about 3 s as plain Python, and both give the same values. ranx runs once per
data set over every metric the cases name (``ranx_values``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import pytrec_eval
from ranx import evaluate

from olive_eval.metrics import get_metric

Run_ = dict[str, dict[str, float]]
Qrels_ = dict[str, dict[str, int]]


def _query(q: int) -> str:
    return f"q{q:04d}"


def lists_data(seed: int, n: int = 50, longest: int = 25) -> tuple[list[list[float]], list[list[int]], Run_, Qrels_]:
    """Aligned lists; candidate ``i``'s doc id descends with ``i`` (so trec_eval's ties follow the given order)."""
    rng = np.random.default_rng(seed)
    preds, refs, run, qrels = [], [], {}, {}
    for q in range(n):
        c = int(rng.integers(1, longest + 1))
        scores = (rng.integers(0, 5, c) / 4).tolist() if q % 5 else [0.5] * c  # ties everywhere; all tied
        grades = rng.choice([-1, 0, 0, 0, 1, 2, 3], c).tolist()
        ids = [f"d{999 - i:03d}" for i in range(c)]
        preds.append(scores)
        refs.append(grades)
        run[_query(q)] = dict(zip(ids, map(float, scores), strict=True))
        qrels[_query(q)] = dict(zip(ids, map(int, grades), strict=True))
    return preds, refs, run, qrels


def dicts_data(seed: int, n: int = 50) -> tuple[Run_, Qrels_]:
    """Runs keyed by doc id (given in descending id order) and qrels that judge some of the scored documents and
    some the model never scored."""
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(n):
        pool = [f"doc{j:03d}" for j in rng.choice(200, 40, replace=False)]
        scored = sorted(pool[: int(rng.integers(1, 30))], reverse=True)
        judged = [d for d in pool if rng.random() < 0.5] or pool[:1]
        run[_query(q)] = {d: float(rng.integers(0, 6) / 5) for d in scored}
        qrels[_query(q)] = {d: int(rng.choice([0, 0, 1, 2, 3])) for d in judged}
    return run, qrels


def ranx_run(run: Run_) -> Run_:
    """The same ranking with ties broken as ours are (the given order), as strictly decreasing scores."""
    out = {}
    for q, docs in run.items():
        ranked = sorted(docs.items(), key=lambda item: -item[1])  # Python's sort is stable: the given order
        out[q] = {doc: float(len(docs) - r) for r, (doc, _) in enumerate(ranked)}
    return out


def ranx_name(name: str, config: dict[str, Any]) -> str:
    base = {
        "ndcg": "ndcg_burges" if config.get("gain") == "exponential" else "ndcg",
        "mrr": "mrr",
        "recall_at_k": "recall",
        "precision_at_k": "precision",
        "map_at_k": "map",
    }[name]
    k = config.get("k")
    level = config.get("relevance_level")
    return base + (f"@{k}" if k else "") + (f"-l{level}" if level else "")


def trec_key(name: str, config: dict[str, Any]) -> tuple[str, str] | None:
    """trec_eval's measure (as pytrec_eval takes it) and its result key; None where it has none."""
    k = config.get("k")
    if name == "ndcg" and config.get("gain") != "exponential":
        return ("ndcg_cut." + str(k), f"ndcg_cut_{k}") if k else ("ndcg", "ndcg")
    if name == "mrr":
        return ("recip_rank", "recip_rank") if k is None else None
    measure = {"recall_at_k": "recall", "precision_at_k": "P", "map_at_k": "map_cut"}.get(name)
    return (f"{measure}.{k}", f"{measure}_{k}") if measure else None


def data(kind: str, seed: int) -> tuple[Run_, Qrels_]:
    """The run and qrels of :func:`lists_data` or :func:`dicts_data`."""
    return lists_data(seed)[2:] if kind == "lists" else dicts_data(seed)


@functools.cache
def ranx_values(kind: str, seed: int) -> dict[str, np.ndarray]:
    """ranx's per-query values (in sorted query order) of every metric the cases name, on one data set: one
    ``evaluate`` call per data set and process."""
    run, qrels = data(kind, seed)
    queries = sorted(qrels)  # ranx pairs a dict's queries by position: both in the same order
    ranked = ranx_run(run)
    names = sorted({ranx_name(n, c) for n, c in CASES})
    got = evaluate({q: qrels[q] for q in queries}, {q: ranked[q] for q in queries}, names, return_mean=False)
    return {m: np.asarray(v) for m, v in got.items()}


def references(name: str, config: dict[str, Any], kind: str, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-query values from ranx and (where trec_eval has the measure) pytrec_eval, in query order."""
    run, qrels = data(kind, seed)
    queries = sorted(qrels)
    by_ranx = ranx_values(kind, seed)[ranx_name(name, config)]
    trec = trec_key(name, config)
    if trec is None:
        return by_ranx, None
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {trec[0]}, relevance_level=config.get("relevance_level", 1))
    by_trec = evaluator.evaluate(run)
    assert sorted(by_trec) == queries  # trec_eval scored every query
    return by_ranx, np.array([by_trec[q][trec[1]] for q in queries])


CASES = [
    ("ndcg", {}),
    ("ndcg", {"k": 1}),
    ("ndcg", {"k": 3}),
    ("ndcg", {"k": 10}),
    ("ndcg", {"k": 40}),  # beyond every list
    ("ndcg", {"k": 5, "gain": "exponential"}),
    ("ndcg", {"gain": "exponential"}),
    ("mrr", {}),
    ("mrr", {"k": 3}),
    ("mrr", {"relevance_level": 2}),
    ("recall_at_k", {"k": 1}),
    ("recall_at_k", {"k": 5}),
    ("recall_at_k", {"k": 40}),
    ("recall_at_k", {"k": 5, "relevance_level": 2}),
    ("precision_at_k", {"k": 1}),
    ("precision_at_k", {"k": 5}),
    ("precision_at_k", {"k": 40}),  # divides by k, not by the list's length
    ("precision_at_k", {"k": 5, "relevance_level": 3}),
    ("map_at_k", {"k": 1}),
    ("map_at_k", {"k": 5}),
    ("map_at_k", {"k": 40}),
    ("map_at_k", {"k": 10, "relevance_level": 2}),
]


@pytest.mark.parametrize(("name", "config"), CASES)
def test_lists_equal_ranx_and_trec_eval(name: str, config: dict[str, Any]) -> None:
    seed = len(name) + (config.get("k") or 0)
    preds, refs, _, _ = lists_data(seed)
    metric = get_metric(name, config)
    ours = metric.statistics(preds, refs)
    by_ranx, by_trec = references(name, config, "lists", seed)
    np.testing.assert_allclose(ours, by_ranx, rtol=1e-12, atol=1e-15)
    if by_trec is not None:
        np.testing.assert_allclose(ours, by_trec, rtol=1e-12, atol=1e-15)
    assert metric.compute(preds, refs).value == pytest.approx(by_ranx.mean(), rel=1e-12)
    assert 0 < ours.mean() < 1 and (ours == 0).any()  # informative data: queries with nothing relevant score 0


@pytest.mark.parametrize(("name", "config"), CASES)
def test_dicts_equal_ranx_and_trec_eval(name: str, config: dict[str, Any]) -> None:
    """Doc ids on both sides: judged documents the model never scored count as relevant, never retrieved."""
    seed = 7 + len(name) + (config.get("k") or 0)
    run, qrels = dicts_data(seed)
    queries = sorted(qrels)
    ours = get_metric(name, config).statistics([run[q] for q in queries], [qrels[q] for q in queries])
    by_ranx, by_trec = references(name, config, "dicts", seed)
    np.testing.assert_allclose(ours, by_ranx, rtol=1e-12, atol=1e-15)
    if by_trec is not None:
        np.testing.assert_allclose(ours, by_trec, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("k", [2, 10, 90])  # the partition path (4k < candidates) and the full sort
def test_dense_array_with_many_ties_equals_trec_eval(k: int) -> None:
    """A ``[queries, candidates]`` array of 3 distinct scores: which tied candidates make the cut matters."""
    rng = np.random.default_rng(k)
    scores = rng.integers(0, 3, (200, 100)).astype(np.float64)
    grades = rng.integers(0, 3, (200, 100))
    ids = [f"d{999 - i:03d}" for i in range(100)]
    run = {_query(q): dict(zip(ids, scores[q].tolist(), strict=True)) for q in range(200)}
    qrels = {_query(q): dict(zip(ids, grades[q].tolist(), strict=True)) for q in range(200)}
    for name, trec in [("ndcg", f"ndcg_cut_{k}"), ("map_at_k", f"map_cut_{k}"), ("precision_at_k", f"P_{k}")]:
        measure = trec.rsplit("_", 1)[0] + "." + str(k)
        expected = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
        ours = get_metric(name, {"k": k}).statistics(scores, grades)
        np.testing.assert_allclose(ours, [expected[_query(q)][trec] for q in range(200)], rtol=1e-12, atol=1e-15)

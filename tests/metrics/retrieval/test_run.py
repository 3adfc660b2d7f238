"""The retrieval sub-types in a run: a PythonModel reranker scoring each query's candidates, the grades in the data
file's label column (lists of different lengths, or dicts keyed by doc id), values equal to ranx's, a bootstrap
interval on nDCG, a candidate with a paired goal, and a bad query named by its place in the data."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from ranx import evaluate

from olive_eval import evaluate as run_config
from tests.helpers import python_model_run, write_jsonl

# Scores: the grade plus a deterministic perturbation with ties; a reranker that is right more often than not.
MODEL = textwrap.dedent(
    """
    def scores(query, grades):
        return [g + ((query * 7 + j * 3) % 5) / 2 for j, g in enumerate(grades)]

    def load(model_path):
        def predict(batch):
            out = []
            bad = batch.get("bad", [False] * len(batch["query"]))
            for query, target, wrong in zip(batch["query"], batch["target"], bad):
                if isinstance(target, dict):
                    docs = sorted(d for d, g in target.items() if g is not None)
                    out.append(dict(zip(docs, scores(query, [target[d] for d in docs]))))
                else:
                    out.append(scores(query, list(target)) + ([0.0] if wrong else []))
            return out
        return predict

    def load_reversed(model_path):
        # every third query ranked upside down: a worse candidate
        base = load(model_path)
        return lambda batch: [
            [-x for x in s] if query % 3 == 0 else s for query, s in zip(batch["query"], base(batch))
        ]
    """
)


def scores(query: int, grades: list[int]) -> list[float]:
    return [g + ((query * 7 + j * 3) % 5) / 2 for j, g in enumerate(grades)]


def queries(n: int = 40) -> list[list[int]]:
    rng = np.random.default_rng(1)
    return [rng.integers(0, 3, int(rng.integers(3, 12))).tolist() for _ in range(n)]


def ranked(docs: list[str], values: list[float]) -> dict[str, float]:
    """The docs' ranking with ties in their given order (Python's sort is stable), as strictly decreasing scores:
    ranx's own order of ties is its sort's."""
    order = sorted(zip(docs, values, strict=True), key=lambda item: -item[1])
    return {doc: float(len(docs) - r) for r, (doc, _) in enumerate(order)}


def ranx_values(grades: list[list[int]], metric: str, sort_docs: bool = False) -> float:
    """ranx on the same ranking the model gave: candidates ``d0, d1, ...`` scored in order, or (``sort_docs``) the
    doc ids in sorted order, as the model orders a dict (``d10`` before ``d2``). Plain dicts, not ``Qrels``/``Run``,
    as in test_references.py (ranx runs interpreted there too); the values are the same."""
    run, qrels = {}, {}
    for q, g in enumerate(grades):
        docs = sorted(f"d{j}" for j in range(len(g))) if sort_docs else [f"d{j}" for j in range(len(g))]
        run[f"q{q:03d}"] = ranked(docs, scores(q, [g[int(d[1:])] for d in docs]))
        qrels[f"q{q:03d}"] = {f"d{j}": grade for j, grade in enumerate(g)}
    return float(evaluate(qrels, run, metric))


SUB_TYPES = [
    {"name": "ndcg", "priority": 1, "metric_config": {"k": 5}, "confidence_interval": {"n_resamples": 300}},
    {"name": "mrr"},
    {"name": "recall_at_k", "metric_config": {"k": 3}},
    {"name": "precision_at_k", "metric_config": {"k": 3, "relevance_level": 2}},
    {"name": "map_at_k", "metric_config": {"k": 10}},
]
RANX = {
    "ndcg": "ndcg@5",
    "mrr": "mrr",
    "recall_at_k": "recall@3",
    "precision_at_k": "precision@3-l2",
    "map_at_k": "map@10",
}


def write(folder: Path, rows: list[dict]) -> None:
    (folder / "models.py").write_text(MODEL)
    (folder / "loaded").write_text("")
    write_jsonl(folder / "d.jsonl", rows)


def test_lists_in_a_run_with_an_interval(tmp_path: Path) -> None:
    grades = queries()
    write(tmp_path, [{"query": q, "target": g} for q, g in enumerate(grades)])
    config = python_model_run(tmp_path, {"name": "rank", "sub_types": SUB_TYPES}, batch_size=7)
    result = run_config(config).models["m"].metrics
    for sub, name in RANX.items():
        assert result[f"rank-{sub}"].value == pytest.approx(ranx_values(grades, name), rel=1e-12), sub
    ndcg = result["rank-ndcg"]
    assert ndcg.ci_low < ndcg.value < ndcg.ci_high
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert written["models"]["m"]["metrics"]["rank-ndcg"]["value"] == pytest.approx(ndcg.value)


def test_dicts_in_a_run(tmp_path: Path) -> None:
    """A dict column of a JSON lines file: each row comes back with every row's keys, None where absent."""
    grades = queries()
    write(tmp_path, [{"query": q, "target": {f"d{j}": x for j, x in enumerate(g)}} for q, g in enumerate(grades)])
    config = python_model_run(tmp_path, {"name": "rank", "sub_types": SUB_TYPES[:3]}, batch_size=7)
    result = run_config(config).models["m"].metrics
    for sub in ("ndcg", "mrr", "recall_at_k"):
        assert result[f"rank-{sub}"].value == pytest.approx(ranx_values(grades, RANX[sub], True), rel=1e-12), sub


def test_a_candidate_with_a_paired_goal(tmp_path: Path) -> None:
    """A paired bootstrap over the same queries: the candidate's nDCG drop and its interval."""
    grades = queries()
    write(tmp_path, [{"query": q, "target": g} for q, g in enumerate(grades)])
    goal = {"type": "max-degradation", "value": 0.01, "confidence": 0.95, "n_resamples": 500}
    sub_types = [{"name": "ndcg", "priority": 1, "metric_config": {"k": 5}, "goal": goal}]
    config = python_model_run(tmp_path, {"name": "rank", "sub_types": sub_types}, batch_size=7)
    config["candidates"] = [{**config["input_model"], "name": "c", "model_loader": "load_reversed"}]
    result = run_config(config)
    base, cand = (result.models[m].metrics["rank-ndcg"] for m in ("m", "c"))
    assert cand.value < base.value
    assert cand.goal.change == pytest.approx(cand.value - base.value)
    assert cand.goal.change_ci_low < cand.goal.change < cand.goal.change_ci_high < 0
    assert not cand.goal.met


def test_a_bad_query_is_named_by_its_place_in_the_data(tmp_path: Path) -> None:
    grades = queries(20)
    write(tmp_path, [{"query": q, "target": g, "bad": q == 13} for q, g in enumerate(grades)])
    config = python_model_run(tmp_path, {"name": "rank", "sub_types": [{"name": "mrr"}]}, batch_size=6)
    error = run_config(config).models["m"].metrics["rank-mrr"].error
    assert error == (
        f"metric 'rank' cannot score the model output: mrr: query 13 has {len(grades[13]) + 1} candidate scores but "
        f"{len(grades[13])} relevance grades; give one grade per candidate, in the same order"
    )

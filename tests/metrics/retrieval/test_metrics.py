"""The retrieval sub-types on small cases worked out by hand, every option taking effect, and bad input refused
with one line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

import olive_eval
from olive_eval.metrics import get_metric
from olive_eval.metrics.retrieval.kernels import top_ranked
from olive_eval.testing import check_metric

L3 = np.log2(3.0)  # the discount of rank 2 is 1 / log2(3)

# One query: candidate 1 ranks first (grade 0), then candidate 2 (grade 2), then candidate 0 (grade 1).
SCORES, GRADES = [[0.1, 0.9, 0.5]], [[1, 0, 2]]

BY_HAND = [
    ("ndcg", {}, (2 / L3 + 1 / 2) / (2 + 1 / L3)),
    ("ndcg", {"k": 1}, 0.0),
    ("ndcg", {"k": 2}, (2 / L3) / (2 + 1 / L3)),
    ("ndcg", {"gain": "exponential"}, (3 / L3 + 1 / 2) / (3 + 1 / L3)),
    ("mrr", {}, 1 / 2),
    ("mrr", {"k": 1}, 0.0),
    ("mrr", {"relevance_level": 2}, 1 / 2),
    ("mrr", {"relevance_level": 3}, 0.0),  # nothing that relevant: 0
    ("precision_at_k", {"k": 2}, 1 / 2),
    ("precision_at_k", {"k": 5}, 2 / 5),  # k beyond the list still divides by k
    ("precision_at_k", {"k": 3, "relevance_level": 2}, 1 / 3),
    ("recall_at_k", {"k": 2}, 1 / 2),
    ("recall_at_k", {"k": 3}, 1.0),
    ("recall_at_k", {"k": 2, "relevance_level": 2}, 1.0),
    ("map_at_k", {"k": 3}, (1 / 2 + 2 / 3) / 2),
    ("map_at_k", {"k": 2}, (1 / 2) / 2),  # the relevant document below the cut still counts in the denominator
    ("map_at_k", {"k": 3, "relevance_level": 2}, 1 / 2),
]


@pytest.mark.parametrize(("name", "config", "expected"), BY_HAND)
def test_by_hand(name: str, config: dict[str, Any], expected: float) -> None:
    check_metric(name, SCORES, GRADES, metric_config=config, instance_targets=[expected], global_target=expected)


def test_ties_keep_the_candidates_order() -> None:
    assert olive_eval.compute_metric("mrr", [[0.5, 0.5, 0.5]], [[0, 0, 1]]) == pytest.approx(1 / 3)
    assert olive_eval.compute_metric("mrr", [[0.5, 0.5, 0.5]], [[1, 0, 0]]) == 1.0
    # the cut falls inside a tie: the first two tied candidates make the top 2
    assert olive_eval.compute_metric("precision_at_k", [[0.1, 0.5, 0.5, 0.5, 0.9]], [[1, 0, 0, 1, 0]], k=3) == 0.0
    assert olive_eval.compute_metric("precision_at_k", [[0.1, 0.5, 0.5, 0.5, 0.9]], [[1, 1, 0, 0, 0]], k=3) == 1 / 3


def test_dicts_by_hand() -> None:
    """b ranks 2nd; c is relevant but never scored; a is scored but never judged (grade 0)."""
    run, qrels = [{"a": 0.9, "b": 0.8}], [{"b": 1, "c": 1}]
    assert olive_eval.compute_metric("recall_at_k", run, qrels, k=2) == 1 / 2
    assert olive_eval.compute_metric("mrr", run, qrels) == 1 / 2
    assert olive_eval.compute_metric("map_at_k", run, qrels, k=2) == pytest.approx((1 / 2) / 2)
    assert olive_eval.compute_metric("ndcg", run, qrels) == pytest.approx((1 / L3) / (1 + 1 / L3))
    # None: the key is absent (a JSON lines file's dict column carries every row's keys)
    assert olive_eval.compute_metric("recall_at_k", run, [{"b": 1, "c": None}], k=2) == 1.0


def test_edge_cases_by_hand() -> None:
    # no relevant document: 0 from every measure, counted in the mean
    for name, config in [("ndcg", {}), ("mrr", {}), ("recall_at_k", {"k": 2}), ("map_at_k", {"k": 2})]:
        check_metric(name, [[0.3, 0.2], [0.3, 0.2]], [[0, 0], [1, 0]], metric_config=config, instance_targets=[0, 1])
    # a query with no candidates, and one shorter than k
    assert get_metric("precision_at_k", {"k": 3}).statistics([[], [0.3]], [[], [1]]).tolist() == [0, 1 / 3]
    # a negative grade gains nothing; one below the level is not relevant
    assert olive_eval.compute_metric("ndcg", [[2.0, 1.0]], [[-1, 1]]) == pytest.approx(1 / L3)
    assert olive_eval.compute_metric("mrr", [[2.0, 1.0]], [[-1, 1]]) == 1 / 2
    # fractional grades and a fractional level
    assert olive_eval.compute_metric("mrr", [[2.0, 1.0]], [[0.4, 0.6]], relevance_level=0.5) == 1 / 2
    # infinite scores rank like any other (in a pass; compute_metric refuses them in any prediction)
    assert get_metric("mrr").compute([[-np.inf, np.inf, 0.0]], [[1, 0, 0]]).value == 1 / 3


def test_lists_may_differ_in_length_between_queries() -> None:
    preds = [[0.2, 0.1], [0.1, 0.2, 0.3, 0.4], [0.9]]
    refs = [[0, 1], [1, 0, 0, 0], [1]]
    assert get_metric("mrr").statistics(preds, refs).tolist() == [1 / 2, 1 / 4, 1.0]
    arrays = get_metric("mrr").statistics([np.array(p) for p in preds], [np.array(r) for r in refs])
    assert arrays.tolist() == [1 / 2, 1 / 4, 1.0]


def test_k_takes_effect_on_random_data() -> None:
    rng = np.random.default_rng(3)
    scores, grades = rng.random((50, 30)), rng.integers(0, 3, (50, 30))
    for name in ("ndcg", "mrr", "recall_at_k", "precision_at_k", "map_at_k"):
        values = [get_metric(name, {"k": k}).compute(scores, grades).value for k in (1, 5, 30)]
        assert len(set(values)) == 3, name


def test_top_ranked_is_a_stable_descending_sort() -> None:
    """Every depth against numpy's lexsort, on rows of distinct scores (the fast paths) and rows of few distinct
    values padded with -inf (ties at the cut: the exact paths)."""
    rng = np.random.default_rng(0)
    scores = rng.random((300, 60))
    scores[::2] = rng.integers(0, 4, (150, 60))
    scores[::2][rng.random((150, 60)) < 0.2] = -np.inf
    full = np.lexsort((np.broadcast_to(np.arange(60), scores.shape), -scores), axis=1)
    for depth in (1, 2, 7, 14, 15, 16, 59, 60, 100, None):
        expected = full[:, : 60 if depth is None else min(depth, 60)]
        np.testing.assert_array_equal(top_ranked(scores, depth), expected, err_msg=str(depth))


def test_aggregation_takes_effect() -> None:
    preds, refs = [[0.9, 0.1]] * 3, [[1, 0], [1, 0], [0, 1]]
    assert get_metric("mrr").compute(preds, refs).value == pytest.approx(5 / 6)
    assert get_metric("mrr", aggregation="median").compute(preds, refs).value == 1.0


@pytest.mark.parametrize(
    ("name", "config", "message"),
    [
        ("recall_at_k", {}, "k\n  Field required"),
        ("precision_at_k", {"k": 0}, "greater than or equal to 1"),
        ("ndcg", {"k": 0}, "greater than or equal to 1"),
        ("mrr", {"relevance_level": 0}, "greater than 0"),
        ("ndcg", {"relevance_level": 2}, "unknown key; valid: gain, k"),  # nDCG gains every grade
        ("ndcg", {"gain": "exp"}, "'linear' or 'exponential'"),
    ],
)
def test_bad_config(name: str, config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        get_metric(name, config)


@pytest.mark.parametrize(
    ("preds", "refs", "message"),
    [
        (
            [[0.1, 0.2], [0.3, 0.2, 0.1]],
            [[1, 0], [1, 0]],
            "ndcg: query 1 has 3 candidate scores but 2 relevance grades; give one grade per candidate, in the same order",
        ),
        (np.zeros((2, 3)), np.zeros((2, 4)), "ndcg: query 0 has 3 candidate scores but 4 relevance grades"),
        ([[0.1, float("nan")]], [[1, 0]], "ndcg: query 0 has a score of nan at candidate 1; scores must be numbers"),
        ([[0.1, 0.2]], [[1, float("inf")]], "ndcg: query 0 has a relevance grade of inf at candidate 1"),
        ([[0.1, 0.2]], [[1, "high"]], "ndcg: query 0 has 'high' among its relevance grades; expected numbers"),
        ([0.3, 0.4], [[1], [0]], "ndcg: query 0 has 0.3 for its scores; expected a list with one number per candidate"),
        ([[0.1, 0.2]], ["relevant"], "ndcg: query 0 has 'relevant' for its relevance grades; expected a list"),
        ([{"a": 0.1}], [[1]], "ndcg: query 0 has a dict of scores but a list of grades; give both as lists aligned"),
        ([[0.1]], [{"a": 1}], "ndcg: query 0 has a list of scores but a dict of grades"),
        ([{"a": 0.1}, [0.2]], [{"a": 1}, {"a": 1}], r"ndcg: query 1 has \[0.2\] for its scores; expected a dict"),
        ([{"a": 0.1}], [{"a": "x"}], "ndcg: query 0 has 'x' for doc 'a' among its relevance grades; expected a number"),
        ([{"a": float("nan")}], [{"a": 1}], "ndcg: query 0 has nan for doc 'a' among its scores"),
        ([[0.1]], [[1], [0]], "ndcg: 1 predictions but 2 references"),
        ([[0.1]], None, "ndcg needs relevance grades: give the data config a label_col"),
    ],
)
def test_bad_input_is_one_line(preds: Any, refs: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        get_metric("ndcg").compute(preds, refs)
    assert "\n" not in str(info.value)


def test_errors_number_queries_across_batches() -> None:
    metric = get_metric("mrr")
    metric.statistics([[0.1, 0.2]] * 4, [[1, 0]] * 4)
    with pytest.raises(ValueError, match="mrr: query 5 has 1 candidate scores but 2 relevance grades"):
        metric.statistics([[0.1, 0.2], [0.3]], [[1, 0], [1, 0]])


def test_no_queries_is_undefined() -> None:
    score = get_metric("ndcg").compute([], [])
    assert np.isnan(score.value) and score.undefined == "no queries to score"

"""Every judged metric on the scripted judge (tests/metrics/judged/scripted.py), against scores computed by hand
from the seed's formulas: items are the text's pieces between ``|``, a verdict is "yes" for an item with ``+``."""

from __future__ import annotations

import numpy as np
import pytest

from olive_eval.judges import register_judge
from olive_eval.metrics.judged import kernels
from olive_eval.metrics.registry import get_metric
from tests.metrics.judged import scripted

register_judge("scripted")(scripted.judge)
JUDGE = {"judge": {"function": "scripted"}}


def score(name: str, *columns: list) -> tuple[float, np.ndarray]:
    metric = get_metric(name, JUDGE)
    stats = metric.statistics(*columns)
    return metric.reduce(stats).value, metric.instance_scores(stats)


def test_answer_correctness_is_the_statement_f1_best_over_the_references():
    value, each = score(
        "answer_correctness",
        ["A|B|C", "Q", "A|B"],
        [["A|B|D", "A|X"], "Z", ["A|B"]],
    )
    # ex0, reference "A|B|D": prediction A, B supported, C not -> tp 2, fp 1; reference D absent -> fn 1
    #   F1 = 2 / (2 + 0.5 * (1 + 1)) = 2/3
    # ex0, reference "A|X": A supported, B and C not -> tp 1, fp 2; X absent -> fn 1: 1 / (1 + 1.5) = 0.4
    #   the best: 2/3
    # ex1: Q not in Z -> tp 0 -> 0
    # ex2: tp 2, fp 0, fn 0 -> 1
    np.testing.assert_allclose(each, [2 / 3, 0.0, 1.0])
    assert value == pytest.approx((2 / 3 + 0 + 1) / 3)


def test_answer_relevance_is_relevant_statements_over_statements():
    value, each = score("answer_relevance", ["a+|b-|c+", "", "d+"], ["q1", "q2", "q3"])
    # 2 of 3 relevant; no statements -> 0; 1 of 1
    np.testing.assert_allclose(each, [2 / 3, 0.0, 1.0])
    assert value == pytest.approx(5 / 9)


def test_bias_is_biased_opinions_over_opinions_and_0_without_opinions():
    value, each = score("bias", ["o1+|o2-", "", "o3-|o4-|o5+|o6+"])
    # 1/2; none -> 0; 2/4
    np.testing.assert_allclose(each, [0.5, 0.0, 0.5])
    assert value == pytest.approx(1 / 3)


def test_toxicity_is_toxic_opinions_over_opinions_and_0_without_opinions():
    value, each = score("toxicity", ["t+", "t-|u-", ""])
    # 1/1; 0/2; none -> 0
    np.testing.assert_allclose(each, [1.0, 0.0, 0.0])
    assert value == pytest.approx(1 / 3)


def test_faithfulness_is_implied_claims_over_claims():
    value, each = score("faithfulness", ["k1+|k2+|k3-", ""], [["ctx one", "ctx two"], "ctx three"])
    # 2 of 3 claims implied; no claims -> 1 (documented: no claim is unfaithful)
    np.testing.assert_allclose(each, [2 / 3, 1.0])
    assert value == pytest.approx(5 / 6)


def test_hallucination_is_contradicted_contexts_over_contexts():
    value, each = score("hallucination", ["p1", "p2", "p3"], [["c+", "d-", "e-", "f+"], ["g-"], "h+"])
    # 2 of 4 contradicted; 0 of 1; a single context as a string: 1 of 1
    np.testing.assert_allclose(each, [0.5, 0.0, 1.0])
    assert value == pytest.approx(0.5)


def test_context_relevance_is_relevant_contexts_over_contexts():
    value, each = score("context_relevance", ["q1", "q2"], [["r+", "s-", "t-"], ["u+", "v+"]])
    # 1/3; 2/2
    np.testing.assert_allclose(each, [1 / 3, 1.0])
    assert value == pytest.approx(2 / 3)


def test_context_precision_is_the_mean_precision_at_k_of_the_useful_contexts():
    value, each = score(
        "context_precision",
        ["q1", "q2", "q3"],
        [["Paris", "Lyon"], "Rome", "Oslo"],
        [["Paris is here", "nothing", "nope", "Lyon is there"], ["x", "Rome here", "y", "Rome again"], ["a", "b"]],
    )
    # ex0: Paris gives [y n n n], Lyon [n n n y]; a context is useful for any reference: [y n n y]
    #   precision@1 = 1, precision@4 = 2/4 -> (1 + 0.5) / 2 = 0.75 (the seed's example)
    # ex1: [n y n y]: precision@2 = 1/2, precision@4 = 2/4 -> (0.5 + 0.5) / 2 = 0.5 (the seed's second example)
    # ex2: no useful context -> 0
    np.testing.assert_allclose(each, [0.75, 0.5, 0.0])
    assert value == pytest.approx(1.25 / 3)


def test_context_recall_is_attributable_reference_statements_best_over_the_references():
    value, each = score("context_recall", [["s1+|s2-", "s3+|s4+|s5-"], "s6-"], [["c1"], ["c2", "c3"]])
    # ex0: 1/2 and 2/3 -> the best, 2/3; ex1: 0/1
    np.testing.assert_allclose(each, [2 / 3, 0.0])
    assert value == pytest.approx(1 / 3)


def test_summary_coherence_is_the_judges_rating():
    value, each = score("summary_coherence", ["a summary, coherence=4", "coherence=2"], ["source 1", "source 2"])
    np.testing.assert_allclose(each, [4.0, 2.0])
    assert value == pytest.approx(3.0)


def test_kernels_on_their_own():
    assert kernels.context_precision([True, False, False, True]) == 0.75
    assert kernels.context_precision([False, True, False, True]) == 0.5
    assert kernels.context_precision([False, False]) == 0.0
    assert kernels.correctness_f1([True, True, False], [True, True, False]) == pytest.approx(2 / 3)
    assert kernels.correctness_f1([False], [True]) == 0.0
    assert kernels.proportion([], 0.0) == 0.0 and kernels.proportion([], 1.0) == 1.0
    assert kernels.any_yes([[True, False], [False, False]]) == [True, False]


def test_the_direction_and_the_fields_of_each_metric():
    from olive_eval.metrics.base import metric_registry

    reads = {name: metric_registry.get(name).reads for name in ("faithfulness", "context_precision", "bias")}
    assert reads == {
        "faithfulness": ("prediction", "contexts"),
        "context_precision": ("query", "references", "contexts"),
        "bias": ("prediction",),
    }
    lower = [n for n in ("bias", "toxicity", "hallucination") if not metric_registry.get(n).higher_is_better]
    assert lower == ["bias", "toxicity", "hallucination"]

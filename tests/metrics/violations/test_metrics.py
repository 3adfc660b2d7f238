"""The std_ and ha_ sub-types on hand-computed cases from the seed's formulas, and their bad input.

Similarities are rapidfuzz's ``fuzz.ratio / 100`` = ``1 - (insertions + deletions) / (len(a) + len(b))``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from olive_eval.metrics import get_metric
from olive_eval.metrics.violations.metrics import match_violations

DOC = "abcdefghijklmnopqrstuvwxyz0123"  # 30 characters; spans below are offsets into it


def v(span, rule="spelling", category="spelling", explanation="Misspelt word.", correction="receive"):
    return {"span": span, "rule": rule, "category": category, "explanation": explanation, "correction": correction}


def value(name: str, preds, refs, texts=None, **config) -> float:
    texts = texts if texts is not None else [DOC] * len(preds)
    return get_metric(name, config).compute(preds, refs, texts).value


def test_one_pair_std_and_ha_by_hand() -> None:
    preds = [[v([0, 10], correction="recieve")]]
    refs = [[v([5, 15])]]
    # IoU: [0,10) & [5,15) = 5 characters, union 15 -> 1/3. rule "spelling" = "spelling" -> 1.
    # std = 0.5 * 1/3 + 0.5 * 1 = 2/3 > 0.5: a match.
    assert value("std_match_score", preds, refs) == pytest.approx(0.5 / 3 + 0.5, abs=1e-15)
    # correction "recieve" vs "receive": LCS 6 of 7 + 7 characters -> Indel distance 2 -> 1 - 2/14 = 6/7.
    # ha = 0.3 * 1/3 + 0.3 * 1 + 0.1 * 1 (category) + 0.2 * 1 (explanation) + 0.1 * 6/7 = 0.785714...
    assert value("ha_match_score", preds, refs) == pytest.approx(0.1 + 0.3 + 0.1 + 0.2 + 0.1 * 6 / 7, abs=1e-15)
    for preset in ("std", "ha"):
        assert [value(f"{preset}_{k}", preds, refs) for k in ("tp", "fp", "fn")] == [1, 0, 0]
        assert value(f"{preset}_f1", preds, refs) == 1.0


def test_the_rule_similarity_of_the_seed_example() -> None:
    text = "The report was written by the team."
    preds = [[v([0, 34], rule="passive voice")]]
    refs = [[v([4, 34], rule="Passive voice")]]
    # IoU 30/34; "passive voice" vs "Passive voice": one substitution = 2 Indel edits over 26 characters -> 12/13.
    assert value("std_match_score", preds, refs, [text]) == pytest.approx(0.5 * 30 / 34 + 0.5 * 12 / 13, abs=1e-15)


def test_counts_precision_recall_f1_over_documents() -> None:
    preds = [[v([0, 10]), v([20, 25])], [v([0, 5], rule="wordiness")], []]
    refs = [[v([0, 10])], [v([0, 5], rule="wordiness"), v([10, 12])], [v([3, 4])]]
    # doc 0: [0,10) matches (score 1); [20,25) overlaps nothing -> tp 1, fp 1, fn 0
    # doc 1: [0,5) wordiness matches (score 1); [10,12) missed -> tp 1, fp 0, fn 1
    # doc 2: nothing predicted -> tp 0, fp 0, fn 1.  Totals tp 2, fp 1, fn 2.
    assert value("std_precision", preds, refs) == pytest.approx(2 / 3)
    assert value("std_recall", preds, refs) == pytest.approx(2 / 4)
    assert value("std_f1", preds, refs) == pytest.approx(2 * 2 / (2 * 2 + 1 + 2))
    metric = get_metric("std_f1")
    stats = metric.statistics(preds, refs, [DOC] * 3)
    assert stats.tolist() == [[1, 1, 0, 1.0], [1, 0, 1, 1.0], [0, 0, 1, 0.0]]
    # per-document F1 (the instance scores): 2/3, 2/3, 0
    assert metric.instance_scores(stats) == pytest.approx([2 / 3, 2 / 3, 0.0])


def test_one_prediction_overlapping_two_ground_truths_takes_the_better() -> None:
    preds = [[v([0, 10])]]
    refs = [[v([0, 4]), v([4, 10])]]
    # IoU with [0,4): 4/10 -> score 0.5 * 0.4 + 0.5 = 0.7; with [4,10): 6/10 -> 0.8. The greedy takes 0.8.
    m = match_violations(preds, refs, [DOC], preset="std")
    assert (m.pred.tolist(), m.truth.tolist()) == ([0], [1])
    assert m.score.tolist() == pytest.approx([0.8])
    assert value("std_recall", preds, refs) == 0.5  # tp 1, fn 1
    assert value("std_f1", preds, refs) == pytest.approx(2 / 3)  # 2 * 1 / (2 * 1 + 0 + 1)


def test_the_greedy_is_not_the_best_assignment() -> None:
    preds = [[v([0, 8]), v([5, 10])]]
    refs = [[v([0, 10]), v([0, 5])]]
    # p0-g0: IoU 8/10 -> 0.9; p0-g1: 5/8 -> 0.8125; p1-g0: 5/10 -> 0.75; p1-g1: no overlap.
    # Greedy takes p0-g0 (0.9); p1's only candidate g0 is gone: tp 1, fp 1, fn 1 (two matches were possible).
    m = match_violations(preds, refs, [DOC], preset="std")
    assert list(zip(m.pred.tolist(), m.truth.tolist(), strict=True)) == [(0, 0)]
    assert [value(f"std_{k}", preds, refs) for k in ("tp", "fp", "fn")] == [1, 1, 1]


def test_ties_go_to_the_lower_prediction_then_the_lower_ground_truth() -> None:
    twins = match_violations([[v([0, 10]), v([0, 10])]], [[v([0, 10])]], [DOC], preset="std")
    assert (twins.pred.tolist(), twins.truth.tolist()) == ([0], [0])
    twins = match_violations([[v([0, 10])]], [[v([0, 10]), v([0, 10])]], [DOC], preset="std")
    assert (twins.pred.tolist(), twins.truth.tolist()) == ([0], [0])
    # 2 x 2 all tied at score 1: p0-g0, then p1-g1
    both = match_violations([[v([0, 10])] * 2], [[v([0, 10])] * 2], [DOC], preset="std")
    assert list(zip(both.pred.tolist(), both.truth.tolist(), strict=True)) == [(0, 0), (1, 1)]


def test_thresholds_are_strict() -> None:
    # adjacent spans: IoU 0 is not > 0, though the rule is the same (score 0.5 is not > 0.5 either)
    assert value("std_tp", [[v([0, 10])]], [[v([10, 20])]]) == 0
    # IoU 5/10 = 0.5; rule "ab" vs "ac": LCS 1 -> 1 - 2/4 = 0.5; score 0.5 * 0.5 + 0.5 * 0.5 = 0.5: not > 0.5
    preds, refs = [[v([0, 10], rule="ab")]], [[v([0, 5], rule="ac")]]
    assert value("std_tp", preds, refs) == 0
    assert value("std_tp", preds, refs, match_threshold=0.49) == 1
    # rule similarity 0 ("abc" vs "xyz") fails the rule threshold, whatever the score (text alone weighs 1 here)
    assert value("std_tp", [[v([0, 10], rule="abc")]], [[v([0, 10], rule="xyz")]], weights={"text": 1.0}) == 0
    # "abcd" vs "axyz": LCS 1 -> 1 - 6/8 = 0.25: a rule threshold of 0.25 is not passed, one of 0.24 is
    preds, refs = [[v([0, 10], rule="abcd")]], [[v([0, 10], rule="axyz")]]
    assert value("std_tp", preds, refs, weights={"text": 1.0}, rule_threshold=0.25) == 0
    assert value("std_tp", preds, refs, weights={"text": 1.0}, rule_threshold=0.24) == 1


def test_empty_predictions() -> None:
    preds, refs = [[], []], [[v([0, 5])], []]
    assert [value(f"ha_{k}", preds, refs) for k in ("tp", "fp", "fn")] == [0, 0, 1]
    assert value("ha_recall", preds, refs) == 0.0
    assert value("ha_f1", preds, refs) == 0.0  # 0 / (0 + 0 + 1)
    score = get_metric("ha_precision").compute(preds, refs, [DOC] * 2)
    assert math.isnan(score.value) and score.undefined == "there are no predicted violations"
    assert value("ha_precision", preds, refs, zero_division=0.0) == 0.0
    assert math.isnan(value("ha_match_score", preds, refs))


def test_empty_ground_truth() -> None:
    preds, refs = [[v([0, 5])]], [[]]
    assert [value(f"std_{k}", preds, refs) for k in ("tp", "fp", "fn")] == [0, 1, 0]
    assert value("std_precision", preds, refs) == 0.0
    assert value("std_f1", preds, refs) == 0.0
    score = get_metric("std_recall").compute(preds, refs, [DOC])
    assert math.isnan(score.value) and "no ground-truth" in score.undefined
    # neither: F1 is 0/0; a None reference list is an empty one
    assert get_metric("std_f1").compute([[]], [None], [DOC]).undefined is not None


def test_overlapping_spans_in_one_list_are_allowed() -> None:
    preds = [[v([0, 10]), v([2, 8])]]
    refs = [[v([0, 10]), v([2, 8])]]
    m = match_violations(preds, refs, [DOC], preset="std")
    assert sorted(zip(m.pred.tolist(), m.truth.tolist(), strict=True)) == [(0, 0), (1, 1)]


def test_a_span_given_as_text_is_its_first_occurrence() -> None:
    text = "the cat and the dog"
    by_text = value("ha_match_score", [[v("the dog")]], [[v([12, 19])]], [text])
    assert by_text == pytest.approx(1.0, abs=1e-15)  # 0.3 + 0.3 + 0.1 + 0.2 + 0.1 in floating point
    assert value("ha_tp", [[v("the")]], [[v([12, 15])]], [text]) == 0  # "the" is found at 0, not 12


def test_weights_must_sum_to_one() -> None:
    with pytest.raises(ValueError, match=r"weights must sum to 1, got 0\.9 .*not normalized"):
        get_metric("std_f1", {"weights": {"text": 0.5, "rule": 0.4}})
    with pytest.raises(ValueError, match="unknown part"):
        get_metric("std_f1", {"weights": {"text": 0.5, "rules": 0.5}})
    with pytest.raises(ValueError, match="non-negative"):
        get_metric("std_f1", {"weights": {"text": 1.5, "rule": -0.5}})
    # a valid override replaces the preset's set: category alone decides the score here
    same_category = [[v([0, 10], rule="spelling")]], [[v([0, 2], rule="spelling")]]
    assert value("ha_match_score", *same_category, weights={"category": 1.0}) == 1.0


def test_shared_statistics_between_sub_types_of_one_preset_and_config() -> None:
    assert get_metric("std_f1").shared_key() == get_metric("std_precision").shared_key()
    assert get_metric("std_f1").shared_key() != get_metric("ha_f1").shared_key()
    assert get_metric("std_f1", {"match_threshold": 0.6}).shared_key() != get_metric("std_f1").shared_key()
    assert get_metric("std_fp").higher_is_better is False and get_metric("ha_f1").higher_is_better is True


def test_details_carry_the_counts_weights_and_thresholds() -> None:
    score = get_metric("ha_f1").compute([[v([0, 10])]], [[v([0, 10])]], [DOC])
    assert score.details["tp"] == 1
    assert score.details["weights"] == {"text": 0.3, "rule": 0.3, "category": 0.1, "explanation": 0.2,
                                        "correction": 0.1}  # fmt: skip
    assert score.details["similarity"] == "rapidfuzz.fuzz.ratio"


def test_resampled_totals_are_the_vectorized_formula() -> None:
    metric = get_metric("std_f1")
    totals = np.array([[1, 1, 0, 0.9], [0, 0, 0, 0], [2, 0, 2, 1.5]])
    assert metric.finalize_totals(totals)[[0, 2]].tolist() == pytest.approx([2 / 3, 4 / 6])
    assert math.isnan(metric.finalize_totals(totals)[1])


# ---------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("preds", "refs", "message"),
    [
        ([[v([25, 31])]], [[]], r"example 1: prediction violation 0: span \[25, 31\) is outside the document \(30 "),
        ([[]], [[v([-1, 3])]], r"example 1: reference violation 0: span \[-1, 3\) is outside the document"),
        ([[v([5, 3])]], [[]], r"example 1: prediction violation 0: span \[5, 3\) is outside the document .* reversed"),
        ([[{"span": [0, 3]}]], [[]], r"example 1: prediction violation 0: missing field 'rule'"),
        ([[]], [[{"rule": "x"}]], r"example 1: reference violation 0: missing field 'span'"),
        ([[v([0, 3], rule=3)]], [[]], r"example 1: prediction violation 0: rule must be a string, got int"),
        ([[v("nowhere")]], [[]], r"example 1: prediction violation 0: span text 'nowhere' does not occur"),
        ([[v([0, 2.5])]], [[]], r"example 1: prediction violation 0: span must be \[start, end\) integer offsets"),
        ([["passive"]], [[]], r"example 1: prediction violation 0: a violation must be a dict, got str"),
        (["passive"], [[]], r"example 1: prediction: must be a list of violation dicts, got str"),
    ],
)
def test_bad_input_names_the_example_and_the_violation(preds, refs, message) -> None:
    metric = get_metric("ha_f1")
    metric.statistics([[]], [[]], [DOC])  # a first batch of one document: errors count on from there
    with pytest.raises(ValueError, match=message):
        metric.statistics(preds, refs, [DOC])


def test_ha_needs_the_fields_std_does_not_read() -> None:
    bare = [[{"span": [0, 5], "rule": "spelling"}]]
    assert value("std_tp", bare, bare) == 1
    with pytest.raises(ValueError, match=r"example 0: prediction violation 0: missing field 'category'"):
        value("ha_tp", bare, bare)


def test_a_missing_embedding_model_folder_is_one_line(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"embedding_model folder not found: .*nowhere; pass a local sentence-"):
        get_metric("ha_f1", {"similarity": "embedding", "embedding_model": str(tmp_path / "nowhere")})
    with pytest.raises(ValueError, match="similarity 'embedding' needs one of embedding_model"):
        get_metric("ha_f1", {"similarity": "embedding"})
    with pytest.raises(ValueError, match="holds no sentence-transformers model"):
        get_metric("ha_f1", {"similarity": "embedding", "embedding_model": str(tmp_path)})

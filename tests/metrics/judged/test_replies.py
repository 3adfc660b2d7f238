"""Bad replies and bad judges: an unparseable or empty reply is counted and excluded (never scored 0), a judge that
raises, returns non-text or times out fails that example only, replies are cached by prompt and batched where the
judge takes lists, and a judge missing from its script is one config error."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from olive_eval.judges import Judge, judge_key, judges_of, register_judge
from olive_eval.metrics.judged.parsing import Unparseable, parse_items, parse_score, parse_verdicts
from olive_eval.metrics.registry import get_metric
from tests.metrics.judged import scripted

SCRIPT = str(Path(scripted.__file__))
register_judge("scripted")(scripted.judge)
register_judge("scripted_batch", batched=True)(scripted.judge_batch)


#: The judges this module's metrics share, by spec key, as a run's sub-types do; fresh for each test.
SHARED: dict[str, Judge] = {}


@pytest.fixture(autouse=True)
def fresh_shared_judges():
    SHARED.clear()
    yield
    for judge in SHARED.values():
        judge.close()
    SHARED.clear()


def run(name: str, judge: dict, *columns: list):
    metric = get_metric(name, {"judge": judge})
    for key, built in judges_of(judge).items():
        SHARED.setdefault(key, built)
    metric.bind_judges(SHARED)
    stats = metric.statistics(*columns)
    return metric.reduce(stats), metric.instance_scores(stats)


@pytest.mark.parametrize("marker", ["#bad", "#empty"])
def test_an_unparseable_or_empty_reply_is_excluded_and_counted_not_scored_0(marker, caplog):
    caplog.set_level(logging.WARNING, logger="olive_eval.judged")  # whatever level another test left the root at
    score, each = run("answer_relevance", {"function": "scripted"}, ["a+|b-", f"c+ {marker}", "d+"], ["q", "q", "q"])
    # the second example is left out: (1/2 + 1) / 2, not (1/2 + 0 + 1) / 3
    assert score.value == pytest.approx(0.75)
    assert math.isnan(each[1]) and each[0] == 0.5 and each[2] == 1.0
    assert (score.details["scored"], score.details["unparseable"], score.details["failed"]) == (2, 1, 0)
    assert "answer_relevance, example 1: excluded: the judge's reply is not a JSON verdict" in caplog.text


def test_a_judge_that_raises_fails_that_example_and_the_rest_are_scored():
    score, each = run("bias", {"function": "scripted"}, ["o+", "o- #boom", "o-"])
    assert score.value == pytest.approx(0.5) and math.isnan(each[1])
    assert score.details["failed"] == 1
    assert score.details["messages"] == [
        "bias, example 1: failed: the judge raised ValueError: the judge broke on purpose"
    ]


def test_a_judge_that_returns_non_text_fails_that_example():
    score, _ = run("toxicity", {"function": "scripted"}, ["t+", "#number"])
    assert score.value == 1.0
    assert score.details["messages"] == ["toxicity, example 1: failed: the judge returned int, not text"]


def test_a_judge_past_its_timeout_fails_that_example_and_the_run_goes_on():
    score, each = run(
        "context_relevance", {"function": "scripted", "timeout": 0.1}, ["q", "q", "q"], [["a+"], ["#slow"], ["b-"]]
    )
    assert score.value == pytest.approx(0.5) and math.isnan(each[1])
    assert score.details["messages"] == [
        "context_relevance, example 1: failed: the judge took longer than the timeout of 0.1 s"
    ]


def test_with_every_example_excluded_the_value_is_undefined():
    score, _ = run("bias", {"function": "scripted"}, ["#bad", "#boom"])
    assert math.isnan(score.value)
    assert score.undefined == "no example was scored (1 replies were not JSON verdicts, 1 judge calls failed)"


def test_a_bad_input_fails_that_example_with_a_message():
    score, _ = run("hallucination", {"function": "scripted"}, ["p", 7, "p"], [["c+"], ["c+"], []])
    assert score.details["scored"] == 1 and score.details["failed"] == 2
    assert score.details["messages"] == [
        "hallucination, example 1: failed: prediction is int, not text",
        "hallucination, example 2: failed: contexts is empty",
    ]


def test_replies_are_cached_by_prompt_across_sub_types_and_repeats():
    judge = {"function": "scripted"}
    predictions, references = ["A|B", "A|B", "C"], ["A", "A", "C"]
    run("answer_correctness", judge, predictions, references)
    # distinct prompts: statements of "A|B", "C", "A" (3), support of [A, B] in "A", of [A] in "A|B",
    # of [C] in "C" asked twice with the same text -> once (3): 6 calls for 3 examples
    assert len(scripted.CALLS) == 6
    run("answer_relevance", judge, predictions, ["q", "q", "q"])
    # the statements of "A|B" and "C" are cached; relevance of [A, B] and [C] to "q" are new: 2 more
    assert len(scripted.CALLS) == 8
    run("answer_correctness", judge, predictions, references)
    assert len(scripted.CALLS) == 8
    assert SHARED[judge_key(judge)].calls == 8


def test_no_cache_asks_again():
    judge = {"function": "scripted", "cache": False}
    run("bias", judge, ["o+", "o+"])
    run("bias", judge, ["o+", "o+"])
    assert len(scripted.CALLS) == 4  # within one ask duplicates go once: (extract + verdict) x 2 runs


def test_a_batched_judge_gets_one_call_per_step():
    score, _ = run("answer_relevance", {"function": "scripted_batch"}, ["a+|b-", "c+", "d-|e+|f+"], ["q"] * 3)
    assert score.value == pytest.approx((1 / 2 + 1 + 2 / 3) / 3)
    assert [c for c in scripted.CALLS if c.startswith("batch")] == ["batch of 3", "batch of 3"]


def test_a_batch_function_from_a_user_script():
    judge = {"batch_function": "judge_batch", "user_script": SCRIPT}
    score, _ = run("summary_coherence", judge, ["coherence=5", "coherence=3"], ["s", "s"])
    assert score.value == 4.0
    identity = score.details["judge"]
    assert identity["function"] == "judge_batch" and identity["batched"] is True
    assert identity["user_script"] == SCRIPT and len(identity["script_sha256"]) == 16
    assert score.details["prompts"]["version"] == "1" and len(score.details["prompts"]["coherence"]) == 12


def test_a_judge_missing_from_its_script_is_one_config_error():
    with pytest.raises(ValidationError) as err:
        get_metric("bias", {"judge": {"function": "nope", "user_script": SCRIPT}})
    message = err.value.errors()[0]["msg"]
    assert f"user_script {SCRIPT} has no function 'nope'; it defines: judge, judge_batch" in message


def test_an_unknown_registered_judge_and_an_unknown_source_are_config_errors():
    with pytest.raises(ValidationError, match="'nobody' is not a registered judge"):
        get_metric("bias", {"judge": {"function": "nobody"}})
    with pytest.raises(ValidationError, match=r"judge\.type: .*'oracle'"):
        get_metric("bias", {"judge": {"type": "oracle"}})


def test_prompt_overrides_keep_their_fields_and_are_recorded():
    with pytest.raises(ValidationError, match=r"prompts.relevance: the template lacks \$query"):
        get_metric("answer_relevance", {"judge": {"function": "scripted"}, "prompts": {"relevance": "$items $count"}})
    custom = "Query:\n$query\n\nsay yes per statement, exactly $count verdicts\n(a JSON list):\n$items\n\n"
    metric = get_metric("answer_relevance", {"judge": {"function": "scripted"}, "prompts": {"relevance": custom}})
    score = metric.reduce(metric.statistics(["a+|b-"], ["q"]))
    assert score.value == 0.5 and score.details["prompts"]["overridden"] == ["relevance"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"verdicts": ["yes", "No"]}', [True, False]),
        (' ```json\n{"verdicts": [{"verdict": "yes", "reason": "r"}, "no"]}\n``` ', [True, False]),
        ('{"verdicts": ["yes"]}', "1 verdicts for 2 items"),
        ('{"verdicts": ["yes", "maybe"]}', 'a verdict is not "yes" or "no"'),
        ('Verdicts: {"verdicts": ["yes", "no"]}', "the reply is not JSON"),
        ('{"answers": ["yes", "no"]}', 'not a JSON object with "verdicts"'),
        ("", "the reply is empty"),
    ],
)
def test_verdicts_are_parsed_strictly(reply, expected):
    got = parse_verdicts(reply, 2)
    if isinstance(expected, list):
        assert got == expected
    else:
        assert isinstance(got, Unparseable) and expected in got.message


def test_items_and_scores_are_parsed_strictly():
    assert parse_items('{"claims": [" a ", "b"]}', "claims") == ["a", "b"]
    assert isinstance(parse_items('{"claims": [1]}', "claims"), Unparseable)
    assert parse_score('{"score": 4.0}') == 4
    for bad in ('{"score": 4.5}', '{"score": "4"}', '{"score": true}', '{"score": 6}'):
        assert isinstance(parse_score(bad), Unparseable), bad


def test_statistics_keep_excluded_examples_out_of_every_resample():
    metric = get_metric("bias", {"judge": {"function": "scripted"}})
    stats = metric.statistics(["o+", "#bad", "o-", "o+"])
    totals = np.stack([stats[[0, 1]].sum(0), stats[[1, 2]].sum(0), stats[[1, 1]].sum(0)])
    np.testing.assert_allclose(metric.finalize_totals(totals), [1.0, 0.0, np.nan])


@register_judge("half_broken", batched=True)
def half_broken(prompts: list[str]) -> list[object]:
    """The scripted replies, with an exception in place of the reply to any prompt that mentions "#down"."""
    return [ConnectionError("server down") if "#down" in p else scripted.judge(p) for p in prompts]


def test_a_batch_judge_may_fail_one_prompt_by_returning_its_exception():
    score, _ = run("bias", {"function": "half_broken"}, ["o+", "o- #down", "o-|p+"])
    # 1/1 and 1/2; the second fails alone
    assert score.value == pytest.approx(0.75)
    assert score.details["messages"] == [
        "bias, example 1: failed: the judge failed on this prompt: ConnectionError: server down"
    ]

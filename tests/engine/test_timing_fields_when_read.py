"""A pass builds the per-example timing fields (``inference_seconds``, ``model_seconds``, ``batch_index``) only when
one of its consumers reads one: a consumer that cannot say what it reads gets them, as every metric reading them
does (tests/engine/test_field_contract.py checks their values)."""

from __future__ import annotations

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.engine.passes import pass_loop
from olive_eval.engine.passes.fields import PASS_FIELDS, TIMING_FIELDS
from olive_eval.engine.passes.pass_loop import reads_timing


class Declares:
    def __init__(self, *names: str) -> None:
        self.names = set(names)

    def pass_reads(self) -> set[str]:
        return self.names


class Silent:
    """A consumer without ``pass_reads``."""


def test_the_timing_fields_are_pass_fields():
    assert set(PASS_FIELDS) - {"prediction", "logits"} == TIMING_FIELDS


@pytest.mark.parametrize(
    ("consumers", "timed"),
    [
        ([], False),
        ([Declares("prediction", "references")], False),
        ([Declares("prediction"), Declares("logits", "x")], False),
        ([Declares("prediction"), Declares("batch_index")], True),
        ([Declares("model_seconds")], True),
        ([Declares("prediction"), Silent()], True),
    ],
)
def test_timing_is_built_when_a_consumer_reads_it_or_cannot_say(consumers, timed):
    assert reads_timing(consumers) is timed


@pytest.fixture
def decided(monkeypatch):
    """Each pass's decision, with the fields its consumers were handed."""
    seen: list[bool] = []
    keys: list[set[str]] = []
    decide = pass_loop.reads_timing

    def spy(consumers):
        out = decide(consumers)
        seen.append(out)
        for consumer in consumers:
            update, joined = consumer.update, consumer.update_joined

            def keep(fields, start, cache, update=update):
                keys.append(set(fields))
                return update(fields, start, cache)

            def keep_joined(fields, start, sizes, cache, joined=joined):  # held batches, handed joined
                keys.append(set(fields))
                return joined(fields, start, sizes, cache)

            consumer.update, consumer.update_joined = keep, keep_joined
        return out

    monkeypatch.setattr(pass_loop, "reads_timing", spy)
    return seen, keys


def classification(toy, subs: list[dict]) -> dict:
    config = toy.config({}, [{"name": "m", "type": "accuracy", "data_config": "toy", "sub_types": subs}])
    config["data_configs"][0]["post_process_data_config"] = {"type": "argmax"}
    return config


def test_an_accuracy_pass_builds_no_timing_fields(toy, decided):
    seen, keys = decided
    model = evaluate(classification(toy, [{"name": "accuracy_score", "priority": 1}, {"name": "f1_score"}])).models[
        "base"
    ]
    assert model.status == "ok", model.error
    assert seen == [False]
    assert keys and all(not (k & TIMING_FIELDS) and {"prediction", "logits"} <= k for k in keys)
    logits = toy.x @ toy.weights
    expected = float(np.mean(logits.argmax(axis=1) == toy.labels))
    assert model.metrics["m-accuracy_score"].value == pytest.approx(expected)


def test_a_pass_with_a_metric_reading_the_timing_builds_it(toy, decided):
    seen, keys = decided
    subs = [
        {"name": "accuracy_score", "priority": 1},
        {"name": "samples_per_second", "metric_config": {"warmup_batches": 0}},
    ]
    model = evaluate(classification(toy, subs)).models["base"]
    assert model.status == "ok", model.error
    assert seen == [True]
    assert keys and all(k >= TIMING_FIELDS for k in keys)
    assert model.metrics["m-samples_per_second"].value > 0

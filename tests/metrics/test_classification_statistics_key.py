"""Accuracy, F1 and precision share one chunk's stat scores when they would compute the same ones: a
``num_classes`` that the data fix (the score columns, the logits the labels came from) counts as left out, and
one that the data do not fix, or fix otherwise, keeps its sub-type apart. Shared or not, the values and the
per-example scores are those of each sub-type computed on its own."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score

from olive_eval import evaluate
from olive_eval.config.metric import MetricConfig
from olive_eval.engine.passes.scoring import MetricScorer
from olive_eval.metrics.classification import stat_scores as K
from olive_eval.metrics.registry import get_metric
from olive_eval.metrics.stats import LastSums

RNG = np.random.default_rng(0)
SCORES = RNG.normal(size=(200, 4))
LABELS = RNG.integers(0, 4, 200)
TOKENS = RNG.integers(0, 4, (200, 3))


def key_and_stats(name: str, config: dict, *fields) -> tuple[object, np.ndarray | None]:
    metric = get_metric(name, config)
    key = metric.statistics_key(*fields)
    try:
        return key, metric.statistics(*fields)
    except ValueError:
        return key, None


@pytest.mark.parametrize(
    ("fields", "shared"),
    [
        ((SCORES, LABELS, SCORES), True),  # score columns: 4 classes, whatever the config says
        ((SCORES.argmax(axis=1), LABELS, SCORES), True),  # labels from 4-wide logits
        ((SCORES.argmax(axis=1), LABELS, None), False),  # labels alone: the largest label tells
        ((SCORES.argmax(axis=1) % 3, LABELS % 3, None), False),  # ... 3 classes, not 4
        ((TOKENS, TOKENS[::-1], None), False),  # a label per token: not fixed
        ((SCORES, list(LABELS), None), False),  # references not an array: not looked into
    ],
)
def test_a_num_classes_the_data_fix_is_shared(fields, shared):
    left_out, with_it = {"task": "multiclass"}, {"task": "multiclass", "num_classes": 4, "average": "macro"}
    key_a, stats_a = key_and_stats("accuracy_score", left_out, *fields)
    key_f, stats_f = key_and_stats("f1_score", with_it, *fields)
    assert (key_a == key_f) is shared
    if shared:
        np.testing.assert_array_equal(stats_a, stats_f)
    other = {**with_it, "num_classes": 5}  # the data say 4: never shared with 4 (an error where the data fix 4)
    assert key_and_stats("precision", other, *fields)[0] not in (key_a, key_f)


def test_an_evaluation_computes_the_shared_stat_scores_once_per_chunk(toy, monkeypatch):
    calls = []
    computed = K.coded_stat_scores
    monkeypatch.setattr(K, "coded_stat_scores", lambda *a, **k: calls.append(1) or computed(*a, **k))
    macro = {"task": "multiclass", "num_classes": 3, "average": "macro"}
    metrics = [
        {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [
                {"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass"}},
                {"name": "f1_score", "metric_config": macro},
                {"name": "precision", "metric_config": macro},
            ],
        }
    ]
    result = evaluate(toy.config({}, metrics))
    assert len(calls) == 1  # 120 examples: one chunk, one model
    pred = (toy.x @ toy.weights).argmax(axis=1)
    values = result.models["base"].metrics
    assert values["acc-accuracy_score"].value == pytest.approx(accuracy_score(toy.labels, pred))
    assert values["acc-f1_score"].value == pytest.approx(f1_score(toy.labels, pred, average="macro"))
    assert values["acc-precision"].value == pytest.approx(precision_score(toy.labels, pred, average="macro"))
    records = pq.read_table(toy.root / "out" / "instances" / "base" / "acc.parquet").to_pydict()
    np.testing.assert_array_equal(records["accuracy_score"], (pred == toy.labels).astype(float))
    for name in ("f1_score", "precision"):
        metric = get_metric(name, macro)
        stats = metric.statistics(np.eye(3)[pred], toy.labels)
        np.testing.assert_array_equal(records[name], metric.finalize_totals(stats))


def test_sub_types_sharing_every_chunk_finish_on_one_joined_array():
    macro = {"task": "multiclass", "num_classes": 4, "average": "macro"}
    sub_types = [
        {"name": "accuracy_score", "metric_config": {"task": "multiclass"}},
        {"name": "f1_score", "metric_config": macro},
        {"name": "precision", "metric_config": {**macro, "num_classes": None, "top_k": 2}},  # other statistics
    ]
    config = MetricConfig.model_validate({"name": "acc", "type": "accuracy", "sub_types": sub_types})
    scorer = MetricScorer(config, None, None, "m")
    for start in range(0, 200, 50):
        part = slice(start, start + 50)
        fields = {"prediction": SCORES[part], "references": LABELS[part], "logits": SCORES[part]}
        scorer.update(fields, start, {})
        scorer.statistics_so_far()  # a chunk scored at each batch
    accuracy, f1, precision = (s.evidence.sample.statistics for s in scorer.finish())
    assert accuracy is f1 and precision is not f1
    np.testing.assert_array_equal(accuracy, K.stat_scores(SCORES, LABELS, task="multiclass"))
    np.testing.assert_array_equal(precision, K.stat_scores(SCORES, LABELS, task="multiclass", top_k=2))


def test_the_sums_of_the_last_array_are_taken_once():
    sums = LastSums()
    stats = K.stat_scores(SCORES, LABELS)
    totals = sums(stats)
    assert totals.dtype == np.int64
    np.testing.assert_array_equal(totals, stats.sum(axis=0, dtype=np.int64))
    assert sums(stats) is totals
    other = stats.copy()  # equal content, another array: summed anew
    again = sums(other)
    assert again is not totals
    np.testing.assert_array_equal(again, totals)
    del stats, other
    assert sums(K.stat_scores(SCORES[:10], LABELS[:10])).sum() == 10 * 4  # a freed array's sums are not reused


@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "none"])
@pytest.mark.parametrize("labels", ["observed", "references"])
def test_sub_types_reducing_one_array_give_their_own_values(average, labels):
    stats = K.stat_scores(SCORES, LABELS, task="multiclass")
    for name in ("accuracy_score", "f1_score", "precision", "recall"):
        metric = get_metric(name, {"task": "multiclass", "average": average, "labels": labels})
        score = metric.reduce(stats)
        stat = {"accuracy_score": "accuracy", "f1_score": "f1"}.get(name, name)
        options = {"task": "multiclass", "labels": labels}
        expected = K.reduce_stat_scores(stats, stat, "macro" if average == "none" else average, **options)
        assert score.value == expected
        if average == "none":
            np.testing.assert_array_equal(score.per_class, K.reduce_stat_scores(stats, stat, "none", **options))


def test_lists_of_class_names_have_their_own_key_and_their_error():
    names = [["cat"], ["dog", "cat"], []]  # ragged: no array shape to read
    metric = get_metric("f1_score", {"num_classes": 2})
    key = metric.statistics_key(names, names)
    assert key == metric.shared_key()
    with pytest.raises(ValueError, match="lists of class names take class_names"):
        metric.statistics(names, names)

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
from olive_eval.metrics.classification import stat_scores as K
from olive_eval.metrics.registry import get_metric

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

    def counted(*args, **kwargs):
        calls.append(1)
        return computed(*args, **kwargs)

    monkeypatch.setattr(K, "coded_stat_scores", counted)
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

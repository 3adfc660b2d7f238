"""Olive's ``metric_config.kwargs``: merged into the metric's other keys; a key nobody takes is named."""

from __future__ import annotations

import pytest

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import metric_registry, register_metric


def metric(sub_type: str, metric_config: dict, metric_type: str = "accuracy", name: str = "m") -> dict:
    return {
        "name": name,
        "type": metric_type,
        "data_config": "toy",
        "sub_types": [{"name": sub_type, "metric_config": metric_config}],
    }


def error_of(config: dict) -> str:
    with pytest.raises(ConfigError) as info:
        load_run_config(config)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_kwargs_reach_the_metric_as_the_same_keys_written_out(toy):
    explicit = {"task": "multiclass", "num_classes": 3, "average": "macro"}
    metrics = [
        metric("f1_score", explicit, name="plain"),
        metric("f1_score", {"task": "multiclass", "kwargs": {"num_classes": 3, "average": "macro"}}, name="kw"),
        metric("f1_score", {"task": "multiclass", "num_classes": 3}, name="micro"),
    ]
    for rank, entry in enumerate(metrics, 1):
        entry["sub_types"][0]["priority"] = rank
    result = evaluate(toy.config({"cand": 0.8}, metrics))
    values = result.models["cand"].metrics
    assert values["kw-f1_score"].value == values["plain-f1_score"].value
    assert values["kw-f1_score"].value != values["micro-f1_score"].value  # average=macro did reach the metric
    sub = load_run_config(toy.config({}, metrics)).all_metrics[1].sub_types[0]
    assert sub.metric_config == explicit


def test_kwargs_of_a_latency_sub_type(toy):
    run = load_run_config(toy.config({}, [metric("avg", {"kwargs": {"warmup_num": 3}}, "latency")]))
    assert run.all_metrics[0].parsed_config(run.all_metrics[0].sub_types[0]).warmup_num == 3


@pytest.mark.parametrize(
    ("sub_type", "metric_config", "metric_type", "expected"),
    [
        (
            "accuracy_score",
            {"task": "multiclass", "kwargs": {"num_clases": 3}},
            "accuracy",
            "metrics[0].sub_types[0].metric_config.kwargs.num_clases: unknown key; did you mean 'num_classes'?",
        ),
        (
            "avg",
            {"kwargs": {"compute_on_cpu": True}},
            "latency",
            "metrics[0].sub_types[0].metric_config.kwargs.compute_on_cpu: unknown key; valid: max_seconds, "
            "repeat_test_num, sleep_num, target_rel_ci, warmup_num, yield_between_runs",
        ),
        (
            "accuracy_score",
            {"kwargs": {"task": "multiclass", "num_classes": 1}},
            "accuracy",
            "metrics[0].sub_types[0].metric_config.kwargs.num_classes: num_classes must be >= 2, got 1",
        ),
        (
            "bytes",
            {"kwargs": {"unit": "MB"}},
            "size_on_disk",
            "metrics[0].sub_types[0].metric_config.kwargs.unit: size_on_disk sub-types take no metric_config",
        ),
        (
            "accuracy_score",
            {"kwargs": [3]},
            "accuracy",
            "metrics[0].sub_types[0].metric_config.kwargs: expected an object, got [3]",
        ),
    ],
    ids=["misspelt", "a-torchmetrics-only-option", "bad-value", "type-without-config", "not-an-object"],
)
def test_a_kwargs_key_the_sub_type_does_not_take_is_named(toy, sub_type, metric_config, metric_type, expected):
    assert error_of(toy.config({}, [metric(sub_type, metric_config, metric_type)])) == f"<config>: {expected}"


def test_a_key_given_both_ways_must_agree(toy):
    same = {"task": "multiclass", "num_classes": 3, "kwargs": {"task": "multiclass"}}
    run = load_run_config(toy.config({}, [metric("accuracy_score", same)]))
    assert run.all_metrics[0].sub_types[0].metric_config == {"task": "multiclass", "num_classes": 3}
    clash = {"task": "binary", "kwargs": {"task": "multiclass"}}
    assert error_of(toy.config({}, [metric("accuracy_score", clash)])) == (
        "<config>: metrics[0].sub_types[0].metric_config.kwargs.task: 'task' is also given as metric_config.task "
        'with a different value ("binary" vs "multiclass"); Olive would use the kwargs one silently: give it once'
    )


@pytest.fixture
def kwargs_metric():
    @register_metric(name="takes_a_kwargs_key", higher_is_better=True)
    def score(prediction, reference, kwargs=None):
        return 1.0

    yield "takes_a_kwargs_key"
    metric_registry.unregister("takes_a_kwargs_key")


def test_a_metric_with_its_own_kwargs_parameter_keeps_it(toy, kwargs_metric):
    run = load_run_config(toy.config({}, [metric(kwargs_metric, {"kwargs": {"a": 1}})]))
    assert run.all_metrics[0].parsed_config(run.all_metrics[0].sub_types[0]).kwargs == {"a": 1}


#: torchmetrics' ``Metric`` options (distributed syncing, state placement, caching) and the classification
#: classes' ``validate_args``, all of which Olive passes through: values that change nothing in one process.
NO_OPS = {
    "validate_args": False,
    "compute_on_cpu": True,
    "dist_sync_on_step": True,
    "sync_on_compute": False,
    "compute_with_cache": False,
}


@pytest.mark.parametrize("sub_type", ["accuracy_score", "f1_score", "precision", "recall", "auroc"])
def test_torchmetrics_pass_through_options_are_accepted_as_no_ops(toy, sub_type):
    own = {"task": "multiclass", "num_classes": 3, "average": "macro"}
    metrics = [
        metric(sub_type, own, name="plain"),
        metric(sub_type, {**own, "kwargs": NO_OPS}, name="kw"),
        metric(sub_type, {**own, "validate_args": True}, name="inline"),  # a torchmetrics parameter of its own
    ]
    for rank, entry in enumerate(metrics, 1):
        entry["sub_types"][0]["priority"] = rank
    result = evaluate(toy.config({"cand": 0.8}, metrics))
    values = result.models["cand"].metrics
    assert values[f"kw-{sub_type}"].value == values[f"plain-{sub_type}"].value
    assert values[f"inline-{sub_type}"].value == values[f"plain-{sub_type}"].value
    run = load_run_config(toy.config({}, metrics))
    assert [m.sub_types[0].metric_config for m in run.all_metrics] == [own, own, own]


@pytest.mark.parametrize(
    ("sub_type", "metric_config", "expected"),
    [
        (
            "accuracy_score",
            {"kwargs": {"validate_args": "no"}},
            'metrics[0].sub_types[0].metric_config.kwargs.validate_args: expected true or false, got "no"',
        ),
        (
            "accuracy_score",
            {"compute_on_cpu": 1},
            "metrics[0].sub_types[0].metric_config.compute_on_cpu: expected true or false, got 1",
        ),
        (
            "accuracy_score",
            {"kwargs": {"process_group": "world"}},
            "metrics[0].sub_types[0].metric_config.kwargs.process_group: unknown key; valid: average, class_names, "
            "ignore_index, labels, num_classes, num_labels, task, threshold, top_k",
        ),
        (
            "perplexity",
            {"kwargs": {"validate_args": True}},
            "metrics[0].sub_types[0].metric_config.kwargs.validate_args: unknown key; valid: ignore_index",
        ),
    ],
    ids=["not-a-bool-in-kwargs", "not-a-bool-inline", "a-torchmetrics-object-option", "not-perplexity-s"],
)
def test_a_pass_through_option_that_cannot_be_a_no_op_is_refused(toy, sub_type, metric_config, expected):
    assert error_of(toy.config({}, [metric(sub_type, metric_config)])) == f"<config>: {expected}"


def test_perplexity_takes_torchmetrics_metric_options(toy):
    run = load_run_config(toy.config({}, [metric("perplexity", {"kwargs": {"compute_on_cpu": True}})]))
    assert run.all_metrics[0].sub_types[0].metric_config == {}

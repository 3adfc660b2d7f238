"""User metrics and aggregations registered in a user_script, used by name from JSON."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import scipy.stats

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError, EvaluationError
from olive_eval.metrics import get_metric, metric_registry, register_metric
from olive_eval.metrics.aggregations import aggregation_registry, register_aggregation
from olive_eval.records.parquet import read_records
from olive_eval.registry import RegistryError
from olive_eval.testing import check_metric

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from olive_eval import register_metric
    from olive_eval.metrics.aggregations import register_aggregation

    @register_aggregation("{agg}")
    def trimmed(scores):
        s = np.sort(scores)
        cut = len(s) // 10
        return float(np.mean(s[cut: len(s) - cut]))

    @register_metric(name="{name}", higher_is_better=True, kind="instance", input="logits")
    def margin(prediction, reference, scale: float = 1.0):
        others = np.delete(prediction, reference)
        return scale * float(prediction[reference] - others.max())
    """
)


@pytest.fixture
def names(request):
    """Unique metric/aggregation names per test, removed from the registries afterwards."""
    tag = request.node.name.replace("[", "_").replace("]", "_").replace("-", "_")
    out = {"name": f"margin_{tag}", "agg": f"trimmed_{tag}"}
    yield out
    metric_registry.unregister(out["name"])
    aggregation_registry.unregister(out["agg"])


def margin_metric(toy, script, name, **sub):
    return {
        "name": "margins",
        "type": "accuracy",
        "data_config": "toy",
        "sub_types": [{"name": name, "priority": 1, **sub}],
        "user_config": {"user_script": str(script)},
    }


def logits_of(toy, weights):
    return toy.x @ weights


def test_user_metric_and_aggregation_from_a_user_script(toy, names):
    script = toy.root / "plugin.py"
    script.write_text(SCRIPT.format(**names))
    metric = margin_metric(
        toy,
        script,
        names["name"],
        aggregation=names["agg"],
        metric_config={"scale": 2.0},
        confidence_interval={"method": "percentile", "n_resamples": 200, "seed": 1},
    )
    result = evaluate(toy.config({}, [metric]))
    base = result.models["base"]
    assert base.status == "ok", base.error
    logits = logits_of(toy, toy.weights)
    per_example = np.array(
        [2.0 * (row[y] - np.delete(row, y).max()) for row, y in zip(logits, toy.labels, strict=True)]
    )
    s = np.sort(per_example)
    cut = len(s) // 10
    sub = base.metrics[f"margins-{names['name']}"]
    assert sub.value == pytest.approx(np.mean(s[cut : len(s) - cut]), rel=1e-6)
    assert sub.aggregation == names["agg"]
    # a trimmed mean is no mean: the per-example scores are resampled with scipy's own draws for the seed
    reference = scipy.stats.bootstrap(
        (per_example,),
        lambda x, axis=-1: np.apply_along_axis(
            lambda r: np.mean(np.sort(r)[len(r) // 10 : len(r) - len(r) // 10]), axis, x
        ),
        n_resamples=200,
        method="percentile",
        random_state=np.random.default_rng(1),
    ).confidence_interval
    assert sub.ci_low == pytest.approx(reference.low, rel=1e-6) and sub.ci_high == pytest.approx(
        reference.high, rel=1e-6
    )
    assert sub.confidence_interval.n_resamples == 200 and sub.confidence_interval.seed == 1
    records = list(read_records(toy.root / "out" / "instances" / "base" / "margins.parquet"))
    assert len(records) == len(toy.labels)
    assert records[3]["references"] == int(toy.labels[3])
    assert records[3][names["name"]] == pytest.approx(per_example[3], rel=1e-6)
    assert records[3]["prediction"] == pytest.approx(logits[3].tolist(), rel=1e-6)


def test_json_overrides_direction_and_aggregation(toy, names):
    script = toy.root / "plugin.py"
    script.write_text(SCRIPT.format(**names))
    metric = margin_metric(toy, script, names["name"], aggregation="median", higher_is_better=False)
    result = evaluate(toy.config({}, [metric]))
    sub = result.models["base"].metrics[f"margins-{names['name']}"]
    logits = logits_of(toy, toy.weights)
    expected = np.median([row[y] - np.delete(row, y).max() for row, y in zip(logits, toy.labels, strict=True)])
    assert sub.value == pytest.approx(expected, rel=1e-6)
    assert sub.higher_is_better is False


def test_unknown_aggregation_lists_the_registered_ones(toy):
    metric = {
        "name": "acc",
        "type": "accuracy",
        "data_config": "toy",
        "sub_types": [{"name": "accuracy_score", "aggregation": "mean"}],
    }
    with pytest.raises(ConfigError, match=r"sub_types\[0\]\.aggregation: aggregation applies to instance metrics"):
        load_run_config(toy.config({}, [metric]))


def test_unknown_aggregation_name(toy, names):
    script = toy.root / "plugin.py"
    script.write_text(SCRIPT.format(**names))
    metric = margin_metric(toy, script, names["name"], aggregation="avrage")
    with pytest.raises(ConfigError) as info:
        load_run_config(toy.config({}, [metric]))
    message = str(info.value)
    assert "sub_types[0].aggregation: unknown aggregation 'avrage'" in message
    assert "median" in message and "mean" in message


def test_a_name_registered_twice_says_where_both_come_from(toy, names):
    first, second = toy.root / "first.py", toy.root / "second.py"
    first.write_text(SCRIPT.format(**names))
    second.write_text(SCRIPT.format(name=names["name"], agg=names["agg"] + "_b"))
    config = toy.config({}, [margin_metric(toy, first, names["name"])])
    config["evaluator"] = {"user_script": str(second), "metrics": config.pop("metrics")}
    try:
        with pytest.raises(ConfigError) as info:
            load_run_config(config)
        message = str(info.value)
        assert f"metric '{names['name']}' is registered twice" in message
        assert str(first) in message and str(second) in message
    finally:
        aggregation_registry.unregister(names["agg"] + "_b")


def test_user_metric_bad_returns_name_the_instance(names):
    @register_metric(name=names["name"], higher_is_better=True)
    def bad(prediction, reference):
        return "high" if reference == 2 else (float("nan") if reference == 3 else 1.0)

    metric = get_metric(names["name"])
    with pytest.raises(EvaluationError, match=r"returned str 'high' for instance 1 \(prediction=5, reference=2\)"):
        metric.compute(np.array([4, 5]), np.array([1, 2]))
    score = metric.compute(np.array([4, 5]), np.array([1, 3]))  # a NaN is undefined, naming the example
    assert score.undefined == f"metric '{names['name']}' returned NaN for instance 1"


def test_map_reduce_and_global_function_metrics_match_direct_computation(names):
    rng = np.random.default_rng(0)
    p, r = rng.integers(0, 2, 300), rng.integers(0, 2, 300)

    @register_metric(
        name=names["name"],
        higher_is_better=True,
        kind="map_reduce",
        reduce=lambda t: t[0] / t[1] if t[1] else 0.0,
    )
    def positive_precision(prediction, reference):
        return [float(prediction == 1 and reference == 1), float(prediction == 1)]

    @register_metric(name=names["agg"], higher_is_better=True, kind="global")
    def balance(predictions, references):
        return float(np.mean(predictions) - np.mean(references))

    from sklearn.metrics import precision_score

    check_metric(names["name"], p, r, global_target=precision_score(r, p))
    check_metric(names["agg"], p, r, global_target=np.mean(p) - np.mean(r))
    metric_registry.unregister(names["agg"])


def test_function_metric_config_is_strict(names):
    @register_metric(name=names["name"], higher_is_better=True)
    def scaled(prediction, reference, scale: float = 1.0):
        return scale * float(prediction == reference)

    assert get_metric(names["name"], {"scale": 3}).compute(np.array([1, 2]), np.array([1, 1])).value == 1.5
    with pytest.raises(Exception, match="unknown key; did you mean 'scale'"):
        get_metric(names["name"], {"scal": 3})


def test_register_aggregation_twice_from_different_places():
    name = "olive_eval_test_twice"

    @register_aggregation(name)
    def one(scores):
        return 0.0

    try:
        with pytest.raises(RegistryError, match=f"aggregation '{name}' is registered twice"):

            @register_aggregation(name)
            def two(scores):
                return 1.0
    finally:
        aggregation_registry.unregister(name)


def test_missing_dependency_is_one_line(names):
    @register_metric(name=names["name"], higher_is_better=True, requires=("olive_eval_no_such_pkg",), extra="text")
    def needs_package(prediction, reference):
        return 1.0

    with pytest.raises(Exception) as info:
        get_metric(names["name"])
    assert str(info.value) == (
        f"metric '{names['name']}' needs the 'olive_eval_no_such_pkg' package; install it with: pip install 'olive-eval[text]'"
    )


def test_check_metric_reports_differences():
    check_metric(
        "accuracy_score",
        [0, 1, 1, 0],
        [0, 1, 0, 0],
        instance_targets=[1, 1, 0, 1],
        global_target=0.75,
        metric_config={"task": "binary"},
    )
    with pytest.raises(AssertionError, match="global value of 'accuracy_score'"):
        check_metric("accuracy_score", [0, 1, 1, 0], [0, 1, 0, 0], global_target=0.7, metric_config={"task": "binary"})
    with pytest.raises(AssertionError, match="instance scores of 'accuracy_score'"):
        check_metric("accuracy_score", [0, 1], [0, 0], instance_targets=[1, 1], metric_config={"task": "binary"})


def test_an_unknown_input_is_refused_not_scored_on_logits():  # issue 6, item 24
    with pytest.raises(ValueError, match=r"metric 'typo_input': input='predictions' is not one of 'preds', 'logits'"):

        @register_metric(name="typo_input", higher_is_better=True, input="predictions")
        def typo_input(prediction, reference) -> float:
            return 1.0

    assert "typo_input" not in metric_registry

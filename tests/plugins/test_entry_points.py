"""Another package registers a metric, a post-process, a filter and a model type through entry points.

The package is a real installed distribution: a module and a ``*.dist-info`` folder with ``entry_points.txt``
on ``sys.path``, which ``importlib.metadata`` finds as pip would leave it. Nothing in olive-eval names it.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.data.components import registries
from olive_eval.data.filters import filter_registry
from olive_eval.errors import ConfigError
from olive_eval.metrics import metric_registry
from olive_eval.metrics.aggregations import aggregation_registry
from olive_eval.runtimes.base import runtime_registry
from tests.plugins.toy_distribution import install_distribution, linear_runtime_source

PLUGIN = linear_runtime_source("PluginLinear") + textwrap.dedent(
    '''
    """A third-party olive-eval plugin."""
    from typing import Literal

    import numpy as np

    from olive_eval.data.postprocess import PostParams, PostProcess
    from olive_eval.metrics.base import Kind, Metric
    from olive_eval.runtimes.base import BoundCall, ModelConfig, Runtime
    from olive_eval.strict_model import StrictModel


    class WeightedHit(Metric):
        """weight where the prediction is the reference, else 0."""

        name = "plugin_weighted_hit"
        higher_is_better = True
        kind = Kind.INSTANCE

        class Config(StrictModel):
            weight: float = 1.0

        def statistics(self, prediction, references):
            hits = np.asarray(prediction) == np.asarray(references)
            return hits.astype(np.float64) * self.config.weight


    class RankParams(PostParams):
        k: int = 0


    class KthLargest(PostProcess):
        """The class with the k-th largest output (k=0: argmax)."""

        Params = RankParams

        def apply(self, outputs, batch, context):
            return np.argsort(-np.asarray(self.raw(outputs)), axis=1, kind="stable")[:, self.params.k]


    def negate(prediction):
        return -prediction


    def total(scores):
        return float(np.sum(scores))


    NOT_A_FUNCTION = 3


    class BadParams(PostProcess):
        Params = dict


    class NoConfig(LinearRuntime):
        Config = None


    class NotAMetric:
        name = "plugin_not_a_metric"
    '''
)

ENTRY_POINTS = """\
[olive_eval.metrics]
plugin_weighted_hit = {module}:WeightedHit
plugin_not_a_metric = {module}:NotAMetric
plugin_misnamed = {module}:WeightedHit

[olive_eval.post_process]
plugin_kth_largest = {module}:KthLargest
plugin_bad_post = {module}:negate
plugin_bad_params = {module}:BadParams

[olive_eval.model_types]
PluginLinear = {module}:LinearRuntime
PluginBroken = {module}_missing:Runtime
PluginNoConfig = {module}:NoConfig

[olive_eval.filters]
plugin_negate = {module}:negate
plugin_lost = {module}:lost

[olive_eval.aggregations]
plugin_total = {module}:total
plugin_three = {module}:NOT_A_FUNCTION
"""

NAMES = {
    metric_registry: ("plugin_weighted_hit", "plugin_not_a_metric", "plugin_misnamed"),
    registries["post-process"]: ("plugin_kth_largest", "plugin_bad_post", "plugin_bad_params"),
    runtime_registry: ("PluginLinear", "PluginBroken", "PluginNoConfig"),
    filter_registry: ("plugin_negate", "plugin_lost"),
    aggregation_registry: ("plugin_total", "plugin_three"),
}


@pytest.fixture
def plugin(tmp_path, monkeypatch, request):
    """The distribution ``olive-eval-toy-plugin 0.3`` installed under tmp_path (a unique module per test)."""
    module = install_distribution(
        tmp_path,
        monkeypatch,
        request,
        name="olive-eval-toy-plugin",
        version="0.3",
        source=PLUGIN,
        entry_points=ENTRY_POINTS,
    )
    yield module
    monkeypatch.undo()  # sys.path without the plugin, before the registries are asked again
    for registry, names in NAMES.items():
        for name in names:
            registry.unregister(name)
    sys.modules.pop(module, None)


def run_config(toy, weights_file: Path, sub_types: list[dict], post: dict, filters: list | None = None) -> dict:
    data = toy.data_config()
    data["post_process_data_config"] = post
    return {
        "input_model": {"type": "PluginLinear", "name": "plugged", "weights_file": str(weights_file)},
        "data_configs": [data],
        "metrics": [
            {
                "name": "acc",
                "type": "accuracy",
                "data_config": "toy",
                "sub_types": sub_types,
                **({"filters": filters} if filters is not None else {}),
            }
        ],
        "output_dir": str(toy.root / "out"),
    }


def test_a_metric_a_post_process_and_a_model_type_from_another_package(toy, plugin):
    weights = toy.weights + 0.3 * np.random.default_rng(5).standard_normal(toy.weights.shape).astype(np.float32)
    np.save(toy.root / "w.npy", weights)
    config = run_config(
        toy,
        toy.root / "w.npy",
        [
            {"name": "plugin_weighted_hit", "priority": 1, "metric_config": {"weight": 2.5}},
            {"name": "accuracy_score"},
        ],
        {"type": "plugin_kth_largest", "k": 1},
    )
    result = evaluate(config)
    model = result.models["plugged"]
    assert model.status == "ok", model.error
    # independent reference: the second-best class of x @ W, against the labels
    logits = toy.x.astype(np.float32) @ weights
    second = np.argsort(-logits, axis=1, kind="stable")[:, 1]
    assert 0 < (second == toy.labels).mean() < 1
    assert model.metrics["acc-plugin_weighted_hit"].value == pytest.approx(2.5 * (second == toy.labels).mean())
    assert model.metrics["acc-accuracy_score"].value == pytest.approx((second == toy.labels).mean())
    assert "plugin_weighted_hit" in metric_registry.names()
    assert metric_registry.origin("plugin_weighted_hit").startswith(
        "entry point 'plugin_weighted_hit = " + plugin + ":WeightedHit' (group olive_eval.metrics) of distribution "
        "'olive-eval-toy-plugin 0.3'"
    )


def test_a_function_filter_from_another_package(toy, plugin):
    np.save(toy.root / "w.npy", toy.weights)
    config = run_config(
        toy,
        toy.root / "w.npy",
        [{"name": "plugin_weighted_hit"}],
        {"type": "plugin_kth_largest"},
        filters=[{"type": "plugin_negate"}],
    )
    model = evaluate(config).models["plugged"]
    assert model.status == "ok", model.error
    # the argmax is exact, so after negation only the examples of class 0 still match
    assert model.metrics["acc-plugin_weighted_hit"].value == pytest.approx((toy.labels == 0).mean())


def test_a_filter_entry_point_naming_nothing_is_one_line_at_the_filter(toy, plugin):
    np.save(toy.root / "w.npy", toy.weights)
    config = run_config(
        toy, toy.root / "w.npy", [{"name": "accuracy_score"}], {"type": "argmax"}, filters=[{"type": "plugin_lost"}]
    )
    with pytest.raises(ConfigError) as err:
        load_run_config(config)
    assert err.value.path == "metrics[0].filters[0].type"
    assert err.value.message == (
        f"entry point 'plugin_lost = {plugin}:lost' (group olive_eval.filters) of distribution "
        f"'olive-eval-toy-plugin 0.3' cannot be loaded: AttributeError: module '{plugin}' has no attribute 'lost'"
    )


def test_an_aggregation_from_another_package(toy, plugin):
    np.save(toy.root / "w.npy", toy.weights)
    config = run_config(
        toy, toy.root / "w.npy", [{"name": "plugin_weighted_hit", "aggregation": "plugin_total"}], {"type": "argmax"}
    )
    model = evaluate(config).models["plugged"]
    assert model.status == "ok", model.error
    assert model.metrics["acc-plugin_weighted_hit"].value == len(toy.labels)  # the exact model hits every example
    config["metrics"][0]["sub_types"][0]["aggregation"] = "plugin_three"
    with pytest.raises(ConfigError) as err:
        load_run_config(config)
    assert err.value.path == "metrics[0].sub_types[0].aggregation"
    assert err.value.message == (
        f"entry point 'plugin_three = {plugin}:NOT_A_FUNCTION' (group olive_eval.aggregations) of distribution "
        "'olive-eval-toy-plugin 0.3' is not a function f(scores) -> float (it is a int)"
    )


def test_entry_points_load_only_when_their_name_is_used(toy, plugin):
    assert "PluginLinear" in runtime_registry.names()
    assert plugin not in sys.modules
    metric_registry.get("accuracy_score")
    assert plugin not in sys.modules


@pytest.mark.parametrize(
    ("sub_type", "path", "message"),
    [
        (
            "plugin_not_a_metric",
            "metrics[0].sub_types[0].name",
            "entry point 'plugin_not_a_metric = {module}:NotAMetric' (group olive_eval.metrics) of distribution "
            "'olive-eval-toy-plugin 0.3' is not a Metric subclass (it is the class {module}.NotAMetric)",
        ),
        (
            "plugin_misnamed",
            "metrics[0].sub_types[0].name",
            "entry point 'plugin_misnamed = {module}:WeightedHit' (group olive_eval.metrics) of distribution "
            "'olive-eval-toy-plugin 0.3' names a metric whose name is 'plugin_weighted_hit', not 'plugin_misnamed'",
        ),
    ],
)
def test_a_metric_entry_point_that_fails_the_check_is_one_line(toy, plugin, sub_type, path, message):
    np.save(toy.root / "w.npy", toy.weights)
    config = run_config(toy, toy.root / "w.npy", [{"name": sub_type}], {"type": "argmax"})
    with pytest.raises(ConfigError) as err:
        load_run_config(config)
    assert err.value.path == path
    assert err.value.message == message.format(module=plugin)
    assert "\n" not in str(err.value)


def test_a_post_process_entry_point_that_is_not_a_component(toy, plugin):
    np.save(toy.root / "w.npy", toy.weights)
    config = run_config(toy, toy.root / "w.npy", [{"name": "accuracy_score"}], {"type": "plugin_bad_post"})
    with pytest.raises(ConfigError) as err:
        load_run_config(config)
    assert err.value.path == "data_configs[0].post_process_data_config.type"
    assert err.value.message == (
        f"entry point 'plugin_bad_post = {plugin}:negate' (group olive_eval.post_process) of distribution "
        "'olive-eval-toy-plugin 0.3' is not a Component subclass (it is a function)"
    )


@pytest.mark.parametrize(
    ("part", "value", "path", "message"),
    [
        (
            "post",
            "plugin_bad_params",
            "data_configs[0].post_process_data_config.type",
            "entry point 'plugin_bad_params = {module}:BadParams' (group olive_eval.post_process) of distribution "
            "'olive-eval-toy-plugin 0.3' has a Params that is not a ComponentParams subclass (<class 'dict'>)",
        ),
        (
            "model",
            "PluginNoConfig",
            "input_model.type",
            "entry point 'PluginNoConfig = {module}:NoConfig' (group olive_eval.model_types) of distribution "
            "'olive-eval-toy-plugin 0.3' has no Config that subclasses ModelConfig (it has None)",
        ),
    ],
)
def test_a_component_or_model_type_without_its_config_model(toy, plugin, part, value, path, message):
    config = run_config(toy, toy.root / "w.npy", [{"name": "accuracy_score"}], {"type": "argmax"})
    if part == "post":
        config["data_configs"][0]["post_process_data_config"] = {"type": value}
    else:
        config["input_model"] = {"type": value, "name": "x"}
    with pytest.raises(ConfigError) as err:
        load_run_config(config)
    assert (err.value.path, err.value.message) == (path, message.format(module=plugin))


def test_a_model_type_entry_point_that_cannot_be_imported(toy, plugin):
    config = run_config(toy, toy.root / "w.npy", [{"name": "accuracy_score"}], {"type": "argmax"})
    config["input_model"] = {"type": "PluginBroken", "name": "broken"}
    with pytest.raises(ConfigError) as err:
        load_run_config(config)
    assert err.value.path == "input_model.type"
    assert err.value.message == (
        f"entry point 'PluginBroken = {plugin}_missing:Runtime' (group olive_eval.model_types) of distribution "
        f"'olive-eval-toy-plugin 0.3' cannot be loaded: ModuleNotFoundError: No module named '{plugin}_missing'"
    )


def test_the_cli_names_a_bad_entry_point_in_one_line_and_exits_2(toy, plugin, tmp_path, capsys):
    import json

    from olive_eval.cli import main

    np.save(toy.root / "w.npy", toy.weights)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run_config(toy, toy.root / "w.npy", [{"name": "plugin_not_a_metric"}], {})))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "metrics[0].sub_types[0].name" in err[0] and "'olive-eval-toy-plugin 0.3'" in err[0]
    assert "is not a Metric subclass" in err[0]


def test_the_schema_lists_the_plugins_model_types(plugin):
    from olive_eval.cli import schema_json

    schema = schema_json()
    assert '"const": "PluginLinear"' in schema and '"title": "LinearConfig"' in schema
    assert "PluginBroken" not in schema  # one that cannot be loaded is left out

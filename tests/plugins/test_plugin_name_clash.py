"""A plugin whose entry point takes a built-in name (``accuracy_score``): that one name is refused where it is
used, with both definitions named; the plugin's other entry points still work."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import metric_registry
from olive_eval.registry import Registry, RegistryError
from tests.plugins.test_entry_points import ENTRY_POINTS, NAMES, PLUGIN, run_config
from tests.plugins.toy_distribution import install_distribution

CLASH = "accuracy_score = {module}:WeightedHit\n"


@pytest.fixture
def clashing_plugin(tmp_path, monkeypatch, request):
    """The toy plugin of test_entry_points, whose metrics group also claims the built-in ``accuracy_score``."""
    points = ENTRY_POINTS.replace("[olive_eval.metrics]\n", "[olive_eval.metrics]\n" + CLASH)
    module = install_distribution(
        tmp_path,
        monkeypatch,
        request,
        name="olive-eval-clash-plugin",
        version="0.1",
        source=PLUGIN,
        entry_points=points,
    )
    yield module
    monkeypatch.undo()
    for registry, names in NAMES.items():
        for name in names:
            registry.unregister(name)
    metric_registry.get("accuracy_score")  # the built-in stands
    sys.modules.pop(module, None)


def test_the_plugins_other_metrics_still_work(toy, clashing_plugin):
    np.save(toy.root / "w.npy", toy.weights)
    config = run_config(toy, toy.root / "w.npy", [{"name": "plugin_weighted_hit", "priority": 1}], {"type": "argmax"})
    run = load_run_config(config)
    assert [s.name for s in run.metrics[0].sub_types] == ["plugin_weighted_hit"]


def test_the_colliding_name_is_refused_where_it_is_used_naming_both(toy, clashing_plugin):
    np.save(toy.root / "w.npy", toy.weights)
    subs = [{"name": "plugin_weighted_hit", "priority": 1}, {"name": "accuracy_score"}]
    with pytest.raises(ConfigError) as err:
        load_run_config(run_config(toy, toy.root / "w.npy", subs, {"type": "argmax"}))
    assert err.value.path == "metrics[0].sub_types[1].name"
    message = err.value.message
    assert "metric 'accuracy_score' is defined twice" in message
    assert "olive_eval.metrics.classification.metrics" in message  # the built-in's module
    assert f"entry point 'accuracy_score = {clashing_plugin}:WeightedHit' (group olive_eval.metrics)" in message
    assert "'olive-eval-clash-plugin 0.1'" in message
    assert "\n" not in str(err.value)


def test_a_registry_refuses_only_the_claimed_name(tmp_path, monkeypatch):
    site = tmp_path / "site"
    info = site / "clash-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: clash\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[olive_eval.test_clash2]\nsame = clash_module:Thing\n")
    monkeypatch.syspath_prepend(str(site))
    registry: Registry[object] = Registry("thing", group="olive_eval.test_clash2")
    kept = registry.register("other", object(), origin="olive_eval/others.py:1")
    registry.register("same", object(), origin="olive_eval/things.py:1")
    assert registry.get("other") is kept
    with pytest.raises(RegistryError) as err:
        registry.get("same")
    assert str(err.value) == (
        "thing 'same' is defined twice: in olive_eval/things.py:1, and by entry point 'same = clash_module:Thing' "
        "(group olive_eval.test_clash2) of distribution 'clash 1.0'; rename the entry point or uninstall 'clash'"
    )

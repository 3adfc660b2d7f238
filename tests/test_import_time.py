"""``import olive_eval`` stays light: the public names load on first use (no timing asserted, only laziness)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import olive_eval

#: Modules that must not load on ``import olive_eval``: the config's pydantic models, the engine, and the
#: heavy dependencies a run may not need.
HEAVY = [
    "pydantic",
    "numpy",
    "torch",
    "onnxruntime",
    "transformers",
    "olive_eval.api",
    "olive_eval.config",
    "olive_eval.config.run",
    "olive_eval.config.metric",
    "olive_eval.strict_model",
    "olive_eval.data.postprocess",
    "olive_eval.engine",
    "olive_eval.metrics",
]


def _modules_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(completed.stdout.splitlines()[-1]))


def test_import_loads_none_of_the_heavy_modules():
    loaded = _modules_after("import olive_eval")
    assert "olive_eval" in loaded
    assert sorted(loaded & set(HEAVY)) == []


def test_reading_a_name_loads_its_module():
    loaded = _modules_after("import olive_eval\nolive_eval.RunConfig")
    assert {"olive_eval.config.run", "pydantic"} <= loaded
    assert "torch" not in loaded


def test_version_needs_no_import():
    loaded = _modules_after("import olive_eval\nolive_eval.__version__")
    assert "pydantic" not in loaded


@pytest.mark.parametrize("name", olive_eval.__all__)
def test_every_public_name_resolves_to_its_defining_object(name):
    value = getattr(olive_eval, name)
    assert getattr(value, "__name__", None) == name
    assert name in dir(olive_eval)


def test_star_import_gives_every_public_name():
    namespace: dict = {}
    exec("from olive_eval import *", namespace)
    assert set(olive_eval.__all__) <= set(namespace)


def test_public_names_are_the_documented_ones():
    from olive_eval.api import compute_metric, evaluate
    from olive_eval.config import RunConfig, load_run_config
    from olive_eval.engine.session.session import Evaluation
    from olive_eval.errors import ConfigError

    assert olive_eval.evaluate is evaluate
    assert olive_eval.compute_metric is compute_metric
    assert olive_eval.RunConfig is RunConfig
    assert olive_eval.load_run_config is load_run_config
    assert olive_eval.ConfigError is ConfigError
    assert olive_eval.Evaluation is Evaluation


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'olive_eval' has no attribute 'evaluat'"):
        olive_eval.evaluat  # noqa: B018
    assert not hasattr(olive_eval, "_no_such_name")

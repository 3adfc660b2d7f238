"""Issue 29 item 8: a NaN from a user's function (a correlation of a constant prediction) makes that sub-type
undefined, with the reason, as a built-in's undefined value is; the other sub-types keep their values, in every path:
metric_func, evaluate_func, a sharded pass, a registered metric with an interval, with repeats."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.metrics.registry import metric_registry
from tests.helpers import python_model_run, write_jsonl

CUSTOM = textwrap.dedent(
    """
    import numpy as np


    def scores(model_output, targets):
        # a correlation of a constant prediction is undefined: NaN, as numpy gives
        return {"total": float(len(targets)), "corr": float("nan")}


    def evaluated(model, device, execution_providers):
        return {"total": 40.0, "corr": float("nan")}
    """
)


def custom(script, func: str) -> dict:
    return {
        "name": "c",
        "type": "custom",
        "data_config": "toy",
        "sub_types": [
            {"name": "total", "priority": 1, "higher_is_better": True},
            {"name": "corr", "priority": 2, "higher_is_better": True},
        ],
        "user_config": {"user_script": str(script), func: "scores" if func == "metric_func" else "evaluated"},
    }


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "user.py"
    path.write_text(CUSTOM)
    return path


def check_kept(result, total: float, reason: str) -> None:
    for name in ("base", "cand"):
        model = result.models[name]
        assert model.status == "ok" and model.error is None, model.error
        assert model.metrics["c-total"].value == total
        corr = model.metrics["c-corr"]
        assert (corr.value, corr.error, corr.undefined) == (None, None, reason)
    assert result.ranking == ["cand"]  # ranked on the value it has


@pytest.mark.parametrize("executor", [None, {"type": "local", "shards": 2}])
def test_metric_func_nan_is_undefined_and_the_other_value_kept(toy, script, executor):
    config = toy.config({"cand": 0.1}, [custom(script, "metric_func")])
    if executor is not None:
        config["executor"] = executor
    check_kept(evaluate(config), 120.0, "metric_func 'scores' returned NaN for 'corr'")


def test_evaluate_func_nan_is_undefined_and_the_other_value_kept(toy, script):
    result = evaluate(toy.config({"cand": 0.1}, [custom(script, "evaluate_func")]))
    check_kept(result, 40.0, "evaluate_func 'evaluated' returned NaN for 'corr'")


def test_infinity_from_a_user_function_still_fails_the_metric(toy, tmp_path):
    path = tmp_path / "inf.py"
    path.write_text(
        "def evaluated(model, device, execution_providers):\n    return {'total': 1.0, 'corr': float('inf')}\n"
    )
    result = evaluate(toy.config({}, [custom(path, "evaluate_func")]))
    assert result.models["base"].metrics["c-corr"].error.endswith("returned a non-finite value: 'corr' = inf")


# ------------------------------------------------------------------------------------- registered metrics
REGISTERED = textwrap.dedent(
    """
    import numpy as np
    from olive_eval import register_metric


    @register_metric(name="{name}_corr", higher_is_better=True, kind="global")
    def corr(predictions, references):
        return float("nan") if np.all(predictions == predictions[0]) else float(np.corrcoef(predictions, references)[0, 1])


    @register_metric(name="{name}_odd", higher_is_better=True, kind="instance")
    def odd(prediction, reference):
        # undefined on the examples of class 2; elsewhere whether the prediction is right
        if str(reference) == "2":
            return float("nan")
        return float(str(prediction) == str(reference)) if isinstance(prediction, str) else float(np.argmax(prediction) == reference)
    """
)


@pytest.fixture
def registered(tmp_path, request):
    name = request.node.name.split("[")[0][-20:]
    path = tmp_path / "metrics.py"
    path.write_text(REGISTERED.format(name=name))
    yield path, name
    for suffix in ("_corr", "_odd"):
        if f"{name}{suffix}" in metric_registry:
            metric_registry.unregister(f"{name}{suffix}")


def accuracy_with(path, subs: list[str], **extra) -> dict:
    return {
        "name": "a",
        "type": "accuracy",
        "data_config": "toy",
        "sub_types": [{"name": "accuracy_score", "priority": 1}, *({"name": s} for s in subs)],
        "user_config": {"user_script": str(path)},
        **extra,
    }


def test_a_registered_global_metric_nan_under_an_interval_is_undefined_in_every_model(toy, registered):
    path, name = registered
    ci = {"method": "percentile", "n_resamples": 50, "seed": 1}
    # a constant predictor: every model predicts class 0 (all weights zero but the first column's bias-free copy)
    config = toy.config({"cand": 0.0}, [accuracy_with(path, [f"{name}_corr"], confidence_interval=ci)])
    for model in [config["input_model"], *config["candidates"]]:
        model["model_path"] = str(constant_model(toy, model["name"]))
    result = evaluate(config)
    for model in result.models.values():
        assert model.status == "ok", model.error
        acc = model.metrics["a-accuracy_score"]
        assert acc.value == pytest.approx(np.mean(toy.labels == 0)) and acc.ci_low is not None
        corr = model.metrics[f"a-{name}_corr"]
        assert (corr.value, corr.error) == (None, None)
        assert corr.undefined == f"metric '{name}_corr' returned NaN for the whole set"


def constant_model(toy, name: str):
    from tests.helpers import linear_onnx

    weights = np.zeros_like(toy.weights)
    return linear_onnx(toy.root / f"{name}-constant.onnx", weights)


def test_a_registered_instance_metric_nan_is_undefined_naming_the_example(toy, registered):
    path, name = registered
    result = evaluate(toy.config({}, [accuracy_with(path, [f"{name}_odd"])]))
    model = result.models["base"]
    assert model.status == "ok", model.error
    assert model.metrics["a-accuracy_score"].value == 1.0
    first = int(np.flatnonzero(toy.labels == 2)[0])
    assert model.metrics[f"a-{name}_odd"].undefined == f"metric '{name}_odd' returned NaN for instance {first}"


SAMPLER = """
class Echo:
    def __call__(self, batch):
        return [str(t) for t in batch["target"]]


def load(model_path):
    return Echo()
"""


def test_with_repeats_a_nan_sample_score_is_undefined_and_the_other_kept(tmp_path, registered):
    path, name = registered
    (tmp_path / "models.py").write_text(SAMPLER)
    labels = [i % 3 for i in range(10)]
    write_jsonl(tmp_path / "d.jsonl", [{"x": i, "target": str(y)} for i, y in enumerate(labels)])
    metric = accuracy_with(path, [f"{name}_odd"], repeats=2, reduction="mean")
    metric["sub_types"][0]["name"] = "exact_match"
    del metric["data_config"]
    result = evaluate(python_model_run(tmp_path, metric))
    model = result.models["m"]
    assert model.status == "ok", model.error
    assert model.metrics["a-exact_match"].value == 1.0
    assert model.metrics[f"a-{name}_odd"].undefined == f"metric '{name}_odd' returned NaN for instance 2"

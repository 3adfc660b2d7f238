"""The huggingface_metrics backend against a toy ``evaluate`` metric script written into tmp_path.

Nothing is fetched from the Hugging Face Hub. ``evaluate`` reads its cache folders and its offline
switch from the environment once, when it is imported, so the ``hf_home`` fixture sets both the
environment variables and the already-read ``evaluate.config`` values, and undoes what loading a
module leaves in the interpreter (the modules cache on ``sys.path``, the ``evaluate_modules``
package in ``sys.modules``) so that every test gets its own cache under its own tmp_path.
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from olive_eval.errors import EvaluationError, MissingDependencyError
from olive_eval.metrics.base import Kind
from olive_eval.metrics.huggingface import HuggingFaceMetric, HuggingFaceMetricConfig
from olive_eval.metrics.registry import metric_names

evaluate = pytest.importorskip("evaluate")

TOY_METRIC = """
import datasets
import evaluate


class ToyAccuracy(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="accuracy, scaled, plus a nested block and a few values that are not numbers",
            citation="",
            inputs_description="",
            features=datasets.Features(
                {"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}
            ),
        )

    def _compute(self, predictions, references, scale=1.0):
        hits = sum(int(p == r) for p, r in zip(predictions, references))
        accuracy = scale * hits / len(predictions)
        return {
            "toy_accuracy": accuracy,
            "nested": {"precision": 0.25, "count": len(predictions)},
            "label": "not a number",
            "flag": True,
            "per_class": [accuracy, accuracy],
        }
"""


@pytest.fixture
def hf_home(tmp_path, monkeypatch):
    """Every evaluate cache under tmp_path; the interpreter's import state restored afterwards."""
    home = tmp_path / "hf_home"
    caches = {
        "HF_EVALUATE_CACHE": home / "evaluate",
        "HF_METRICS_CACHE": home / "metrics",
        "HF_MODULES_CACHE": home / "modules",
    }
    monkeypatch.setenv("HF_HOME", str(home))
    for var, path in caches.items():
        monkeypatch.setenv(var, str(path))
        monkeypatch.setattr(evaluate.config, var, path)  # evaluate read the environment when it was imported
    monkeypatch.setattr(evaluate.config, "HF_CACHE_HOME", str(home))
    monkeypatch.setattr(evaluate.config, "DOWNLOADED_EVALUATE_PATH", home / "evaluate" / "downloads")
    monkeypatch.setattr(evaluate.config, "EXTRACTED_EVALUATE_PATH", home / "evaluate" / "downloads" / "extracted")
    path_before = list(sys.path)
    yield home
    sys.path[:] = path_before
    for name in [m for m in sys.modules if m == "evaluate_modules" or m.startswith("evaluate_modules.")]:
        del sys.modules[name]


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "toy_accuracy.py"
    path.write_text(textwrap.dedent(TOY_METRIC))
    return path


def hf_metric(name, **metric_config):
    return HuggingFaceMetric.from_sub_type(str(name), metric_config)


def random_labels(seed=0, n=200, classes=4):
    rng = np.random.default_rng(seed)
    return rng.integers(0, classes, n), rng.integers(0, classes, n)


def test_value_matches_sklearn_accuracy(hf_home, script):
    preds, refs = random_labels()
    metric = hf_metric(script)
    assert (metric.kind, metric.input, metric.higher_is_better) == (Kind.GLOBAL, "preds", True)
    score = metric.compute(preds, refs)
    assert isinstance(score.value, float)
    assert score.value == pytest.approx(accuracy_score(refs, preds), abs=1e-12)
    assert score.extra == {"result_key": "toy_accuracy"}  # the script's stem, since result_key is null
    assert HuggingFaceMetric.name not in metric_names() and metric.name not in metric_names()


def test_loads_lazily_once_and_caches_under_hf_home(hf_home, script):
    metric = hf_metric(script)
    assert metric._module is None  # from_sub_type loads nothing
    module = metric.load()
    assert metric.load() is module
    preds, refs = random_labels(1)
    metric.compute(preds, refs)
    assert metric.load() is module
    assert list((hf_home / "modules" / "evaluate_modules" / "metrics").glob("toy_accuracy/*/toy_accuracy.py"))


def test_dotted_result_key_picks_nested_value(hf_home, script):
    preds, refs = random_labels(2)
    assert hf_metric(script, result_key="nested.precision").compute(preds, refs).value == 0.25
    assert hf_metric(script, result_key="nested.count").compute(preds, refs).value == len(preds)


def test_compute_params_are_passed_through(hf_home, script):
    preds, refs = random_labels(3)
    score = hf_metric(script, compute_params={"scale": 100}).compute(list(preds), refs)
    assert score.value == pytest.approx(100 * accuracy_score(refs, preds))


def test_compute_failure_is_an_evaluation_error(hf_home, script):
    preds, refs = random_labels(8)
    with pytest.raises(EvaluationError, match=r"failed to compute: TypeError: .*unexpected keyword argument 'bogus'"):
        hf_metric(script, compute_params={"bogus": 1}).compute(preds, refs)


def test_relative_name_resolves_against_base_dir(hf_home, script):
    preds, refs = random_labels(4)
    metric = HuggingFaceMetric("toy_accuracy.py", HuggingFaceMetricConfig())
    metric.load(base_dir=script.parent)
    assert metric.compute(preds, refs).value == pytest.approx(accuracy_score(refs, preds))


def test_missing_key_lists_the_result_keys(hf_home, script):
    preds, refs = random_labels(5)
    with pytest.raises(EvaluationError, match=r"no key 'recall'; the result has keys: toy_accuracy, nested, label"):
        hf_metric(script, result_key="recall").compute(preds, refs)
    with pytest.raises(EvaluationError, match=r"no key 'nested.recall'; nested has keys: precision, count"):
        hf_metric(script, result_key="nested.recall").compute(preds, refs)


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("label", "str"),
        ("flag", "bool"),
        ("per_class", "list"),
        (
            "nested",
            r"dict, not a real number \(keys: precision, count; set metric_config.result_key to one, e.g. 'nested.precision'\)",
        ),
    ],
)
def test_non_number_result_is_an_error(hf_home, script, key, shown):
    preds, refs = random_labels(6)
    with pytest.raises(EvaluationError, match=rf"'{script}': result '{key}' is a {shown}"):
        hf_metric(script, result_key=key).compute(preds, refs)


def test_unknown_hub_name_offline_is_one_line(hf_home, monkeypatch):
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE"):
        monkeypatch.setenv(var, "1")
    monkeypatch.setattr(evaluate.config, "HF_EVALUATE_OFFLINE", True)  # read from the environment at import
    metric = hf_metric("olive_eval_made_up_metric")
    with pytest.raises(EvaluationError) as info:
        metric.compute(np.array([0, 1]), np.array([0, 1]))
    assert str(info.value) == (
        "huggingface metric 'olive_eval_made_up_metric' is not a local script and is not in the local cache "
        '(no network to fetch it); point the sub-type name at a local metric script, e.g. "name": "path/to/my_metric.py"'
    )


def test_hub_name_in_the_local_modules_cache_loads_offline(hf_home, script, monkeypatch):
    """A Hub metric fetched once before sits in the modules cache; evaluate falls back to it offline."""
    monkeypatch.setattr(evaluate.config, "HF_EVALUATE_OFFLINE", True)
    cached = hf_home / "modules" / "evaluate_modules" / "metrics" / "evaluate-metric--toy_accuracy" / ("0" * 64)
    cached.mkdir(parents=True)
    (cached / "toy_accuracy.py").write_text(script.read_text())
    for folder in (cached, *cached.parents[:3]):
        (folder / "__init__.py").touch()
    preds, refs = random_labels(7)
    assert hf_metric("toy_accuracy").compute(preds, refs).value == pytest.approx(accuracy_score(refs, preds))


def test_missing_local_script_and_bad_load_params(hf_home, script, tmp_path):
    with pytest.raises(EvaluationError, match=r"nope.py' could not be loaded: Couldn't find a metric script at"):
        hf_metric(tmp_path / "nope.py").load()
    with pytest.raises(EvaluationError, match=r"could not be loaded: ValueError: 'process_id' should be"):
        hf_metric(script, load_params={"process_id": -1}).load()


def test_metric_config_is_strict():
    with pytest.raises(ValueError, match="did you mean 'result_key'"):
        HuggingFaceMetric.from_sub_type("accuracy", {"result_keys": "accuracy"})


def test_missing_evaluate_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "evaluate", None)
    with pytest.raises(MissingDependencyError, match=r"huggingface_metrics backend.*olive-eval\[hf\]"):
        HuggingFaceMetric.from_sub_type("accuracy", None)
    metric = HuggingFaceMetric("accuracy", HuggingFaceMetricConfig())
    with pytest.raises(MissingDependencyError, match=r"pip install 'olive-eval\[hf\]'"):
        metric.compute(np.array([0, 1]), np.array([0, 1]))


def test_backend_through_a_run_config(hf_home, script, toy):
    """Olive's JSON: backend huggingface_metrics, sub-type named by a script path relative to the config."""
    import json

    assert script.parent == toy.root  # both fixtures use the test's tmp_path
    metric = {
        "name": "hf",
        "type": "accuracy",
        "backend": "huggingface_metrics",
        "data_config": "toy",
        "sub_types": [
            {
                "name": "toy_accuracy.py",
                "priority": 1,
                "goal": {"type": "max-degradation", "value": 0.5},
                "metric_config": {"compute_params": {"scale": 2.0}},
            },
            {"name": "./toy_accuracy.py", "metric_config": {"result_key": "nested.count"}},
        ],
    }
    config = toy.config({}, [metric])
    config["data_configs"][0]["post_process_data_config"] = {"type": "argmax"}
    path = toy.root / "run.json"
    path.write_text(json.dumps(config))
    from olive_eval import evaluate as run_evaluation

    result = run_evaluation(path)
    base = result.models["base"]
    assert base.status == "ok", base.error
    expected = accuracy_score(toy.labels, (toy.x @ toy.weights).argmax(axis=1))
    assert base.metrics["hf-toy_accuracy.py"].value == pytest.approx(2.0 * expected)
    assert base.metrics["hf-./toy_accuracy.py"].value == len(toy.labels)

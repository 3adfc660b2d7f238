"""Extra per-example fields to a Hugging Face ``evaluate`` metric (Unitxt's ``hf_additional_input_fields_pass`` and
``..._one_value``), against a local metric script of weighted accuracy: scikit-learn's ``accuracy_score`` with the
same ``sample_weight`` is the reference."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from olive_eval import evaluate as run_evaluation
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError, EvaluationError
from olive_eval.metrics.huggingface import HuggingFaceMetric
from tests.helpers import python_model_run, write_jsonl
from tests.metrics.test_huggingface_backend import hf_home  # noqa: F401  # the fixture: evaluate's caches in tmp_path

evaluate = pytest.importorskip("evaluate")

WEIGHTED = """
import datasets
import evaluate


class WeightedAccuracy(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="accuracy weighted per example, times one scale for the whole set",
            citation="",
            inputs_description="",
            features=datasets.Features(
                {"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}
            ),
        )

    def _compute(self, predictions, references, weight, scale):
        assert isinstance(scale, (int, float)), type(scale)
        hits = sum(w * (p == r) for p, r, w in zip(predictions, references, weight))
        return {"weighted_accuracy": scale * hits / sum(weight)}
"""

MODEL = textwrap.dedent(
    """
    def load(model_path):
        return lambda batch: [int(x) % 3 for x in batch["x"]]
    """
)


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "weighted_accuracy.py"
    path.write_text(textwrap.dedent(WEIGHTED))
    return path


def sample(seed: int, n: int = 120) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 3, n), rng.integers(0, 3, n), rng.uniform(0.1, 2.0, n)


def weighted(script, **config) -> HuggingFaceMetric:
    return HuggingFaceMetric.from_sub_type(
        str(script),
        {"additional_input_fields": ["weight"], "additional_input_fields_one_value": ["scale"], **config},
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_extra_fields_reach_compute_by_name(hf_home, script, seed):  # noqa: F811
    preds, refs, weights = sample(seed)
    if seed == 2:  # edge: one class everywhere, every prediction right, equal weights
        preds, refs, weights = np.zeros(30, int), np.zeros(30, int), np.ones(30)
    metric = weighted(script)
    assert metric.reads == ("prediction", "references", "weight", "scale")
    score = metric.compute(preds, refs, weights, np.full(len(preds), 3))
    assert score.value == pytest.approx(3 * accuracy_score(refs, preds, sample_weight=weights), abs=1e-12)


def test_one_value_field_that_differs_names_the_example(hf_home, script):  # noqa: F811
    preds, refs, weights = sample(3, n=10)
    scales = np.full(10, 2.0)
    scales[7] = 5.0
    with pytest.raises(EvaluationError) as info:
        weighted(script).compute(preds, refs, weights, scales)
    assert str(info.value) == (
        f"huggingface metric '{script}': additional_input_fields_one_value 'scale' is not the same in every example "
        "(example 0: 2.0, example 7: 5.0); list it in additional_input_fields to pass one value per example"
    )


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ({"additional_input_fields": ["references"]}, "additional_input_fields"),
        ({"additional_input_fields": ["w", "w"]}, "additional_input_fields"),
        ({"compute_params": {"scale": 2}, "additional_input_fields_one_value": ["scale"]}, "one_value"),
        ({"additional_input_fields": ["s"], "additional_input_fields_one_value": ["s"]}, "one_value"),
    ],
)
def test_extra_field_that_repeats_an_argument_is_refused(config, where):
    with pytest.raises(ValueError, match=rf"{where}[\s\S]*is already an argument of compute"):
        HuggingFaceMetric.from_sub_type("accuracy", config)


def write_run(tmp_path, script, sub_types: list[dict]) -> tuple[dict, list[dict]]:
    (tmp_path / "models.py").write_text(MODEL)
    rng = np.random.default_rng(5)
    rows = [
        {
            "x": int(rng.integers(0, 9)),
            "target": int(rng.integers(0, 3)),
            "weight": float(w),
            "w2": float(v),
            "scale": 4,
        }
        for w, v in zip(rng.uniform(0.1, 2, 26), rng.uniform(0.1, 2, 26), strict=True)
    ]
    write_jsonl(tmp_path / "d.jsonl", rows)
    metric = {"name": "hf", "backend": "huggingface_metrics", "sub_types": sub_types}
    return python_model_run(tmp_path, metric), rows


def test_run_passes_data_columns_and_a_remap_chooses_another(hf_home, script, tmp_path):  # noqa: F811
    extra = {"additional_input_fields": ["weight"], "additional_input_fields_one_value": ["scale"]}
    subs = [
        {"name": script.name, "priority": 1, "metric_config": extra, "confidence_interval": {"n_resamples": 50}},
        {"name": script.name, "score_name": "weighted_w2", "metric_config": extra, "fields": {"weight": "w2"}},
    ]
    config, rows = write_run(tmp_path, script, subs)
    (tmp_path / "run.json").write_text(json.dumps(config))  # the script's name resolves against the config's folder
    result = run_evaluation(tmp_path / "run.json")
    model = result.models["m"]
    assert model.status == "ok", model.error
    preds = [r["x"] % 3 for r in rows]
    refs = [r["target"] for r in rows]
    for key, column in ((f"hf-{script.name}", "weight"), ("hf-weighted_w2", "w2")):
        expected = 4 * accuracy_score(refs, preds, sample_weight=[r[column] for r in rows])
        assert model.metrics[key].value == pytest.approx(expected, abs=1e-12)
    first = model.metrics[f"hf-{script.name}"]
    assert (
        first.ci_low <= first.value <= first.ci_high and first.ci_low < first.ci_high
    )  # resamples pass the fields too


def test_missing_extra_column_is_refused_when_planned(hf_home, script, tmp_path):  # noqa: F811
    extra = {"additional_input_fields": ["weight", "wieght"]}
    config, _ = write_run(tmp_path, script, [{"name": script.name, "priority": 1, "metric_config": extra}])
    with pytest.raises(ConfigError) as info:
        run_evaluation(config)
    assert info.value.path == "metrics[0].sub_types[0].metric_config.additional_input_fields[1]"
    assert "reads wieght, which data config 'd' does not give" in str(info.value)
    assert "\n" not in str(info.value)


def test_extra_field_of_the_config_is_checked_when_loaded(tmp_path, script):
    config, _ = write_run(tmp_path, script, [{"name": "x", "metric_config": {"additional_input_fields": [1.5]}}])
    with pytest.raises(ConfigError) as info:
        load_run_config(config, base_dir=tmp_path)
    assert info.value.path.startswith("metrics[0].sub_types[0].metric_config.additional_input_fields")

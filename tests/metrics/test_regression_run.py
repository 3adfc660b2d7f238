"""The regression and agreement sub-types end to end: Python models over a JSON-lines file, scored in one pass,
equal to scikit-learn and scipy on the same outputs, each with a seeded confidence interval around its value, and a
goal at a confidence (a paired bootstrap of baseline and candidate) on a global and a map/reduce sub-type."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from sklearn import metrics as skm

from olive_eval import evaluate
from tests.helpers import python_model_run, write_jsonl

MODELS = textwrap.dedent(
    """
    from pathlib import Path

    import numpy as np


    def outputs(x, noise):
        return 2.0 * x + 1.0 + noise * np.sin(37.0 * x + 1.0)


    def load(model_path):
        noise = float(Path(model_path).read_text())
        return lambda batch: [float(v) for v in outputs(np.asarray(batch["x"], dtype=float), noise)]


    def load_classes(model_path):
        noise = float(Path(model_path).read_text())
        return lambda batch: [int(v) % 4 for v in np.round(outputs(np.asarray(batch["x"], dtype=float), noise))]
    """
)
N = 150


def outputs(x: np.ndarray, noise: float) -> np.ndarray:
    return 2.0 * x + 1.0 + noise * np.sin(37.0 * x + 1.0)


@pytest.fixture
def data(tmp_path: Path):
    (tmp_path / "models.py").write_text(MODELS)
    x = np.linspace(0.0, 3.0, N)
    target = outputs(x, 0.0) + np.cos(11.0 * x)  # the truth: the baseline (noise 0.5) is close, not exact
    classes = np.round(target).astype(int) % 4
    write_jsonl(tmp_path / "d.jsonl", [{"x": float(a), "target": float(t)} for a, t in zip(x, target, strict=True)])
    write_jsonl(tmp_path / "c.jsonl", [{"x": float(a), "target": int(c)} for a, c in zip(x, classes, strict=True)])
    for name, noise in (("base", "0.5"), ("close", "0.55"), ("far", "3.0")):
        (tmp_path / name).write_text(noise)
    return tmp_path, x, target, classes


def run_config(folder: Path, sub_types: list[dict], data: str, loader: str, candidates: tuple[str, ...] = ()) -> dict:
    config = python_model_run(folder, {"name": "m", "sub_types": sub_types}, data=data, model_path="base")
    config["input_model"]["model_loader"] = loader
    config["data_configs"][0]["load_dataset_config"]["data_files"] = str(folder / f"{data}.jsonl")
    config["candidates"] = [{**config["input_model"], "name": c, "model_path": str(folder / c)} for c in candidates]
    return config


REGRESSION = {
    "mse": lambda y, p: skm.mean_squared_error(y, p),
    "rmse": lambda y, p: skm.root_mean_squared_error(y, p),
    "mae": lambda y, p: skm.mean_absolute_error(y, p),
    "r2_score": lambda y, p: skm.r2_score(y, p),
    "pearson": lambda y, p: scipy.stats.pearsonr(p, y).statistic,
    "spearman": lambda y, p: scipy.stats.spearmanr(p, y).statistic,
    "kendall_tau": lambda y, p: scipy.stats.kendalltau(p, y).statistic,
}


def test_regression_sub_types_equal_their_references_with_intervals(data):
    folder, x, target, _ = data
    interval = {"n_resamples": 400, "seed": 3}
    subs = [{"name": name, "confidence_interval": interval} for name in REGRESSION]
    subs[5]["priority"] = 1
    metrics = evaluate(run_config(folder, subs, "d", "load")).models["m"].metrics
    predictions = outputs(x, 0.5)
    for name, reference in REGRESSION.items():
        result = metrics[f"m-{name}"]
        assert result.value == pytest.approx(reference(target, predictions), rel=1e-9)
        assert result.ci_low < result.value < result.ci_high, name


def test_agreement_sub_types_equal_scikit_learn_with_intervals(data):
    folder, x, _, classes = data
    interval = {"n_resamples": 400, "seed": 3}
    subs = [
        {"name": "matthews_corrcoef", "priority": 1, "confidence_interval": interval},
        {"name": "cohen_kappa", "metric_config": {"weights": "quadratic"}, "confidence_interval": interval},
    ]
    metrics = evaluate(run_config(folder, subs, "c", "load_classes")).models["m"].metrics
    predicted = np.round(outputs(x, 0.5)).astype(int) % 4
    assert metrics["m-matthews_corrcoef"].value == pytest.approx(skm.matthews_corrcoef(classes, predicted))
    expected = skm.cohen_kappa_score(classes, predicted, weights="quadratic", labels=range(4))
    assert metrics["m-cohen_kappa"].value == pytest.approx(expected)
    for name in ("m-matthews_corrcoef", "m-cohen_kappa"):
        assert metrics[name].ci_low < metrics[name].value < metrics[name].ci_high


def test_a_goal_at_a_confidence_compares_paired_resamples(data):
    """A candidate barely worse than the baseline meets a loose goal with confidence; a much worse one misses it,
    on spearman (resampled from per-example pairs) and on mse (map/reduce) alike."""
    folder, *_ = data
    goal = {"type": "max-degradation", "value": 0.2, "confidence": 0.95, "n_resamples": 300, "seed": 5}
    subs = [{"name": "spearman", "priority": 1, "goal": goal}, {"name": "mse", "priority": 2, "goal": goal}]
    result = evaluate(run_config(folder, subs, "d", "load", candidates=("close", "far")))
    for name in ("m-spearman", "m-mse"):
        close, far = result.models["close"].metrics[name].goal, result.models["far"].metrics[name].goal
        assert close.met and not far.met, name
        assert close.change_ci_low < close.change < close.change_ci_high
    assert result.ranking[0] == "close"

"""ece, mce and brier_score through a run: PyTorch models whose logits are a fixed table, a baseline and an
overconfident candidate (the same logits, sharpened). Values equal torchmetrics and scikit-learn on the logits the
models gave; the ECE interval is the percentile interval of the ECE on the configured seed's resamples; a goal on
ECE at 95% confidence decides on paired resamples; results.json carries the reliability diagram."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import scipy.special
import torch
from sklearn.metrics import brier_score_loss
from torchmetrics.functional.classification import multiclass_calibration_error

from olive_eval import evaluate
from olive_eval.report.html import write_report
from tests.helpers import write_jsonl

N, C = 600, 3
RESAMPLES, SEED = 400, 7

LOADER = textwrap.dedent(
    """
    import json
    import torch

    def load(model_path):
        table = torch.tensor(json.load(open(model_path)), dtype=torch.float32)

        def model(x):
            return table[x[:, 0].long()]

        return model
    """
)


def logits_table(sharpen: float) -> np.ndarray:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, C, N)
    logits = rng.normal(size=(N, C))
    logits[np.arange(N), labels] += 1.0
    return (logits * sharpen).astype(np.float32), labels


@pytest.fixture
def run(tmp_path):
    base, labels = logits_table(1.0)
    sharp, _ = logits_table(4.0)
    data = write_jsonl(tmp_path / "d.jsonl", [{"x": [i, int(y)], "label": int(y)} for i, y in enumerate(labels)])
    (tmp_path / "loader.py").write_text(LOADER)
    models = []
    for name, table in (("base", base), ("sharp", sharp)):
        (tmp_path / f"{name}.json").write_text(json.dumps(table.tolist()))
        models.append(
            {
                "type": "PyTorchModel",
                "name": name,
                "model_path": str(tmp_path / f"{name}.json"),
                "model_loader": "load",
                "model_script": str(tmp_path / "loader.py"),
            }
        )
    interval = {"n_resamples": RESAMPLES, "seed": SEED}
    config = {
        "input_model": models[0],
        "candidates": models[1:],
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
                "dataloader_config": {"batch_size": 64},
            }
        ],
        "metrics": [
            {
                "name": "cal",
                "type": "accuracy",
                "data_config": "d",
                "sub_types": [
                    {
                        "name": "ece",
                        "priority": 1,
                        "confidence_interval": interval,
                        "goal": {"type": "max-degradation", "value": 0.02, "confidence": 0.95},
                    },
                    {"name": "mce", "metric_config": {"n_bins": 10}},
                    {"name": "brier_score"},
                ],
            },
            {
                "name": "adaptive",
                "type": "accuracy",
                "data_config": "d",
                "sub_types": [{"name": "ece", "metric_config": {"binning": "adaptive"}}],
            },
        ],
        "output_dir": str(tmp_path / "out"),
    }
    return evaluate(config), {"base": base, "sharp": sharp}, labels, tmp_path / "out"


def ece_of(logits: np.ndarray, labels: np.ndarray) -> float:
    """ECE in float64 written out (15 bins k/15, a bin for confidence 1), from scipy's softmax."""
    p = scipy.special.softmax(logits.astype(np.float64), axis=1)
    confidence, hit = p.max(axis=1), (p.argmax(axis=1) == labels).astype(np.float64)
    bins = np.searchsorted(np.arange(16) / 15, confidence, side="right") - 1
    gaps = [abs(confidence[bins == b].sum() - hit[bins == b].sum()) for b in np.unique(bins)]
    return float(np.sum(gaps) / len(labels))


def test_values_intervals_goals_and_the_reliability_diagram(run) -> None:
    result, tables, labels, out = run
    for name, logits in tables.items():
        metrics = result.models[name].metrics
        tensor, target = torch.from_numpy(logits), torch.from_numpy(labels)
        ece = multiclass_calibration_error(tensor, target, C, 15, "l1")
        mce = multiclass_calibration_error(tensor, target, C, 10, "max")
        assert metrics["cal-ece"].value == pytest.approx(float(ece), abs=1e-5)
        assert metrics["cal-ece"].value == pytest.approx(ece_of(logits, labels), abs=1e-6)  # float32 logits
        assert metrics["cal-mce"].value == pytest.approx(float(mce), abs=1e-5)
        probabilities = scipy.special.softmax(logits.astype(np.float64), axis=1)
        brier = brier_score_loss(labels, probabilities, labels=list(range(C)))
        assert metrics["cal-brier_score"].value == pytest.approx(brier, abs=1e-6)
        assert metrics["adaptive-ece"].value != metrics["cal-ece"].value
        # the interval: scipy's draws for the configured seed, ECE of each resample, percentiles
        idx = np.random.default_rng(SEED).integers(0, N, (RESAMPLES, N))
        theta = [ece_of(logits[i], labels[i]) for i in idx]
        low, high = np.percentile(theta, [2.5, 97.5])
        assert metrics["cal-ece"].ci_low == pytest.approx(low, abs=1e-6)
        assert metrics["cal-ece"].ci_high == pytest.approx(high, abs=1e-6)
    sharp = result.models["sharp"].metrics
    assert sharp["cal-ece"].value > result.models["base"].metrics["cal-ece"].value + 0.1  # overconfident
    goal = sharp["cal-ece"].goal
    assert goal is not None and not goal.met and goal.probability == pytest.approx(0.0, abs=1e-3)
    written = json.loads((out / "results.json").read_text())["models"]["sharp"]["metrics"]["cal-ece"]
    rows = written["details"]["reliability"]
    assert written["details"]["binning"] == "uniform" and len(rows) in (15, 16)
    assert sum(r["count"] for r in rows) == N
    assert {"lower", "upper", "count", "confidence", "accuracy"} == set(rows[0])
    page = write_report(out).read_text()
    assert "<div class='oe-chart' id='reliability-cal-ece'" in page  # drawn from the run's details

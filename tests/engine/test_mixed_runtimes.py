"""One run, several runtimes and settings: ONNX baseline, TorchScript and torch.export candidates, a metric override."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from olive_eval import compute_metric, evaluate
from olive_eval.runtimes.onnx import OnnxRuntime


class Linear(torch.nn.Module):
    def __init__(self, weights: np.ndarray) -> None:
        super().__init__()
        self.weights = torch.nn.Parameter(torch.from_numpy(weights))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weights


def acc_and_latency():
    return [
        {
            "name": "acc",
            "type": "accuracy",
            "data_config": "toy",
            "sub_types": [
                {"name": "accuracy_score", "priority": 1, "goal": {"type": "max-degradation", "value": 0.0}},
                {"name": "auroc", "metric_config": {"task": "multiclass", "num_classes": 3}},
            ],
        },
        {
            "name": "lat",
            "type": "latency",
            "data_config": "toy",
            "sub_types": [{"name": "avg", "priority": 2, "metric_config": {"warmup_num": 1, "repeat_test_num": 3}}],
        },
    ]


@pytest.mark.filterwarnings("ignore:`torch.jit.trace:DeprecationWarning")
def test_torchscript_and_export_candidates_score_like_the_onnx_baseline(toy):
    module = Linear(toy.weights).eval()
    example = torch.from_numpy(toy.x[:2])
    scripted = toy.root / "linear.pt"
    torch.jit.trace(module, example).save(str(scripted))
    exported = toy.root / "linear.pt2"
    batch = torch.export.Dim("batch")
    torch.export.save(torch.export.export(module, (example,), dynamic_shapes=({0: batch},)), str(exported))
    config = toy.config({}, acc_and_latency())
    config["candidates"] = [
        {"type": "PyTorchModel", "name": "scripted", "model_path": str(scripted)},
        {"type": "PyTorchModel", "name": "exported", "model_path": str(exported)},
    ]
    result = evaluate(config)
    assert [m.status for m in result.models.values()] == ["ok", "ok", "ok"], [m.error for m in result.models.values()]
    base = result.models["base"].metrics
    for name in ("scripted", "exported"):
        metrics = result.models[name].metrics
        assert metrics["acc-accuracy_score"].value == base["acc-accuracy_score"].value
        assert metrics["acc-auroc"].value == pytest.approx(base["acc-auroc"].value, abs=1e-9)
        assert [r["runtime"] for r in result.models[name].runtimes] == ["torch"]
    assert set(result.ranking) == {"scripted", "exported"}


def test_metric_inference_override_gets_its_own_session_and_same_predictions(toy, monkeypatch):
    loads = []
    original = OnnxRuntime.load.__func__

    def counting_load(cls, model_config, device, providers, override=None):
        loads.append(None if override is None else override.io_bind)
        return original(cls, model_config, device, providers, override)

    monkeypatch.setattr(OnnxRuntime, "load", classmethod(counting_load))
    metrics = acc_and_latency()
    metrics.append(
        {
            "name": "acc_bound",
            "type": "accuracy",
            "data_config": "toy",
            "sub_types": [{"name": "accuracy_score"}],
            "user_config": {"io_bind": True},
        }
    )
    result = evaluate(toy.config({}, metrics))
    # one session per distinct settings, not per metric; the timing phase then loads the model once more
    assert sorted(loads, key=str) == [None, None, True]
    m = result.models["base"].metrics
    assert m["acc_bound-accuracy_score"].value == m["acc-accuracy_score"].value


def test_compute_metric_without_a_model():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(5)
    refs, preds = rng.integers(0, 4, 200), rng.integers(0, 4, 200)
    ours = compute_metric("f1_score", preds, refs, task="multiclass", num_classes=4, average="macro")
    assert ours == pytest.approx(f1_score(refs, preds, average="macro"), abs=1e-12)
    with pytest.raises(Exception, match="unknown metric 'f2_score'"):
        compute_metric("f2_score", preds, refs)

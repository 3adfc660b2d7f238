"""The run context: made once from the config, frozen, and the only way the download policy reaches a load."""

from __future__ import annotations

import dataclasses

import pytest

import olive_eval.engine.run.context as context_module
from olive_eval.config import load_run_config
from olive_eval.engine.run.context import RunContext
from olive_eval.huggingface_env import downloads_allowed


def test_the_context_holds_the_run_s_settings(toy):
    metrics = [
        {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [{"name": "accuracy_score", "confidence_interval": {"n_resamples": 50, "seed": 7}}],
        }
    ]
    run = load_run_config({**toy.config({}, metrics), "allow_download": True})
    context = RunContext.of(run)
    assert context.device == "cpu" and context.providers == (("CPUExecutionProvider", {}),)
    assert context.allow_download is True and context.seeds == {"acc-accuracy_score.confidence_interval": 7}
    assert context.provider_names == ["CPUExecutionProvider"] and context.source_dir == run.source_dir
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.device = "gpu"  # type: ignore[misc]


@pytest.mark.parametrize("allowed", [True, False])
def test_a_load_sees_the_run_s_download_policy_and_only_during_the_load(toy, monkeypatch, allowed):
    run = load_run_config(
        {
            **toy.config({}, [{"name": "a", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}]),
            "allow_download": allowed,
        }
    )
    seen = []
    monkeypatch.setattr(context_module, "create_runtime", lambda *args: seen.append((args[1:3], downloads_allowed())))
    RunContext.of(run).load(run.input_model)
    assert seen == [(("cpu", [("CPUExecutionProvider", {})]), allowed)]
    assert downloads_allowed() is False  # never outside a load
    assert not hasattr(run.input_model, "_allow_download")

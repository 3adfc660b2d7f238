"""A model olive-eval runs as the judge: a tiny random Llama (an ``HfModel``) loaded through the runtime interface
and generating through its lm-eval adapter. Its replies are noise, so every one is unparseable: counted,
excluded, and the value undefined, never 0; the model is recorded as the judge and loaded once for two sub-types."""

from __future__ import annotations

import math

import pytest

from olive_eval.judges import resolve_judge
from olive_eval.metrics.registry import get_metric
from tests.runtimes import llm_models


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory):
    return llm_models.build_tiny_llama(tmp_path_factory.mktemp("judge_llama") / "hf")


def test_a_generating_model_judges_and_its_noise_is_excluded_not_scored(llama):
    spec = {
        "type": "model",
        "model": {"type": "HfModel", "model_path": str(llama), "task": "text-generation"},
        "max_new_tokens": 6,
        "batch_size": 4,
    }
    bias = get_metric("bias", {"judge": spec})
    score = bias.reduce(bias.statistics(["one opinion", "another one"]))
    assert math.isnan(score.value) and score.details["unparseable"] == 2
    identity = score.details["judge"]
    assert identity["source"] == "model" and identity["runtime"]["runtime"] == "transformers"
    assert identity["generation"]["max_gen_toks"] == 6 and identity["model"]["model_path"] == str(llama)
    toxicity = get_metric("toxicity", {"judge": spec})
    toxicity.statistics(["one opinion"])
    judge = resolve_judge(spec)
    assert judge.calls == 1  # the opinions prompt of "one opinion" was cached by bias; one batched call


def test_a_model_judge_whose_folder_is_missing_is_a_config_error(tmp_path):
    from pydantic import ValidationError

    spec = {"type": "model", "model": {"type": "HfModel", "model_path": str(tmp_path / "nope")}}
    with pytest.raises(ValidationError, match=r"judge\.model\.model_path"):
        get_metric("bias", {"judge": spec})

"""Token fidelity: the baseline generates, every model is fed the baseline's tokens (teacher forcing); the values
equal a direct computation with transformers and scipy, the baseline's are the identity, the candidate never
generates, and a model type that cannot be teacher-forced is refused before any model loads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.special import log_softmax, rel_entr, softmax
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from olive_eval import evaluate
from olive_eval.errors import ConfigError
from olive_eval.runtimes.hf import HfRuntime
from tests.helpers import N_CLASSES, N_FEATURES, linear_onnx
from tests.runtimes import llm_models

NEW_TOKENS = 6
TOKENS = {
    "name": "tok",
    "type": "fidelity",
    "sub_types": [{"name": "token_agreement", "priority": 1}, {"name": "token_kl"}],
    "confidence_interval": {"level": 0.9, "seed": 1},
}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    base = llm_models.build_tiny_llama(root / "base", seed=0)
    cand = llm_models.build_tiny_llama(root / "cand", seed=0)
    model = LlamaForCausalLM.from_pretrained(cand)
    torch.manual_seed(5)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    model.save_pretrained(cand)
    return {"base": base, "cand": cand}


def hf(name: str, path: Path) -> dict:
    return {
        "type": "HfModel",
        "name": name,
        "model_path": str(path),
        "task": "text-generation",
        "generation_kwargs": {"max_new_tokens": NEW_TOKENS, "do_sample": False},
    }


def expected(models: dict[str, Path], prompts: list[str]) -> tuple[list[float], list[float]]:
    """Per prompt, written out here: greedy continuation of the baseline (cut after its first end token), then
    each model's logits on prompt + continuation; agreement of the candidate's argmax, KL(baseline ‖ candidate)."""
    tokenizer = PreTrainedTokenizerFast.from_pretrained(models["base"])
    base, cand = (LlamaForCausalLM.from_pretrained(models[k]).eval() for k in ("base", "cand"))
    agreement, kl = [], []
    for text in prompts:
        ids = tokenizer(text, return_tensors="pt").input_ids
        with torch.no_grad():
            out = base.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        continuation = out[0, ids.shape[1] :].numpy()
        ends = np.flatnonzero(continuation == tokenizer.eos_token_id)
        continuation = continuation[: ends[0] + 1] if ends.size else continuation
        full = torch.from_numpy(np.concatenate([ids[0].numpy(), continuation]))[None]
        p = ids.shape[1]
        with torch.no_grad():
            lb = base(full).logits[0, p - 1 : -1].double().numpy()
            lc = cand(full).logits[0, p - 1 : -1].double().numpy()
        agreement.append(float(np.mean(lc.argmax(-1) == continuation)))
        kl.append(float(rel_entr(softmax(lb, -1), softmax(lc, -1)).sum(-1).mean()))
        assert np.array_equal(lb.argmax(-1), continuation)  # greedy: the baseline agrees with itself
        assert np.allclose(log_softmax(lb, -1), log_softmax(lb, -1))
    return agreement, kl


def test_token_fidelity_equals_teacher_forcing_written_out(models, tmp_path, monkeypatch):
    prompts = llm_models.sentences(5, seed=3)
    config = {
        "input_model": hf("base", models["base"]),
        "candidates": [hf("cand", models["cand"])],
        "data_configs": [llm_models.prompts_data_config(tmp_path / "p.jsonl", prompts, batch_size=1)],
        "metrics": [TOKENS],
        "output_dir": str(tmp_path / "out"),
    }
    generated: list[str] = []
    predict = HfRuntime.predict
    monkeypatch.setattr(
        HfRuntime, "predict", lambda self, b: generated.append(self.config.display_name()) or predict(self, b)
    )
    result = evaluate(config)
    assert set(generated) == {"base"}  # the candidate is fed the baseline's tokens, never generates
    base = result.models["base"].metrics
    assert (base["tok-token_agreement"].value, base["tok-token_kl"].value) == (1.0, 0.0)
    agreement, kl = expected(models, prompts)
    cand = result.models["cand"].metrics
    assert cand["tok-token_agreement"].value == pytest.approx(np.mean(agreement))
    assert cand["tok-token_kl"].value == pytest.approx(np.mean(kl), rel=1e-4)
    assert cand["tok-token_kl"].ci_low <= cand["tok-token_kl"].value <= cand["tok-token_kl"].ci_high
    assert (tmp_path / "out/outputs/base/gen.teacher_forced/part-000000000000.arrow").is_file()


def test_a_model_type_that_cannot_be_teacher_forced_is_refused_at_the_sub_type(tmp_path):
    path = linear_onnx(tmp_path / "m.onnx", np.ones((N_FEATURES, N_CLASSES), dtype=np.float32))
    config = {
        "input_model": {"type": "ONNXModel", "name": "m", "model_path": str(path)},
        "data_configs": [llm_models.prompts_data_config(tmp_path / "p.jsonl", ["a b c"])],
        "metrics": [TOKENS],
        "output_dir": str(tmp_path / "out"),
    }
    with pytest.raises(ConfigError) as caught:
        evaluate(config)
    assert "metrics[0].sub_types[0].name" in str(caught.value) and "HfModel can" in str(caught.value)
    assert not (tmp_path / "out").exists() or not (tmp_path / "out/results.json").exists()


def test_token_and_output_measures_in_one_metric_are_refused(tmp_path, models):
    config = {
        "input_model": hf("base", models["base"]),
        "data_configs": [llm_models.prompts_data_config(tmp_path / "p.jsonl", ["a b c"])],
        "metrics": [{**TOKENS, "sub_types": [{"name": "token_agreement", "priority": 1}, {"name": "exact_match"}]}],
        "output_dir": str(tmp_path / "out"),
    }
    with pytest.raises(ConfigError) as caught:
        evaluate(config)
    assert "metrics[0].sub_types[1].name" in str(caught.value) and "of their own" in str(caught.value)

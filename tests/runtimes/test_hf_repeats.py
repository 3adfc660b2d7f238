"""Repeats through an HfModel that samples (issue 19): repeat r of each prompt is what ``generate`` samples after
``torch.manual_seed(repeat_seed + r)``; greedy decoding's identical repeats are warned about."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from olive_eval.runtimes.torch_threads import torch_threads
from tests.runtimes import hf_models
from tests.runtimes.test_hf_runtime import data_config, instances, lm_data, ok, run


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hf_models.build_gpt2(tmp_path_factory.mktemp("hf_repeats") / "gpt2")


SAMPLING = {"max_new_tokens": 4, "do_sample": True, "top_k": 0, "temperature": 1.5}


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """One torch thread for the direct references: the runs' model has one too (``threads``);
    nothing here tests threads, and a worker shares two cores with another."""
    with torch_threads(1):
        yield


def direct_samples(folder: Path, texts: list[str], seeds: list[int]) -> list[list[str]]:
    """Each prompt alone, generated once per seed after seeding torch (the pass's batches hold one prompt)."""
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    out = []
    for text in texts:
        ids = torch.tensor([tokenizer(text)["input_ids"]])
        samples = []
        for seed in seeds:
            torch.manual_seed(seed)
            with torch.inference_mode():
                generated = model.generate(ids, attention_mask=torch.ones_like(ids), **SAMPLING)
            samples.append(tokenizer.decode(generated[0, ids.shape[1] :], skip_special_tokens=True).strip())
        out.append(samples)
    return out


def sampled_run(tmp_path: Path, gpt2: Path, kwargs: dict[str, Any], seed: int):
    tmp_path.mkdir(parents=True, exist_ok=True)
    data_file, texts = lm_data(tmp_path, references=["x"] * 10)
    pre = {"type": "text_generation_huggingface_pre_process", "input_cols": ["text"], "label_col": "answer"}
    model = {"type": "HfModel", "name": "gpt2", "model_path": str(gpt2), "task": "text-generation", "threads": 1}
    metric = {
        "name": "gen",
        "type": "accuracy",
        "data_config": "gen",
        "repeats": 3,
        "repeat_seed": seed,
        "reduction": "mean",
        "sub_types": [{"name": "exact_match", "priority": 1}],
    }
    result = run(
        tmp_path,
        [{**model, "generation_kwargs": kwargs}],
        [data_config("gen", data_file, pre, {"type": "decode"}, 1)],
        [metric],
    )
    ok(result)
    return result, texts, [r["prediction"] for r in instances(tmp_path, "gpt2", "gen")]


SEED = 50


@pytest.fixture(scope="module")
def seeded_run(tmp_path_factory: pytest.TempPathFactory, gpt2: Path):
    """A sampling run with repeat seed :data:`SEED`: what one test checks against ``generate`` and another runs
    again (a run is most of either test's time). A result cache of its own, as each test has."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OLIVE_EVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        return sampled_run(tmp_path_factory.mktemp("seeded_run"), gpt2, SAMPLING, SEED)


def test_each_repeat_is_generate_sampled_with_its_seed(gpt2, seeded_run):
    result, texts, samples = seeded_run
    assert samples == direct_samples(gpt2, texts, [SEED, SEED + 1, SEED + 2])
    assert any(len(set(s)) > 1 for s in samples)  # the repeats differ
    assert not any("identical" in w for w in result.models["gpt2"].warnings)


def test_another_seed_gives_other_samples(tmp_path, gpt2, seeded_run):
    _, _, first = seeded_run
    _, _, again = sampled_run(tmp_path / "b", gpt2, SAMPLING, SEED)  # a run of its own, with the same seed
    _, _, other = sampled_run(tmp_path / "c", gpt2, SAMPLING, 7)
    assert first == again
    assert first != other


def test_greedy_repeats_are_identical_and_warned(tmp_path, gpt2):
    result, _, samples = sampled_run(tmp_path, gpt2, {"max_new_tokens": 4, "do_sample": False}, 0)
    assert all(len(set(s)) == 1 for s in samples)
    assert result.models["gpt2"].warnings == [
        "10 examples whose 3 repeats were all identical, as greedy decoding gives (sample: do_sample true) on 'gen'"
    ]


def test_identical_repeats_of_a_model_that_samples_suggest_a_higher_temperature(tmp_path, gpt2):
    """A temperature near zero samples the most likely token every time: sampling, yet identical repeats."""
    cold = {**SAMPLING, "temperature": 1e-4}
    result, _, samples = sampled_run(tmp_path, gpt2, cold, 0)
    assert all(len(set(s)) == 1 for s in samples)
    assert result.models["gpt2"].warnings == [
        "10 examples whose 3 repeats were all identical although the model samples (do_sample true): a confident "
        "model, or a temperature too low; raise the temperature for repeats that differ on 'gen'"
    ]

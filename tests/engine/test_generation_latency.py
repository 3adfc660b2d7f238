"""Generation latency sub-types: each is its statistic of the token times the streaming calls recorded (an
independent computation from the same traces), for an HfModel and a GenAIModel timed in interleaved rounds; the
lengths are fixed and recorded; a candidate's tokens-per-second ratio to the baseline carries its interval."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from olive_eval import Evaluation, evaluate
from olive_eval.data.batch import Batch
from olive_eval.engine.timing.generation_timing import fixed_prompts, quantities
from olive_eval.errors import ConfigError
from olive_eval.runtimes.genai_config import GenAIModelConfig
from olive_eval.runtimes.streaming import StreamingCall, TokenTrace
from tests.engine.frozen_heap import frozen_heap
from tests.runtimes import llm_models
from tests.shared_builds import tiny_llama

SUB_TYPES = [
    "ttft",
    "ttft_p50",
    "ttft_p90",
    "tpot",
    "tpot_p90",
    "e2e",
    "e2e_p50",
    "tokens_per_second",
    "tokens_per_second_p90",
    "prefill_tokens_per_second",
    "prefill_tokens_per_second_p50",
    "peak_memory_mb",
]


@pytest.fixture(scope="module")
def llm(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The run's tiny Llama and its GenAI exports (``tests.shared_builds``: built once per run, not per process)."""
    return tiny_llama(tmp_path_factory)


@pytest.fixture(autouse=True)
def heap_set_aside() -> Iterator[None]:
    """The objects the test process made before out of the footprint's collections (tests/engine/frozen_heap)."""
    with frozen_heap():
        yield


@pytest.fixture
def traces(monkeypatch) -> dict[str, list[TokenTrace]]:
    """Every trace the timing phase takes from a streaming call, by the model that recorded it."""
    taken: dict[str, list[TokenTrace]] = {}
    original = StreamingCall.take

    def spy(self: StreamingCall, n: int) -> list[TokenTrace]:
        out = original(self, n)
        taken.setdefault(type(self).__module__, []).extend(out)
        return out

    monkeypatch.setattr(StreamingCall, "take", spy)
    return taken


def models(llm: dict[str, Path]) -> list[dict[str, Any]]:
    return [
        {"type": "HfModel", "name": "hf", "model_path": str(llm["hf"]), "task": "text-generation"},
        {"type": "GenAIModel", "name": "genai", "model_path": str(llm["fp32"])},
    ]


def config(tmp_path: Path, models: list[dict[str, Any]], metric_config: dict[str, Any], subs=SUB_TYPES, rounds=3):
    return {
        "input_model": models[0],
        "candidates": models[1:],
        "data_configs": [llm_models.prompts_data_config(tmp_path / "p.jsonl", llm_models.sentences(4, seed=1))],
        "metrics": [
            {
                "name": "gen",
                "type": "latency",
                "data_config": "gen",
                "sub_types": [
                    {"name": n, "priority": 1 if i == 0 else -1, "metric_config": metric_config}
                    for i, n in enumerate(subs)
                ],
            }
        ],
        "timing": {"rounds": rounds},
        "output_dir": str(tmp_path / "out"),
    }


def expected(traces: list[TokenTrace]) -> dict[str, float]:
    """Each sub-type from the raw token times, computed here without the package's statistics."""
    ttft = np.array([t.token_seconds[0] for t in traces])
    e2e = np.array([t.seconds for t in traces])
    n = len(traces[0].token_seconds)
    decoded = traces[0].rows * (n - 1)
    prompt = traces[0].prompt_tokens
    rates = decoded / (e2e - ttft)
    return {
        "ttft": ttft.mean() * 1000,
        "ttft_p50": np.median(ttft) * 1000,
        "ttft_p90": np.percentile(ttft, 90) * 1000,
        "tpot": np.mean((e2e - ttft) / (n - 1)) * 1000,
        "tpot_p90": np.percentile((e2e - ttft) / (n - 1), 90) * 1000,
        "e2e": e2e.mean() * 1000,
        "e2e_p50": np.median(e2e) * 1000,
        "tokens_per_second": decoded * len(traces) / (e2e - ttft).sum(),
        "tokens_per_second_p90": np.percentile(rates, 90),
        "prefill_tokens_per_second": prompt * len(traces) / ttft.sum(),
        "prefill_tokens_per_second_p50": np.median(prompt / ttft),
    }


def test_each_generation_sub_type_is_its_statistic_of_the_recorded_token_times(tmp_path, llm, traces):
    timing = {"prompt_tokens": 12, "max_new_tokens": 5, "warmup_num": 1, "repeat_test_num": 6}
    result = evaluate(config(tmp_path, models(llm), timing))
    by_model = {"hf": "olive_eval.runtimes.hf_streaming", "genai": "olive_eval.runtimes.genai"}
    for name, module in by_model.items():
        model = result.models[name]
        assert model.status == "ok", model.error
        recorded = traces[module]
        assert len(recorded) == 6
        assert {len(t.token_seconds) for t in recorded} == {5}
        assert {(t.rows, t.prompt_tokens) for t in recorded} == {(2, 24)}
        for sub, value in expected(recorded).items():
            assert model.metrics[f"gen-{sub}"].value == pytest.approx(value, rel=1e-9), (name, sub)
        units = {sub: model.metrics[f"gen-{sub}"].unit for sub in ("ttft", "tokens_per_second", "peak_memory_mb")}
        assert units == {"ttft": "ms", "tokens_per_second": "tokens/s", "peak_memory_mb": "MB"}
        assert model.metrics["gen-tokens_per_second"].higher_is_better is True
        assert model.metrics["gen-ttft_p90"].higher_is_better is False
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    for name in by_model:
        entry = next(r for r in saved["models"][name]["runtimes"] if "generation" in r)
        assert entry["generation"] == {"prompt_tokens": 12, "new_tokens": 5, "rows": 2}
        # the model's own footprint: what its load left resident + its calls' largest peak above the resident memory
        memory = entry["peak_memory"]
        assert memory["basis"].startswith("the resident memory the model's load added + the process's peak")
        peak = result.models[name].metrics["gen-peak_memory_mb"].value
        assert peak == (memory["load_bytes"] + memory["call_bytes"]) / 2**20
        assert memory["load_bytes"] > 0
        # the whole process's peak holds this model's footprint (and the other model's, resident beside it)
        assert memory["total_peak_bytes"] >= memory["load_bytes"] + memory["call_bytes"]


@pytest.mark.parametrize("new_tokens", [2, 7])
def test_max_new_tokens_sets_the_tokens_every_run_decodes(tmp_path, llm, traces, new_tokens):
    timing = {"prompt_tokens": 4, "max_new_tokens": new_tokens, "warmup_num": 0, "repeat_test_num": 2}
    result = evaluate(config(tmp_path, models(llm)[1:], timing, subs=["ttft", "tpot"]))
    assert result.models["genai"].status == "ok", result.models["genai"].error
    assert [len(t.token_seconds) for t in traces["olive_eval.runtimes.genai"]] == [new_tokens] * 2


def test_a_candidates_tokens_per_second_ratio_carries_its_interval(tmp_path, llm):
    timing = {"prompt_tokens": 8, "max_new_tokens": 4, "warmup_num": 1, "repeat_test_num": 9}
    result = evaluate(config(tmp_path, models(llm), timing, subs=["tokens_per_second", "ttft"]))
    base = result.models["hf"].metrics["gen-tokens_per_second"]
    candidate = result.models["genai"].metrics["gen-tokens_per_second"]
    assert candidate.timing.rounds == base.timing.rounds == 3
    assert candidate.timing.ratio_to_baseline == pytest.approx(candidate.value / base.value)
    assert candidate.timing.ratio_ci_low < candidate.timing.ratio_to_baseline < candidate.timing.ratio_ci_high


def test_a_model_that_cannot_stream_fails_its_generation_metric(tmp_path, llm):
    script = tmp_path / "model.py"
    script.write_text("def load(path):\n    return lambda batch: ['x'] * len(batch['input_ids'])\n")
    model = {"type": "PythonModel", "name": "py", "user_script": str(script), "model_loader": "load"}
    model["processor_path"] = str(llm["hf"])
    result = evaluate(config(tmp_path, [model], {"max_new_tokens": 3}, subs=["ttft"]))
    assert result.models["py"].metrics["gen-ttft"].error == (
        "a PythonModel cannot be timed token by token (the generation latency sub-types); HfModel and GenAIModel can"
    )


@pytest.mark.parametrize(
    ("metric_config", "message"),
    [
        ({"repeat_test_num": "auto"}, "generation latency takes a fixed repeat_test_num, not 'auto'"),
        ({"max_new_tokens": 1}, "greater than or equal to 2"),
        ({"prompt_tokens": 0}, "greater than or equal to 1"),
    ],
)
def test_bad_generation_timing_configs_are_config_errors(tmp_path, llm, metric_config, message):
    with pytest.raises(ConfigError, match=message) as caught:
        evaluate(config(tmp_path, models(llm)[1:], metric_config, subs=["ttft"]))
    assert "metrics[0].sub_types[0].metric_config" in str(caught.value)


def test_prompts_are_unpadded_then_repeated_or_cut_to_the_fixed_length():
    ids = np.array([[0, 0, 5, 6, 7], [1, 2, 3, 4, 8]])
    mask = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    batch = Batch({"input_ids": ids, "attention_mask": mask, "text": ["a", "b"]}, ["input_ids", "attention_mask"])
    assert fixed_prompts(batch, 7).columns["input_ids"].tolist() == [[5, 6, 7, 5, 6, 7, 5], [1, 2, 3, 4, 8, 1, 2]]
    assert fixed_prompts(batch, None).columns["input_ids"].tolist() == [[5, 6, 7], [1, 2, 3]]
    assert fixed_prompts(batch, None).columns["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 1]]


def test_quantities_of_a_trace():
    trace = TokenTrace(prompt_tokens=10, rows=2, token_seconds=np.array([0.5, 0.7, 0.9, 1.1]), seconds=1.2)
    got = quantities([trace])
    assert got["ttft"].tolist() == [0.5]
    assert got["e2e"].tolist() == [1.2]
    assert got["tpot"] == pytest.approx([(1.2 - 0.5) / 3])
    assert got["tokens_per_second"] == pytest.approx([0.7])


def test_a_session_times_each_generating_candidate_beside_the_baseline(tmp_path, llm):
    timing = {"prompt_tokens": 8, "max_new_tokens": 3, "warmup_num": 1, "repeat_test_num": 6}
    base_config = config(tmp_path, models(llm)[:1], timing, subs=["tokens_per_second", "ttft"])
    candidate = GenAIModelConfig(type="GenAIModel", name="genai", model_path=llm["fp32"])
    with Evaluation(base_config) as session:
        result = session.evaluate(candidate)
        base = session.result.models["hf"].metrics["gen-tokens_per_second"].value
    sub = result.metrics["gen-tokens_per_second"]
    assert result.status == "ok", result.error
    assert sub.timing.interleaved and sub.timing.rounds == 3
    assert sub.timing.ratio_to_baseline == pytest.approx(sub.value / base)
    assert sub.timing.ratio_ci_low < sub.timing.ratio_to_baseline < sub.timing.ratio_ci_high


@pytest.mark.gpu
def test_on_a_gpu_peak_memory_is_the_device_memory_torch_held(tmp_path, llm):
    """Needs a CUDA device: an HfModel's peak_memory_mb is the device memory torch allocated for its load (its
    weights) + its calls' peak above that."""
    import torch

    timing = {"prompt_tokens": 8, "max_new_tokens": 3, "warmup_num": 1, "repeat_test_num": 3}
    run = {**config(tmp_path, models(llm)[:1], timing, subs=["peak_memory_mb"]), "device": "gpu"}
    result = evaluate(run)
    value = result.models["hf"].metrics["gen-peak_memory_mb"].value
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    memory = next(r["peak_memory"] for r in saved["models"]["hf"]["runtimes"] if "peak_memory" in r)
    assert "torch.cuda.max_memory_allocated" in memory["basis"]
    assert value == (memory["load_bytes"] + memory["call_bytes"]) / 2**20
    weights = sum(f.stat().st_size for f in llm["hf"].glob("*.safetensors"))  # float32 on the device
    assert weights < value * 2**20 < torch.cuda.get_device_properties(0).total_memory

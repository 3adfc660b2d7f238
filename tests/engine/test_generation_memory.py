"""peak_memory_mb is each model's own footprint in the process: the resident memory its load added plus the most
its calls took above what was resident just before them. A fake streaming runtime holds N MB once loaded and
allocates M MB more during each call: the figure is N + M (pages and allocator noise aside), and two models loaded
side by side in one run report their own, in their order, not the process's shared total."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.data.batch import Batch, Outputs
from olive_eval.data.input_spec import InputSpec
from olive_eval.runtimes import memory
from olive_eval.runtimes.base import ModelConfig, Runtime, runtime_registry
from olive_eval.runtimes.streaming import StreamingCall
from tests.engine.frozen_heap import frozen_heap

MB = 2**20
TOLERANCE_MB = 15


class HeldConfig(ModelConfig):
    type: Literal["MemoryHeld"]
    load_mb: int
    call_mb: int


class HeldCall(StreamingCall):
    """Each call holds ``call_mb`` MB (written, so resident) while it emits its tokens, then frees them."""

    def __init__(self, ids: np.ndarray, new_tokens: int, call_mb: int) -> None:
        super().__init__()
        self._ids, self._new_tokens, self._call_mb = ids, new_tokens, call_mb

    @property
    def rows(self) -> int:
        return int(self._ids.shape[0])

    def _generate(self, on_token: Callable[[], None]) -> int:
        transient = np.ones(self._call_mb * MB, np.uint8)
        for _ in range(self._new_tokens):
            on_token()
        del transient
        return int(self._ids.size)

    def outputs(self) -> Outputs:
        return {}


class HeldRuntime(Runtime):
    """A 'model' whose weights are ``load_mb`` MB of ones, resident from its load to its close."""

    model_type = "MemoryHeld"
    Config = HeldConfig
    settings_key = "memory_held"

    def __init__(self, config: HeldConfig) -> None:
        self.config = config
        self.weights: np.ndarray | None = np.ones(config.load_mb * MB, np.uint8)

    @classmethod
    def load(cls, model_config: Any, device: Any, execution_providers: Any, settings: Any = None) -> HeldRuntime:
        return cls(model_config)

    def input_specs(self) -> list[InputSpec]:
        return [InputSpec("input_ids", np.dtype(np.int64), (2, 8))]

    def predict(self, batch: Batch) -> Outputs:
        raise NotImplementedError

    def bind(self, batch: Batch) -> Any:
        raise NotImplementedError

    def bind_generation(self, batch: Batch, new_tokens: int) -> HeldCall:
        return HeldCall(batch.columns["input_ids"], new_tokens, self.config.call_mb)

    def close(self) -> None:
        self.weights = None


@pytest.fixture(autouse=True)
def held_type():
    runtime_registry.register("MemoryHeld", HeldRuntime)
    yield
    runtime_registry.unregister("MemoryHeld")


@pytest.fixture(autouse=True)
def heap_set_aside() -> Iterator[None]:
    """The objects the test process made before out of the footprint's collections (tests/engine/frozen_heap)."""
    with frozen_heap():
        yield


def run(tmp_path: Path, sizes: dict[str, tuple[int, int]], keep_loaded: bool = True) -> tuple[Any, dict[str, Any]]:
    models = [{"type": "MemoryHeld", "name": n, "load_mb": load, "call_mb": call} for n, (load, call) in sizes.items()]
    timing = {"prompt_tokens": 8, "max_new_tokens": 3, "warmup_num": 1, "repeat_test_num": 4}
    sub = {"name": "peak_memory_mb", "priority": 1, "metric_config": timing}
    result = evaluate(
        {
            "input_model": models[0],
            "candidates": models[1:],
            "metrics": [{"name": "gen", "type": "latency", "sub_types": [sub]}],
            "timing": {"rounds": 2, "keep_loaded": keep_loaded},
            "output_dir": str(tmp_path / "out"),
        }
    )
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    described = {
        name: next(r["peak_memory"] for r in saved["models"][name]["runtimes"] if "peak_memory" in r) for name in sizes
    }
    return result, described


@pytest.mark.parametrize("keep_loaded", [True, False])
def test_peak_memory_is_the_models_load_plus_its_calls_transient(tmp_path, keep_loaded):
    result, described = run(tmp_path, {"small": (60, 80), "large": (200, 50)}, keep_loaded)
    small = result.models["small"].metrics["gen-peak_memory_mb"]
    large = result.models["large"].metrics["gen-peak_memory_mb"]
    assert small.error is None and large.error is None, (small.error, large.error)
    assert small.value == pytest.approx(60 + 80, abs=TOLERANCE_MB)
    assert large.value == pytest.approx(200 + 50, abs=TOLERANCE_MB)
    assert large.value > small.value + 50  # both resident at once (keep_loaded), yet each reports its own
    for name, value in (("small", small.value), ("large", large.value)):
        entry = described[name]
        assert entry["basis"].startswith("the resident memory the model's load added + the process's peak")
        assert value == (entry["load_bytes"] + entry["call_bytes"]) / MB
    assert described["small"]["load_bytes"] / MB == pytest.approx(60, abs=TOLERANCE_MB)
    assert described["small"]["call_bytes"] / MB == pytest.approx(80, abs=TOLERANCE_MB)


def test_without_a_resettable_peak_the_call_is_read_after_it_and_the_description_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(memory, "reset_peak_rss", lambda: False)
    result, described = run(tmp_path, {"m": (100, 60)})
    value = result.models["m"].metrics["gen-peak_memory_mb"].value
    assert value == pytest.approx(100, abs=TOLERANCE_MB)  # the call's transient is freed before the read
    assert "the peak could not be reset: /proc/self/clear_refs is not writable here" in described["m"]["basis"]

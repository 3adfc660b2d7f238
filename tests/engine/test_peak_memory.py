"""peak_memory_mb for every runtime: the model's own footprint (what its load and warm-up left resident + the most
its timed calls held above the level just before them), read by the timing phase around each round, with the
method in results.json. Models that hold and allocate known amounts (numpy buffers written, so resident) give the
reference; an ONNX classifier, a PyTorchModel and a non-generating HfModel are measured as well."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import psutil
import pytest

from olive_eval import evaluate
from olive_eval.engine.timing import peak_memory
from olive_eval.engine.timing.peak_memory import Footprint
from olive_eval.errors import ConfigError
from olive_eval.metrics.performance import TimingSample
from olive_eval.runtimes import memory
from olive_eval.runtimes.base import runtime_registry
from olive_eval.runtimes.memory import MemoryMeter, ProcessMemory, TorchDeviceMemory
from tests.engine.frozen_heap import frozen_heap
from tests.helpers import ToyProblem, linear_onnx, write_jsonl
from tests.runtimes import hf_models

REPO = Path(__file__).resolve().parents[2]
MB = 2**20
TIMING = {"warmup_num": 1, "repeat_test_num": 4}

PYTHON_MODELS = """
import numpy as np

MB = 2**20


def load(path):
    held_mb, call_mb = (int(part) for part in path.split(","))
    held = np.ones(held_mb * MB + 1, np.uint8)  # resident from the load on: the model's weights

    def call(batch):
        transient = np.ones(call_mb * MB, np.uint8)  # written, so resident, and freed when the call returns
        return [int(held[0] + transient[-1])] * len(batch["x"])

    return call
"""

TORCH_MODELS = """
import torch


class Allocates(torch.nn.Module):
    def __init__(self, call_mb):
        super().__init__()
        self.call_mb = call_mb

    def forward(self, x):
        transient = torch.ones(self.call_mb * 2**20 // 4)  # float32, written
        return x * transient[-1]


def load(path):
    return Allocates(int(open(path).read()))
"""


def data_config(tmp_path: Path) -> dict[str, Any]:
    rows = [{"x": [float(i), 1.0], "label": i % 2} for i in range(8)]
    return {
        "name": "d",
        "load_dataset_config": {"data_name": "json", "data_files": str(write_jsonl(tmp_path / "d.jsonl", rows))},
        "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
        "dataloader_config": {"batch_size": 4},
    }


def run(tmp_path: Path, models: list[dict[str, Any]], sub_types: list[dict[str, Any]], **extra: Any) -> Any:
    """A latency-only run of ``models`` (the first the baseline) over a small tabular data config."""
    return evaluate(
        {
            "input_model": models[0],
            "candidates": models[1:],
            "data_configs": [data_config(tmp_path)],
            "metrics": [{"name": "lat", "type": "latency", "data_config": "d", "sub_types": sub_types}],
            "output_dir": str(tmp_path / "out"),
            **extra,
        }
    )


@pytest.fixture(autouse=True)
def heap_set_aside() -> Iterator[None]:
    """The objects the test process made before out of the footprint's collections (tests/engine/frozen_heap)."""
    with frozen_heap():
        yield


def peak(metric_config: dict[str, Any] | None = None, priority: int = 1) -> dict[str, Any]:
    return {"name": "peak_memory_mb", "priority": priority, "metric_config": metric_config or TIMING}


def described(tmp_path: Path, name: str) -> dict[str, Any]:
    """The ``peak_memory`` part of the model's runtime entry in results.json."""
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    return next(r["peak_memory"] for r in saved["models"][name]["runtimes"] if "peak_memory" in r)


def python_model(tmp_path: Path, name: str, held_mb: int, call_mb: int) -> dict[str, Any]:
    (tmp_path / "models.py").write_text(PYTHON_MODELS)
    script = str(tmp_path / "models.py")
    path = f"{held_mb},{call_mb}"
    return {"type": "PythonModel", "name": name, "user_script": script, "model_loader": "load", "model_path": path}


# ------------------------------------------------------------------------------------------------ every runtime
def test_an_onnx_classifier_reports_its_footprint_with_the_method(tmp_path):
    toy = ToyProblem(tmp_path)
    weights = np.random.default_rng(0).standard_normal((2048, 4096)).astype(np.float32)  # 32 MB of initializer
    big = {"type": "ONNXModel", "name": "big", "model_path": str(linear_onnx(tmp_path / "big.onnx", weights))}
    avg = {"name": "avg", "priority": 2, "metric_config": TIMING}
    config = toy.config({}, [{"name": "lat", "type": "latency", "data_config": "toy", "sub_types": [peak(), avg]}])
    config["data_configs"][0]["pre_process_data_config"] = {"input_cols": ["x"], "label_col": "label"}
    result = evaluate(config)
    sub = result.models["base"].metrics["lat-peak_memory_mb"]
    assert sub.error is None, sub.error
    assert sub.value > 0 and sub.unit == "MB" and sub.higher_is_better is False
    memory_entry = described(tmp_path, "base")
    assert memory_entry["basis"].startswith("the resident memory the model's load added + the process's peak")
    assert sub.value == (memory_entry["load_bytes"] + memory_entry["call_bytes"]) / MB
    # one timing run serves both: the memory is read around the very calls avg is timed on
    assert sub.timing.runs == result.models["base"].metrics["lat-avg"].timing.runs == TIMING["repeat_test_num"]
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len([r for r in saved["models"]["base"]["runtimes"] if "peak_memory" in r]) == 1

    # a graph holding 32 MB of weights: its load's part holds them (ONNX Runtime copies the initializer)
    del config["candidates"]
    config["input_model"] = big
    config["data_configs"] = [data_config(tmp_path)]
    config["data_configs"][0]["name"] = "toy"
    rows = [{"x": [float(i)] * 2048, "label": 0} for i in range(4)]
    config["data_configs"][0]["load_dataset_config"]["data_files"] = str(write_jsonl(tmp_path / "w.jsonl", rows))
    result = evaluate(config)
    assert result.models["big"].status == "ok", result.models["big"].error
    assert described(tmp_path, "big")["load_bytes"] >= 0.9 * weights.nbytes


def test_a_python_model_that_allocates_per_call_reports_at_least_that(tmp_path):
    result = run(tmp_path, [python_model(tmp_path, "py", 0, 200)], [peak()])
    value = result.models["py"].metrics["lat-peak_memory_mb"].value
    assert value >= 180
    assert described(tmp_path, "py")["call_bytes"] >= 180 * MB


def test_a_torch_model_that_allocates_per_call_reports_at_least_that(tmp_path):
    (tmp_path / "torch_models.py").write_text(TORCH_MODELS)
    (tmp_path / "call_mb").write_text("120")
    model = {
        "type": "PyTorchModel",
        "name": "pt",
        "model_path": str(tmp_path / "call_mb"),
        "model_script": str(tmp_path / "torch_models.py"),
        "model_loader": "load",
    }
    result = run(tmp_path, [model], [peak()])
    sub = result.models["pt"].metrics["lat-peak_memory_mb"]
    assert sub.error is None, sub.error
    assert sub.value >= 100
    assert described(tmp_path, "pt")["basis"].startswith("the resident memory the model's load added")


def test_a_non_generating_hf_model_holds_its_weights(tmp_path):
    """A classifier's forward pass, not generate(): its load's part holds the weights it read."""
    folder = hf_models.build_bert(tmp_path / "bert", hidden_size=768)  # about 19 MB of weights: far above the noise
    weights = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    assert weights > 10 * MB
    rows = [{"text": t} for t in hf_models.sentences(4, seed=2, max_words=5)]
    config = {
        "input_model": {"type": "HfModel", "name": "hf", "model_path": str(folder), "task": "text-classification"},
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {
                    "data_name": "json",
                    "data_files": str(write_jsonl(tmp_path / "t.jsonl", rows)),
                },
                "pre_process_data_config": {"type": "huggingface_pre_process", "input_cols": ["text"]},
                "dataloader_config": {"batch_size": 2},
            }
        ],
        "metrics": [{"name": "lat", "type": "latency", "data_config": "d", "sub_types": [peak()]}],
        "output_dir": str(tmp_path / "out"),
    }
    result = evaluate(config)
    sub = result.models["hf"].metrics["lat-peak_memory_mb"]
    assert sub.error is None, sub.error
    assert sub.value * MB >= 0.5 * weights > 0
    assert (
        "generation" not in json.loads((tmp_path / "out" / "results.json").read_text())["models"]["hf"]["runtimes"][0]
    )


# ------------------------------------------------------------------------------------------------ interleaving
@pytest.mark.parametrize("keep_loaded", [True, False])
def test_each_model_reports_its_own_footprint_beside_a_larger_one(tmp_path, keep_loaded):
    """The large model's 100 MB stay resident during the small one's rounds (keep_loaded): the small one's figure
    is still its own 30 MB, and the large one's its 100 + 200 MB."""
    models = [python_model(tmp_path, "large", 100, 200), python_model(tmp_path, "small", 0, 30)]
    result = run(tmp_path, models, [peak()], timing={"rounds": 2, "keep_loaded": keep_loaded})
    large = result.models["large"].metrics["lat-peak_memory_mb"].value
    small = result.models["small"].metrics["lat-peak_memory_mb"].value
    assert large >= 270
    assert 25 <= small < 80
    assert described(tmp_path, "large")["load_bytes"] >= 90 * MB
    # the process's own peak during the small model's calls held the large model's weights too (keep_loaded)
    if keep_loaded:
        assert described(tmp_path, "small")["total_peak_bytes"] >= (100 + 30) * MB


LATENCY_ONLY = """
import json, sys
from pathlib import Path
from olive_eval import evaluate
from tests.helpers import ToyProblem

toy = ToyProblem(Path(sys.argv[1]))
sub = {"name": "peak_memory_mb", "priority": 1, "metric_config": {"warmup_num": 1, "repeat_test_num": 4}}
config = toy.config({"twin": 0.0}, [{"name": "lat", "type": "latency", "data_config": "toy", "sub_types": [sub]}])
result = evaluate(config)
print(json.dumps({name: model.metrics["lat-peak_memory_mb"].value for name, model in result.models.items()}))
"""


def test_the_runtimes_one_time_set_up_is_no_models_footprint(tmp_path):
    """A fresh process whose only work is timing: onnxruntime is imported and set up at the first model's load.
    The baseline and its identical twin report the same footprint: that set-up (about 10 MB) is neither's."""
    code = subprocess.run(
        [sys.executable, "-c", LATENCY_ONLY, str(tmp_path)], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert code.returncode == 0, code.stderr
    values = json.loads(code.stdout.strip().splitlines()[-1])
    # without the priming the baseline carried about 10 MB more than its twin; a fresh clone's first run still
    # leaves it up to about 3 MB more (first imports, compiled bytecode): far from the 10 MB the test is about
    assert values["base"] == pytest.approx(values["twin"], abs=5.0), values


KEPT_FREE = """
import ctypes, json, sys
import numpy as np

libc = ctypes.CDLL(None)
assert libc.mallopt(-4, 0) and libc.mallopt(-1, 2**30)  # no mmap, no trimming: freed memory stays resident
spare = np.ones(300 * 2**20, np.uint8)
del spare  # earlier work's 300 MB: freed, yet resident, and the model's calls would reuse them unseen

from olive_eval import evaluate

result = evaluate(json.loads(sys.argv[1]))
print(json.dumps(result.models["py"].metrics["lat-peak_memory_mb"].value))
"""


def test_memory_the_allocator_kept_from_earlier_work_is_not_hidden(tmp_path):
    """glibc set to keep every freed block: the model's 100 MB per call reuse what earlier work freed, so the
    process would not grow; the meter hands the free memory back before reading, and the calls show."""
    config = {
        "input_model": python_model(tmp_path, "py", 0, 100),
        "data_configs": [data_config(tmp_path)],
        "metrics": [{"name": "lat", "type": "latency", "data_config": "d", "sub_types": [peak()]}],
        "output_dir": str(tmp_path / "out"),
    }
    code = subprocess.run(
        [sys.executable, "-c", KEPT_FREE, json.dumps(config)], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert code.returncode == 0, code.stderr
    assert json.loads(code.stdout.strip().splitlines()[-1]) >= 90


# ------------------------------------------------------------------------------------------------ the method
class FakeMeter(MemoryMeter):
    """Levels and peaks scripted in bytes."""

    def __init__(self, levels: list[int], peaks: list[int]) -> None:
        self.levels, self.peaks, self.resets = levels, peaks, 0

    def level(self) -> int:
        return self.levels.pop(0)

    def reset_peak(self) -> None:
        self.resets += 1

    def peak(self) -> int:
        return self.peaks.pop(0)

    readable = True
    basis = "scripted"


@pytest.fixture
def collections(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The footprint's garbage collections, counted instead of run: with a scripted meter there is nothing to
    settle, and a full ``gc.collect()`` of the test process's heap took 2-4 s on a busy machine (6 per test here)."""
    done: list[int] = []
    monkeypatch.setattr(peak_memory, "gc", SimpleNamespace(collect=lambda: done.append(1) or 0))
    return done


def test_the_footprint_is_the_largest_load_plus_the_largest_round_above_its_level(collections):
    # two loads (keep_loaded false): +40 then +55; two rounds: peaks 70 above 100 and 30 above 160
    meter = FakeMeter(levels=[10, 50, 20, 75, 100, 160], peaks=[170, 190])
    footprint = Footprint(meter)
    with footprint.loading():
        pass
    with footprint.loading():
        pass
    with footprint.calls():
        pass
    with footprint.calls():
        pass
    sample, description = TimingSample(batch_size=1), {}
    footprint.record(sample, description)
    assert sample.peak_memory_bytes == 55 + 70
    assert description["peak_memory"] == {
        "basis": "scripted",
        "load_bytes": 55,
        "call_bytes": 70,
        "total_peak_bytes": 190,
    }
    assert meter.resets == 2
    assert len(collections) == 6  # garbage collected before each of the six levels read


def test_a_failed_load_or_round_leaves_the_footprint_as_it_was(collections):
    footprint = Footprint(FakeMeter(levels=[10, 20], peaks=[]))
    with pytest.raises(RuntimeError), footprint.loading():
        raise RuntimeError("the model did not load")
    with pytest.raises(RuntimeError), footprint.calls():
        raise RuntimeError("the call failed")
    assert (footprint.load_bytes, footprint.call_bytes) == (0, 0)


def test_each_runtime_names_its_meter():
    def meter(model_type: str, device: str) -> MemoryMeter:
        return runtime_registry.get(model_type).memory_meter(device)

    for model_type in ("ONNXModel", "PythonModel", "GenAIModel", "PyTorchModel", "HfModel"):
        assert type(meter(model_type, "cpu")) is ProcessMemory
        assert "host memory only" not in meter(model_type, "cpu").basis
    for model_type in ("ONNXModel", "PythonModel", "GenAIModel"):
        assert "host memory only, any device memory it holds is not measured" in meter(model_type, "gpu").basis
    for model_type in ("PyTorchModel", "HfModel"):
        assert type(meter(model_type, "gpu")) is TorchDeviceMemory
        assert "torch.cuda.max_memory_allocated" in meter(model_type, "gpu").basis


def test_the_process_meter_reads_this_process():
    """Against psutil, an independent reader of the same resident memory (pages move between the reads)."""
    meter = ProcessMemory()
    assert meter.level() == pytest.approx(psutil.Process().memory_info().rss, abs=8 * MB)
    meter.reset_peak()
    block = np.ones(64 * MB, np.uint8)
    del block
    assert meter.peak() - meter.level() >= 60 * MB  # the block came and went; the peak kept it


def test_without_a_resettable_peak_the_calls_are_read_after_them_and_the_basis_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(memory, "reset_peak_rss", lambda: False)
    result = run(tmp_path, [python_model(tmp_path, "py", 60, 100)], [peak()])
    value = result.models["py"].metrics["lat-peak_memory_mb"].value
    assert value == pytest.approx(60, abs=15)  # the calls' 100 MB are freed before the read
    assert (
        "the peak could not be reset: /proc/self/clear_refs is not writable here" in described(tmp_path, "py")["basis"]
    )


# ------------------------------------------------------------------------------------------------ config, errors
def test_peak_memory_without_lengths_shares_the_latency_run_and_with_them_is_timed_token_by_token(tmp_path):
    model = python_model(tmp_path, "py", 0, 1)
    avg = {"name": "avg", "priority": 2, "metric_config": TIMING}
    result = run(tmp_path, [model], [peak(), avg])
    assert result.models["py"].metrics["lat-peak_memory_mb"].error is None
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(saved["models"]["py"]["runtimes"]) == 1  # one timing run, one runtime entry

    result = run(tmp_path, [model], [peak({**TIMING, "max_new_tokens": 4})])
    assert result.models["py"].metrics["lat-peak_memory_mb"].error == (
        "a PythonModel cannot be timed token by token (the generation latency sub-types); HfModel and GenAIModel can"
    )


def test_peak_memory_takes_adaptive_repeats_without_lengths_but_not_with_them(tmp_path):
    auto = {"warmup_num": 1, "repeat_test_num": "auto", "max_seconds": 0.2}
    result = run(tmp_path, [python_model(tmp_path, "py", 0, 1)], [peak(auto)])
    assert result.models["py"].metrics["lat-peak_memory_mb"].error is None
    with pytest.raises(ConfigError, match="generation latency takes a fixed repeat_test_num, not 'auto'"):
        run(tmp_path, [python_model(tmp_path, "py", 0, 1)], [peak({**auto, "max_new_tokens": 4})])


def test_a_system_whose_memory_cannot_be_read_fails_the_sub_type_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(memory, "rss_bytes", lambda: 0)
    avg = {"name": "avg", "priority": 2, "metric_config": TIMING}
    result = run(tmp_path, [python_model(tmp_path, "py", 0, 1)], [peak(), avg])
    assert result.models["py"].metrics["lat-peak_memory_mb"].error == (
        "the process's resident memory cannot be read on this system"
    )
    assert result.models["py"].metrics["lat-avg"].value > 0  # the latency of the same run stands

"""A torch-based model's ``threads``: torch's intra-op thread count inside the model's forward, during the pass and
during timing alike, is the setting; it is restored afterwards, recorded in results.json, and a bad value is a
config error (exit 2, one line naming the file and the JSON path)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers

from olive_eval import evaluate
from olive_eval.cli import main
from tests.helpers import write_jsonl
from tests.runtimes import hf_models

#: The cores this process may use (the default), torch's own count while the tests run, and the setting the models
#: get: all different, so whichever the model runs with shows.
CORES = len(os.sched_getaffinity(0))
PROCESS_THREADS, SETTING = CORES + 1, CORES + 2

PROBE_SCRIPT = """
import torch


class Probe(torch.nn.Module):
    \"\"\"A linear layer that appends torch's thread count to a file at every forward.\"\"\"

    def __init__(self, log):
        super().__init__()
        self.log = log
        self.linear = torch.nn.Linear(8, 3)

    def forward(self, x):
        with open(self.log, "a") as handle:
            handle.write(f"{torch.get_num_threads()}\\n")
        return self.linear(x)


def load(model_path):
    return Probe(model_path)
"""

#: The metric of each phase: an accuracy pass, or a latency run (first call, warm-up, timed calls).
METRICS = {
    "pass": {"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]},
    "timing": {
        "name": "lat",
        "type": "latency",
        "sub_types": [{"name": "avg", "metric_config": {"warmup_num": 2, "repeat_test_num": 4}}],
    },
}


@pytest.fixture
def process_threads() -> Iterator[int]:
    before = torch.get_num_threads()
    torch.set_num_threads(PROCESS_THREADS)
    yield PROCESS_THREADS
    torch.set_num_threads(before)


def probe_model(root: Path, **extra: Any) -> dict[str, Any]:
    (root / "probe.py").write_text(PROBE_SCRIPT)
    log = root / "threads.log"
    log.write_text("")
    return {
        "type": "PyTorchModel",
        "name": "probe",
        "model_path": str(log),
        "model_loader": "load",
        "model_script": str(root / "probe.py"),
        **extra,
    }


def observed(root: Path) -> list[int]:
    return [int(line) for line in (root / "threads.log").read_text().split()]


def saved_runtimes(root: Path, model: str) -> list[dict[str, Any]]:
    return json.loads((root / "out" / "results.json").read_text())["models"][model]["runtimes"]


def run_config(toy: Any, model: dict[str, Any], phase: str) -> dict[str, Any]:
    return {
        "input_model": model,
        "data_configs": [toy.data_config()],
        "metrics": [{**METRICS[phase], "data_config": "toy"}],
        "output_dir": str(toy.root / "out"),
    }


@pytest.mark.parametrize("phase", ["pass", "timing"])
def test_a_torch_models_forward_runs_with_its_threads(toy, process_threads, phase):
    result = evaluate(run_config(toy, probe_model(toy.root, threads=SETTING), phase))
    assert result.models["probe"].status == "ok", result.models["probe"].error
    seen = observed(toy.root)
    calls = 120 // 16 + (120 % 16 > 0) if phase == "pass" else 1 + 2 + 4  # batches; or first call, warm-up, runs
    assert len(seen) >= calls
    assert set(seen) == {SETTING}
    assert torch.get_num_threads() == process_threads  # restored
    assert [r["threads"] for r in saved_runtimes(toy.root, "probe")] == [SETTING]


def test_the_timing_phase_sets_the_threads_around_its_rounds_not_inside_each_timed_call(
    toy, process_threads, monkeypatch
):
    """Setting torch's thread count is not free: done inside every timed call it would be timed too. The count of
    ``set_num_threads`` calls over the timing phase does not grow with the timed calls."""
    sets: list[int] = []
    set_num_threads = torch.set_num_threads

    def counted(count: int) -> None:
        sets.append(count)
        set_num_threads(count)

    monkeypatch.setattr(torch, "set_num_threads", counted)
    counts = []
    for runs in (4, 40):
        sets.clear()
        config = run_config(toy, probe_model(toy.root, threads=SETTING), "timing")
        config["metrics"][0]["sub_types"][0]["metric_config"]["repeat_test_num"] = runs
        assert evaluate(config).models["probe"].status == "ok"
        assert len(observed(toy.root)) >= runs
        counts.append(len(sets))
    assert counts[0] == counts[1] > 0


def test_a_custom_evaluate_func_calls_the_model_with_its_threads(toy, process_threads):
    """A user's evaluate_func is the model's pass too: what it calls on the model runs with the model's threads."""
    script = toy.root / "funcs.py"
    script.write_text(
        "import torch\n\n\n"
        "def score(model, device, execution_providers):\n"
        "    model.run_session(inputs=torch.zeros(2, 8))\n"
        "    return {'score': 1.0}\n"
    )
    custom = {
        "name": "custom",
        "type": "custom",
        "sub_types": [{"name": "score", "higher_is_better": True}],
        "user_config": {"user_script": str(script), "evaluate_func": "score"},
    }
    config = {**run_config(toy, probe_model(toy.root, threads=SETTING), "pass"), "metrics": [custom]}
    result = evaluate(config)
    assert result.models["probe"].status == "ok", result.models["probe"].error
    assert observed(toy.root) == [SETTING]
    assert torch.get_num_threads() == process_threads


def test_without_a_setting_a_torch_model_uses_the_usable_cores(toy, process_threads):
    result = evaluate(run_config(toy, probe_model(toy.root), "pass"))
    assert result.models["probe"].status == "ok", result.models["probe"].error
    assert set(observed(toy.root)) == {CORES}
    assert saved_runtimes(toy.root, "probe")[0]["threads"] == CORES
    assert torch.get_num_threads() == process_threads


def bert_config(root: Path, phase: str, threads: int | None) -> dict[str, Any]:
    folder = hf_models.build_bert(root / "bert")
    texts = hf_models.sentences(6, seed=1)
    data = write_jsonl(root / "texts.jsonl", [{"text": t, "label": i % 3} for i, t in enumerate(texts)])
    model = {"type": "HfModel", "name": "bert", "model_path": str(folder), "task": "text-classification"}
    return {
        "input_model": {**model, **({"threads": threads} if threads is not None else {})},
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                "pre_process_data_config": {"input_cols": ["text"], "label_col": "label"},
                "post_process_data_config": {"type": "argmax"},
                "dataloader_config": {"batch_size": 4},
            }
        ],
        "metrics": [{**METRICS[phase], "data_config": "d"}],
        "output_dir": str(root / "out"),
    }


@pytest.mark.parametrize("phase", ["pass", "timing"])
def test_an_hf_models_forward_runs_with_its_threads(tmp_path, process_threads, monkeypatch, phase):
    seen: list[int] = []
    forward = transformers.BertForSequenceClassification.forward

    def probed(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(torch.get_num_threads())
        return forward(self, *args, **kwargs)

    config = bert_config(tmp_path, phase, SETTING)
    monkeypatch.setattr(transformers.BertForSequenceClassification, "forward", probed)
    result = evaluate(config)
    assert result.models["bert"].status == "ok", result.models["bert"].error
    assert len(seen) >= (2 if phase == "pass" else 1 + 2 + 4)
    assert set(seen) == {SETTING}
    assert torch.get_num_threads() == process_threads
    assert [r["threads"] for r in saved_runtimes(tmp_path, "bert")] == [SETTING]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "Input should be greater than or equal to 1"),
        (-2, "Input should be greater than or equal to 1"),
        (1.5, "expected an integer, got 1.5"),
        ("2", 'expected an integer, got "2"'),
        (True, "expected an integer, got true"),
    ],
)
@pytest.mark.parametrize("kind", ["PyTorchModel", "HfModel"])
def test_a_bad_thread_count_is_a_config_error(toy, capsys, kind, value, message):
    if kind == "PyTorchModel":
        model = probe_model(toy.root, threads=value)
    else:
        model = {"type": "HfModel", "model_path": str(toy.root), "task": "text-classification", "threads": value}
    path = toy.root / "run.json"
    path.write_text(json.dumps(run_config(toy, model, "pass")))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"olive-eval: config error: {path}: input_model.threads: {message}"

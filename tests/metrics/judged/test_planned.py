"""Judges are planned with the run, loaded with its context and closed with it: a model judge's relative paths are
read beside the config file (whatever the working folder), it loads on the run's device and providers (unless its
spec names its own) under the run's download policy, once per run for every sub-type and model that asks it, and
it is closed when the run ends; the local and the process executors (with and without shards) judge alike."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, Literal

import pytest

from olive_eval import evaluate
from olive_eval.data.batch import Batch, Outputs
from olive_eval.errors import ConfigError
from olive_eval.huggingface_env import downloads_allowed
from olive_eval.lm_eval.adapters import GENERATE
from olive_eval.lm_eval.python_lm import PythonLM
from olive_eval.lm_eval.serving import Serving, serving_registry
from olive_eval.runtimes.base import ModelConfig, Runtime, runtime_registry
from tests.metrics.judged import scripted
from tests.metrics.judged.test_run import config

SCRIPT = Path(scripted.__file__)
#: What the recording judge model saw: ("load", name, device, providers, downloads allowed) and ("close", name).
EVENTS: list[tuple[Any, ...]] = []


class RecordingConfig(ModelConfig):
    type: Literal["RecordingJudge"]


class RecordingRuntime(Runtime):
    """A judge model that answers as the scripted judge does and records how it was loaded and that it closed."""

    model_type = "RecordingJudge"
    Config = RecordingConfig
    settings_key = "recording"

    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    def load(cls, model_config: Any, device: Any, execution_providers: Any, settings: Any = None) -> RecordingRuntime:
        name = model_config.display_name()
        EVENTS.append(("load", name, device, [p for p, _ in execution_providers], downloads_allowed()))
        return cls(name)

    def predict(self, batch: Batch) -> Outputs:
        return {"prediction": [scripted.judge(p) for p in batch.columns["prompt"]]}

    def bind(self, batch: Batch) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        EVENTS.append(("close", self.name))


def _adapter(runtime: Any, options: Any) -> PythonLM:
    return PythonLM(runtime, lambda batch: runtime.predict(Batch(batch, list(batch)))["prediction"], "judge", options)


@pytest.fixture
def recording_type():
    EVENTS.clear()
    runtime_registry.register("RecordingJudge", RecordingRuntime)
    generates = frozenset({GENERATE})
    serving_registry.register(
        "RecordingJudge", Serving(lambda _config: generates, _adapter, lambda _runtime: generates)
    )
    yield
    runtime_registry.unregister("RecordingJudge")
    serving_registry.unregister("RecordingJudge")


def recording(name: str, **spec: Any) -> dict[str, Any]:
    return {"type": "model", "model": {"type": "RecordingJudge", "name": name}, **spec}


def _run(tmp_path: Path, subs: list[dict], **top: Any) -> dict[str, Any]:
    rows = [{"query": f"q{i}", "contexts": ["a+", "b-"] if i % 2 else ["c+"], "target": ["t"]} for i in range(4)]
    run = config(tmp_path, subs, rows)
    (tmp_path / "other.py").write_text(
        "def load(model_path):\n    return lambda batch: ['x+' for _ in batch['query']]\n"
    )
    run["candidates"] = [{**run["input_model"], "name": "c", "user_script": str(tmp_path / "other.py")}]
    return {**run, **top}


def test_a_model_judge_loads_with_the_runs_context_once_per_run_and_closes_with_it(tmp_path, recording_type):
    subs = [
        {"name": "context_relevance", "priority": 1, "metric_config": {"judge": recording("plain")}},
        {"name": "hallucination", "metric_config": {"judge": recording("on_gpu", device="gpu")}},
        {"name": "faithfulness", "metric_config": {"judge": recording("own", execution_providers=["MyProvider"])}},
    ]
    run = _run(tmp_path, subs, execution_providers=[["CPUExecutionProvider", {"arena": "0"}]])
    result = evaluate(run)
    for model in ("m", "c"):
        assert result.models[model].status == "ok", result.models[model].error
        # context relevance reads the query and contexts only: 2 x 1 + 2 x 1/2 over 4 examples
        assert result.models[model].metrics["judged-context_relevance"].value == pytest.approx(0.75)
    loads = [e for e in EVENTS if e[0] == "load"]
    # one load per judge for the whole run (both models), each on the run's context unless its spec says
    assert sorted(loads) == [
        ("load", "on_gpu", "gpu", ["CUDAExecutionProvider", "CPUExecutionProvider"], False),
        ("load", "own", "cpu", ["MyProvider"], False),
        ("load", "plain", "cpu", ["CPUExecutionProvider"], False),
    ]
    assert sorted(e for e in EVENTS if e[0] == "close") == [("close", "on_gpu"), ("close", "own"), ("close", "plain")]
    assert EVENTS.index(("close", "plain")) > EVENTS.index(max(loads, key=EVENTS.index))
    identity = result.models["m"].metrics["judged-hallucination"].details["judge"]
    assert identity["source"] == "model" and identity["model"]["name"] == "on_gpu"

    EVENTS.clear()  # a second run loads its judges again, with its own download policy: nothing was kept
    evaluate({**_run(tmp_path, subs[:1]), "allow_download": True})
    assert EVENTS == [("load", "plain", "cpu", ["CPUExecutionProvider"], True), ("close", "plain")]


def test_a_model_judge_that_fails_to_load_fails_its_metrics_once_with_its_reason(tmp_path, recording_type, monkeypatch):
    def refuse(*args: Any, **kwargs: Any) -> None:
        EVENTS.append(("refused",))
        raise OSError("no such device")

    monkeypatch.setattr(RecordingRuntime, "load", classmethod(refuse))
    subs = [
        {"name": "context_relevance", "priority": 1, "metric_config": {"judge": recording("broken")}},
        {"name": "hallucination", "metric_config": {"judge": recording("broken")}},
    ]
    result = evaluate(_run(tmp_path, subs))
    for model in ("m", "c"):
        assert result.models[model].status == "failed"
        assert result.models[model].error == (
            "metric(s) judged failed: judge model 'broken' could not be built: OSError: no such device"
        )
    assert EVENTS == [("refused",)]  # tried once for the run, not once per sub-type or model


def judge_model_script(folder: Path) -> None:
    """A PythonModel judge: the scripted judge behind a model loader that logs each load to its model_path."""
    (folder / "judge_model.py").write_text(
        textwrap.dedent(
            f"""
            from pathlib import Path

            from olive_eval.user_module import load_user_module

            SCRIPTED = load_user_module(Path({str(SCRIPT)!r}))


            def load(model_path):
                with open(model_path, "a") as log:
                    log.write("load\\n")
                return lambda batch: [SCRIPTED.judge(prompt) for prompt in batch["prompt"]]
            """
        )
    )
    (folder / "loads.txt").write_text("")


PYTHON_JUDGE = {
    "type": "model",
    "model": {
        "type": "PythonModel",
        "user_script": "judge_model.py",
        "model_loader": "load",
        "model_path": "loads.txt",
        "processor_path": "tokenizer",
    },
}


def test_a_model_judges_relative_paths_are_read_beside_the_config_file(tmp_path, monkeypatch):
    folder = tmp_path / "project"
    folder.mkdir()
    judge_model_script(folder)
    subs = [{"name": "context_relevance", "priority": 1, "metric_config": {"judge": PYTHON_JUDGE}}]
    (folder / "run.json").write_text(json.dumps(_run(folder, subs)))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = evaluate(str(folder / "run.json"))
    relevance = result.models["m"].metrics["judged-context_relevance"]
    assert relevance.value == pytest.approx(0.75), result.models["m"].error
    model = relevance.details["judge"]["model"]
    assert model["user_script"] == str(folder / "judge_model.py")
    assert model["processor_path"] == str(folder / "tokenizer")  # not beside the working folder
    assert (folder / "loads.txt").read_text() == "load\n"  # once, for both models


@pytest.mark.parametrize(
    ("executor", "loads"),
    [({"type": "local"}, 1), ({"type": "process"}, 2), ({"type": "process", "shards": 2}, 4)],
    ids=["local", "process", "process-shards"],
)
def test_each_executor_judges_with_judges_of_its_own_run_context(tmp_path, executor, loads):
    judge_model_script(tmp_path)
    judge = {**PYTHON_JUDGE, "model": {**PYTHON_JUDGE["model"], "user_script": str(tmp_path / "judge_model.py")}}
    judge["model"]["model_path"] = str(tmp_path / "loads.txt")
    subs = [
        {"name": "context_relevance", "priority": 1, "metric_config": {"judge": judge}},
        {"name": "hallucination", "metric_config": {"judge": judge}},
    ]
    result = evaluate({**_run(tmp_path, subs), "executor": executor})
    for model in ("m", "c"):
        metrics = result.models[model].metrics
        assert result.models[model].status == "ok", result.models[model].error
        assert metrics["judged-context_relevance"].value == pytest.approx(0.75)
        # hallucination: the scripted judge says a context with "+" is contradicted: [c+] -> 1, [a+, b-] -> 1/2
        assert metrics["judged-hallucination"].value == pytest.approx(0.75)
        assert metrics["judged-hallucination"].details["judge"]["runtime"]["runtime"] == "python"
    # local: once for the run; process: once in each model's child; with shards: in each shard's child
    assert (tmp_path / "loads.txt").read_text() == "load\n" * loads


def test_a_model_judge_that_would_need_a_download_is_the_offline_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty_hub"))
    judge = {"type": "model", "model": {"type": "HfModel", "model_path": "no-such-org/no-such-judge"}}
    subs = [{"name": "bias", "metric_config": {"judge": judge}}]
    with pytest.raises(ConfigError) as err:
        evaluate(_run(tmp_path, subs))
    assert err.value.path == "metrics[0].sub_types[0].metric_config.judge.model.model_path"
    assert err.value.message.startswith(
        "'no-such-org/no-such-judge' is not a local folder nor in the local Hugging Face cache"
    )
    assert 'allow downloads with "allow_download": true or --allow-download' in err.value.message
    assert "\n" not in str(err.value)
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("device", "tpu", "got 'tpu'; expected 'cpu' or 'gpu'"),
        ("execution_providers", 3, "execution providers must be a name, a [name, options] pair, or a list of those"),
    ],
)
def test_a_bad_device_or_providers_of_a_model_judge_is_one_config_error(tmp_path, key, value, says):
    judge = {"type": "model", "model": {"type": "HfModel", "model_path": "never_read"}, key: value}
    with pytest.raises(ConfigError) as err:
        evaluate(_run(tmp_path, [{"name": "bias", "metric_config": {"judge": judge}}]))
    assert err.value.path == f"metrics[0].sub_types[0].metric_config.judge.{key}"
    assert err.value.message == says and "\n" not in str(err.value)

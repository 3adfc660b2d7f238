"""Every config error found when the run is planned (after the schema: the device, the fields a metric reads,
lm-eval's tasks and sub-types, the priorities, a judge, gen_kwargs) names the config file and the JSON path, in one
line, exit 2, before any model loads. Before, those raised by the planner left out the file."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.errors import ConfigError
from tests.helpers import linear_onnx, python_model_run, write_jsonl
from tests.lm_eval import lm_tasks
from tests.metrics.judged import scripted

MODEL = (
    "from pathlib import Path\n\n\ndef load(model_path):\n"
    "    Path(model_path).write_text('loaded')  # evidence that the run got as far as loading the model\n"
    "    return lambda batch: [q.upper() for q in batch['q']]\n"
)
JUDGE = {"function": "judge", "user_script": str(Path(scripted.__file__))}
Mutate = Callable[[dict[str, Any], Path], None]


def _device(config: dict[str, Any], folder: Path) -> None:
    onnx = linear_onnx(folder / "m.onnx", np.eye(3, dtype=np.float32))
    config.update(input_model={"type": "ONNXModel", "name": "m", "model_path": str(onnx)}, device="gpu")


def _fields(config: dict[str, Any], folder: Path) -> None:
    config["metrics"][0]["sub_types"] = [{"name": "context_relevance", "metric_config": {"judge": JUDGE}}]


def _lm_eval(tasks: list[str], sub_types: list[dict[str, Any]] | None = None) -> Mutate:
    def mutate(config: dict[str, Any], folder: Path) -> None:
        include = lm_tasks.write_tasks(folder / "tasks", ["x"] * 4, 4)
        metric = {"name": "lm", "type": "lm_eval", "metric_config": {"tasks": tasks, "include_path": str(include)}}
        config["metrics"] = [{**metric, **({"sub_types": sub_types} if sub_types else {})}]

    return mutate


def _priorities(config: dict[str, Any], folder: Path) -> None:
    config["metrics"][0]["sub_types"] = [{"name": "exact_match"}, {"name": "relaxed_accuracy"}]


def _judge_model(config: dict[str, Any], folder: Path) -> None:
    onnx = linear_onnx(folder / "judge.onnx", np.eye(3, dtype=np.float32))
    judge = {"type": "model", "model": {"type": "ONNXModel", "model_path": str(onnx)}}
    config["metrics"][0]["sub_types"] = [{"name": "bias", "metric_config": {"judge": judge}}]


CASES: dict[str, tuple[Mutate, str]] = {
    "device": (_device, "device"),
    "fields": (_fields, "metrics[0].sub_types[0].name"),
    "lm-eval task": (_lm_eval(["nope_task"]), "metrics[0].metric_config.tasks[0]"),
    "lm-eval sub-type": (_lm_eval(["words_gen"], [{"name": "words_gen/nope"}]), "metrics[0].sub_types[0].name"),
    "priorities": (_priorities, "metrics[0].sub_types[0].priority"),
    "judge model": (_judge_model, "metrics[0].sub_types[0].metric_config.judge.model.type"),
}


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """This onnxruntime has no CUDA provider, whatever machine runs the test."""
    from olive_eval.runtimes import onnx

    monkeypatch.setattr(onnx.ort, "get_available_providers", lambda: ["CPUExecutionProvider"])


@pytest.fixture
def no_built_in_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty index for lm-eval's built-in tasks, which a name missing from the task folder is looked up in:
    indexing the ~15k real ones (their YAML files) took 30 s per process here, and the error's file and JSON path
    do not depend on them (tests/lm_eval/test_task_index_cache.py looks names up in the real ones)."""
    from olive_eval.lm_eval import tasks

    monkeypatch.setattr(tasks, "built_in_tasks", lambda: tasks.task_manager([], defaults=False))


def bad_config(folder: Path, case: str) -> dict[str, Any]:
    (folder / "models.py").write_text(MODEL)
    write_jsonl(folder / "d.jsonl", [{"q": "a?", "target": "A?"}, {"q": "b", "target": "c"}])
    config = python_model_run(folder, {"name": "acc", "sub_types": [{"name": "exact_match"}]})
    config = copy.deepcopy(config)
    CASES[case][0](config, folder)
    return config


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_plan_time_config_error_names_the_file_and_the_json_path(tmp_path, capsys, no_gpu, no_built_in_tasks, case):
    file = tmp_path / "bad run.json"
    file.write_text(json.dumps(bad_config(tmp_path, case)))
    code = main(["--config", str(file), "--quiet", "--no-cache"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.count("\n") == 0, err
    assert err.startswith(f"olive-eval: config error: {file}: {CASES[case][1]}: "), err
    assert not (tmp_path / "loaded").exists()  # the model's loader never ran


def test_a_config_given_as_a_dict_is_named_as_such(tmp_path, no_gpu):
    with pytest.raises(ConfigError) as err:
        evaluate(bad_config(tmp_path, "device"))
    assert (err.value.source, err.value.path) == ("<config>", "device")

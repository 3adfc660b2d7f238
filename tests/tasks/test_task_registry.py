"""The task registry: one Task per task with Olive's and transformers' spellings as names, the container defaults
and model classes it declares, an unknown task as one line with a did-you-mean hint (exit 2), and the floor it
sits on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from olive_eval.cli import main
from olive_eval.data.components import registries
from olive_eval.runtimes.base import create_runtime
from olive_eval.runtimes.hf_config import HfModelConfig
from olive_eval.tasks.base import Task, check_task_metrics, get_task, task_names, task_problem, task_registry
from olive_eval.tasks.call_mode import CallMode
from tests.helpers import write_jsonl
from tests.runtimes import hf_models
from tests.test_layers import ROOT, imports_of

ALIASES = {"ner": "token-classification", "speech-transcription": "automatic-speech-recognition"}
KNOWN = (
    "audio-classification, automatic-speech-recognition (speech-transcription), feature-extraction, "
    "image-classification, image-text-to-text, text-classification, text-generation, token-classification (ner), "
    "vision-chart-qa, vision-ocr, vision-vqa"
)


@pytest.mark.parametrize(("alias", "name"), ALIASES.items())
def test_olive_s_spelling_is_the_same_task_as_transformers(alias, name):
    assert get_task(alias) is get_task(name)
    assert get_task(alias).name == name and alias in get_task(name).aliases


@pytest.mark.parametrize(
    ("task", "key", "component"),
    [
        ("ner", "pre_process_data_config", "ner_huggingface_preprocess"),
        ("token-classification", "pre_process_data_config", "ner_huggingface_preprocess"),
        ("token-classification", "post_process_data_config", "ner_post_process"),
        ("speech-transcription", "pre_process_data_config", "speech_transcription_pre_process"),
        ("automatic-speech-recognition", "pre_process_data_config", "speech_transcription_pre_process"),
        ("text-generation", "post_process_data_config", "decode"),
        ("vision-ocr", "dataloader_config", "vision_vqa_dataloader"),
        ("text-classification", "pre_process_data_config", "huggingface_pre_process"),  # the container's own
        ("no-such-task", "post_process_data_config", "post_process"),  # Olive's: any task name, the defaults
    ],
)
def test_a_huggingface_container_takes_the_task_s_default_components(task, key, component):
    assert registries["container"].get("HuggingfaceContainer").default(key, task) == component


def test_other_containers_ignore_the_task():
    assert registries["container"].get("DataContainer").default("pre_process_data_config", "ner") == "skip_pre_process"


def test_an_hf_model_of_an_alias_loads_the_task_s_class(tmp_path):
    folder = hf_models.build_bert(tmp_path / "bert")
    runtime = create_runtime(HfModelConfig(type="HfModel", model_path=str(folder), task="ner"), "cpu", [])
    assert runtime.describe()["class"] == "BertForTokenClassification"


def test_every_task_declares_model_classes_and_a_call_mode():
    for name in task_registry.names():
        task = get_task(name)
        assert issubclass(task, Task) and task.model_classes and task.call_modes
        assert all(isinstance(mode, CallMode) for mode in task.call_modes)


@pytest.mark.parametrize(
    ("task", "decodes", "mode"),
    [
        ("text-generation", True, CallMode.GENERATE),
        ("text-generation", False, CallMode.FORWARD),  # perplexity reads the logits
        ("text-generation", None, CallMode.GENERATE),
        ("automatic-speech-recognition", True, CallMode.GENERATE),
        ("automatic-speech-recognition", False, CallMode.FORWARD),  # CTC
        ("image-text-to-text", None, CallMode.GENERATE),
        ("text-classification", False, CallMode.FORWARD),
        ("text-classification", None, CallMode.FORWARD),
    ],
)
def test_the_call_mode_a_task_declares(task, decodes, mode):
    assert get_task(task).call_mode(decodes) is mode
    assert HfModelConfig(type="HfModel", model_path="x", task=task).call_mode(decodes) is mode


def test_decoding_generated_tokens_of_a_task_that_never_generates():
    with pytest.raises(ValueError) as caught:
        get_task("text-classification").call_mode(True)
    assert str(caught.value) == (
        "task 'text-classification' does not generate (its model is called forward), so there are no generated "
        "tokens to decode"
    )


def test_an_unknown_task_names_the_closest_and_the_known_ones():
    assert task_problem("text-clasification") == (
        f"unknown task 'text-clasification'; did you mean 'text-classification'? tasks: {KNOWN}"
    )
    assert task_problem("zzz") == f"unknown task 'zzz'; tasks: {KNOWN}"
    assert ", ".join(task_names()) == KNOWN


def write(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(json.dumps(config))
    return path


def text_config(tmp_path: Path, model: dict[str, Any], post: dict[str, Any]) -> dict[str, Any]:
    data = write_jsonl(tmp_path / "d.jsonl", [{"text": "the cat sits", "label": 1}])
    return {
        "input_model": model,
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                "pre_process_data_config": {"input_cols": ["text"], "label_col": "label"},
                "post_process_data_config": post,
            }
        ],
        "metrics": [{"name": "acc", "type": "accuracy", "data_config": "d", "sub_types": [{"name": "accuracy_score"}]}],
        "output_dir": str(tmp_path / "out"),
    }


def test_an_unknown_task_from_the_cli_is_exit_2_and_one_line(tmp_path, capsys):
    model = {"type": "HfModel", "model_path": str(tmp_path), "task": "text-clasification"}
    path = write(tmp_path / "run.json", text_config(tmp_path, model, {"type": "argmax"}))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"olive-eval: config error: {path}: input_model.task: unknown task 'text-clasification'; "
        f"did you mean 'text-classification'? tasks: {KNOWN}"
    )


def test_decoding_a_classifier_s_generations_is_exit_2_naming_the_post_process(tmp_path, capsys):
    folder = hf_models.build_bert(tmp_path / "bert")
    model = {"type": "HfModel", "name": "bert", "model_path": str(folder), "task": "text-classification"}
    path = write(tmp_path / "run.json", text_config(tmp_path, model, {"type": "decode"}))
    capsys.readouterr()  # building the model's files printed progress
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"olive-eval: config error: {path}: data_configs[0].post_process_data_config.type: post-process 'decode' of "
        "data config 'd' decodes generated "
        "tokens, but model 'bert' (input_model): task 'text-classification' does not generate (its model is called "
        "forward), so there are no generated tokens to decode"
    )


def test_the_task_check_of_a_task_that_restricts_no_metric():
    check_task_metrics("text-generation", ["exact_match"])  # an LLM scored by exact match
    check_task_metrics("ner", ["exact_match", "accuracy_score"])
    with pytest.raises(ValueError, match="Unknown vision task type 'no-such-task'"):
        check_task_metrics("no-such-task", ["anls"])


def test_the_tasks_floor_imports_only_declarations():
    """Tasks sit below the data and runtime floors (which ask them): they name components and metrics, and import
    only the registry and the runtime-output names."""
    allowed = {"olive_eval.registry", "olive_eval.strict_model", "olive_eval.tasks.runtime_outputs"}
    imported = set().union(*(imports_of(path) for path in (ROOT / "tasks").glob("*.py")))
    outside = {name for name in imported if not name.startswith("olive_eval.tasks")}
    assert {name.rsplit(".", 1)[0] if name.rsplit(".", 1)[0] in allowed else name for name in outside} <= allowed

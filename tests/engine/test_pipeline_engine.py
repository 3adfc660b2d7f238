"""The pipeline end to end (issue 8): fields, filters, repeats, per-batch timing, components from user
scripts, per-runtime inference settings, and the errors for what a config asks that the data cannot give."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import metric_registry
from olive_eval.records.parquet import read_records
from tests.helpers import write_jsonl

PYTHON_MODELS = textwrap.dedent(
    '''
    from olive_eval.data.filters import Repeats


    class Answers:
        """Says "The answer is <label>." for even rows, "I think it is <label + 1>" for odd ones."""

        def __call__(self, batch):
            return [
                f"The answer is {y}." if i % 2 == 0 else f"I think it is {y + 1}"
                for i, y in zip(batch["row"], batch["label"])
            ]


    class Voters:
        """Three guesses per example: right twice, wrong once."""

        def predict(self, batch):
            return [Repeats([str(y), str(y + 1), str(y)]) for y in batch["label"]]


    def load_answers(model_path):
        return Answers()


    def load_voters(model_path):
        return Voters()


    def double_the_label(columns, factor=2):
        return {"row": columns["row"], "label": columns["label"] * factor}


    def squash(outputs, batch):
        return [p.upper() for p in outputs["prediction"]]
    '''
)

METRICS = textwrap.dedent(
    """
    from olive_eval import register_metric


    @register_metric(name="pipeline_equal", higher_is_better=True, kind="instance")
    def pipeline_equal(prediction, reference):
        return float(str(prediction).strip() == str(reference))


    @register_metric(name="pipeline_seconds", higher_is_better=False, kind="instance", reads=("audio_seconds",))
    def pipeline_seconds(seconds):
        return float(seconds)
    """
)


@pytest.fixture
def scripted(tmp_path):
    (tmp_path / "models.py").write_text(PYTHON_MODELS)
    (tmp_path / "metrics.py").write_text(METRICS)
    data = write_jsonl(tmp_path / "d.jsonl", [{"row": i, "label": i % 5} for i in range(24)])

    def config(loader: str, metrics: list[dict], **data_config) -> dict:
        return {
            "input_model": {
                "type": "PythonModel",
                "name": "m",
                "user_script": str(tmp_path / "models.py"),
                "model_loader": loader,
            },
            "data_configs": [
                {
                    "name": "d",
                    "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                    "pre_process_data_config": {"input_cols": ["row"], "label_col": "label"},
                    "dataloader_config": {"batch_size": 5},
                    **data_config,
                }
            ],
            "evaluator": {"user_script": str(tmp_path / "metrics.py"), "metrics": metrics},
            "output_dir": str(tmp_path / "out"),
        }

    yield config
    for name in ("pipeline_equal", "pipeline_seconds"):
        metric_registry.unregister(name)


def equal_metric(priority: int = 1, **extra) -> dict:
    sub = {"name": "pipeline_equal", "priority": priority}
    return {"name": "eq", "type": "accuracy", "data_config": "d", "sub_types": [sub], **extra}


# ------------------------------------------------------------------------------ filters and repeats
def test_filters_run_before_the_metric_scores(scripted, tmp_path):
    plain = evaluate(scripted("load_answers", [equal_metric()]))
    assert plain.models["m"].metrics["eq-pipeline_equal"].value == 0.0  # "The answer is 3." is not "3"
    regex = equal_metric(filters=[{"type": "regex", "pattern": r"(\d+)"}, {"type": "strip"}])
    result = evaluate(scripted("load_answers", [regex]))
    # even rows say the label, odd rows say label + 1: 12 of 24 right
    assert result.models["m"].metrics["eq-pipeline_equal"].value == 0.5
    records = list(read_records(tmp_path / "out" / "instances" / "m" / "eq.parquet"))
    assert [r["prediction"] for r in records[:3]] == ["0", "2", "2"]  # what was scored, after the filters
    assert [r["pipeline_equal"] for r in records[:3]] == [1.0, 0.0, 1.0]


def test_several_predictions_per_example_are_voted(scripted):
    voted = equal_metric(filters=[{"type": "majority_vote"}])
    first = {**equal_metric(2, filters=[{"type": "take_first"}]), "name": "first"}
    result = evaluate(scripted("load_voters", [voted, first]))
    assert result.models["m"].metrics["eq-pipeline_equal"].value == 1.0
    assert result.models["m"].metrics["first-pipeline_equal"].value == 1.0


def test_a_bad_filter_is_a_config_error(scripted):
    bad = equal_metric(filters=[{"type": "regex", "pattern": "("}])
    with pytest.raises(ConfigError, match=r"evaluator\.metrics\[0\]\.filters\[0\]\.pattern: "):
        load_run_config(scripted("load_answers", [bad]))
    unknown = equal_metric(filters=[{"type": "lowercas"}])
    with pytest.raises(
        ConfigError, match=r"filters\[0\]\.type: unknown filter type 'lowercas'.*did you mean 'lowercase'"
    ):
        load_run_config(scripted("load_answers", [unknown]))


# ------------------------------------------------------------------------------ fields
def test_a_metric_reading_a_field_the_data_cannot_give(scripted):
    seconds = {
        "name": "secs",
        "type": "accuracy",
        "data_config": "d",
        "sub_types": [{"name": "pipeline_seconds", "priority": 2}],
    }
    with pytest.raises(ConfigError) as err:  # when the run is planned, before any model loads
        evaluate(scripted("load_answers", [equal_metric(), seconds]))
    assert err.value.path == "evaluator.metrics[1].sub_types[0].name"
    assert err.value.message == (
        "accuracy sub-type 'pipeline_seconds' reads audio_seconds, which data config 'd' does not give; it gives: "
        "batch_index, inference_seconds, label, logits, model_seconds, prediction, references, row"
    )


def test_samples_per_second_is_an_ordinary_metric_over_the_pass_timing(scripted, tmp_path):
    speed = {
        "name": "speed",
        "type": "accuracy",
        "data_config": "d",
        "sub_types": [{"name": "samples_per_second", "metric_config": {"warmup_batches": 0}}],
    }
    result = evaluate(scripted("load_answers", [speed]))
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    summary = written["models"]["m"]["passes"]["d"]
    assert summary["examples"] == 24 and summary["batches"] == 5
    value = result.models["m"].metrics["speed-samples_per_second"].value
    assert value == pytest.approx(24 / summary["seconds"], rel=1e-6)  # the summary is rounded to ns
    all_warmup = {**speed, "sub_types": [{"name": "samples_per_second", "metric_config": {"warmup_batches": 9}}]}
    undefined = evaluate(scripted("load_answers", [all_warmup])).models["m"].metrics["speed-samples_per_second"]
    assert undefined.value is None and "every batch is a warm-up batch" in undefined.undefined


# ------------------------------------------------------------------------------ components from user scripts
def test_pre_and_post_process_functions_named_by_type(scripted, tmp_path):
    config = scripted(
        "load_answers",
        [equal_metric(filters=[{"type": "regex", "pattern": r"(\d+)"}])],
        user_script=str(tmp_path / "models.py"),
    )
    config["data_configs"][0]["pre_process_data_config"] = {
        "type": "double_the_label",
        "label_col": "label",
        "factor": 3,
    }
    config["data_configs"][0]["post_process_data_config"] = {"type": "squash"}
    result = evaluate(config)
    # labels tripled before the model saw them; the post-process upper-cased the text; still half right
    assert result.models["m"].metrics["eq-pipeline_equal"].value == 0.5
    records = list(read_records(tmp_path / "out" / "instances" / "m" / "eq.parquet"))
    assert records[1]["references"] == 3


@pytest.mark.parametrize(
    ("part", "value", "expected"),
    [
        ("pre_process_data_config", {"type": "tokenise"}, "unknown pre-process type 'tokenise'"),
        (
            "post_process_data_config",
            {"type": "argmaxx"},
            "unknown post-process type 'argmaxx'; did you mean 'argmax'?",
        ),
        ("dataloader_config", {"type": "fancy_loadr"}, "unknown dataloader type 'fancy_loadr'; valid: "),
        (
            "load_dataset_config",
            {"type": "local_dataset"},
            "dataset 'local_dataset' is Olive's, but olive-eval does not have it",
        ),
    ],
)
def test_unknown_components_list_the_registered_ones(scripted, part, value, expected):
    config = scripted("load_answers", [equal_metric()])
    config["data_configs"][0][part] = value
    with pytest.raises(ConfigError, match=expected) as info:
        load_run_config(config)
    assert f"data_configs[0].{part}" in str(info.value)


def test_an_unknown_model_type_lists_the_registered_ones(scripted):
    config = scripted("load_answers", [equal_metric()])
    config["input_model"]["type"] = "PythonModle"
    with pytest.raises(
        ConfigError, match=r"input_model\.type: unknown model type 'PythonModle'; did you mean 'PythonModel'"
    ):
        load_run_config(config)


# ------------------------------------------------------------------------------ inference settings per runtime
def test_inference_settings_are_validated_by_the_runtime_that_takes_them(toy):
    def with_settings(settings):
        metric = {
            "name": "acc",
            "type": "accuracy",
            "sub_types": [{"name": "accuracy_score"}],
            "user_config": {"inference_settings": settings},
        }
        return toy.config({}, [metric])

    run = load_run_config(with_settings({"onnx": {"session_options": {"intra_op_num_threads": 1}}}))
    assert run.all_metrics[0].user_config.settings_override() == {
        "onnx": {"session_options": {"intra_op_num_threads": 1}}
    }
    with pytest.raises(
        ConfigError, match=r"inference_settings\.hf: no model of this run takes 'hf' settings; frameworks here: onnx"
    ):
        load_run_config(with_settings({"hf": {}}))
    with pytest.raises(
        ConfigError, match=r"inference_settings\.onnx\.session_options\.intra_op_num_threads: expected an integer"
    ):
        load_run_config(with_settings({"onnx": {"session_options": {"intra_op_num_threads": "1"}}}))


def test_allow_download_lets_a_hub_name_through_the_config_check(toy):
    config = toy.config({}, [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}])
    config["data_configs"][0]["load_dataset_config"] = {"data_name": "someone/some_dataset"}
    with pytest.raises(ConfigError, match="nor a dataset in the local Hugging Face cache"):
        load_run_config(config)
    assert load_run_config(config, allow_download=True).allow_download


def test_a_python_model_returning_a_wrong_count_names_the_batch(tmp_path, scripted):
    (tmp_path / "short.py").write_text("def load(path):\n    return lambda batch: ['x'] * (len(batch['row']) - 1)\n")
    config = scripted("load_answers", [equal_metric()])
    config["input_model"].update(user_script=str(tmp_path / "short.py"), model_loader="load")
    error = evaluate(config).models["m"].metrics["eq-pipeline_equal"].error
    assert "returned 4 predictions for the batch of 5 examples 0..4" in error


def test_predictions_are_scored_batch_by_batch(scripted, monkeypatch):
    """Streaming: each batch reaches the metrics once, in order, and nothing holds the whole set."""
    from olive_eval.engine.passes import scoring

    seen: list[int] = []
    original = scoring.MetricScorer.update

    def counting(self, fields, start, cache):
        seen.append(start)
        return original(self, fields, start, cache)

    monkeypatch.setattr(scoring.MetricScorer, "update", counting)
    evaluate(scripted("load_answers", [equal_metric()]))
    assert seen == [0, 5, 10, 15, 20]
    assert np.all(np.diff(seen) == 5)

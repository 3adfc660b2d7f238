"""Data errors that do not depend on the model (issue 16, items 16-18), through ``olive-eval``.

Found when the run is planned: exit 2 and one line naming the data config and the column, line or example, before
any model loads (the Python model's loader leaves a file behind when it runs; it never does here). Found when a
batch is built or fed (what the first rows do not show, or what depends on the model): exit 1 and one line per
failed model, naming the column and the example.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
import soundfile

from olive_eval.cli import main
from tests.helpers import ToyProblem, write_jsonl

LOADER = textwrap.dedent(
    """
    from pathlib import Path


    def load(model_path):
        Path(model_path).write_text("loaded")  # evidence that the run got as far as loading the model
        return lambda batch: ["a"] * len(next(iter(batch.values())))
    """
)


@pytest.fixture
def scripted(tmp_path: Path):
    """A run of a Python model over ``rows`` (written as JSON lines unless ``text`` gives the file's text)."""
    (tmp_path / "models.py").write_text(LOADER)

    def config(rows: list[dict] | None = None, text: str | None = None, metric: str = "accuracy_score", **parts):
        data = tmp_path / "d.jsonl"
        if text is not None:
            data.write_text(text)
        else:
            write_jsonl(data, rows if rows is not None else [{"row": i, "label": i % 3} for i in range(24)])
        return {
            "input_model": {
                "type": "PythonModel",
                "name": "m",
                "user_script": str(tmp_path / "models.py"),
                "model_loader": "load",
                "model_path": str(tmp_path / "loaded"),
            },
            "data_configs": [
                {
                    "name": "d",
                    "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                    "pre_process_data_config": {"input_cols": ["row"], "label_col": "label"},
                    "dataloader_config": {"batch_size": 4},
                    **parts,
                }
            ],
            "metrics": [{"name": "m1", "type": "accuracy", "data_config": "d", "sub_types": [{"name": metric}]}],
            "output_dir": str(tmp_path / "out"),
        }

    return config


def olive_eval(tmp_path: Path, config: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit code and stderr of ``olive-eval --config run.json --quiet``."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    code = main(["--config", str(path), "--quiet"])
    return code, capsys.readouterr().err


def assert_planned_error(tmp_path: Path, config: dict[str, Any], capsys: pytest.CaptureFixture[str], line: str):
    """Exit 2, ``line`` alone on stderr, and no model loaded: no loader evidence, no results.json."""
    code, err = olive_eval(tmp_path, config, capsys)
    assert (code, err) == (2, line + "\n")
    assert not (tmp_path / "loaded").exists()
    assert not (tmp_path / "out" / "results.json").exists()  # no model was evaluated, so nothing to record


def pre(**params: Any) -> dict[str, Any]:
    return {"pre_process_data_config": params}


# ---------------------------------------------------------------------------------------------- columns
def test_a_wrong_input_column(tmp_path, scripted, capsys):
    config = scripted(**pre(input_cols=["rows"], label_col="label"))
    line = "olive-eval: error: data config 'd': input column 'rows' is not a column of the dataset; columns: row, label"
    assert_planned_error(tmp_path, config, capsys, line)


def test_a_wrong_label_column(tmp_path, scripted, capsys):
    config = scripted(**pre(input_cols=["row"], label_col="labels"))
    line = (
        "olive-eval: error: data config 'd': label column 'labels' is not a column of the dataset; columns: row, label"
    )
    assert_planned_error(tmp_path, config, capsys, line)


def test_a_wrong_text_column(tmp_path, scripted, capsys):
    rows = [{"audio": "a.wav", "text": "hello"}]
    config = scripted(rows, **pre(type="speech_transcription_pre_process", text_col="transcript"))
    config["metrics"][0]["sub_types"] = [{"name": "wer"}]
    line = (
        "olive-eval: error: data config 'd': column 'transcript' is not a column of the dataset; columns: audio, text"
    )
    assert_planned_error(tmp_path, config, capsys, line)


def test_a_wrong_image_column(tmp_path, scripted, capsys):
    rows = [{"image": "a.png", "label": 0}]
    config = scripted(rows, **pre(type="image_classification_pre_process", image_col="picture"))
    line = "olive-eval: error: data config 'd': column 'picture' is not a column of the dataset; columns: image, label"
    assert_planned_error(tmp_path, config, capsys, line)


# ---------------------------------------------------------------------------------------------- files and rows
def test_malformed_json_lines_name_the_line(tmp_path, scripted, capsys):
    config = scripted(text='{"row": 0, "label": 0}\n{"row": 1, "label": 1}\n{"row": 2, "label":\n')
    data = tmp_path / "d.jsonl"
    line = f"olive-eval: error: data config 'd': {data}: line 3 is not valid JSON: Expecting value (column 20)"
    assert_planned_error(tmp_path, config, capsys, line)


def test_json_lines_of_blank_lines(tmp_path, scripted, capsys):
    config = scripted(text="\n  \n\n")
    line = f"olive-eval: error: data config 'd': {tmp_path / 'd.jsonl'}: no rows: it holds only blank lines"
    assert_planned_error(tmp_path, config, capsys, line)


def test_a_limit_that_leaves_no_rows(tmp_path, scripted, capsys):
    config = scripted()
    config["data_configs"][0]["load_dataset_config"].update(limit=0.01, shuffle={"seed": 3})  # 0.24 of a row
    line = "olive-eval: error: data config 'd' has no rows after load_dataset_config.limit 0.01: there is nothing to evaluate on"
    assert_planned_error(tmp_path, config, capsys, line)


def test_an_answer_column_of_strings_and_lists(tmp_path, scripted, capsys):
    rows = [{"row": 0, "answers": ["a", "b"]}, {"row": 1, "answers": ["c"]}, {"row": 2, "answers": "d"}]
    config = scripted(rows, **pre(input_cols=["row"], label_col="answers"))
    line = (
        f"olive-eval: error: data config 'd': {tmp_path / 'd.jsonl'}: column 'answers' holds a string at line 3 but a "
        "list at line 1; a column holds one type in every row (for several answers, a list in every row)"
    )
    assert_planned_error(tmp_path, config, capsys, line)


def test_text_without_a_tokenizer_source(tmp_path, scripted, capsys):
    rows = [{"text": "the cat", "label": 1}, {"text": "a dog", "label": 0}]
    config = scripted(rows, **pre(input_cols=["text"], label_col="label"))  # the default pre-process tokenizes
    line = (
        "olive-eval: error: data config 'd' needs a tokenizer or processor: give the model's folder (HfModel "
        "model_path, ONNXModel processor_path) or pre_process_data_config.model_name; a model that takes the raw "
        "columns (a PythonModel) wants pre_process_data_config.type 'skip_pre_process'"
    )
    assert_planned_error(tmp_path, config, capsys, line)


def test_a_null_label_in_the_first_rows(tmp_path, scripted, capsys):
    rows = [{"row": i, "label": None if i == 2 else i % 3} for i in range(24)]
    config = scripted(rows)
    line = (
        "olive-eval: error: data config 'd': label column 'label' has no value (null or NaN) at example 2; fill it "
        "in, or leave the example out of the data"
    )
    assert_planned_error(tmp_path, config, capsys, line)


# ---------------------------------------------------------------------------------------------- the device
def test_gpu_without_cuda(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CPUExecutionProvider"])  # whatever this machine has
    toy = ToyProblem(tmp_path)
    config = toy.config(
        {}, [{"name": "acc", "type": "accuracy", "data_config": "toy", "sub_types": [{"name": "accuracy_score"}]}]
    )
    config["device"] = "gpu"
    code, err = olive_eval(tmp_path, config, capsys)
    assert code == 2
    assert err == (
        f"olive-eval: config error: {tmp_path / 'run.json'}: device: 'gpu' is asked for, but model 'base' (ONNXModel) cannot run there: "
        "execution provider 'CUDAExecutionProvider' is not in this onnxruntime build (it has CPUExecutionProvider); "
        'run on a machine with a GPU, or set "device": "cpu"\n'
    )
    assert not (tmp_path / "out" / "results.json").exists()  # planned before the output directory is even claimed


# ---------------------------------------------------------------------------------------------- when a batch is built
ACCURACY = {"name": "acc", "type": "accuracy", "data_config": "toy", "sub_types": [{"name": "accuracy_score"}]}


def toy_rows(toy: ToyProblem) -> list[dict[str, Any]]:
    return [{"x": x.tolist(), "label": int(y)} for x, y in zip(toy.x, toy.labels, strict=True)]


def failed_line(tmp_path: Path, toy: ToyProblem, rows: list[dict[str, Any]], capsys) -> str:
    write_jsonl(toy.data_file, rows)
    code, _ = olive_eval(tmp_path, toy.config({}, [ACCURACY]), capsys)
    assert code == 1
    model = json.loads((tmp_path / "out" / "results.json").read_text())["models"]["base"]
    assert model["status"] == "failed"
    return model["metrics"]["acc-accuracy_score"]["error"]


def test_a_ragged_input_column_names_the_column_and_the_example(tmp_path, capsys):
    toy = ToyProblem(tmp_path)
    rows = toy_rows(toy)
    rows[21]["x"] = rows[21]["x"][:5]  # in the second batch of 16: the batch's first example is 16
    assert failed_line(tmp_path, toy, rows, capsys) == (
        "input column 'x' holds rows of different lengths: example 21 has 5 values where example 16 has 8 values; a "
        "model input needs one length in a batch (fix the data, or pad the rows in pre-processing, as a tokenizer does)"
    )


def test_a_null_label_past_the_first_rows_names_the_example_when_its_batch_is_built(tmp_path, capsys):
    toy = ToyProblem(tmp_path)
    rows = toy_rows(toy)
    rows[70]["label"] = None
    assert failed_line(tmp_path, toy, rows, capsys) == (
        "data config 'toy': label column 'label' has no value (null or NaN) at example 70; fill it in, or leave the "
        "example out of the data"
    )


def test_an_audio_file_that_cannot_be_decoded_is_named_like_an_image(tmp_path, scripted, capsys):
    soundfile.write(tmp_path / "0.wav", np.zeros(1600, np.float32), 16000)
    (tmp_path / "1.wav").write_bytes(b"RIFF not really a wave file")
    rows = [{"audio": str(tmp_path / f"{i}.wav"), "text": "hello"} for i in range(2)]
    config = scripted(rows, **pre(type="speech_transcription_pre_process"))
    config["data_configs"][0]["post_process_data_config"] = {"type": "identity"}
    config["metrics"][0]["sub_types"] = [{"name": "wer"}]
    code, _ = olive_eval(tmp_path, config, capsys)
    assert code == 1
    error = json.loads((tmp_path / "out" / "results.json").read_text())["models"]["m"]["metrics"]["m1-wer"]["error"]
    assert error.startswith(f"example 1: cannot decode audio file '{tmp_path / '1.wav'}': "), error
    assert "unexpected" not in error and "\n" not in error

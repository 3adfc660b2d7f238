"""Vision QA end to end: Olive's three vision example configs (shared seed 003) unchanged, run on local images
by a PythonModel; per-example scores with intervals and paired goals; one clear line for each bad input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.config.metric import MetricConfig
from olive_eval.errors import DataError
from olive_eval.records.parquet import read_records
from tests.config.test_olive_examples import _seed_file, json_blocks
from tests.metrics.answers.test_kernels import ref_exact, ref_relaxed, ref_word_sort

MODELS = textwrap.dedent(
    """
    def load_reader(path):
        # reads the ground truth ("truth"), upper-casing every third answer of a batch
        def call(batch):
            return [t if i % 3 else t.upper() for i, t in enumerate(batch["truth"])]
        return call


    def load_sloppy(path):
        def call(batch):
            return [t if int(t) % 2 else "no idea" for t in batch["truth"]]
        return call


    def load_failing(path):
        # generation fails (None) on every example whose number is a multiple of 4
        def call(batch):
            return [None if int(t) % 4 == 0 else t for t in batch["truth"]]
        return call


    def load_numbers(path):
        def call(batch):
            return [7 if "4" in t else t for t in batch["truth"]]
        return call
    """
)


def write_images(folder: Path, rows: list[dict[str, Any]]) -> Path:
    for i, row in enumerate(rows):
        path = folder / f"img{i}.png"
        image = Image.new("RGB", (64, 24), "white")
        ImageDraw.Draw(image).text((2, 4), row["truth"], fill="black")
        image.save(path)
        row["image"] = str(path)
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data


@pytest.fixture
def local(tmp_path: Path) -> dict[str, Any]:
    rows = [
        {"truth": f"{i}", "question": "What number?", "answer": f"{i}", "answers": [f"{i}", f"{i}.0"]}
        for i in range(12)
    ]
    (tmp_path / "models.py").write_text(MODELS)
    return {"data": write_images(tmp_path, rows), "script": tmp_path / "models.py", "rows": rows, "tmp": tmp_path}


def model(local: dict[str, Any], loader: str, name: str | None = None) -> dict[str, Any]:
    return {"type": "PythonModel", "name": name or loader, "user_script": str(local["script"]), "model_loader": loader}


def vision_examples() -> list[dict[str, Any]]:
    blocks = json_blocks(_seed_file().read_text())
    names = {"exact_match", "relaxed_accuracy", "word_sort_ratio"}
    found = [b for b in blocks if {s["name"] for m in b.get("metrics", []) for s in m["sub_types"]} & names]
    assert len(found) == 3, "the seed page has three vision examples"
    return found


def test_olives_vision_examples_validate_unchanged_and_run_on_local_data(local):
    examples = vision_examples()
    references = {"exact_match": ref_exact, "relaxed_accuracy": ref_relaxed, "word_sort_ratio": ref_word_sort}
    for example in examples:
        for metric in example["metrics"]:
            MetricConfig.model_validate(metric)  # alone, exactly as written
        # the hub dataset name replaced by local data; nothing else changes
        config = json.loads(json.dumps(example))
        config["data_configs"][0]["load_dataset_config"] = {"data_name": "json", "data_files": str(local["data"])}
        config["input_model"] = model(local, "load_reader")
        config["output_dir"] = str(local["tmp"] / "out")
        load_run_config(config)
        result = evaluate(config)
        metric = example["metrics"][0]
        key = f"{metric['name']}-{metric['sub_types'][0]['name']}"
        value = result.models["load_reader"].metrics[key].value
        answer_col = example["data_configs"][0]["pre_process_data_config"]["answer_col"]
        predictions = [t if i % 3 else t.upper() for i, t in enumerate(r["truth"] for r in local["rows"])]
        answers = [r[answer_col] if isinstance(r[answer_col], list) else [r[answer_col]] for r in local["rows"]]
        reference = references[metric["sub_types"][0]["name"]]
        kwargs = {"tol": 0.05} if reference is ref_relaxed else {}
        expected = sum(reference(p, a, **kwargs) for p, a in zip(predictions, answers, strict=True)) / len(answers)
        assert value == pytest.approx(expected, rel=1e-12), key


def qa_config(local: dict[str, Any], candidate: str, **sub: Any) -> dict[str, Any]:
    return {
        "input_model": model(local, "load_reader"),
        "candidates": [model(local, candidate)],
        "data_configs": [
            {
                "name": "qa",
                "load_dataset_config": {"data_name": "json", "data_files": str(local["data"])},
                "pre_process_data_config": {"task": "vision-vqa", "answer_col": "answers"},
                "dataloader_config": {"batch_size": 5},
            }
        ],
        "metrics": [
            {
                "name": "vqa",
                "type": "accuracy",
                "sub_types": [{"name": "exact_match", "priority": 1, **sub}],
            }
        ],
        "output_dir": str(local["tmp"] / "out"),
    }


def test_intervals_and_paired_goals_come_with_the_per_example_scores(local):
    goal = {"type": "max-degradation", "value": 0.05, "confidence": 0.9, "n_resamples": 500}
    result = evaluate(qa_config(local, "load_sloppy", goal=goal, confidence_interval={"n_resamples": 500}))
    base = result.models["load_reader"].metrics["vqa-exact_match"]
    cand = result.models["load_sloppy"].metrics["vqa-exact_match"]
    assert base.value == 1.0 and cand.value == 0.5  # the task picked vision_vqa_pre_process; lists are references
    assert cand.ci_low < 0.5 < cand.ci_high
    assert cand.goal.met is False and cand.goal.change == -0.5
    records = list(read_records(local["tmp"] / "out" / "instances" / "load_sloppy" / "vqa.parquet"))
    assert [r["exact_match"] for r in records[:4]] == [0.0, 1.0, 0.0, 1.0]
    assert records[1]["references"] == ["1", "1.0"]


def test_failed_generations_are_empty_predictions_counted_and_warned(local):
    result = evaluate(qa_config(local, "load_failing"))
    failing = result.models["load_failing"]
    assert failing.status == "ok"
    assert failing.metrics["vqa-exact_match"].value == pytest.approx(9 / 12)  # 0, 4 and 8 failed
    note = "generations that failed (None from the model; scored as empty predictions)"
    assert failing.passes["qa"]["notes"] == {note: 3}
    assert failing.warnings == [f"3 {note} on 'qa'"]
    written = json.loads((local["tmp"] / "out" / "results.json").read_text())
    assert written["models"]["load_failing"]["passes"]["qa"]["notes"] == {note: 3}
    records = read_records(local["tmp"] / "out" / "instances" / "load_failing" / "vqa.parquet")
    assert [r["prediction"] for r in records][:5] == ["", "1", "2", "3", ""]
    assert result.models["load_reader"].warnings == []


def test_a_prediction_that_is_not_a_string_names_the_example_and_the_type(local):
    result = evaluate(qa_config(local, "load_numbers"))
    model_result = result.models["load_numbers"]
    assert model_result.status == "failed"
    assert model_result.metrics["vqa-exact_match"].error == (
        "metric 'vqa' cannot score the model output: prediction of example 4 is int, expected str"
    )  # example 4 is in the second batch of five


def test_an_image_that_cannot_be_decoded_names_the_example(local):
    broken = local["tmp"] / "img7.png"
    broken.write_bytes(b"not a png")
    result = evaluate(qa_config(local, "load_sloppy"))
    error = result.models["load_reader"].metrics["vqa-exact_match"].error
    assert error == (f"example 7: cannot decode image file '{broken}': not an image format Pillow recognises"), error


def test_an_answer_column_of_mixed_types_is_named(local):
    rows = [dict(r) for r in local["rows"]]
    rows[3]["answers"] = "3"
    local["data"].write_text("".join(json.dumps({k: v for k, v in r.items()}) + "\n" for r in rows))
    with pytest.raises(DataError) as error:  # found when the run is planned, before any model loads
        evaluate(qa_config(local, "load_sloppy"))
    assert str(error.value) == (
        f"data config 'qa': {local['data']}: column 'answers' holds a string at line 4 but a list at line 1; a column "
        "holds one type in every row (for several answers, a list in every row)"
    )


def _break_image(local: dict[str, Any]) -> None:
    (local["tmp"] / "img7.png").write_bytes(b"not a png")


def _mix_answers(local: dict[str, Any]) -> None:
    rows = [dict(r) for r in local["rows"]]
    rows[3]["answers"] = "3"
    local["data"].write_text("".join(json.dumps(r) + "\n" for r in rows))


def _empty_data(local: dict[str, Any]) -> None:
    local["data"].write_text("")


NEGATIVE_TOLERANCE = {"name": "relaxed_accuracy", "priority": 1, "metric_config": {"tolerance": -0.1}}


@pytest.mark.parametrize(
    ("candidate", "spoil", "sub_type", "code", "line"),
    [
        (
            "load_numbers",
            None,
            None,
            1,
            "FAILED load_numbers: metric(s) vqa failed: metric 'vqa' cannot score the "
            "model output: prediction of example 4 is int, expected str",
        ),
        ("load_sloppy", _break_image, None, 1, "example 7: cannot decode image file"),
        ("load_sloppy", _mix_answers, None, 2, "column 'answers' holds a string at line 4 but a list at line 1"),
        ("load_sloppy", _empty_data, None, 2, "data_files: {data} is empty: it has no rows"),
        (
            "load_sloppy",
            None,
            NEGATIVE_TOLERANCE,
            2,
            "metrics[0].sub_types[0].metric_config.tolerance: Input should be greater than or equal to 0",
        ),
    ],
)
def test_bad_input_on_the_command_line_is_one_line_and_its_exit_code(
    local, capsys, candidate, spoil, sub_type, code, line
):
    """The issue's bad inputs through ``olive-eval``: the exit code (1: a model failed, 2: the config is wrong) and
    one line per failed model (a data fault fails them all) or for the config, with no traceback."""
    from olive_eval.cli import main

    if spoil is not None:
        spoil(local)
    config = qa_config(local, candidate)
    if sub_type is not None:
        config["metrics"][0]["sub_types"] = [sub_type]
        config["data_configs"][0]["pre_process_data_config"]["task"] = "vision-chart-qa"
    path = local["tmp"] / "run.json"
    path.write_text(json.dumps(config))
    assert main(["--config", str(path), "--quiet"]) == code
    out, err = capsys.readouterr()
    line = line.format(data=local["data"])
    said = [text for text in (out + err).splitlines() if line in text]
    assert said, out + err
    assert all(text.startswith(("FAILED ", "olive-eval: config error: ", "olive-eval: error: ")) for text in said), said
    assert "Traceback" not in out + err

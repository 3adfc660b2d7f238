"""PythonModel: any Python object as a model, loaded by a function of the user's script, end to end."""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from olive_eval import evaluate
from olive_eval.errors import DataError
from olive_eval.metrics import metric_registry
from olive_eval.records.parquet import read_records
from tests.helpers import write_jsonl

N = 10
BATCH = 4

SCRIPT = textwrap.dedent(
    """
    import json
    from pathlib import Path

    import numpy as np


    def classify(x, offset=0):
        return (int(x) + offset) % 3


    def as_function(model_path):
        def model(batch):
            return [classify(x) for x in batch["x"]]

        return model


    class Predictor:
        def __init__(self, settings):
            self.offset = json.loads(Path(settings).read_text())["offset"]

        def predict(self, batch):
            return [classify(x, self.offset) for x in batch["x"]]


    def as_object(model_path):
        return Predictor(model_path)


    def neither(model_path):
        return 42


    def raising(model_path):
        raise RuntimeError("cannot reach the server")


    def one_short_on_the_second_batch(model_path):
        def model(batch):
            n = len(batch["x"]) - (1 if batch["x"][0] >= {batch} else 0)
            return [0] * n

        return model


    def not_a_list(model_path):
        return lambda batch: 7


    class Recorder:
        # every call's columns, their types and values, appended to the file model_path names
        def __init__(self, log):
            self.log = Path(log)

        def __call__(self, batch):
            record = {{name: [type(v).__name__, np.asarray(v).tolist()] for name, v in batch.items()}}
            with self.log.open("a") as handle:
                handle.write(json.dumps(record) + "\\n")
            return [classify(x) for x in batch["x"]]


    def recording(model_path):
        return Recorder(model_path)


    def of_kind(model_path):
        def model(batch):
            labels = [classify(x) for x in batch["x"]]
            if model_path == "numbers":
                return labels
            if model_path == "array":
                return np.eye(3)[labels] * 2.0 - 0.5
            if model_path == "strings":
                return [f"class {{y}}" for y in labels]
            return [{{"label": y, "note": note}} for y, note in zip(labels, batch["note"])]

        return model


    def text_length(model_path):
        return lambda batch: [len(t) % 3 for t in batch["text"]]
    """
).format(batch=BATCH)

METRICS = """
from olive_eval import register_metric


@register_metric(name="{string}", higher_is_better=True)
def string_match(prediction, reference):
    return float(prediction == f"class {{reference}}")


@register_metric(name="{record}", higher_is_better=True)
def record_match(prediction, reference):
    return float(prediction["label"] == reference)
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "models.py"
    path.write_text(SCRIPT)
    return path


@pytest.fixture
def rows() -> list[dict[str, Any]]:
    rng = np.random.default_rng(4)
    return [
        {"x": int(x), "label": int(y), "note": f"row {i}"}
        for i, (x, y) in enumerate(zip(rng.integers(0, 50, N), rng.integers(0, 3, N), strict=True))
    ]


def config(tmp_path: Path, script: Path, rows: list[dict[str, Any]], loader: str, **model: Any) -> dict[str, Any]:
    data_file = write_jsonl(tmp_path / "rows.jsonl", rows)
    return {
        "input_model": {
            "type": "PythonModel",
            "name": "py",
            "user_script": str(script),
            "model_loader": loader,
            **model,
        },
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(data_file)},
                "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
                "dataloader_config": {"batch_size": BATCH},
            }
        ],
        "metrics": [
            {
                "name": "acc",
                "type": "accuracy",
                "sub_types": [
                    {"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass", "num_classes": 3}}
                ],
            }
        ],
        "output_dir": str(tmp_path / "out"),
    }


def instance_predictions(tmp_path: Path, metric: str) -> list[Any]:
    records = read_records(tmp_path / "out" / "instances" / "py" / f"{metric}.parquet")
    return [r["prediction"] for r in sorted(records, key=lambda r: r["index"])]


def expected_labels(rows: list[dict[str, Any]], offset: int = 0) -> list[int]:
    return [(r["x"] + offset) % 3 for r in rows]


# ---------------------------------------------------------------------------------------------- what the loader returns
def test_a_loader_returning_a_callable(tmp_path, script, rows):
    result = evaluate(config(tmp_path, script, rows, "as_function"))
    model = result.models["py"]
    assert model.status == "ok", model.error
    expected = expected_labels(rows)
    assert instance_predictions(tmp_path, "acc") == expected
    labels = [r["label"] for r in rows]
    assert model.metrics["acc-accuracy_score"].value == pytest.approx(accuracy_score(labels, expected))
    assert model.runtimes[0]["runtime"] == "python"


def test_a_loader_returning_an_object_with_predict_gets_the_model_path(tmp_path, script, rows):
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"offset": 2}))
    result = evaluate(config(tmp_path, script, rows, "as_object", model_path=str(settings)))
    model = result.models["py"]
    assert model.status == "ok", model.error
    expected = expected_labels(rows, offset=2)
    assert expected != expected_labels(rows)
    assert instance_predictions(tmp_path, "acc") == expected
    labels = [r["label"] for r in rows]
    assert model.metrics["acc-accuracy_score"].value == pytest.approx(accuracy_score(labels, expected))
    assert model.runtimes[0]["object"].endswith(".Predictor")


def test_a_loader_returning_neither_a_callable_nor_predict(tmp_path, script, rows):
    result = evaluate(config(tmp_path, script, rows, "neither"))
    model = result.models["py"]
    assert model.status == "failed"
    assert model.error == (
        f"model_loader 'neither' in {script} returned int, which has neither __call__(batch) nor predict(batch)"
    )


def test_a_loader_that_raises_is_named(tmp_path, script, rows):
    line = 1 + SCRIPT.splitlines().index('    raise RuntimeError("cannot reach the server")')
    result = evaluate(config(tmp_path, script, rows, "raising"))
    model = result.models["py"]
    assert model.status == "failed"
    assert model.error == (
        f"model_loader 'raising' in {script} raised RuntimeError: cannot reach the server (at {script}:{line})"
    )


def test_a_wrong_number_of_predictions_names_the_batch(tmp_path, script, rows):
    rows = [{**r, "x": i} for i, r in enumerate(rows)]  # x >= BATCH from the second batch on
    result = evaluate(config(tmp_path, script, rows, "one_short_on_the_second_batch"))
    error = result.models["py"].metrics["acc-accuracy_score"].error
    assert error == (
        f"model 'py' (function) returned {BATCH - 1} predictions for the batch of {BATCH} examples "
        f"{BATCH}..{2 * BATCH - 1}"
    )


def test_a_return_that_is_not_one_prediction_per_example(tmp_path, script, rows):
    result = evaluate(config(tmp_path, script, rows, "not_a_list"))
    error = result.models["py"].metrics["acc-accuracy_score"].error
    assert error == (
        f"model 'py' (function) returned int for the batch of examples 0..{BATCH - 1}; it must return one "
        "prediction per example (a list)"
    )


# ---------------------------------------------------------------------------------------------- what the model gets
def test_every_column_of_the_batch_reaches_the_model(tmp_path, script, rows):
    log = tmp_path / "calls.jsonl"
    result = evaluate(config(tmp_path, script, rows, "recording", model_path=str(log)))
    assert result.models["py"].status == "ok", result.models["py"].error
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == math.ceil(N / BATCH)  # no timing metric: one call per batch
    for i, call in enumerate(calls):
        part = rows[i * BATCH : (i + 1) * BATCH]
        assert set(call) == {"x", "label", "note"}  # the input, the references and the metadata
        for name in ("x", "label", "note"):
            assert call[name][1] == [r[name] for r in part]
        assert call["note"][0] == "list"  # text stays text


@pytest.fixture
def metric_names(request: pytest.FixtureRequest) -> dict[str, str]:
    tag = re.sub(r"\W", "_", request.node.name)
    names = {"string": f"string_match_{tag}", "record": f"record_match_{tag}"}
    yield names
    for name in names.values():
        if name in metric_registry:
            metric_registry.unregister(name)


@pytest.mark.parametrize("kind", ["numbers", "array", "strings", "dicts"])
def test_predictions_of_any_type(tmp_path, script, rows, kind, metric_names):
    """Numbers and score arrays feed the built-in accuracy; strings and dicts feed registered metrics."""
    metrics_script = tmp_path / "metrics.py"
    metrics_script.write_text(METRICS.format(**metric_names))
    cfg = config(tmp_path, script, rows, "of_kind", model_path=kind)
    if kind in ("strings", "dicts"):
        name = metric_names["string" if kind == "strings" else "record"]
        cfg["metrics"][0]["sub_types"][0] = {"name": name, "priority": 1}
    cfg["metrics"][0]["user_config"] = {"user_script": str(metrics_script)}
    result = evaluate(cfg)
    model = result.models["py"]
    assert model.status == "ok", model.error
    expected = expected_labels(rows)
    [metric] = model.metrics.values()
    assert metric.value == pytest.approx(accuracy_score([r["label"] for r in rows], expected))
    got = instance_predictions(tmp_path, "acc")
    if kind == "array":
        assert np.argmax(got, axis=1).tolist() == expected
    elif kind == "strings":
        assert got == [f"class {y}" for y in expected]
    elif kind == "dicts":
        assert got == [{"label": y, "note": r["note"]} for y, r in zip(expected, rows, strict=True)]
    else:
        assert got == expected


# ---------------------------------------------------------------------------------------------- timing
def test_latency_throughput_and_per_batch_timing(tmp_path, script, rows):
    log = tmp_path / "calls.jsonl"
    cfg = config(tmp_path, script, rows, "recording", model_path=str(log))
    timing = {"warmup_num": 2, "repeat_test_num": 6}
    cfg["metrics"] += [
        {"name": "lat", "type": "latency", "sub_types": [{"name": "avg", "metric_config": timing}, {"name": "p50"}]},
        {"name": "thr", "type": "throughput", "sub_types": [{"name": "avg", "metric_config": timing}]},
        {
            "name": "speed",
            "type": "accuracy",
            "sub_types": [{"name": "samples_per_second", "metric_config": {"warmup_batches": 0}}],
        },
    ]
    result = evaluate(cfg)
    model = result.models["py"]
    assert model.status == "ok", model.error
    for key in ("lat-avg", "lat-p50", "thr-avg", "speed-samples_per_second"):
        value = model.metrics[key].value
        assert value is not None and math.isfinite(value) and value > 0, key
    assert model.metrics["lat-avg"].timing.runs == 6
    assert model.metrics["thr-avg"].timing.runs == 6
    assert model.metrics["lat-avg"].unit == "ms"
    # the pass: every batch timed, model call within model call + post-processing
    summary = model.passes["d"]
    assert (summary["examples"], summary["batches"]) == (N, math.ceil(N / BATCH))
    assert 0 < summary["model_seconds"] <= summary["seconds"]
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["models"]["py"]["passes"]["d"] == summary
    # samples per second over the real data: examples over the pass's seconds (no warm-up batch left out)
    assert model.metrics["speed-samples_per_second"].value == pytest.approx(N / summary["seconds"], rel=1e-6)
    # the timed calls reached the model: the pass's batches, then warm-up and timed runs on the first batch
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    first = [r["x"] for r in rows[:BATCH]]
    assert len(calls) >= math.ceil(N / BATCH) + 2 + 6
    assert all(call["x"][1] == first for call in calls[math.ceil(N / BATCH) :])


# ---------------------------------------------------------------------------------------------- text
def test_a_python_model_gets_text_through_column_mapping(tmp_path, script):
    rows = [{"text": "a b" * (i + 1), "label": i % 3} for i in range(N)]
    cfg = config(tmp_path, script, rows, "text_length")
    cfg["data_configs"][0]["pre_process_data_config"] = {
        "type": "column_mapping",
        "input_cols": ["text"],
        "label_col": "label",
    }
    result = evaluate(cfg)
    assert result.models["py"].status == "ok", result.models["py"].error
    assert instance_predictions(tmp_path, "acc") == [len(r["text"]) % 3 for r in rows]


def test_a_python_model_with_the_default_pre_process_is_told_to_skip_tokenizing(tmp_path, script):
    # huggingface_pre_process tokenizes text columns, as Olive's does; a model without a tokenizer is told how
    # to get the text itself
    rows = [{"text": "a b" * (i + 1), "label": i % 3} for i in range(N)]
    cfg = config(tmp_path, script, rows, "text_length")
    cfg["data_configs"][0]["pre_process_data_config"] = {"input_cols": ["text"], "label_col": "label"}
    with pytest.raises(DataError) as raised:  # when the run is planned, before the model loads
        evaluate(cfg)
    error = str(raised.value)
    assert "needs a tokenizer or processor" in error and "skip_pre_process" in error and "\n" not in error


def test_labels_without_a_task_are_scored_like_sklearn_whatever_the_last_batch_holds(tmp_path, script, rows):
    # x chosen so that the predictions ((x % 3)) of the last batch are 0 or 1 only, and its labels too
    rows = [
        {**r, "x": x, "label": y}
        for r, x, y in zip(rows, [2, 5, 1, 0, 8, 4, 2, 3, 0, 1], [2, 2, 1, 0, 1, 1, 2, 0, 1, 1], strict=True)
    ]
    cfg = config(tmp_path, script, rows, "as_function")
    cfg["metrics"][0]["sub_types"][0] = {"name": "accuracy_score", "priority": 1}  # task inferred
    result = evaluate(cfg)
    expected = expected_labels(rows)
    assert set(expected[2 * BATCH :]) <= {0, 1} and 2 in expected
    value = result.models["py"].metrics["acc-accuracy_score"].value
    assert value == pytest.approx(accuracy_score([r["label"] for r in rows], expected))


# ---------------------------------------------------------------------------------------------- size on disk
def size_of(tmp_path: Path, script: Path, rows: list[dict[str, Any]], **model: Any) -> Any:
    cfg = config(tmp_path, script, rows, "as_function", **model)
    cfg["metrics"].append({"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]})
    result = evaluate(cfg)
    assert result.models["py"].status == "ok", result.models["py"].error
    return result.models["py"].metrics["size-bytes"]


def test_size_on_disk_is_the_model_path_file_not_the_script(tmp_path, script, rows):
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"\0" * 12345)
    size = size_of(tmp_path, script, rows, model_path=str(weights))
    assert size.value == 12345 and size.undefined is None


def test_size_on_disk_of_a_model_path_folder_counts_every_file_below_it(tmp_path, script, rows):
    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.bin").write_bytes(b"\0" * 100)
    (folder / "sub" / "b.bin").write_bytes(b"\0" * 23)
    assert size_of(tmp_path, script, rows, model_path=str(folder)).value == 123


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        ({}, "a PythonModel without model_path has no files to measure"),
        (
            {"model_path": "http://localhost:8000/v1"},
            "model_path 'http://localhost:8000/v1' is not a file or folder on disk, so there is nothing to measure",
        ),
    ],
    ids=["no-model-path", "a-url"],
)
def test_size_on_disk_without_files_is_undefined_with_the_reason(tmp_path, script, rows, model, reason):
    size = size_of(tmp_path, script, rows, **model)
    assert (size.value, size.undefined) == (None, reason)
